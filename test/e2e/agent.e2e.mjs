// Copilot agent mode drives Toolbelt through the real agent loop. Copilot Chat ships with the VS
// Code server; a test extension (test/agent/extension) is the language model: it plays the script a
// prompt names and records every request Copilot sends it. This suite plays the person: it answers
// chat's confirmations and Toolbelt's own modal, and checks the files and what the model was told.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
	answerConfirmation, answerShown, confirmationOrAnswer, expectShown, nextQuestion, openAgentChat, openToolPicker, sendInNewChat, shownText, toolConfirmation, transcriptText, undoChatEdits,
} from '../../scripts/lib/chat.mjs';
import { clickDialogButton, dialog, resizeSecondarySideBar, runCommand, until } from '../../scripts/lib/workbench.mjs';
import scripted from '../agent/extension/scenarios.js';
import { closingRequest, COPILOT_COUNTERPARTS, copilotChatVersion, describeFootprint, readRecord, toolFootprint } from '../agent/record.mjs';

const { scenarios, PLANTED, OUTSIDE_SANDBOX, ESCALATION_MARKER, JUSTIFICATION, RENAME_AREA } = scripted;
const root = path.resolve(import.meta.dirname, '..', '..');
const MODEL = 'Scripted Model';
const OUTSIDE = 'A file next to the workspace, not in it.\n';
const LIST = 'one\ntwo\nthree\n';
const ENV = 'SECRET=1\n';
/** The three files that declare, implement and call Shape.area. */
const AREA_FILES = ['circle.ts', 'report.ts', 'shapes.ts'].map(name => `ts-project/src/${name}`);

let recordFile;

/** The workspace gets a .env, a .git folder and two lists; a file sits next to it for the escape attempt. */
export function options({ scratch, folder }) {
	recordFile = path.join(scratch, 'agent-record.jsonl');
	fs.writeFileSync(path.join(scratch, 'outside.txt'), OUTSIDE);
	// Left by a run whose sandbox let the write through; this run must not find it there.
	fs.rmSync(path.join(os.homedir(), OUTSIDE_SANDBOX), { force: true });
	// Each scenario changes files of its own: an edit after another scenario's Undo would rightly be
	// refused as stale (the file changed since the model last saw it).
	for (const name of ['notes.txt', 'checklist.txt']) fs.writeFileSync(path.join(folder, name), LIST);
	fs.writeFileSync(path.join(folder, '.env'), ENV);
	fs.mkdirSync(path.join(folder, '.git', 'hooks'), { recursive: true });
	fs.writeFileSync(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n');
	fs.cpSync(path.join(root, 'demo', '.toolbelt', 'tools'), path.join(folder, '.toolbelt', 'tools'), { recursive: true });
	return {
		extensions: [path.join(root, 'test', 'agent', 'extension')],
		extensionEnvironment: { TOOLBELT_AGENT_RECORD: recordFile },
		// A wide chat view otherwise lists past sessions beside the conversation, squeezing it.
		settings: { 'chat.viewSessions.enabled': false },
	};
}

/**
 * Copilot's tools that do the jobs of Toolbelt's, as the tool picker names them, by tool set
 * (`todo` is a set of one tool). Unticked, they are exactly COPILOT_COUNTERPARTS.
 */
const OVERLAPPING_BUILT_INS = {
	read: ['readFile', 'problems'],
	search: ['listDirectory', 'fileSearch', 'textSearch'],
	edit: ['createFile', 'editFiles'],
	execute: ['runInTerminal', 'sendToTerminal', 'getTerminalOutput', 'killTerminal'],
	todo: [],
};

/** Under a failed step: the conversation on screen and the model's last requests. */
export async function diagnose({ page }) {
	const signIn = await page.locator('.monaco-dialog-box', { hasText: 'Sign in to use GitHub Copilot' }).count();
	const setupAgent = signIn ? ['VS Code\'s setup agent took the prompt and asks to sign in: Copilot Chat\'s agent was not registered yet.'] : [];
	const requests = readRecord(recordFile).slice(-4).map(entry => `  ${entry.scenario ?? '(no scenario)'} round ${entry.round}: ${entry.results.map(result => `[${result.name}] ${result.text.slice(0, 160)}`).join(' | ') || '(no results)'} → ${JSON.stringify(entry.reply).slice(0, 200)}`);
	return [...setupAgent, `chat on screen:\n${await transcriptText(page).catch(error => `(unreadable: ${error.message})`)}`, 'last model requests:', ...requests].join('\n');
}

function read(folder, rel) {
	const file = path.join(folder, rel);
	return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
}

/** Sends the scenario's prompt in a new chat; the scripted model takes it from there. */
function play(page, name) {
	return sendInNewChat(page, `scenario:${name} ${scenarios[name].prompt}`);
}

/** Waits for the scenario's closing answer and returns the tool results the model received. */
async function toolResults(page, name) {
	await answerShown(page, `Scenario ${name}: the tools returned`);
	return until(`the recorded closing request of ${name}`, () => closingRequest(recordFile, name)?.results, 5000);
}

/** `text` as a regular expression that matches it literally. */
function literally(text) {
	return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}

/**
 * An allowance given in chat on an ordinary call of `tool` lets its next ordinary call run unasked,
 * yet the third call (`third`: a protected path, leaving the sandbox) still brings Toolbelt's own
 * modal, showing `modalShows`; Cancel leaves the `untouched` files as they were (or absent) and the
 * model is told. Returns the three results.
 */
async function allowanceStillAsks({ page, folder, screenshot }, { scenario, tool, allowance, written, third, modalShows, untouched, screenshotName }) {
	const before = untouched.map(rel => [rel, read(folder, rel)]);
	await play(page, scenario);
	await toolConfirmation(page, `the first ${tool} call`);
	await answerConfirmation(page, allowance);
	const asked = await nextQuestion(page, `the ${tool} call ${third}`);
	assert.equal(asked, 'modal', `After "${allowance}" chat asked again; the second ${tool} call should have run unasked and the third (${third}) brought Toolbelt's modal.`);
	for (const [rel, content] of Object.entries(written)) assert.equal(read(folder, rel), content, `${rel} after the two allowed calls`);
	const box = await dialog(page);
	assert.match(await shownText(box), modalShows);
	assert.equal(await page.locator('.chat-tool-confirmation-carousel').count(), 0, 'chat asks as well as the modal');
	if (screenshotName) await screenshot(screenshotName);
	await clickDialogButton(page, 'Cancel');
	const results = await toolResults(page, scenario);
	for (const [rel, content] of before) assert.equal(read(folder, rel), content, `${rel} ${content === undefined ? 'was created' : 'changed'} although the call was cancelled`);
	assert.deepEqual(results.map(result => result.name), [tool, tool, tool]);
	for (const allowed of results.slice(0, 2)) assert.doesNotMatch(allowed.text, /^Error/, 'an allowed ordinary call failed');
	assert.match(results[2].text, /^Error: The user declined .*Nothing was changed/);
	return results;
}

function allowanceStopsAtProtectedPath(context, { protectedPath, ...rest }) {
	return allowanceStillAsks(context, { ...rest, third: `on ${protectedPath}`, modalShows: literally(`Protected path: ${protectedPath}`), untouched: [protectedPath] });
}

/**
 * Undoes Toolbelt's last change as a person does: one Undo in the diff editor it opened. Toolbelt's
 * changes are not part of chat's editing session (chat offers no Keep/Undo for them): they are one
 * WorkspaceEdit, so one Undo in an editor of any of its files reverts them all (VS Code asks
 * nothing, the edit is not marked as a refactoring), and saving puts them back on disk.
 */
async function undoToolbeltChange(page, folder, originals) {
	const count = Object.keys(originals).length;
	await page.locator('.editor-instance .monaco-diff-editor .editor.modified .view-lines').first().click();
	await page.keyboard.press('ControlOrMeta+Z');
	// The other files are reverted a moment later; the Explorer's badge counts them all once they are.
	await expectShown(page.locator(`.activitybar .action-item a[aria-label*="${count} unsaved files"]`), `the Explorer to count ${count} unsaved files after one Undo`, 10_000);
	const restored = () => Object.entries(originals).every(([rel, text]) => read(folder, rel) === text);
	// In every run so far the first Save All left the files outside the active editor unsaved (cause
	// not found; not a save conflict, no notification says so): a person saves again.
	for (let attempt = 1; ; attempt++) {
		await runCommand(page, 'File: Save All');
		try {
			await until(`the ${count} files to be restored on disk`, restored, 5000);
			return;
		} catch (error) {
			const unsaved = Object.keys(originals).filter(rel => read(folder, rel) !== originals[rel]);
			const alerts = await page.locator('.monaco-aria-container .monaco-alert').allInnerTexts();
			console.log(`    (after Save All #${attempt}, not restored on disk: ${unsaved.join(', ')}; notifications: ${alerts.slice(-3).join(' | ') || 'none'})`);
			if (attempt === 2) throw error;
		}
	}
}

function contents(folder, rels) {
	return Object.fromEntries(rels.map(rel => [rel, read(folder, rel)]));
}

export const steps = [
	['agent mode opens with the scripted model (chat switched on through Chat: Manage Language Models)', async ({ page }) => {
		await openAgentChat(page, MODEL, () => until('Copilot Chat to activate (the scripted model reports it)', () => copilotChatVersion(recordFile), 60_000));
		await resizeSecondarySideBar(page, 640);
		console.log(`    (Copilot Chat ${copilotChatVersion(recordFile)})`);
	}],

	['read → edit: Toolbelt\'s diff in the chat confirmation; "Allow Once" edits the file and the model receives both results', async ({ page, folder, screenshot }) => {
		await play(page, 'read-then-edit');
		const card = await toolConfirmation(page, 'edit_file');
		const shown = await shownText(card);
		assert.match(shown, /-Toolbelt integration test workspace\./);
		assert.match(shown, /\+Edited by the scripted model\./);
		await screenshot('agent-confirmation');
		await answerConfirmation(page, 'Allow Once');
		const results = await toolResults(page, 'read-then-edit');
		assert.equal(read(folder, 'README.md'), 'Edited by the scripted model.\n');
		assert.match(results[0].text, /^README\.md: lines 1–1 of 1\n1\tToolbelt integration test workspace\.$/);
		assert.match(results[1].text, /^Edited README\.md: 1 edit, \+1 −1 lines\./);
		await page.locator('.tab', { hasText: 'README.md (Toolbelt: before ↔ after)' }).first().waitFor();
		await screenshot('agent-result');
	}],

	['"Skip" leaves the file alone and the model is told', async ({ page, folder }) => {
		const before = read(folder, 'src/greeting.ts');
		await play(page, 'edit-greeting');
		await toolConfirmation(page, 'edit_file');
		await answerConfirmation(page, 'Skip');
		const [result] = await toolResults(page, 'edit-greeting');
		assert.equal(read(folder, 'src/greeting.ts'), before);
		assert.match(result.text, /The user chose to skip the tool call/);
	}],

	['a path outside the workspace is refused without asking, and our message reaches the model', async ({ page, folder }) => {
		await play(page, 'escape');
		const results = await toolResults(page, 'escape');
		assert.equal(read(folder, '../outside.txt'), OUTSIDE);
		assert.deepEqual(results.map(result => result.name), ['toolbelt_read_file', 'toolbelt_write_file']);
		for (const result of results) {
			assert.match(result.text, /"\.\.\/outside\.txt" leaves the workspace through "\.\." \(rule: escapes_workspace\)\. Use a path inside the workspace folder/);
			assert.doesNotMatch(result.text, /next to the workspace/);
		}
	}],

	['invalid arguments: the model receives a message naming the field', async ({ page }) => {
		await play(page, 'invalid-args');
		const [result] = await toolResults(page, 'invalid-args');
		// Copilot checks a call against the tool's schema before calling it (ajv, coercing types: "5"
		// becomes 5) and answers the model itself, naming the first problem only: "ERROR: Your input to
		// the tool was invalid (must have required property 'path')". So in agent mode our own
		// field-by-field message is never reached; other callers (lm.invokeTool, the palette) get it.
		assert.match(result.text, /must have required property 'path'|- path: is required/);
		console.log(`    (answered by ${/Your input to the tool was invalid/.test(result.text) ? 'Copilot\'s schema check' : 'Toolbelt\'s validation'}: ${result.text.split('\n')[0]})`);
	}],

	['run_command in the sandbox: `echo hi > out.txt` runs after "Allow Once"; a write to $HOME is blocked and the model is told why', async ({ page, folder }) => {
		const outside = path.join(os.homedir(), OUTSIDE_SANDBOX);
		await play(page, 'run-sandboxed');
		const card = await toolConfirmation(page, 'run_command');
		const shown = await shownText(card);
		assert.match(shown, /echo hi > out\.txt && echo written/);
		assert.match(shown, /In the sandbox: it can change only the workspace/, 'the confirmation does not say the command runs in the sandbox');
		await answerConfirmation(page, 'Allow Once');
		await toolConfirmation(page, 'the run_command writing to $HOME');
		await answerConfirmation(page, 'Allow Once');
		const [echo, blocked] = await toolResults(page, 'run-sandboxed');
		assert.equal(read(folder, 'out.txt'), 'hi\n');
		assert.match(echo.text, /^Exit code 0 after .*\n--- stdout \(1 line, 8 B\) ---\nwritten/);
		assert.match(blocked.text, /^Exit code [1-9]/, 'the write to $HOME did not fail');
		assert.match(blocked.text, /Read-only file system/);
		assert.match(blocked.text, /Sandbox: a write was blocked; commands may change only the workspace folders .* or run it again with sandbox: false and a justification/);
		// The path as the command's shell saw $HOME, in case the extension host's differs from ours.
		const named = new RegExp(`(/\\S*${OUTSIDE_SANDBOX.replace(/[.]/g, '\\.')})`).exec(blocked.text)?.[1];
		for (const file of new Set([outside, named ?? outside])) assert.equal(fs.existsSync(file), false, `${file} was written: the command did not run in the sandbox`);
	}],

	['a custom tool (demo/\'s word_count) reaches the model through the MCP server Toolbelt offers, and runs', async ({ page, screenshot }) => {
		await play(page, 'custom-tool');
		// word_count is read-only, so VS Code runs it unasked. Sandboxed with the network off it is not
		// open-world, so VS Code need not put its result to review; with the network on it would.
		const review = page.locator('.interactive-session .monaco-button:visible', { hasText: 'Allow Without Review in this Session' }).first();
		await expectShown(review.or(page.getByText('Scenario custom-tool: the tools returned')).first(), 'chat\'s review of the custom tool\'s result, or the answer');
		if (await review.count()) {
			await expectShown(page.locator('.interactive-session').getByText('notes.txt: 3 lines, 3 words, 14 characters').first(), 'the result chat puts to review', 5000);
			await review.click();
		}
		const said = await transcriptText(page);
		if (/Scripted model: /.test(said)) throw new Error(`The scripted model could not call the custom tool: ${said.split('\n').find(line => line.includes('Scripted model: '))?.slice(0, 400)}`);
		const [result] = await toolResults(page, 'custom-tool');
		assert.equal(result.name, 'mcp_toolbelt_word_count');
		assert.equal(result.text, 'notes.txt: 3 lines, 3 words, 14 characters');
		await screenshot('agent-custom-tool');
	}],

	['apply_patch over two files, confirmed, then undone with one Undo', async ({ page, folder }) => {
		const originals = { 'notes.txt': read(folder, 'notes.txt'), 'src/greeting.ts': read(folder, 'src/greeting.ts') };
		await play(page, 'patch-two-files');
		const card = await toolConfirmation(page, 'apply_patch');
		assert.match(await shownText(card), /\+two, patched[\s\S]*\+\s+return `Hi, \$\{name\}!`;/);
		await answerConfirmation(page, 'Allow Once');
		const [result] = await toolResults(page, 'patch-two-files');
		assert.match(result.text, /^Applied the patch: 2 files changed, \+2 −2\./);
		assert.equal(read(folder, 'notes.txt'), 'one\ntwo, patched\nthree\n');
		assert.match(read(folder, 'src/greeting.ts'), /Hi, \$\{name\}!/);
		await undoToolbeltChange(page, folder, originals);
	}],

	['"Allow in this Session" on edit_file: the next edit runs unasked, an edit of .env still reaches Toolbelt\'s modal; Cancel keeps it', context => allowanceStopsAtProtectedPath(context, {
		scenario: 'edit-then-env', tool: 'toolbelt_edit_file', allowance: 'Allow in this Session', protectedPath: '.env',
		written: { 'checklist.txt': 'one, ticked\ntwo, ticked\nthree\n' }, screenshotName: 'agent-protected',
	})],

	['"Allow in this Workspace" on write_file: .vscode/settings.json still reaches Toolbelt\'s modal; Cancel keeps it', context => allowanceStopsAtProtectedPath(context, {
		scenario: 'write-then-settings', tool: 'toolbelt_write_file', allowance: 'Allow in this Workspace', protectedPath: '.vscode/settings.json',
		written: { 'notes/a.txt': 'a\n', 'notes/b.txt': 'b\n' },
	})],

	['"Always Allow" on apply_patch: a new .git/hooks/pre-commit still reaches Toolbelt\'s modal; Cancel keeps it out', context => allowanceStopsAtProtectedPath(context, {
		scenario: 'patch-then-hook', tool: 'toolbelt_apply_patch', allowance: 'Always Allow', protectedPath: '.git/hooks/pre-commit',
		written: { 'notes/c.txt': 'c\n', 'notes/d.txt': 'd\n' },
	})],

	['"Always Allow" on run_command: the next command runs unasked but sandboxed (.env stays read-only); `sandbox: false` still brings Toolbelt\'s modal with the reason; Cancel runs nothing', async context => {
		const results = await allowanceStillAsks(context, {
			scenario: 'command-then-unsandboxed', tool: 'toolbelt_run_command', allowance: 'Always Allow',
			written: { 'notes/e.txt': 'e\n' }, third: 'with sandbox: false',
			modalShows: new RegExp(`Outside the sandbox: it can read and write anything you can[\\s\\S]*${literally(`Reason given: ${JUSTIFICATION}`).source}`),
			untouched: ['.env', ESCALATION_MARKER], screenshotName: 'agent-unsandboxed',
		});
		assert.match(results[1].text, /Sandbox: a write was blocked/, 'the allowed `echo … >> .env` was not stopped by the sandbox');
		assert.doesNotMatch(read(context.folder, '.env'), literally(PLANTED.env));
	}],

	['rename_symbol in agent mode: the confirmation shows the 3-file diff; "Allow Once" renames across circle, report and shapes; one Undo restores them', async ({ page, folder, screenshot }) => {
		const originals = contents(folder, AREA_FILES);
		await runCommand(page, 'View: Close All Editors');
		await play(page, 'rename-ours');
		// The hover calls before it wait for the TypeScript server (bounded in the script); then the rename asks.
		const card = await toolConfirmation(page, 'rename_symbol (after the hover found the TypeScript server ready)');
		const shown = await shownText(card);
		assert.match(shown, /Rename area → surface in 3 files/);
		for (const rel of AREA_FILES) assert.match(shown, literally(rel), `the confirmation's diff leaves out ${rel}`);
		assert.match(shown, /-\s*area\(\): number/);
		assert.match(shown, /\+\s*surface\(\): number/);
		assert.match(shown, /\+.*shape\.surface\(\)/);
		for (const rel of AREA_FILES) assert.equal(read(folder, rel), originals[rel], `${rel} changed before the person allowed it`);
		await screenshot('agent-rename-ours');
		await answerConfirmation(page, 'Allow Once');
		const results = await toolResults(page, 'rename-ours');
		const hovers = results.filter(result => result.name === 'toolbelt_hover');
		assert.doesNotMatch(hovers.at(-1).text, /\(loading\.\.\.\)|^Error/, `the TypeScript server was not ready after ${hovers.length} hovers`);
		console.log(`    (TypeScript server ready after ${hovers.length} hover call(s): ${hovers.at(-1).text.split('\n').find(line => line.startsWith('('))})`);
		assert.match(results.at(-1).text, new RegExp(`^Renamed "${RENAME_AREA.symbol}" to "${RENAME_AREA.newName}": \\d+ edits in 3 files`));
		for (const rel of AREA_FILES) assert.match(read(folder, rel), /surface\(\)/, `${rel} after the rename`);
		assert.doesNotMatch(read(folder, 'ts-project/src/report.ts'), /\.area\(\)/);
		await undoToolbeltChange(page, folder, originals);
	}],

	['Copilot\'s vscode_renameSymbol on the same symbol: what the person sees before it changes files, and what chat\'s Undo restores', async ({ page, folder, screenshot }) => {
		const originals = contents(folder, AREA_FILES);
		await runCommand(page, 'View: Close All Editors');
		await play(page, 'rename-copilot');
		const first = await confirmationOrAnswer(page, /Scenario rename-copilot: the tools returned|Scripted model: /, 'vscode_renameSymbol');
		const changedBefore = AREA_FILES.filter(rel => read(folder, rel) !== originals[rel]);
		await screenshot('agent-rename-copilot');
		if (first === 'chat') {
			console.log(`    (chat asks first: ${(await shownText(page.locator('.chat-tool-confirmation-carousel'))).replace(/\s+/g, ' ').slice(0, 200)})`);
			await answerConfirmation(page, 'Allow Once');
		} else {
			const said = await transcriptText(page);
			if (/Scripted model: /.test(said)) throw new Error(`The scripted model could not call vscode_renameSymbol: ${said.split('\n').find(line => line.includes('Scripted model: '))?.slice(0, 300)}`);
			console.log('    (no confirmation: the rename ran unasked)');
		}
		const [result] = await toolResults(page, 'rename-copilot');
		assert.equal(result.name, 'vscode_renameSymbol', `the scripted model did not call vscode_renameSymbol: ${result.text}`);
		assert.match(result.text, /Renamed `area` to `surface`/);
		await until('the rename to reach the three files on disk (chat saves its edits)', () => AREA_FILES.every(rel => /surface\(\)/.test(read(folder, rel))), 10_000);
		console.log(`    (files changed when the first question or answer appeared: ${changedBefore.length ? changedBefore.join(', ') : 'none'})`);
		await undoChatEdits(page);
		await until('chat\'s Undo to restore the three files on disk', () => AREA_FILES.every(rel => read(folder, rel) === originals[rel]), 10_000);
	}],

	['what the model sees: Toolbelt\'s tools arrive as declared; definitions measured per request', async () => {
		const entries = readRecord(recordFile);
		const declared = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).contributes.languageModelTools;
		const offered = new Map(entries.find(entry => entry.tools.length).tools.map(tool => [tool.name, tool]));
		for (const tool of declared) {
			const sent = offered.get(tool.name);
			assert.ok(sent, `${tool.name} was not offered to the model`);
			assert.deepEqual(sent.inputSchema, tool.inputSchema, `${tool.name}'s schema as Copilot sent it`);
			assert.equal(sent.description, tool.modelDescription, `${tool.name}'s description as Copilot sent it`);
		}
		const footprint = toolFootprint(entries);
		assert.equal(footprint.ours, declared.length);
		console.log(describeFootprint(footprint).replace(/^/gm, '    '));
	}],

	['the tool picker lists Toolbelt\'s tools (tbRead, tbEdit, …) beside Copilot\'s built-in tool sets', async ({ page }) => {
		await openToolPicker(page);
		await pickerRow(page, 'Toolbelt').locator('.monaco-tl-twistie').click();
		// The list is virtual and Toolbelt has more tools than fit: scroll down to each (the mouse stays
		// over the list), then back up.
		await pickerRow(page, 'Toolbelt').hover();
		for (const name of ['tbCompleteTask', 'tbEdit', 'tbExec', 'tbRename']) await scrollToPickerRow(page, name);
		await page.mouse.wheel(0, -10_000);
		await pickerRow(page, 'Toolbelt').locator('.monaco-tl-twistie').click();
		for (const set of Object.keys(OVERLAPPING_BUILT_INS)) await pickerRow(page, set).waitFor();
		await page.keyboard.press('Escape');
	}],

	['unticking Copilot\'s overlapping tools in the picker (the README\'s advice) leaves one tool per job', async ({ page, screenshot }) => {
		await runCommand(page, 'View: Close All Editors');
		await openToolPicker(page);
		for (const [set, tools] of Object.entries(OVERLAPPING_BUILT_INS)) {
			if (!tools.length) {
				await pickerRow(page, set).locator('.monaco-checkbox').click();
				continue;
			}
			await pickerRow(page, set).locator('.monaco-tl-twistie').click();
			for (const tool of tools) await pickerRow(page, tool).locator('.monaco-checkbox').click();
			await pickerRow(page, set).locator('.monaco-tl-twistie').click();
		}
		await screenshot('agent-tools');
		await page.locator('.quick-input-widget .monaco-button', { hasText: 'OK' }).first().click();
		await play(page, 'tools-offered');
		await toolResults(page, 'tools-offered');
		const offered = new Set(closingRequest(recordFile, 'tools-offered').tools.map(tool => tool.name));
		const stillOffered = [...new Set(Object.values(COPILOT_COUNTERPARTS).flat())].filter(name => offered.has(name));
		assert.deepEqual(stillOffered, [], 'Copilot tools still offered after unticking them');
		const footprint = toolFootprint([closingRequest(recordFile, 'tools-offered')]);
		assert.equal(footprint.duplicates.length, 0);
		console.log(`    Then each request offers ${footprint.tools} tools, ${(footprint.bytes / 1024).toFixed(1)} KB of definitions, Toolbelt's ${footprint.ours} among them.`);
	}],
];

/**
 * Scrolls the tool picker (under the mouse) down until the row of `label` shows: rows out of view
 * are not in the page.
 */
async function scrollToPickerRow(page, label) {
	const row = pickerRow(page, label);
	for (let scrolls = 0; scrolls < 40 && !(await row.isVisible()); scrolls++) {
		await page.mouse.wheel(0, 66);
		await page.waitForTimeout(50);
	}
	await expectShown(row, `${label} in the tool picker under Toolbelt`, 2000);
}

/** The tool picker's row whose label starts with `label`. */
function pickerRow(page, label) {
	return page.locator('.quick-input-widget .monaco-list-row', { hasText: new RegExp(`^${label}`) }).first();
}
