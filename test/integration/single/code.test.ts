import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { resultText } from '../../../src/core/results/result';
import { ALL_TOOLS, ToolRegistry } from '../../../src/tools';
import type { LanguageWaits } from '../../../src/core/languages';
import { createVscodeEnvironment } from '../../../src/vscode/environment';
import { createVscodeHost } from '../../../src/vscode/host';
import { prepare } from '../../../src/vscode/lmTools';
import { applyWithWorkspaceEdit } from '../../../src/vscode/mutation';
import { invokeText, until, waitFor, workspace } from '../helpers';

/** The TypeScript project of the workspace fixture (test/fixtures/workspace/ts-project). */
const PROJECT = 'ts-project';
const at = (rel: string) => path.join(workspace(), PROJECT, rel);
const read = (rel: string) => fs.readFileSync(at(rel), 'utf8');
/** The server of a fresh window loads the project in seconds, more on a busy machine. */
const SERVER_START_MS = 120_000;

/** A registry of our own over the VS Code host, for prepareInvocation and a shortened wait. */
function ownRegistry(subscriptions: vscode.Disposable[], waits?: LanguageWaits): ToolRegistry {
	const host = createVscodeHost({ storageDir: path.join(workspace(), '..', 'code-storage'), applyChanges: applyWithWorkspaceEdit });
	const languages = waits && host.languages ? { ...host.languages, waits } : host.languages;
	return new ToolRegistry(ALL_TOOLS, createVscodeEnvironment({ ...host, languages }, subscriptions));
}

describe('code intelligence on VS Code\'s TypeScript server', function () {
	this.timeout(SERVER_START_MS + 30_000);
	const originals = new Map<string, string>();

	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
		for (const name of fs.readdirSync(at('src'))) originals.set(`src/${name}`, read(`src/${name}`));
		// Our tools wait for the server themselves, within their bound; here it may take longer.
		await waitFor('the TypeScript server answers', async () => {
			const text = await invokeText('hover', { path: `${PROJECT}/src/report.ts`, line: 4, symbol: 'totalArea' });
			return /function totalArea/.test(text) && text;
		}, SERVER_START_MS);
	});

	after(async () => {
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		for (const [rel, text] of originals) fs.writeFileSync(at(rel), text);
	});

	it('goes to a definition in another file, through a re-export', async () => {
		const text = await invokeText('go_to_definition', { path: `${PROJECT}/src/report.ts`, line: 9, symbol: 'Circle' });
		// TypeScript points at the class and at its constructor.
		assert.match(text, /^2 definitions of "Circle" \(ts-project\/src\/report\.ts:9\):\n.*\n\nts-project\/src\/circle\.ts:3\n3\texport class Circle implements Shape \{\n4\t\tconstructor\(private readonly radius: number\) \{\}\n/);
		assert.match(text, /\n\nts-project\/src\/circle\.ts:4\n4\t\tconstructor\(private readonly radius: number\) \{\}$/);
	});

	it('finds the implementation of an interface', async () => {
		const text = await invokeText('go_to_definition', { path: `${PROJECT}/src/shapes.ts`, line: 2, symbol: 'Shape', kind: 'implementation' });
		assert.match(text, /ts-project\/src\/circle\.ts:3\n3\texport class Circle implements Shape \{/);
	});

	it('finds references through a re-export, grouped by file with counts', async () => {
		const text = await invokeText('find_references', { path: `${PROJECT}/src/report.ts`, line: 10, symbol: 'formatArea', occurrence: 2 });
		assert.match(text, /^6 references to "formatArea" in 3 files \(declaration included\); showing 1–6:\n/);
		for (const line of [
			'ts-project/src/circle.ts:11: \t\treturn `circle of area ${formatArea(this.area())}`;',
			'ts-project/src/circle.ts:16: export function formatArea(value: number): string {',
			'ts-project/src/index.ts:1: export { Circle, formatArea } from \'./circle\';',
			'ts-project/src/report.ts:1: import { Circle, formatArea } from \'./index\';',
			'ts-project/src/report.ts:10: \treturn `total ${formatArea(totalArea(shapes))}, largest ${formatArea(shapes[1].area())}`;',
		]) assert.ok(text.includes(line), `${line}\nnot in\n${text}`);
	});

	it('finds workspace symbols by name and a file\'s outline', async () => {
		assert.match(await invokeText('find_symbols', { query: 'Circle', kind: 'class' }), /ts-project\/src\/circle\.ts:3: class Circle/);
		const outline = await invokeText('find_symbols', { path: `${PROJECT}/src/circle.ts` });
		assert.match(outline, /class Circle — lines 3–13\n {2}constructor constructor — line 4\n[\s\S]*\n {2}method area — lines 6–8\n/);
		assert.match(outline, /function formatArea — lines 16–18/);
	});

	it('shows the hover text: the signature and the documentation', async () => {
		const text = await invokeText('hover', { path: `${PROJECT}/src/circle.ts`, line: 16, symbol: 'formatArea' });
		assert.match(text, /formatArea\(value: number\): string/);
		assert.match(text, /An area with two decimals\./);
	});

	it('lists the callers of a function', async () => {
		const text = await invokeText('call_hierarchy', { path: `${PROJECT}/src/circle.ts`, line: 16, symbol: 'formatArea' });
		assert.match(text, /^Callers of formatArea \(function, ts-project\/src\/circle\.ts:16\), 1 level:/);
		assert.match(text, /- describe \(method\) ts-project\/src\/circle\.ts:10\n {4}ts-project\/src\/circle\.ts:11: /);
		assert.match(text, /- report \(function\) ts-project\/src\/report\.ts:8\n {4}ts-project\/src\/report\.ts:10: /);
	});

	it('names the nearest identifiers on a line that lacks the symbol, and refuses a file outside the workspace', async () => {
		assert.match(await invokeText('find_references', { path: `${PROJECT}/src/report.ts`, line: 9, symbol: 'Circel' }),
			/^Error: Line 9 of ts-project\/src\/report\.ts does not contain "Circel"\. Nearest on that line: Circle \(column 22\)/);
		assert.match(await invokeText('hover', { path: '/etc/hostname', line: 1, symbol: 'x' }), /^Error: "\/etc\/hostname" is outside the workspace \(rule: outside_workspace\)/);
	});

	it('says plainly that no language service answers for a plain text file, instead of "no references"', async () => {
		const subscriptions: vscode.Disposable[] = [];
		fs.writeFileSync(at('notes.txt'), 'greet the reader\n');
		try {
			// A registry of our own, whose wait this test can shorten (the extension's stays at 20 s).
			const result = await ownRegistry(subscriptions, { firstMs: 2000, silentMs: 500 }).invoke('find_references', { path: `${PROJECT}/notes.txt`, line: 1, symbol: 'greet' });
			assert.equal(result.error?.code, 'unavailable');
			assert.match(resultText(result), /^Error: No language service answered for ts-project\/notes\.txt \(language "plaintext"\) within 2 s: .* Search the text with grep instead/);
		} finally {
			for (const subscription of subscriptions) subscription.dispose();
			fs.rmSync(at('notes.txt'), { force: true });
		}
	});

	it('shows the whole rename as a multi-file diff before approval, and changes nothing to show it', async () => {
		const subscriptions: vscode.Disposable[] = [];
		try {
			const registry = ownRegistry(subscriptions);
			const input = { path: `${PROJECT}/src/report.ts`, line: 5, symbol: 'area', newName: 'surface' };
			const prepared = await prepare(registry, registry.get('rename_symbol')!, input);
			assert.equal(prepared.confirmationMessages?.title, 'Rename area → surface in 3 files: ts-project/src/circle.ts, ts-project/src/report.ts, ts-project/src/shapes.ts?', 'chat asks the question a person answers');
			const message = prepared.confirmationMessages?.message;
			const body = typeof message === 'string' ? message : message?.value ?? '';
			for (const file of ['circle', 'report', 'shapes']) assert.match(body, new RegExp(`\\+\\+\\+ b/ts-project/src/${file}\\.ts\\n`));
			assert.match(body, /-\tarea\(\): number;\n\+\tsurface\(\): number;/);
			assert.equal(read('src/report.ts'), originals.get('src/report.ts'), 'previewing wrote nothing');
		} finally {
			for (const subscription of subscriptions) subscription.dispose();
		}
	});

	it('refuses a rename to a name that is no identifier, changing nothing', async () => {
		const text = await invokeText('rename_symbol', { path: `${PROJECT}/src/report.ts`, line: 5, symbol: 'area', newName: 'total-area' });
		assert.match(text, /^Error: Cannot rename "area" to "total-area": "total-area" is not an identifier/);
		assert.equal(read('src/circle.ts'), originals.get('src/circle.ts'));
	});

	it('renames an interface method, its implementation and its calls across three files as one change, and one Undo takes all of it back', async () => {
		const report = await vscode.workspace.openTextDocument(at('src/report.ts'));
		const editor = await vscode.window.showTextDocument(report, { preview: false });
		const text = await invokeText('rename_symbol', { path: `${PROJECT}/src/report.ts`, line: 5, symbol: 'area', newName: 'surface' });
		assert.equal(text, 'Renamed "area" to "surface": 5 edits in 3 files, +5 −5.\nM ts-project/src/circle.ts (+2 −2)\nM ts-project/src/report.ts (+2 −2)\nM ts-project/src/shapes.ts (+1 −1)');
		assert.match(read('src/shapes.ts'), /\tsurface\(\): number;/);
		assert.match(read('src/circle.ts'), /\tsurface\(\): number \{\n[\s\S]*formatArea\(this\.surface\(\)\)/);
		assert.match(report.getText(), /shape\.surface\(\), 0\)[\s\S]*shapes\[1\]\.surface\(\)/);
		assert.equal(report.isDirty, false, 'the renamed files are saved');

		await vscode.window.showTextDocument(editor.document, { preview: false });
		await vscode.commands.executeCommand('undo');
		const documents = await Promise.all(['circle', 'report', 'shapes'].map(file => vscode.workspace.openTextDocument(at(`src/${file}.ts`))));
		await until('all three files are back', () => documents.every(document => document.getText() === originals.get(`src/${path.basename(document.uri.fsPath)}`)));
		for (const document of documents) await document.save();
	});

	it('lists the quick fixes for a missing import and applies one', async () => {
		const listed = await invokeText('code_actions', { path: `${PROJECT}/src/missing.ts`, line: 3 });
		assert.match(listed, /Problems on that line:\n {2}ts-project\/src\/missing\.ts:3:13 error 2304: Cannot find name 'Circle'\. \(ts\)/);
		const title = /^\d+\. (Add import from "[^"]+")/m.exec(listed)?.[1];
		assert.ok(title, listed);
		const applied = await invokeText('apply_code_action', { path: `${PROJECT}/src/missing.ts`, line: 3, title });
		assert.match(applied, new RegExp(`^Applied "${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" at ts-project/src/missing\\.ts:3: 1 file changed, \\+2 −0\\.`));
		assert.match(read('src/missing.ts'), /^import \{ Circle \} from ["']\.\/(circle|index)["'];\n/);
	});
});
