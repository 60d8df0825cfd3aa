import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ALL_TOOLS, ToolRegistry } from '../../../src/tools';
import { createVscodeEnvironment } from '../../../src/vscode/environment';
import { createVscodeHost } from '../../../src/vscode/host';
import { prepare } from '../../../src/vscode/lmTools';
import { applyWithWorkspaceEdit } from '../../../src/vscode/mutation';
import { invokeText, until, workspace, writeFiles } from '../helpers';

const at = (rel: string) => path.join(workspace(), 'patch-it', rel);
const invoke = (input: object) => invokeText('apply_patch', input);
const write = (files: Record<string, string>) => writeFiles(at('.'), files);




describe('apply_patch inside VS Code', () => {
	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
	});

	afterEach(async () => {
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		fs.rmSync(path.join(workspace(), 'patch-it'), { recursive: true, force: true });
	});

	it('applies the whole patch as one edit: open editors follow, and one Undo reverts it', async () => {
		write({ 'a.ts': 'export const a = 1;\nexport const keep = true;\n', 'b.ts': 'export const b = 1;\n' });
		const a = await vscode.workspace.openTextDocument(at('a.ts'));
		const b = await vscode.workspace.openTextDocument(at('b.ts'));
		await vscode.window.showTextDocument(b, { preview: false });
		const editor = await vscode.window.showTextDocument(a, { preview: false });

		const text = await invoke({
			patch: [
				'*** Begin Patch',
				'*** Update File: patch-it/a.ts', '@@', '-export const a = 1;', '+export const a = 2;', ' export const keep = true;',
				'*** Update File: patch-it/b.ts', '@@', '-export const b = 1;', '+export const b = 2;',
				'*** End Patch',
			].join('\n'),
		});
		assert.match(text, /^Applied the patch: 2 files changed, \+2 −2\.\nM patch-it\/a\.ts \(\+1 −1\)\nM patch-it\/b\.ts \(\+1 −1\)/);
		assert.equal(a.getText(), 'export const a = 2;\nexport const keep = true;\n', 'the open editor shows the patched text');
		assert.equal(b.getText(), 'export const b = 2;\n');
		assert.equal(a.isDirty || b.isDirty, false, 'the patched documents are saved');
		assert.equal(fs.readFileSync(at('a.ts'), 'utf8'), 'export const a = 2;\nexport const keep = true;\n');

		// The diffs shown after the change may have taken the focus: undo from the file's own editor.
		await vscode.window.showTextDocument(editor.document, { preview: false });
		assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, at('a.ts'));
		await vscode.commands.executeCommand('undo');
		await until('both files are back', () => a.getText().startsWith('export const a = 1;') && b.getText() === 'export const b = 1;\n');
		assert.equal(a.getText(), 'export const a = 1;\nexport const keep = true;\n');
	});

	it('creates, deletes and renames files through the same edit, and one Undo takes them back', async () => {
		write({ 'gone.txt': 'bye\n', 'old.txt': 'moving\nline\n' });
		const text = await invoke({
			patch: [
				'diff --git a/patch-it/new/file.txt b/patch-it/new/file.txt',
				'new file mode 100644',
				'--- /dev/null',
				'+++ b/patch-it/new/file.txt',
				'@@ -0,0 +1 @@',
				'+created',
				'diff --git a/patch-it/gone.txt b/patch-it/gone.txt',
				'deleted file mode 100644',
				'--- a/patch-it/gone.txt',
				'+++ /dev/null',
				'@@ -1 +0,0 @@',
				'-bye',
				'diff --git a/patch-it/old.txt b/patch-it/moved.txt',
				'rename from patch-it/old.txt',
				'rename to patch-it/moved.txt',
				'--- a/patch-it/old.txt',
				'+++ b/patch-it/moved.txt',
				'@@ -1,2 +1,2 @@',
				' moving',
				'-line',
				'+LINE',
			].join('\n'),
		});
		assert.match(text, /A patch-it\/new\/file\.txt \(\+1 −0\)\nD patch-it\/gone\.txt \(\+0 −1\)\nR patch-it\/old\.txt → patch-it\/moved\.txt \(\+1 −1\)/);
		assert.equal(fs.readFileSync(at('new/file.txt'), 'utf8'), 'created\n');
		assert.equal(fs.existsSync(at('gone.txt')), false);
		assert.equal(fs.existsSync(at('old.txt')), false);
		await until('the moved file is saved', () => fs.existsSync(at('moved.txt')) && fs.readFileSync(at('moved.txt'), 'utf8') === 'moving\nLINE\n');

		// One Undo from the moved file's editor takes back the file operations as well.
		const moved = await vscode.workspace.openTextDocument(at('moved.txt'));
		await vscode.window.showTextDocument(moved, { preview: false });
		await vscode.commands.executeCommand('undo');
		await until('the patch is undone', () => fs.existsSync(at('old.txt')) && !fs.existsSync(at('moved.txt')) && fs.existsSync(at('gone.txt')) && !fs.existsSync(at('new/file.txt')));
		assert.equal(fs.readFileSync(at('gone.txt'), 'utf8'), 'bye\n');
		assert.equal(moved.getText(), 'moving\nline\n', 'the renamed document is back under its old name with its old text');
		assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, at('old.txt'));
	});

	it('keeps a CRLF file CRLF and a BOM file\'s BOM when edited through VS Code', async () => {
		write({ 'crlf.txt': 'one\r\ntwo\r\n', 'bom.txt': '\ufefffirst\nsecond\n' });
		await invoke({ patch: '*** Begin Patch\n*** Update File: patch-it/crlf.txt\n@@\n one\n-two\n+2\n+3\n*** Update File: patch-it/bom.txt\n@@\n-second\n+2nd\n*** End Patch' });
		await until('both are saved', () => fs.readFileSync(at('crlf.txt'), 'utf8').includes('3') && fs.readFileSync(at('bom.txt'), 'utf8').includes('2nd'));
		assert.equal(fs.readFileSync(at('crlf.txt'), 'utf8'), 'one\r\n2\r\n3\r\n');
		assert.deepEqual([...fs.readFileSync(at('bom.txt')).subarray(0, 3)], [0xef, 0xbb, 0xbf]);
		assert.equal(fs.readFileSync(at('bom.txt'), 'utf8'), '\ufefffirst\n2nd\n');
	});

	it('shows the per-file diff in the confirmation, and changes nothing to show it', async () => {
		write({ 'c.txt': 'alpha\nbeta\n', 'd.txt': 'gamma\n' });
		const subscriptions: vscode.Disposable[] = [];
		try {
			const host = createVscodeHost({ storageDir: path.join(workspace(), '..', 'patch-storage'), applyChanges: applyWithWorkspaceEdit });
			const registry = new ToolRegistry(ALL_TOOLS, createVscodeEnvironment(host, subscriptions));
			const tool = registry.get('apply_patch')!;
			const patch = '--- a/patch-it/c.txt\n+++ b/patch-it/c.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n--- a/patch-it/d.txt\n+++ b/patch-it/d.txt\n@@ -1 +1 @@\n-gamma\n+GAMMA\n';
			const prepared = await prepare(registry, tool, { patch });
			assert.equal(prepared.invocationMessage, 'Applying a patch to 2 files');
			const message = prepared.confirmationMessages?.message;
			const body = typeof message === 'string' ? message : message?.value ?? '';
			assert.equal(prepared.confirmationMessages?.title, 'Apply patch to 2 files: patch-it/c.txt, patch-it/d.txt?');
			assert.match(body, /--- a\/patch-it\/c\.txt\n\+\+\+ b\/patch-it\/c\.txt\n@@ -1,2 \+1,2 @@\n alpha\n-beta\n\+BETA/);
			assert.match(body, /--- a\/patch-it\/d\.txt\n\+\+\+ b\/patch-it\/d\.txt\n@@ -1,1 \+1,1 @@\n-gamma\n\+GAMMA/);
			assert.equal(fs.readFileSync(at('c.txt'), 'utf8'), 'alpha\nbeta\n', 'preparing the confirmation wrote nothing');
		} finally {
			for (const subscription of subscriptions) subscription.dispose();
		}
	});

	it('reports a hunk that does not fit and leaves every file and editor as it was', async () => {
		write({ 'e.txt': 'one\n', 'f.txt': 'two\n' });
		const e = await vscode.workspace.openTextDocument(at('e.txt'));
		await vscode.window.showTextDocument(e);
		const text = await invoke({ patch: '*** Begin Patch\n*** Update File: patch-it/e.txt\n@@\n-one\n+1\n*** Update File: patch-it/f.txt\n@@\n-three\n+3\n*** End Patch' });
		assert.match(text, /^Error: patch-it\/f\.txt: hunk 1 \(patch line 7\) does not fit the file/);
		assert.equal(e.getText(), 'one\n');
		assert.equal(e.isDirty, false);
		assert.equal(fs.readFileSync(at('f.txt'), 'utf8'), 'two\n');
	});
});
