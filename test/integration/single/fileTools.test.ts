import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ALL_TOOLS, ToolRegistry } from '../../../src/tools';
import { createVscodeEnvironment } from '../../../src/vscode/environment';
import { createVscodeHost } from '../../../src/vscode/host';
import { prepare } from '../../../src/vscode/lmTools';
import { ChangeDiffs, ORIGINAL_SCHEME } from '../../../src/vscode/changeDiffs';
import { applyWithWorkspaceEdit } from '../../../src/vscode/mutation';
import { invokeText, until, workspace, writeFiles } from '../helpers';

/** This test's own diff documents (the extension's instance serves the schemes in its window). */
const diffs = new ChangeDiffs();

const DIR = 'file-tools-it';
const at = (rel: string) => path.join(workspace(), DIR, rel);
const invoke = invokeText;
const write = (files: Record<string, string>) => writeFiles(at('.'), files);




function diffTabs(): vscode.TabInputTextDiff[] {
	return vscode.window.tabGroups.all
		.flatMap(group => group.tabs)
		.map(tab => tab.input)
		.filter((input): input is vscode.TabInputTextDiff => input instanceof vscode.TabInputTextDiff);
}

/** A registry of our own over the VS Code host, for prepareInvocation and injected decisions. */
function ownRegistry(subscriptions: vscode.Disposable[]): ToolRegistry {
	const host = createVscodeHost({ storageDir: path.join(workspace(), '..', 'file-tools-storage'), applyChanges: applyWithWorkspaceEdit, showDiffs: changes => diffs.show(changes) });
	return new ToolRegistry(ALL_TOOLS, createVscodeEnvironment(host, subscriptions));
}

describe('file tools inside VS Code', () => {
	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
	});

	afterEach(async () => {
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		fs.rmSync(path.join(workspace(), DIR), { recursive: true, force: true });
	});

	it('edits an open document with unsaved changes in place: the person\'s text stays', async () => {
		write({ 'dirty.ts': 'export const a = 1;\nexport const b = 2;\n' });
		const document = await vscode.workspace.openTextDocument(at('dirty.ts'));
		const editor = await vscode.window.showTextDocument(document);
		await editor.edit(edit => edit.insert(new vscode.Position(0, 0), '// the person typed this\n'));
		assert.ok(document.isDirty);

		const text = await invoke('edit_file', { path: `${DIR}/dirty.ts`, edits: [{ oldText: 'export const b = 2;', newText: 'export const b = 3;' }] });
		assert.match(text, /^Edited file-tools-it\/dirty\.ts \(its unsaved editor text\): 1 edit, \+1 −1 lines\./);
		assert.equal(document.getText(), '// the person typed this\nexport const a = 1;\nexport const b = 3;\n');
		await until('the document is saved', () => !document.isDirty);
		assert.equal(fs.readFileSync(at('dirty.ts'), 'utf8'), '// the person typed this\nexport const a = 1;\nexport const b = 3;\n');
	});

	it('one Undo in the editor reverts the tool\'s edit', async () => {
		write({ 'undo.ts': 'const x = 1;\nconst y = 2;\n' });
		const document = await vscode.workspace.openTextDocument(at('undo.ts'));
		await vscode.window.showTextDocument(document, { preview: false });
		await invoke('edit_file', { path: `${DIR}/undo.ts`, edits: [{ oldText: 'const y = 2;', newText: 'const y = 20;\nconst z = 3;' }] });
		assert.equal(document.getText(), 'const x = 1;\nconst y = 20;\nconst z = 3;\n');
		await vscode.window.showTextDocument(document, { preview: false });
		await vscode.commands.executeCommand('undo');
		await until('the edit is undone', () => document.getText() === 'const x = 1;\nconst y = 2;\n');
	});

	it('opens a diff against a read-only original as a preview, leaving the person\'s editors open', async () => {
		write({ 'diff.txt': 'before\n', 'other.txt': 'focus stays here\n' });
		const other = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(at('other.txt')), { preview: false });
		await invoke('write_file', { path: `${DIR}/diff.txt`, content: 'after\n' });
		await until('a diff editor is open', () => diffTabs().some(tab => tab.modified.fsPath === at('diff.txt')));
		const tab = diffTabs().find(input => input.modified.fsPath === at('diff.txt'))!;
		assert.equal(tab.original.scheme, ORIGINAL_SCHEME);
		const original = await vscode.workspace.openTextDocument(tab.original);
		assert.equal(original.getText(), 'before\n');
		// Opened as a preview beside what the person had open: their editor's tab is still there.
		const tabs = vscode.window.tabGroups.all.flatMap(group => group.tabs);
		assert.ok(tabs.find(one => one.input === tab)?.isPreview, 'the diff opens as a preview tab');
		assert.ok(tabs.some(one => one.input instanceof vscode.TabInputText && one.input.uri.fsPath === other.document.uri.fsPath), 'the person\'s editor stays open');
		// The original is a virtual document: it cannot be saved over anything.
		assert.equal(original.uri.scheme === 'file', false);
	});

	it('writes a file with write_file and creates folders, leaving no temp file', async () => {
		const text = await invoke('write_file', { path: `${DIR}/new/deep/file.md`, content: '# hi\n' });
		assert.match(text, /^Wrote file-tools-it\/new\/deep\/file\.md \(created\)/);
		assert.equal(fs.readFileSync(at('new/deep/file.md'), 'utf8'), '# hi\n');
		assert.deepEqual(fs.readdirSync(at('new/deep')), ['file.md']);
	});

	it('keeps CRLF and the BOM when edit_file changes a file through VS Code', async () => {
		write({ 'crlf.txt': 'one\r\ntwo\r\n', 'bom.txt': '\ufeffeins\nzwei\n' });
		await invoke('edit_file', { path: `${DIR}/crlf.txt`, edits: [{ oldText: 'two', newText: 'two\nthree' }] });
		await invoke('edit_file', { path: `${DIR}/bom.txt`, edits: [{ oldText: 'zwei', newText: 'drei' }] });
		assert.equal(fs.readFileSync(at('crlf.txt'), 'utf8'), 'one\r\ntwo\r\nthree\r\n');
		assert.equal(fs.readFileSync(at('bom.txt'), 'utf8'), '\ufeffeins\ndrei\n');
	});

	it('refuses a stale write: the file changed on disk since read_file', async () => {
		write({ 'stale.txt': 'version 1\n' });
		await invoke('read_file', { path: `${DIR}/stale.txt` });
		await new Promise(resolve => setTimeout(resolve, 20));
		fs.writeFileSync(at('stale.txt'), 'version 2 from elsewhere\n');
		const text = await invoke('edit_file', { path: `${DIR}/stale.txt`, edits: [{ oldText: 'version', newText: 'v' }] });
		assert.match(text, /^Error: file-tools-it\/stale\.txt changed on disk since you last read it/);
		assert.equal(fs.readFileSync(at('stale.txt'), 'utf8'), 'version 2 from elsewhere\n');
	});

	it('a protected path asks for confirmation even with toolbelt.approval set to never, through Toolbelt itself, not chat', async () => {
		const config = vscode.workspace.getConfiguration('toolbelt');
		await config.update('approval', 'never', vscode.ConfigurationTarget.Workspace);
		const subscriptions: vscode.Disposable[] = [];
		try {
			const registry = ownRegistry(subscriptions);
			const ordinary = await prepare(registry, registry.get('write_file')!, { path: `${DIR}/plain.txt`, content: 'x' });
			assert.equal(ordinary.confirmationMessages, undefined, 'approval never: no confirmation for an ordinary file');
			// Chat's allowances can skip its confirmation, so a protected path gets none from chat…
			const guarded = await prepare(registry, registry.get('write_file')!, { path: `${DIR}/.env.local`, content: 'TOKEN=1\n' });
			assert.equal(guarded.confirmationMessages, undefined);
			const request = await registry.preview('write_file', { path: `${DIR}/.env.local`, content: 'TOKEN=1\n' });
			assert.equal(request?.title, `Create ${DIR}/.env.local`);
			assert.deepEqual(request?.kind === 'files' && request.protectedPaths, [`${DIR}/.env.local`]);
			assert.equal(fs.existsSync(at('.env.local')), false, 'preparing wrote nothing');
			// …and the invocation asks the person itself even though chat calls it "preconfirmed"
			// (decision injected, as VS Code's test mode confirms every dialog).
			const asked: string[] = [];
			const declined = await registry.invoke('write_file', { path: `${DIR}/.env.local`, content: 'TOKEN=1\n' }, {
				approval: 'preconfirmed',
				decide: async r => {
					asked.push(r.title);
					return false;
				},
			});
			assert.deepEqual(asked, [`Create ${DIR}/.env.local`]);
			assert.equal(declined.error?.code, 'declined');
			assert.equal(fs.existsSync(at('.env.local')), false);
		} finally {
			for (const subscription of subscriptions) subscription.dispose();
			await config.update('approval', undefined, vscode.ConfigurationTarget.Workspace);
		}
	});

	it('shows the diff of an edit in the confirmation, readable as plain text, and writes nothing to show it', async () => {
		write({ 'confirm.txt': 'alpha\nbeta\n' });
		const subscriptions: vscode.Disposable[] = [];
		try {
			const registry = ownRegistry(subscriptions);
			const prepared = await prepare(registry, registry.get('edit_file')!, { path: `${DIR}/confirm.txt`, edits: [{ oldText: 'beta', newText: 'BETA' }] });
			assert.equal(prepared.invocationMessage, `Editing ${DIR}/confirm.txt (1 edit)`);
			const message = prepared.confirmationMessages?.message;
			const body = typeof message === 'string' ? message : message?.value ?? '';
			assert.equal(prepared.confirmationMessages?.title, `Edit ${DIR}/confirm.txt?`);
			assert.match(body, /^```diff\n--- a\/file-tools-it\/confirm\.txt\n\+\+\+ b\/file-tools-it\/confirm\.txt\n@@ -1,2 \+1,2 @@\n alpha\n-beta\n\+BETA\n```$/);
			assert.equal(fs.readFileSync(at('confirm.txt'), 'utf8'), 'alpha\nbeta\n');
		} finally {
			for (const subscription of subscriptions) subscription.dispose();
		}
	});

	it('reports new problems for the changed file', async () => {
		write({ 'data.json': '{\n\t"a": 1\n}\n' });
		const document = await vscode.workspace.openTextDocument(at('data.json'));
		await vscode.window.showTextDocument(document);
		const text = await invoke('edit_file', { path: `${DIR}/data.json`, edits: [{ oldText: '"a": 1', newText: '"a": 1,,' }] });
		if (!vscode.extensions.getExtension('vscode.json-language-features')) return;
		assert.match(text, /New problems reported after the change:\nfile-tools-it\/data\.json:2:\d+ error/);
		const problems = await invoke('get_diagnostics', { paths: [`${DIR}/data.json`] });
		assert.match(problems, /^\d+ errors? and \d+ warnings? in 1 file \(file-tools-it\/data\.json\):\nfile-tools-it\/data\.json:2:\d+ error/);
	});

	it('honours files.exclude in find_files, grep and list_dir', async () => {
		write({ 'keep/a.txt': 'needle\n', 'skipped/b.txt': 'needle\n' });
		const files = vscode.workspace.getConfiguration('files');
		await files.update('exclude', { '**/skipped': true }, vscode.ConfigurationTarget.Workspace);
		try {
			assert.doesNotMatch(await invoke('find_files', { pattern: '*.txt', path: DIR }), /skipped/);
			assert.doesNotMatch(await invoke('grep', { pattern: 'needle', path: DIR }), /skipped\/b\.txt/);
			assert.match(await invoke('grep', { pattern: 'needle', path: DIR, includeIgnored: true }), /skipped\/b\.txt/);
			assert.match(await invoke('list_dir', { path: DIR }), /1 ignored entry not shown: skipped\//);
		} finally {
			await files.update('exclude', undefined, vscode.ConfigurationTarget.Workspace);
		}
	});
});
