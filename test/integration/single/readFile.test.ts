import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { invokeText, workspace } from '../helpers';



describe('read_file inside VS Code', () => {
	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
	});

	afterEach(async () => {
		await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
	});

	it('offers every contributed tool in vscode.lm.tools', () => {
		const contributed: { name: string }[] = vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.packageJSON.contributes.languageModelTools;
		const available = new Set(vscode.lm.tools.map(tool => tool.name));
		assert.ok(contributed.length > 0);
		for (const tool of contributed) assert.ok(available.has(tool.name), `${tool.name} is not in vscode.lm.tools`);
	});

	it('returns the file text through lm.invokeTool', async () => {
		const text = await invokeText('toolbelt_read_file', { path: 'src/greeting.ts', offset: 2, limit: 1 });
		assert.equal(text.split('\n')[0], 'src/greeting.ts: lines 2–2 of 7');
		assert.match(text, /2\t\treturn `Hello, \$\{name\}!`;/);
		assert.match(text, /use offset=3 to continue/);
	});

	it('returns the unsaved text of an open, edited document', async () => {
		const uri = vscode.Uri.file(path.join(workspace(), 'src/greeting.ts'));
		const document = await vscode.workspace.openTextDocument(uri);
		const editor = await vscode.window.showTextDocument(document);
		await editor.edit(edit => edit.insert(new vscode.Position(0, 0), '// edited, not saved\n'));
		assert.ok(document.isDirty);
		const text = await invokeText('toolbelt_read_file', { path: 'src/greeting.ts', limit: 1 });
		assert.match(text, /^src\/greeting\.ts \(unsaved editor text\): lines 1–1 of 8\n1\t\/\/ edited, not saved/);
		assert.ok(!fs.readFileSync(uri.fsPath, 'utf8').includes('edited'), 'the disk copy is untouched');
	});

	it('rejects invalid input with a message naming the field', async () => {
		const text = await invokeText('toolbelt_read_file', { path: 'src/greeting.ts', offset: 'two', colour: 'red' });
		assert.match(text, /Invalid input for read_file/);
		assert.match(text, /- offset: expected an integer, got the string "two"/);
		assert.match(text, /- colour: is not a known field/);
	});

	it('refuses ../ escapes and symlinks that lead outside', async () => {
		const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-outside-'));
		fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret\n');
		fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace(), 'sneaky.txt'));
		try {
			const escape = await invokeText('toolbelt_read_file', { path: '../secret.txt' });
			assert.match(escape, /^Error: .*escapes_workspace/s);
			const link = await invokeText('toolbelt_read_file', { path: 'sneaky.txt' });
			assert.match(link, /^Error: .*symlink_escape/s);
			assert.doesNotMatch(link, /top secret/);
		} finally {
			fs.rmSync(path.join(workspace(), 'sneaky.txt'));
			fs.rmSync(outside, { recursive: true, force: true });
		}
	});

	it('gives a short invocation message and no confirmation for reads', async () => {
		const api = vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.exports;
		const events: any[] = [];
		const listener = api.onDidInvokeTool((event: any) => events.push(event));
		try {
			await invokeText('toolbelt_read_file', { path: 'README.md' });
		} finally {
			listener.dispose();
		}
		const end = events.find(event => event.phase === 'end');
		assert.equal(end.tool, 'read_file');
		assert.equal(end.status, 'done');
		assert.equal(end.target, 'README.md');
		assert.ok(end.bytes > 0);
	});
});
