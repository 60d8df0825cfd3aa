import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ToolEvent } from '../../../src/core/context';
import type { ToolbeltApi } from '../../../src/vscode/api';
import { invokeText, waitFor, workspace } from '../helpers';

const planFile = () => path.join(workspace(), '.toolbelt', 'plan.json');
const TASKS = [
	{ title: 'Sketch the API', status: 'completed' },
	{ title: 'Write the code', status: 'in_progress', details: 'src/ first' },
	{ title: 'Document it', status: 'pending' },
];


function planStatuses(): string[] {
	return JSON.parse(fs.readFileSync(planFile(), 'utf8')).tasks.map((task: { status: string }) => task.status);
}


describe('the VS Code experience', () => {
	let api: ToolbeltApi;
	const events: ToolEvent[] = [];

	before(async () => {
		api = await vscode.extensions.getExtension<ToolbeltApi>('toolbelt-dev.toolbelt')!.activate();
		api.onDidInvokeTool(event => events.push(event));
	});

	afterEach(async () => {
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
	});

	it('registers every contributed command, each in the Toolbelt category', async () => {
		const manifest = vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.packageJSON.contributes;
		const registered = new Set(await vscode.commands.getCommands(true));
		assert.ok(manifest.commands.length >= 15);
		for (const command of manifest.commands) {
			assert.ok(registered.has(command.command), `${command.command} is contributed but not registered`);
			assert.equal(command.category, 'Toolbelt');
		}
		const inPalette = new Map(manifest.menus.commandPalette.map((entry: { command: string; when: string }) => [entry.command, entry.when]));
		for (const command of manifest.commands) assert.ok(inPalette.has(command.command), `${command.command} has no commandPalette when clause`);
	});

	it('plan tools work through lm.invokeTool and write the plan file', async () => {
		const written = await invokeText('toolbelt_update_plan', { tasks: TASKS });
		assert.match(written, /Plan saved to \.toolbelt\/plan\.json: 1 of 3 completed, 1 in progress/);
		assert.deepEqual(planStatuses(), ['completed', 'in_progress', 'pending']);
		assert.equal(await invokeText('toolbelt_get_plan', { abridged: true }), '1. [x] Sketch the API\n2. [~] Write the code\n3. [ ] Document it');
	});

	it('ticking a task in the Plan view updates the file, and the next get_plan sees it', async () => {
		await invokeText('toolbelt_update_plan', { tasks: TASKS });
		await vscode.commands.executeCommand('toolbelt.plan.complete', { number: 2, task: TASKS[1] });
		assert.deepEqual(planStatuses(), ['completed', 'completed', 'pending']);
		assert.match(await invokeText('toolbelt_get_plan', { abridged: true }), /^2\. \[x\] Write the code$/m);
		await vscode.commands.executeCommand('toolbelt.plan.reopen', { number: 1, task: TASKS[0] });
		assert.deepEqual(planStatuses(), ['pending', 'completed', 'pending']);
	});

	it('a tick on a plan that changed meanwhile is refused, not applied to the wrong task', async () => {
		await invokeText('toolbelt_update_plan', { tasks: TASKS });
		const applied = await vscode.commands.executeCommand('toolbelt.plan.complete', { number: 3, task: { title: 'Something else', status: 'pending' } });
		assert.equal(applied, false);
		assert.deepEqual(planStatuses(), ['completed', 'in_progress', 'pending']);
	});

	it('a broken plan file is reported by get_plan and replaced by the next update, keeping the old one', async () => {
		fs.mkdirSync(path.dirname(planFile()), { recursive: true });
		fs.writeFileSync(planFile(), '{ not json');
		await diskChangeSeen(planFile(), '{ not json');
		assert.match(await invokeText('toolbelt_get_plan', {}), /could not be read: it is not valid JSON/);
		await invokeText('toolbelt_update_plan', { tasks: TASKS });
		assert.deepEqual(planStatuses(), ['completed', 'in_progress', 'pending']);
		const kept = fs.readdirSync(path.dirname(planFile())).filter(name => name.startsWith('plan.json.broken-'));
		assert.equal(kept.length, 1);
	});

	it('Open Plan opens the plan file', async () => {
		await invokeText('toolbelt_update_plan', { tasks: TASKS });
		await vscode.commands.executeCommand('toolbelt.openPlan');
		const editor = await waitFor('the plan editor', () => vscode.window.activeTextEditor);
		assert.equal(editor.document.uri.fsPath, planFile());
	});

	it('serves each tool\'s schema for the JSON input editor, with $schema allowed', async () => {
		const document = await vscode.workspace.openTextDocument(vscode.Uri.parse('toolbelt-schema:/read_file.schema.json'));
		const schema = JSON.parse(document.getText());
		assert.equal(schema.additionalProperties, false);
		assert.ok(schema.properties.path && schema.properties.$schema);
		assert.deepEqual(schema.required, ['path']);
	});

	it('a JSON input that does not parse or fails the schema is underlined and nothing runs', async () => {
		const editor = await inputEditor('read_file', '{\n\t"path": "src/greeting.ts",\n\t"limit": 0,\n\t"bogus": 1\n}\n');
		const uri = editor.document.uri;
		const runsBefore = events.filter(event => event.phase === 'start').length;
		assert.equal(await vscode.commands.executeCommand('toolbelt.runInputDocument', uri), undefined);
		const problems = vscode.languages.getDiagnostics(uri).filter(d => d.source === 'Toolbelt');
		assert.deepEqual(problems.map(d => d.message.split(' ')[0]).sort(), ['bogus', 'limit']);
		const limit = problems.find(d => d.message.startsWith('limit'))!;
		assert.equal(limit.range.start.line, 2);
		assert.equal(events.filter(event => event.phase === 'start').length, runsBefore, 'a tool ran despite the errors');

		await replaceText(editor, '{ "path": ');
		assert.equal(vscode.languages.getDiagnostics(uri).filter(d => d.source === 'Toolbelt').length, 0, 'an edit leaves stale underlines');
		await vscode.commands.executeCommand('toolbelt.runInputDocument', uri);
		const syntax = vscode.languages.getDiagnostics(uri).filter(d => d.source === 'Toolbelt');
		assert.match(syntax[0].message, /^Not valid JSON/);
		assert.equal(events.filter(event => event.phase === 'start').length, runsBefore, 'a tool ran despite the errors');
	});

	it('a valid JSON input runs the tool and opens the result in a read-only editor', async () => {
		const editor = await inputEditor('read_file', '{ "$schema": "toolbelt-schema:/read_file.schema.json", "path": "src/greeting.ts", "limit": 1 }');
		const uri = editor.document.uri;
		const result = await vscode.commands.executeCommand<{ content: { kind: string; text: string }[] }>('toolbelt.runInputDocument', uri);
		assert.match(result.content[0].text, /src\/greeting\.ts: lines 1–1 of 7/);
		const shown = await waitFor('the result editor', () => vscode.window.visibleTextEditors.find(e => e.document.uri.scheme === 'toolbelt-result'));
		assert.match(shown.document.getText(), /^Read File — Reading src\/greeting\.ts\nInput: /);
		assert.match(shown.document.getText(), /lines 1–1 of 7/);
		assert.equal(vscode.languages.getDiagnostics(uri).filter(d => d.source === 'Toolbelt').length, 0);
		assert.equal(vscode.workspace.fs.isWritableFileSystem('toolbelt-result'), false, 'results are not read-only');
	});

	it('every call reaches the API event, and its Activity entry shows input and result', async () => {
		const before = events.length;
		await invokeText('toolbelt_get_plan', { abridged: true });
		const end = await waitFor('the end event', () => events.slice(before).find(event => event.phase === 'end' && event.tool === 'get_plan'));
		assert.equal(end.status, 'done');
		assert.ok((end.durationMs ?? -1) >= 0);
		await waitFor('the activity entry', async () => {
			await vscode.commands.executeCommand('toolbelt.activity.showDetails', end.id);
			return vscode.window.activeTextEditor?.document.uri.scheme === 'toolbelt-result';
		});
		const text = vscode.window.activeTextEditor!.document.getText();
		assert.match(text, /^get_plan — done in \d+ ms/);
		assert.match(text, /## Input\n\{\n {2}"abridged": true\n\}/);
		assert.match(text, /## Result\n1\. \[/);
		assert.equal(vscode.window.activeTextEditor!.document.languageId, 'toolbelt-result');
		assert.match(vscode.window.activeTextEditor!.document.uri.path, /\/get_plan at \d\d:\d\d:\d\d$/, 'a title without internal ids');
	});

	it('a mutating Activity entry opens the diff of what it changed', async () => {
		const before = events.length;
		await invokeText('toolbelt_complete_task', { taskNumber: 3 });
		const end = await waitFor('the end event', () => events.slice(before).find(event => event.phase === 'end' && event.tool === 'complete_task'));
		assert.equal(end.status, 'done', end.error?.message);
		await waitFor('the diff editor', async () => {
			await vscode.commands.executeCommand('toolbelt.activity.open', end.id);
			const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
			return tab?.input instanceof vscode.TabInputTextDiff && tab.input.modified.fsPath === planFile() ? tab : undefined;
		});
		const tab = vscode.window.tabGroups.activeTabGroup.activeTab!;
		assert.match(tab.label, /plan\.json \(before complete_task ↔ now\)/);
		const original = await vscode.workspace.openTextDocument((tab.input as vscode.TabInputTextDiff).original);
		assert.equal(JSON.parse(original.getText()).tasks[2].status, 'pending');
	});

	it('the API cancels a running call through its token, and the process is gone', async function () {
		if (!api.invoke || !vscode.lm.tools.some(tool => tool.name === 'toolbelt_run_command')) this.skip();
		// Modal dialogs refuse to open in extension tests: let the command run without asking.
		const config = vscode.workspace.getConfiguration('toolbelt');
		await config.update('approval', 'never', vscode.ConfigurationTarget.Workspace);
		after(() => config.update('approval', undefined, vscode.ConfigurationTarget.Workspace));
		const marker = `toolbelt-cancel-${Date.now()}`;
		const source = new vscode.CancellationTokenSource();
		const started = Date.now();
		const call = api.invoke('run_command', { command: `sleep 30 # ${marker}` }, source.token);
		setTimeout(() => source.cancel(), 500);
		const result = await call;
		assert.equal(result.error?.code, 'cancelled', result.error?.message);
		assert.ok(Date.now() - started < 10_000, `cancellation took ${Date.now() - started} ms`);
		await waitFor('the process to end', () => !fs.readdirSync('/proc').some(pid => /^\d+$/.test(pid) && readCmdline(pid).includes(marker)));
	});

	it('an image result opens in the image preview beside its text', async () => {
		// A 1×1 PNG.
		const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
		fs.writeFileSync(path.join(workspace(), 'dot.png'), png);
		const editor = await inputEditor('read_file', '{ "path": "dot.png" }');
		const result = await vscode.commands.executeCommand<{ content: { kind: string }[] }>('toolbelt.runInputDocument', editor.document.uri);
		assert.deepEqual(result.content.map(part => part.kind), ['text', 'image']);
		const tab = await waitFor('the image tab', () => vscode.window.tabGroups.all.flatMap(group => group.tabs)
			.find(candidate => candidate.input instanceof vscode.TabInputCustom && candidate.input.uri.scheme === 'toolbelt-result' && candidate.input.uri.path.endsWith('.png')));
		const bytes = await vscode.workspace.fs.readFile((tab.input as vscode.TabInputCustom).uri);
		assert.equal(Buffer.compare(Buffer.from(bytes), png), 0);
	});

	it('Apply Patch from Editor and from Clipboard change the workspace (approval off for the test)', async () => {
		const config = vscode.workspace.getConfiguration('toolbelt');
		await config.update('approval', 'never', vscode.ConfigurationTarget.Workspace);
		try {
			const fromEditor = '*** Begin Patch\n*** Add File: notes/from-editor.txt\n+patched from an editor\n*** End Patch\n';
			const document = await vscode.workspace.openTextDocument({ content: fromEditor, language: 'diff' });
			await vscode.window.showTextDocument(document);
			await vscode.commands.executeCommand('toolbelt.applyPatchFromEditor');
			await vscode.window.showTextDocument(document);
			await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
			assert.equal(fs.readFileSync(path.join(workspace(), 'notes/from-editor.txt'), 'utf8'), 'patched from an editor\n');

			await vscode.env.clipboard.writeText('*** Begin Patch\n*** Update File: notes/from-editor.txt\n@@\n-patched from an editor\n+and then from the clipboard\n*** End Patch\n');
			await vscode.commands.executeCommand('toolbelt.applyPatchFromClipboard');
			assert.equal(fs.readFileSync(path.join(workspace(), 'notes/from-editor.txt'), 'utf8'), 'and then from the clipboard\n');
		} finally {
			await config.update('approval', undefined, vscode.ConfigurationTarget.Workspace);
		}
	});

	it('Stop All Sessions stops a live session, and says so when there is none', async function () {
		if (!vscode.lm.tools.some(tool => tool.name === 'toolbelt_exec_command')) this.skip();
		const config = vscode.workspace.getConfiguration('toolbelt');
		await config.update('approval', 'never', vscode.ConfigurationTarget.Workspace);
		try {
			const started = await api.invoke('exec_command', { command: 'sleep 60', yieldMs: 100 });
			assert.equal(started.error, undefined, started.error?.message);
			assert.equal(await vscode.commands.executeCommand('toolbelt.stopAllSessions'), 1);
			const listed = await api.invoke('list_sessions', {});
			assert.doesNotMatch(listed.content.map(part => (part.kind === 'text' ? part.text : '')).join(''), /sleep 60.*running/);
			assert.equal(await vscode.commands.executeCommand('toolbelt.stopAllSessions'), 0);
		} finally {
			await config.update('approval', undefined, vscode.ConfigurationTarget.Workspace);
		}
	});
});

/** The input document of a tool, open in an editor with exactly this text. */
async function inputEditor(tool: string, text: string): Promise<vscode.TextEditor> {
	const uri = vscode.Uri.parse(`toolbelt-input:/${tool}.json`);
	await vscode.workspace.fs.writeFile(uri, Buffer.from(''));
	const editor = await vscode.window.showTextDocument(uri);
	await replaceText(editor, text);
	return editor;
}

async function replaceText(editor: vscode.TextEditor, text: string): Promise<void> {
	const all = new vscode.Range(0, 0, editor.document.lineCount, 0);
	assert.ok(await editor.edit(builder => builder.replace(all, text)));
}

/** VS Code notices a change made on disk behind its back a moment later; tools then see it. */
async function diskChangeSeen(file: string, text: string): Promise<void> {
	await waitFor(`VS Code to see the new ${path.basename(file)}`, () => {
		const document = vscode.workspace.textDocuments.find(doc => doc.uri.fsPath === file);
		return !document || document.getText() === text;
	});
}

function readCmdline(pid: string): string {
	try {
		return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
	} catch {
		return '';
	}
}
