import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { invokeText } from '../helpers';
import { checkServed, createWorkspaceFileSystem } from '../../../src/vscode/workspaceFs';

/**
 * The virtual suite: the workspace folder is memfs:/ws, served from memory by the test extension in
 * test/integration/memfsProvider. Nothing of it is on disk, so every file tool goes through
 * vscode.workspace.fs, and commands refuse.
 */
describe('a virtual workspace (memfs:)', () => {
	let provider: { text(file: string): string | undefined };

	before(async () => {
		const folder = vscode.workspace.workspaceFolders?.[0];
		assert.equal(folder?.uri.toString(), 'memfs:/ws');
		// The provider activates when the workspace's folder is first looked at.
		const extension = vscode.extensions.getExtension('toolbelt-dev.toolbelt-memfs')!;
		provider = extension.isActive ? extension.exports : await extension.activate();
	});

	it('reads, lists, finds and greps', async () => {
		assert.match(await invokeText('read_file', { path: 'src/app.ts' }), /^src\/app\.ts: lines 1–4 of 4\n1\texport const answer = 42;/);
		const listing = await invokeText('list_dir', {});
		assert.match(listing, /docs\/\n {2}notes\.md/);
		assert.match(listing, /hello\.txt {2}12 B/);
		assert.match(await invokeText('find_files', { pattern: '*.md' }), /^1 file match "\*\.md".*\ndocs\/notes\.md/m);
		const grep = await invokeText('grep', { pattern: 'hel+o' });
		assert.match(grep, /^3 matching lines/);
		assert.match(grep, /docs\/notes\.md:\n {2}2: hello again/);
	});

	it('writes, edits and patches through the file system, changing only what was asked', async () => {
		assert.match(await invokeText('write_file', { path: 'new/created.txt', content: 'made here\n' }), /created\.txt/);
		assert.equal(provider.text('/ws/new/created.txt'), 'made here\n');
		await invokeText('read_file', { path: 'hello.txt' });
		assert.match(await invokeText('edit_file', { path: 'hello.txt', edits: [{ oldText: 'world', newText: 'there' }] }), /hello\.txt/);
		assert.equal(provider.text('/ws/hello.txt'), 'hello\nthere\n');
		await invokeText('apply_patch', { patch: '*** Begin Patch\n*** Update File: src/app.ts\n@@\n-export const answer = 42;\n+export const answer = 43;\n*** Add File: src/more.ts\n+export {};\n*** End Patch' });
		assert.match(provider.text('/ws/src/app.ts') ?? '', /^export const answer = 43;\nexport function greet/);
		assert.equal(provider.text('/ws/src/more.ts'), 'export {};\n');
	});

	it('refuses to write under unsaved editor changes, which read_file shows', async () => {
		const document = await vscode.workspace.openTextDocument(vscode.Uri.parse('memfs:/ws/docs/notes.md'));
		const edit = new vscode.WorkspaceEdit();
		edit.insert(document.uri, new vscode.Position(0, 0), 'draft ');
		assert.ok(await vscode.workspace.applyEdit(edit));
		try {
			assert.match(await invokeText('read_file', { path: 'docs/notes.md' }), /^docs\/notes\.md \(unsaved editor text\): lines 1–2 of 2\n1\tdraft # Notes/);
			assert.match(await invokeText('edit_file', { path: 'docs/notes.md', edits: [{ oldText: 'again', newText: 'twice' }] }), /has unsaved changes in an editor/);
			assert.equal(provider.text('/ws/docs/notes.md'), '# Notes\nhello again\n');
		} finally {
			await vscode.commands.executeCommand('workbench.action.files.revert', document.uri);
		}
	});

	it('refuses what escapes the folder', async () => {
		assert.match(await invokeText('read_file', { path: '../outside.txt' }), /leaves the workspace/);
	});

	it('says in one sentence that a command needs a folder on disk', async () => {
		const text = await invokeText('run_command', { command: 'ls' });
		assert.match(text, /run_command needs a folder on disk \(file:\), this workspace is memfs:/);
		assert.equal(provider.text('/ws/hello.txt'), 'hello\nthere\n');
	});

	it('names a scheme no provider serves, and what to do instead, in one sentence', () => {
		assert.throws(() => checkServed('nowhere'), (error: Error) => /^No file system in this window serves the nowhere: scheme of this workspace, so Toolbelt cannot reach its files; open a folder on disk \(file:\)[^.]*\.$/.test(error.message));
		const folder = { uri: vscode.Uri.parse('nowhere:/x'), name: 'x', index: 0 };
		return assert.rejects(createWorkspaceFileSystem([folder]).stat('/x'), /nowhere:/);
	});

	it('the workspace.fs adapter maps paths to the folder\'s URIs and reports a missing file as ENOENT', async () => {
		const port = createWorkspaceFileSystem(vscode.workspace.workspaceFolders!);
		assert.equal(port.local, false);
		assert.equal(port.scheme, 'memfs');
		assert.ok((await port.stat('/ws/docs')).isDirectory());
		assert.deepEqual((await port.readDirectory('/ws/docs')).map(entry => [entry.name, entry.kind]), [['notes.md', 'file']]);
		await port.writeFile('/ws/deep/er/file.txt', new TextEncoder().encode('x'));
		assert.equal(provider.text('/ws/deep/er/file.txt'), 'x');
		await port.rename('/ws/deep/er/file.txt', '/ws/deep/moved.txt');
		await port.delete('/ws/deep/moved.txt');
		await assert.rejects(port.stat('/ws/deep/moved.txt'), (error: Error & { code?: string }) => error.code === 'ENOENT');
	});
});
