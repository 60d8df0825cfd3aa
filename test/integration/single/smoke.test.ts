import * as assert from 'assert';
import * as vscode from 'vscode';

describe('smoke (single folder)', () => {
	it('has the extension and activates it', async () => {
		const extension = vscode.extensions.getExtension('toolbelt-dev.toolbelt');
		assert.ok(extension, 'toolbelt-dev.toolbelt is not installed');
		await extension.activate();
		assert.strictEqual(extension.isActive, true);
	});

	it('opens the test workspace', () => {
		const folders = vscode.workspace.workspaceFolders ?? [];
		assert.strictEqual(folders.length, 1);
		assert.strictEqual(folders[0].uri.fsPath, process.env.TOOLBELT_TEST_WORKSPACE);
	});
});
