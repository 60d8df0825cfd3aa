import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

// The contributions' `when` clauses take a switched-off tool out of the model's list; VS Code's
// `vscode.lm.tools` lists disabled tools too, so that part is checked in test/unit/manifest.test.ts
// against VS Code's own rule for array settings. Here: the refusal when called anyway, live.
describe('switching tools off in settings', () => {
	const config = () => vscode.workspace.getConfiguration('toolbelt');
	let api: any;

	before(async () => {
		api = await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
	});

	afterEach(async () => {
		await config().update('disabledTools', undefined, vscode.ConfigurationTarget.Workspace);
		await config().update('disabledGroups', undefined, vscode.ConfigurationTarget.Workspace);
	});

	it('refuses a tool switched off by name, at once and without a reload', async () => {
		assert.equal((await api.invoke('find_files', { pattern: '*.md' })).error, undefined);
		await config().update('disabledTools', ['find_files'], vscode.ConfigurationTarget.Workspace);
		const result = await api.invoke('find_files', { pattern: '*.md' });
		assert.equal(result.error?.code, 'disabled');
		assert.match(result.error.message, /switched off/);
		assert.equal((await api.invoke('grep', { pattern: 'Toolbelt' })).error, undefined, 'other tools still run');
	});

	it('refuses every tool of a switched-off group', async () => {
		await config().update('disabledGroups', ['read'], vscode.ConfigurationTarget.Workspace);
		const calls: [string, object][] = [['read_file', { path: 'README.md' }], ['grep', { pattern: 'x' }], ['list_dir', {}], ['find_files', { pattern: '*' }]];
		for (const [tool, input] of calls) assert.equal((await api.invoke(tool, input)).error?.code, 'disabled', tool);
		assert.equal((await api.invoke('get_plan', {})).error, undefined, 'tools of other groups still run');
		await config().update('disabledGroups', undefined, vscode.ConfigurationTarget.Workspace);
		assert.equal((await api.invoke('read_file', { path: 'README.md' })).error, undefined);
	});
});
