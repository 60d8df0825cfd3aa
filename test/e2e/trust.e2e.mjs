// Workspace Trust in the real workbench: the person answers "No" to VS Code's trust question; the
// commands that change files or run commands refuse and say why and how to trust; read tools work.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { notification, pick, runCommand } from '../../scripts/lib/workbench.mjs';

export const options = { workspaceTrust: true };

export const steps = [
	['the folder opens in Restricted Mode (not trusted), with Toolbelt loaded', async ({ page }) => {
		await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor();
		await page.locator('.activitybar .action-item a[aria-label^="Toolbelt"]').waitFor();
	}],

	['Run Tool… refuses a tool that writes, saying why and how to trust', async ({ page, file }) => {
		const before = fs.readFileSync(file('README.md'), 'utf8');
		await runCommand(page, 'Toolbelt: Run Tool…');
		await pick(page, 'write_file');
		await notification(page, /"Run write_file" changes files or runs commands, and this workspace is not trusted/);
		assert.equal(fs.readFileSync(file('README.md'), 'utf8'), before);
	}],

	['Apply Patch from Clipboard refuses too', async ({ page }) => {
		await runCommand(page, 'Toolbelt: Apply Patch from Clipboard');
		await notification(page, /"Apply Patch from Clipboard" changes files or runs commands, and this workspace is not trusted/);
	}],

	['a read tool still works: get_plan opens its result', async ({ page, screenshot }) => {
		await runCommand(page, 'Toolbelt: Run Tool…');
		await pick(page, 'get_plan');
		await pick(page, 'Fill in prompts');
		await pick(page, 'Run get_plan', 'Run');
		await page.locator('.tab', { hasText: 'get_plan result' }).first().waitFor();
		await page.locator('.editor-instance .view-line', { hasText: 'The plan is empty' }).first().waitFor();
		await screenshot('untrusted');
	}],
];
