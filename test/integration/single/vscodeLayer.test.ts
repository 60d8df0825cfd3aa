import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ALL_TOOLS, ToolRegistry } from '../../../src/tools';
import { safeDescribe } from '../../../src/tools/tool';
import type { FileChange } from '../../../src/core/context';
import { Boundary } from '../../../src/core/policy/boundary';
import { createVscodeEnvironment } from '../../../src/vscode/environment';
import { createVscodeHost, modalContent } from '../../../src/vscode/host';
import { prepare } from '../../../src/vscode/lmTools';
import { ChangeDiffs, ORIGINAL_SCHEME, PROPOSED_SCHEME } from '../../../src/vscode/changeDiffs';
import { applyWithWorkspaceEdit, unsavedError } from '../../../src/vscode/mutation';
import { toolPickItems } from '../../../src/vscode/runTool';
import { readSettings } from '../../../src/vscode/settings';
import { invokeText, waitFor, workspace } from '../helpers';

/** This test's own diff documents (the extension's instance serves the schemes in its window). */
const diffs = new ChangeDiffs();

/** A registry of our own over the VS Code host, for prepareInvocation. */
function ownRegistry(subscriptions: vscode.Disposable[]): ToolRegistry {
	const host = createVscodeHost({ storageDir: path.join(workspace(), '..', 'vscode-layer-storage'), applyChanges: applyWithWorkspaceEdit, showDiffs: changes => diffs.show(changes) });
	return new ToolRegistry(ALL_TOOLS, createVscodeEnvironment(host, subscriptions));
}

describe('the VS Code layer', () => {
	const subscriptions: vscode.Disposable[] = [];

	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
	});

	after(() => {
		for (const subscription of subscriptions.splice(0)) subscription.dispose();
	});

	it('a describe that throws on odd input falls back to the display name, in chat as elsewhere', async () => {
		const readFile = ALL_TOOLS.find(tool => tool.name === 'read_file')!;
		const fragile = { ...readFile, describe: () => { throw new Error('no path'); } };
		assert.equal(safeDescribe(fragile, {}), readFile.displayName);
		assert.equal(safeDescribe(readFile, { path: 'README.md' }), 'Reading README.md');
		const prepared = await prepare(ownRegistry(subscriptions), fragile, {});
		assert.equal(prepared.invocationMessage, readFile.displayName);
	});

	it('cuts a long diff in the confirmation with a marker, in chat and in the modal alike', async () => {
		const registry = ownRegistry(subscriptions);
		const content = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} of a long new file`).join('\n');
		const input = { path: 'long-diff-it/new.txt', content };
		const marker = /\n\[… [\d,]+ lines \/ [\d.]+ KB omitted; the diff editor \("Show Diff"\) shows all of it …\]\n```$/;
		const plainMarker = /\n\[… [\d,]+ lines \/ [\d.]+ KB omitted; the diff editor \("Show Diff"\) shows all of it …\]$/;
		const prepared = await prepare(registry, registry.get('write_file')!, input);
		const message = prepared.confirmationMessages?.message;
		const body = typeof message === 'string' ? message : message?.value ?? '';
		assert.equal(prepared.confirmationMessages?.title, 'Create long-diff-it/new.txt?');
		assert.match(body, /^```diff\n--- \/dev\/null\n\+\+\+ b\/long-diff-it\/new\.txt\n@@ -0,0 \+1,3000 @@\n\+line 1 of a long new file\n/);
		assert.match(body, marker);
		assert.ok(body.length < 12_500, `the chat confirmation holds ${body.length} characters`);

		const request = await registry.preview('write_file', input);
		assert.equal(request?.kind, 'files');
		const modal = modalContent(request!, true);
		assert.match(modal.detail, /\+line 1 of a long new file\n/, 'the modal keeps the head of a long diff instead of dropping it');
		assert.match(modal.detail, plainMarker);
		assert.equal(modal.message, 'Create long-diff-it/new.txt?');
		assert.doesNotMatch(modal.detail, /```|Create long-diff-it/, 'the modal is plain text and does not repeat its title');
		assert.ok(modal.detail.length < 4500, `the modal holds ${modal.detail.length} characters`);
		assert.deepEqual([modal.approve, modal.choices], ['Apply', ['Apply', 'Show Diff']]);
		assert.equal(fs.existsSync(path.join(workspace(), 'long-diff-it')), false, 'previewing wrote nothing');
	});

	it('the modal says Run, not Apply, for a command and for a plain call', () => {
		assert.deepEqual(modalContent({ kind: 'call', title: 'Run read_file: Reading README.md', detail: '{}' }, true).choices, ['Run']);
		const command = modalContent({ kind: 'command', title: 'Running a command', command: 'ls', cwd: '.' }, true);
		assert.deepEqual([command.message, command.detail, command.choices], ['Run this command?', 'ls\n\nin .', ['Run']]);
	});

	it('Show Diff shows the proposed content before anything is written: edits, new files, deletions and moves', async () => {
		const at = (rel: string) => path.join(workspace(), 'preview-it', rel);
		const bytes = (text: string) => new TextEncoder().encode(text);
		const changes: FileChange[] = [
			{ path: at('edit.txt'), displayPath: 'preview-it/edit.txt', before: bytes('old line\n'), after: bytes('proposed line\n') },
			{ path: at('new.txt'), displayPath: 'preview-it/new.txt', before: null, after: bytes('a new file\n') },
			{ path: at('gone.txt'), displayPath: 'preview-it/gone.txt', before: bytes('going away\n'), after: null },
			{ path: at('from.txt'), displayPath: 'preview-it/from.txt', before: bytes('moving\n'), after: bytes('moving\n'), movedTo: { path: at('to.txt'), displayPath: 'preview-it/to.txt' } },
		];
		const diffTabs = () => vscode.window.tabGroups.all.flatMap(group => group.tabs).filter(tab => tab.input instanceof vscode.TabInputTextDiff);
		// This test's ChangeDiffs keeps the texts; the extension's own instance serves its own (see e2e).
		const textOf = (uri: vscode.Uri) => diffs.snapshotText(uri);
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		try {
			await diffs.preview(changes);
			await diffs.preview(changes);
			const tabs = diffTabs();
			assert.deepEqual(tabs.map(tab => tab.label), [
				'edit.txt (Toolbelt: proposed, changed)',
				'new.txt (Toolbelt: proposed, new file)',
				'gone.txt (Toolbelt: proposed, deleted)',
				'from.txt → to.txt (Toolbelt: proposed, moved)',
			], 'one tab per file, also after a second Show Diff');
			const sides = tabs.map(tab => {
				const input = tab.input as vscode.TabInputTextDiff;
				assert.equal(input.original.scheme, ORIGINAL_SCHEME);
				assert.equal(input.modified.scheme, PROPOSED_SCHEME);
				return [textOf(input.original), textOf(input.modified)];
			});
			assert.deepEqual(sides, [['old line\n', 'proposed line\n'], ['', 'a new file\n'], ['going away\n', ''], ['moving\n', 'moving\n']]);
			assert.equal((tabs[3].input as vscode.TabInputTextDiff).modified.path, vscode.Uri.file(at('to.txt')).path, 'a move shows the file at its new path');
			assert.equal(fs.existsSync(at('.')), false, 'nothing was written');

			await diffs.closePreviews(changes);
			assert.deepEqual(diffTabs(), [], 'the proposed diffs close once the question is answered');
		} finally {
			await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		}
	});

	it('after Apply there is one diff tab per file, the proposed one replaced by the file itself', async () => {
		const registry = ownRegistry(subscriptions);
		const file = path.join(workspace(), 'applied-it', 'a.txt');
		fs.mkdirSync(path.dirname(file), { recursive: true });
		fs.writeFileSync(file, 'one\n');
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		try {
			const result = await registry.invoke('write_file', { path: 'applied-it/a.txt', content: 'two\n' }, {
				decide: async request => {
					assert.equal(request.kind, 'files');
					if (request.kind === 'files') await diffs.preview(request.changes);
					return true;
				},
			});
			assert.equal(result.error, undefined);
			const labels = () => vscode.window.tabGroups.all.flatMap(group => group.tabs).filter(tab => tab.input instanceof vscode.TabInputTextDiff).map(tab => tab.label);
			assert.deepEqual(labels(), ['a.txt (Toolbelt: before ↔ after)']);
		} finally {
			await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		}
	});

	it('maps toolbelt.* settings onto the tools, and a change applies to the next call', async () => {
		const config = vscode.workspace.getConfiguration('toolbelt');
		assert.match(await invokeText('read_file', { path: 'src/greeting.ts' }), /^src\/greeting\.ts: lines 1–7 of 7\n/);
		await config.update('limits.readLines', 1, vscode.ConfigurationTarget.Workspace);
		try {
			const text = await invokeText('read_file', { path: 'src/greeting.ts' });
			assert.equal(text, 'src/greeting.ts: lines 1–1 of 7\n1\texport function greet(name: string): string {\n[… 6 lines omitted; use offset=2 to continue …]');
		} finally {
			await config.update('limits.readLines', undefined, vscode.ConfigurationTarget.Workspace);
		}
		assert.match(await invokeText('read_file', { path: 'src/greeting.ts' }), /^src\/greeting\.ts: lines 1–7 of 7\n/, 'the setting, once reset, no longer applies');
	});

	it('reports the problems of the files asked for, and of the whole workspace when none are named', async () => {
		const problems = vscode.languages.createDiagnosticCollection('toolbelt-layer-test');
		try {
			const at = (rel: string) => vscode.Uri.file(path.join(workspace(), rel));
			problems.set(at('README.md'), [new vscode.Diagnostic(new vscode.Range(0, 2, 0, 4), 'readme problem', vscode.DiagnosticSeverity.Error)]);
			problems.set(at('src/greeting.ts'), [new vscode.Diagnostic(new vscode.Range(1, 0, 1, 1), 'greeting problem', vscode.DiagnosticSeverity.Warning)]);
			const one = await invokeText('get_diagnostics', { paths: ['src/greeting.ts'] });
			assert.match(one, /^0 errors and 1 warning in 1 file \(src\/greeting\.ts\):\nsrc\/greeting\.ts:2:1 warning.*greeting problem/);
			assert.doesNotMatch(one, /readme problem/);
			const all = await invokeText('get_diagnostics', {});
			assert.match(all, /README\.md:1:3 error.*readme problem/);
			assert.match(all, /src\/greeting\.ts:2:1 warning.*greeting problem/);
		} finally {
			problems.dispose();
		}
	});

	it('Run Tool… marks a switched-off tool; running one anyway says so for a person and opens no result', async () => {
		const config = vscode.workspace.getConfiguration('toolbelt');
		await config.update('disabledTools', ['grep'], vscode.ConfigurationTarget.Workspace);
		await config.update('disabledGroups', ['plan'], vscode.ConfigurationTarget.Workspace);
		try {
			const items = toolPickItems(ALL_TOOLS, readSettings());
			const described = (name: string) => items.find(item => item.tool?.name === name)?.description;
			assert.equal(described('grep'), 'Search Text (switched off)');
			assert.match(described('get_plan') ?? '', /\(switched off\)$/);
			assert.doesNotMatch(described('find_files') ?? '', /switched off/);

			const result = await runInput('grep', { pattern: 'Hello' });
			assert.equal(result?.error?.code, 'disabled');
			await new Promise(resolve => setTimeout(resolve, 200));
			const opened = vscode.window.visibleTextEditors.filter(editor => editor.document.uri.path.endsWith('/grep result'));
			assert.deepEqual(opened, [], 'the refusal (worded for a model) opened as a result document');
		} finally {
			await config.update('disabledTools', undefined, vscode.ConfigurationTarget.Workspace);
			await config.update('disabledGroups', undefined, vscode.ConfigurationTarget.Workspace);
			await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		}
	});

	it('an edit applied in the editor but not saved tells the model it happened, so it is not made twice', async () => {
		// Running as root, a save cannot be made to fail here: the host applies the edit for real,
		// then reports the failed save as applyWithWorkspaceEdit does.
		const host = createVscodeHost({
			storageDir: path.join(workspace(), '..', 'vscode-layer-storage'),
			applyChanges: async (changes, signal) => {
				await applyWithWorkspaceEdit(changes, signal);
				throw unsavedError(changes.map(change => change.displayPath));
			},
		});
		const registry = new ToolRegistry(ALL_TOOLS, createVscodeEnvironment(host, subscriptions));
		const file = path.join(workspace(), 'unsaved-it', 'a.txt');
		fs.mkdirSync(path.dirname(file), { recursive: true });
		fs.writeFileSync(file, 'one\n');
		try {
			const result = await registry.invoke('edit_file', { path: 'unsaved-it/a.txt', edits: [{ oldText: 'one', newText: 'two' }] }, { approval: 'preconfirmed' });
			assert.equal(result.error?.code, 'io');
			assert.match(result.error!.message, /^The change WAS applied: the open editor of unsaved-it\/a\.txt holds the new text, but VS Code could not save it/);
			assert.match(result.error!.message, /Do not make the change again.*Ask the user to save unsaved-it\/a\.txt/);
			assert.doesNotMatch(result.error!.message, /Nothing was changed|could not be applied/);
			assert.equal((await vscode.workspace.openTextDocument(file)).getText(), 'two\n');
		} finally {
			await vscode.commands.executeCommand('workbench.action.closeAllEditors');
			fs.rmSync(path.dirname(file), { recursive: true, force: true });
		}
	});

	it('a change whose folder became a link out of the workspace is refused right before VS Code writes it', async () => {
		const base = path.join(workspace(), 'swap-it');
		const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-swap-it-'));
		fs.mkdirSync(base, { recursive: true });
		fs.symlinkSync(outside, path.join(base, 'dir'));
		try {
			const boundary = await Boundary.create({ roots: [{ name: 'ws', path: workspace() }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] });
			const change: FileChange = { path: path.join(base, 'dir', 'new.txt'), displayPath: 'swap-it/dir/new.txt', before: null, after: Buffer.from('x\n') };
			await assert.rejects(applyWithWorkspaceEdit([change], new AbortController().signal, boundary), /goes through a symlink to .* \(rule: symlink_escape\)/);
			assert.deepEqual(fs.readdirSync(outside), [], 'nothing written outside');
		} finally {
			fs.rmSync(base, { recursive: true, force: true });
			fs.rmSync(outside, { recursive: true, force: true });
		}
	});

	describe('links in result documents', () => {
		const config = () => vscode.workspace.getConfiguration('toolbelt');
		const DIR = 'links-it';

		before(async () => {
			// Modal dialogs refuse to open in extension tests: let the writes run without asking.
			await config().update('approval', 'never', vscode.ConfigurationTarget.Workspace);
		});

		after(async () => {
			await config().update('approval', undefined, vscode.ConfigurationTarget.Workspace);
			await vscode.commands.executeCommand('workbench.action.closeAllEditors');
			fs.rmSync(path.join(workspace(), DIR), { recursive: true, force: true });
		});

		it('link the file a write reports, the files a patch changed, and grep and find_files paths', async () => {
			const file = vscode.Uri.file(path.join(workspace(), DIR, 'new.md'));
			const wrote = await linksOfResult('write_file', { path: `${DIR}/new.md`, content: '# New\nfirst line\n' });
			assert.match(wrote.text, /^Wrote links-it\/new\.md \(created\): /m);
			assert.deepEqual(wrote.links, [{ text: `${DIR}/new.md`, target: file.toString() }]);

			const patched = await linksOfResult('apply_patch', { patch: `*** Begin Patch\n*** Update File: ${DIR}/new.md\n@@\n-first line\n+patched line\n*** End Patch\n` });
			assert.match(patched.text, /^M links-it\/new\.md \(\+1 −1\)$/m);
			assert.deepEqual(patched.links, [{ text: `${DIR}/new.md`, target: file.toString() }]);

			const grep = await linksOfResult('grep', { pattern: 'patched', path: DIR });
			assert.deepEqual(grep.links, [{ text: `${DIR}/new.md:2`, target: file.with({ fragment: 'L2' }).toString() }], 'path:line is one link');

			const found = await linksOfResult('find_files', { pattern: '*.md', path: DIR });
			assert.deepEqual(found.links, [{ text: `${DIR}/new.md`, target: file.toString() }]);

			const read = await linksOfResult('read_file', { path: `${DIR}/new.md` });
			assert.equal(read.languageId, 'toolbelt-result');
			assert.deepEqual(read.links.sort((a, b) => a.text.localeCompare(b.text)), [
				{ text: '1', target: file.with({ fragment: 'L1' }).toString() },
				{ text: '2', target: file.with({ fragment: 'L2' }).toString() },
				{ text: `${DIR}/new.md`, target: file.toString() },
			], 'the read file and each of its line numbers');
		});
	});
});

/** Runs a tool from its JSON input document and returns the links VS Code finds in its result document. */
async function linksOfResult(tool: string, input: object): Promise<{ text: string; languageId: string; links: { text: string; target: string | undefined }[] }> {
	const result = await runInput(tool, input);
	assert.equal(result?.error, undefined, result?.error?.message);
	const editor = await waitFor(`the ${tool} result`, () => vscode.window.visibleTextEditors.find(candidate => candidate.document.uri.scheme === 'toolbelt-result' && candidate.document.uri.path.endsWith(`/${tool} result`)));
	const document = editor.document;
	const links = await vscode.commands.executeCommand<vscode.DocumentLink[]>('vscode.executeLinkProvider', document.uri);
	await vscode.commands.executeCommand('workbench.action.closeAllEditors');
	return { text: document.getText(), languageId: document.languageId, links: links.map(link => ({ text: document.getText(link.range), target: link.target?.toString() })) };
}

/** Runs a tool as Run Tool… → Edit as JSON → ▶ does, with this input. */
async function runInput(tool: string, input: object): Promise<{ error?: { code: string; message: string } } | undefined> {
	const uri = vscode.Uri.parse(`toolbelt-input:/${tool}.json`);
	const text = JSON.stringify(input);
	await vscode.workspace.fs.writeFile(uri, Buffer.from(text));
	// A document already open from an earlier run reloads from the file system a moment later.
	await waitFor('the input document to hold the new input', async () => (await vscode.workspace.openTextDocument(uri)).getText() === text);
	return vscode.commands.executeCommand('toolbelt.runInputDocument', uri);
}
