import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { invokeText } from '../helpers';


describe('file tools in a multi-root workspace', () => {
	const folders = () => vscode.workspace.workspaceFolders!;

	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
		fs.writeFileSync(path.join(folders()[0].uri.fsPath, 'shared.txt'), 'common word in one\n');
		fs.writeFileSync(path.join(folders()[1].uri.fsPath, 'shared.txt'), 'common word in two\n');
	});

	after(() => {
		for (const folder of folders()) fs.rmSync(path.join(folder.uri.fsPath, 'shared.txt'), { force: true });
	});

	it('grep searches every folder together, with folder-qualified paths in folder order', async () => {
		const text = await invokeText('grep', { pattern: 'common word' });
		assert.match(text, /^2 matching lines in 2 files for "common word"/);
		assert.match(text, /one\/shared\.txt:1: common word in one\n\ntwo\/shared\.txt:1: common word in two/);
	});

	it('grep narrows to one folder by its name', async () => {
		const text = await invokeText('grep', { pattern: 'common word', path: 'two' });
		assert.match(text, /^1 matching line in 1 file/);
		assert.match(text, /two\/shared\.txt:1: common word in two/);
	});

	it('find_files and list_dir cover both folders', async () => {
		const found = await invokeText('find_files', { pattern: '*.txt' });
		assert.match(found, /one\/a\.txt\none\/shared\.txt\ntwo\/b\.txt\ntwo\/shared\.txt/);
		const listed = await invokeText('list_dir', {});
		assert.match(listed, /^The 2 workspace folders/);
		assert.match(listed, /^one\/ {2}\(.*\)\n {2}a\.txt/m);
		assert.match(listed, /^two\/ {2}\(.*\)\n {2}b\.txt/m);
	});

	it('edit_file writes into the folder its path names', async () => {
		const text = await invokeText('edit_file', { path: 'two/b.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] });
		assert.match(text, /^Edited two\/b\.txt/);
		assert.equal(fs.readFileSync(path.join(folders()[1].uri.fsPath, 'b.txt'), 'utf8'), 'BETA\n');
	});
});
