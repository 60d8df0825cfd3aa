import * as assert from 'assert';
import * as vscode from 'vscode';

describe('smoke (multi-root)', () => {
	it('opens two workspace folders', () => {
		const folders = vscode.workspace.workspaceFolders ?? [];
		assert.deepStrictEqual(folders.map(folder => folder.name), ['one', 'two']);
	});
});
