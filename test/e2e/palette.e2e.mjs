// A person at the keyboard: Run Tool… from the command palette, the real confirmation modal
// (Cancel leaves the file alone, Apply changes it and shows the diff), the Activity view, and the
// Plan view's checkboxes.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { answer, clickDialogButton, dialog, notification, openPalette, pick, quickPickRow, resizeSideBar, runCommand, until } from '../../scripts/lib/workbench.mjs';

export const options = {};

const NEW_README = 'Greetings, written from the command palette.';
const ORIGINAL_README = fs.readFileSync(new URL('../fixtures/workspace/README.md', import.meta.url), 'utf8');
const PLAN = {
	tasks: [
		{ title: 'Sketch the greeting API', status: 'completed' },
		{ title: 'Write the greeting code', status: 'in_progress', details: 'src/greeting.ts' },
		{ title: 'Document it in the README', status: 'pending' },
	],
};

/**
 * Run Tool… → write_file → prompts, up to the confirmation: the path in an input box, the content
 * (text of several lines) in the JSON editor the prompts hand over to, with the cursor in it.
 */
async function writeReadmeFromPalette(page) {
	await runCommand(page, 'Toolbelt: Run Tool…');
	await pick(page, 'write_file');
	await pick(page, 'Fill in prompts');
	await answer(page, 'path', 'README.md');
	await page.locator('.tab', { hasText: 'write_file.json' }).first().waitFor();
	await page.locator('.editor-instance .view-line', { hasText: '"path": "README.md"' }).first().waitFor();
	await page.locator('.editor-instance .view-line', { hasText: '"content": ""' }).first().waitFor();
	// The editor takes the keyboard once the prompt has closed, the cursor inside the content's quotes.
	await page.locator('.editor-instance .monaco-editor.focused').first().waitFor();
	await page.keyboard.insertText(NEW_README);
	await page.locator('.editor-instance .view-line', { hasText: `"content": "${NEW_README}"` }).first().waitFor();
	await page.locator('.editor-actions .action-label[aria-label^="Run Tool with This Input"]').first().click();
	return dialog(page);
}
export const steps = [
	['the command palette lists the Toolbelt commands', async ({ page, screenshot }) => {
		await runCommand(page, 'Toolbelt: Show Activity');
		// The first command also starts the lazily loaded workbench, whose view then takes focus as
		// it renders: a palette opened before that is closed by it.
		await page.getByText('No tool calls yet').first().waitFor();
		await resizeSideBar(page, 470);
		await openPalette(page, 'Toolbelt: ', 'Toolbelt: Run Tool…');
		for (const title of ['Search Workspace (grep)…', 'Restore Backup…', 'Stop All Sessions', 'Open Plan', 'Show Activity']) {
			await quickPickRow(page, `Toolbelt: ${title}`).waitFor();
		}
		await screenshot('command-palette');
		await page.keyboard.press('Escape');
	}],

	['Run Tool… asks field by field: required first, then run or set an optional field', async ({ page, screenshot }) => {
		await runCommand(page, 'Toolbelt: Run Tool…');
		await pick(page, 'grep');
		await pick(page, 'Fill in prompts');
		await answer(page, 'pattern', 'Hello');
		await quickPickRow(page, 'Run grep').waitFor();
		await quickPickRow(page, 'limit').waitFor();
		await screenshot('run-tool-optional-fields');
		// A wrong answer is refused in words, and what was typed stays in the box.
		await pick(page, 'limit');
		await page.locator('.quick-input-widget .quick-input-title', { hasText: 'limit' }).waitFor();
		await page.locator('.quick-input-widget input').fill('0');
		await page.locator('.quick-input-widget .quick-input-message', { hasText: 'limit must be ≥ 1, got number 0.' }).waitFor();
		assert.equal(await page.locator('.quick-input-widget input').inputValue(), '0');
		await page.keyboard.press('Escape');
		await quickPickRow(page, 'Run grep').waitFor();
		await page.keyboard.press('Escape');
		await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
	}],

	['Run Tool… → write_file shows the real confirmation; Cancel leaves the file unchanged', async ({ page, file, screenshot }) => {
		const before = fs.readFileSync(file('README.md'), 'utf8');
		const box = await writeReadmeFromPalette(page);
		assert.match(await box.innerText(), /README\.md/);
		// Behind the question, the Activity view says who the call waits for.
		await page.locator('.pane', { hasText: 'Activity' }).locator('.monaco-list-row', { hasText: /write_file\s*waiting for you/ }).first().waitFor();
		await screenshot('confirmation');
		await clickDialogButton(page, 'Cancel');
		await notification(page, /write_file was declined; nothing was changed/);
		assert.equal(fs.readFileSync(file('README.md'), 'utf8'), before);
	}],

	['Show Diff shows the proposed text before anything is written; Apply then leaves one diff tab', async ({ page, file, screenshot }) => {
		const box = await writeReadmeFromPalette(page);
		assert.match(await box.innerText(), /Overwrite README\.md\?/);
		assert.doesNotMatch(await box.innerText(), /```/);
		await clickDialogButton(page, 'Show Diff');
		await page.locator('.tab', { hasText: 'README.md (Toolbelt: proposed, changed)' }).first().waitFor();
		await page.locator('.monaco-diff-editor .editor.modified .view-line', { hasText: NEW_README }).first().waitFor();
		assert.notEqual(fs.readFileSync(file('README.md'), 'utf8'), NEW_README, 'nothing is written before Apply');
		// The question comes back over the diff.
		await dialog(page);
		await screenshot('proposed-diff');
		await clickDialogButton(page, 'Apply');
		await until('README.md to change', () => fs.readFileSync(file('README.md'), 'utf8').startsWith(NEW_README));
		await page.locator('.tab', { hasText: 'README.md (Toolbelt: before ↔ after)' }).first().waitFor();
		await page.locator('.tab', { hasText: 'write_file result' }).first().waitFor();
		const diffTabs = await page.locator('.tab', { hasText: /README\.md \(Toolbelt/ }).allInnerTexts();
		assert.equal(diffTabs.length, 1, `one diff tab for README.md, not: ${diffTabs.join(' | ')}`);
		await screenshot('diff');
	}],

	['the Activity view shows both calls, newest first, with status and duration', async ({ page, screenshot }) => {
		await runCommand(page, 'Toolbelt: Show Activity');
		const rows = page.locator('.pane', { hasText: 'Activity' }).locator('.monaco-list-row');
		await rows.filter({ hasText: /write_file.*done/ }).first().waitFor();
		const texts = await rows.allInnerTexts();
		const writes = texts.filter(text => text.includes('write_file'));
		assert.equal(writes.length, 2, texts.join(' | '));
		assert.match(writes[0], /^write_file\s*done \d+(\.\d)? m?s · waited \d+(\.\d)? m?s · README\.md/);
		assert.match(writes[1], /^write_file\s*declined after \d+(\.\d)? m?s · README\.md/);
		await screenshot('activity');
	}],

	['Restore Backup… lists the backup taken before the write and puts the file back after a diff and a question', async ({ page, file, screenshot }) => {
		await runCommand(page, 'View: Close All Editors');
		await runCommand(page, 'Toolbelt: Restore Backup…');
		const row = quickPickRow(page, 'README.md');
		await row.waitFor();
		assert.match(await row.innerText(), /write_file/);
		await screenshot('restore-backup');
		await row.click();
		const box = await dialog(page);
		assert.match(await box.innerText(), /Restore README\.md as it was before "Overwrite README\.md"\?/);
		await page.locator('.monaco-diff-editor').first().waitFor();
		await clickDialogButton(page, 'Restore');
		await until('README.md to be restored', () => fs.readFileSync(file('README.md'), 'utf8') === ORIGINAL_README);
	}],

	['a plan written from the JSON editor appears in the Plan view; ticking a task updates the file', async ({ page, file, screenshot }) => {
		await runCommand(page, 'View: Close All Editors');
		await runCommand(page, 'Toolbelt: Run Tool…');
		await pick(page, 'update_plan');
		await pick(page, 'Edit as JSON');
		const editor = page.locator('.editor-instance .monaco-editor').first();
		await page.locator('.tab', { hasText: 'update_plan.json' }).first().waitFor();
		await editor.click();
		// The schema is attached: the JSON language service flags a status the tool does not know.
		await page.keyboard.press('ControlOrMeta+A');
		await page.keyboard.press('Delete');
		await page.keyboard.insertText(JSON.stringify({ $schema: 'toolbelt-schema:/update_plan.schema.json', tasks: [{ title: 'x', status: 'done' }] }));
		const squiggle = page.locator('.editor-instance .squiggly-warning, .editor-instance .squiggly-error').first();
		await squiggle.waitFor();
		await page.locator('.editor-instance .view-line span', { hasText: '"done"' }).last().hover();
		const hover = page.locator('.monaco-hover').filter({ hasText: /Value is not accepted|pending|completed/ }).first();
		await hover.waitFor();
		assert.doesNotMatch(await hover.innerText(), /Unable to load schema/);
		await page.keyboard.press('ControlOrMeta+A');
		await page.keyboard.press('Delete');
		// One line, then Format Document: typed newlines would collect the editor's auto-indent.
		await page.keyboard.insertText(JSON.stringify({ $schema: 'toolbelt-schema:/update_plan.schema.json', ...PLAN }));
		await runCommand(page, 'Format Document');
		await page.locator('.editor-instance .view-line', { hasText: '"status": "pending"' }).first().waitFor();
		await screenshot('json-input');
		await page.locator('.editor-actions .action-label[aria-label^="Run Tool with This Input"]').first().click();
		await until('the plan file', () => fs.existsSync(file('.toolbelt/plan.json')));

		await runCommand(page, 'Toolbelt: Focus on Plan View');
		const plan = page.locator('.pane', { hasText: 'Plan' }).last();
		const row = plan.locator('.monaco-list-row', { hasText: 'Write the greeting code' });
		await row.waitFor();
		await row.locator('.custom-view-tree-node-item-checkbox, .monaco-checkbox, input[type=checkbox]').first().click();
		await until('task 2 to be completed in the file', () => JSON.parse(fs.readFileSync(file('.toolbelt/plan.json'), 'utf8')).tasks[1].status === 'completed');
		const statuses = JSON.parse(fs.readFileSync(file('.toolbelt/plan.json'), 'utf8')).tasks.map(task => task.status);
		assert.deepEqual(statuses, ['completed', 'completed', 'pending']);
		await page.locator('.pane', { hasText: 'Activity' }).locator('.monaco-list-row').filter({ hasText: /complete_task.*done/ }).first().waitFor();
		await screenshot('plan');
	}],
];

steps.push(['Search Workspace (grep)… opens the matches in an editor whose paths are links to the line', async ({ page, screenshot }) => {
	await runCommand(page, 'View: Close All Editors');
	await runCommand(page, 'Toolbelt: Search Workspace (grep)…');
	// A pattern ripgrep refuses comes back in the box, with why, instead of a result worded for a model.
	await answer(page, 'Search Workspace', 'Hello(');
	await page.locator('.quick-input-widget', { hasText: 'Not a regular expression ripgrep accepts: unclosed group' }).waitFor();
	assert.equal(await page.locator('.quick-input-widget input').inputValue(), 'Hello(');
	await page.locator('.quick-input-widget input').fill('Hello');
	await page.keyboard.press('Enter');
	await page.locator('.tab', { hasText: 'grep result' }).first().waitFor();
	const link = page.locator('.editor-instance .view-line .detected-link', { hasText: 'src/greeting.ts' }).first();
	await link.waitFor();
	await screenshot('search');
	await link.click({ modifiers: ['ControlOrMeta'] });
	await page.locator('.tab', { hasText: 'greeting.ts' }).filter({ hasNotText: 'result' }).first().waitFor();
	await page.locator('.statusbar-item', { hasText: /Ln 2, Col 1/ }).first().waitFor();
}]);

steps.push(['after a window reload the Activity history and the plan are still there', async ({ page }) => {
	await runCommand(page, 'Developer: Reload Window');
	await page.locator('.activitybar .action-item a[aria-label^="Toolbelt"]').waitFor({ timeout: 60_000 });
	await runCommand(page, 'Toolbelt: Show Activity');
	const rows = page.locator('.pane', { hasText: 'Activity' }).locator('.monaco-list-row');
	await rows.filter({ hasText: /grep.*done/ }).first().waitFor();
	const texts = await rows.allInnerTexts();
	const tools = ['complete_task', 'update_plan', 'write_file', 'grep'];
	assert.deepEqual(texts.map(text => tools.find(tool => text.startsWith(tool))), ['grep', 'grep', 'complete_task', 'update_plan', 'write_file', 'write_file'], texts.join(' | '));
	assert.match(texts[1], /^grep\s*failed/, 'the refused pattern is a failed call');
	await page.locator('.pane', { hasText: 'Plan' }).last().locator('.monaco-list-row', { hasText: 'Document it in the README' }).waitFor();
}]);
