import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { main } from '../../src/cli/main';
import type { Diagnostic } from '../../src/core/context';
import { CallItem, CodeActionInfo, EditOperation, LanguageServiceRefusal, LanguageServices, Readiness, SourceLocation, SourceRange } from '../../src/core/languages';
import { resultText } from '../../src/core/results/result';
import { makeHarness, makeTree, testStorageDir } from './helpers';

/** A language server that answers what each test says, and otherwise finds nothing (but is there). */
function fakeLanguages(overrides: Partial<LanguageServices> = {}): LanguageServices & { asked: string[] } {
	const asked: string[] = [];
	const none = async () => [];
	const services: LanguageServices = {
		open: async () => ({ languageId: 'typescript' }),
		readiness: async () => 'ready',
		definitions: none,
		references: none,
		workspaceSymbols: none,
		documentSymbols: none,
		hover: none,
		prepareCallHierarchy: none,
		incomingCalls: none,
		outgoingCalls: none,
		rename: none,
		codeActions: none,
		...overrides,
	};
	// Records every question with its arguments, e.g. `references src/main.ts 1:0`.
	const recorded = Object.fromEntries(Object.entries(services).map(([name, method]) => [name, (...args: unknown[]) => {
		asked.push([name, ...args.map(describeArg)].join(' '));
		return (method as (...a: unknown[]) => unknown)(...args);
	}])) as unknown as LanguageServices;
	// Waiting for a server that never answers is bounded; here it is short.
	return Object.assign(recorded, { asked, waits: { firstMs: 1000, silentMs: 200 } });
}

let currentRoot = '';
function describeArg(arg: unknown): string {
	if (typeof arg === 'string') return arg.startsWith(currentRoot) ? path.relative(currentRoot, arg) : arg;
	const position = arg as { line?: number; character?: number } | undefined;
	if (position?.line !== undefined && position.character !== undefined) return `${position.line}:${position.character}`;
	return JSON.stringify(arg) ?? String(arg);
}

const range = (line: number, character: number, length: number): SourceRange => ({ start: { line, character }, end: { line, character: character + length } });

const FILES = {
	'src/greeting.ts': 'export function greet(name: string): string {\n\treturn `Hello, ${name}!`;\n}\n',
	'src/index.ts': 'export { greet } from \'./greeting\';\n',
	'src/main.ts': 'import { greet } from \'./index\';\ngreet(\'a\');\ngreet(\'b\');\n',
};

describe('code tools (on a fake language server)', () => {
	let tree: ReturnType<typeof makeTree>;
	let outside: ReturnType<typeof makeTree>;
	const at = (rel: string, line: number, character: number, length: number, extent?: SourceRange): SourceLocation =>
		({ path: tree.file(rel), range: range(line, character, length), ...(extent ? { extent } : {}) });

	beforeEach(() => {
		tree = makeTree(FILES);
		outside = makeTree({ 'node_modules/lib/index.d.ts': 'export declare function greet(name: string): string;\nexport declare const secret: string;\n' });
		currentRoot = tree.root;
	});
	afterEach(() => {
		tree.cleanup();
		outside.cleanup();
	});

	describe('find_references', () => {
		const references = () => [
			at('src/main.ts', 2, 0, 5), at('src/greeting.ts', 0, 16, 5), at('src/main.ts', 0, 9, 5), at('src/index.ts', 0, 9, 5), at('src/main.ts', 1, 0, 5),
			at('src/main.ts', 1, 0, 5),
		];

		it('asks at the symbol the model named and lists `path:line: text` grouped by file, with counts', async () => {
			const languages = fakeLanguages({ references: async () => references() });
			const text = await makeHarness(tree.root, { languages }).text('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet' });
			assert.deepEqual(languages.asked.filter(call => call.startsWith('references')), ['references src/main.ts 1:0']);
			assert.equal(text, [
				'5 references to "greet" in 3 files (declaration included); showing 1–5:',
				'',
				'src/greeting.ts:1: export function greet(name: string): string {',
				'',
				'src/index.ts:1: export { greet } from \'./greeting\';',
				'',
				'src/main.ts:1: import { greet } from \'./index\';',
				'src/main.ts:2: greet(\'a\');',
				'src/main.ts:3: greet(\'b\');',
			].join('\n'));
		});

		it('pages like grep, naming the counts per file', async () => {
			const h = makeHarness(tree.root, { languages: fakeLanguages({ references: async () => references() }) });
			const first = await h.invoke('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet', limit: 2 });
			const text = resultText(first);
			assert.match(text, /^5 references to "greet" in 3 files \(declaration included\); showing 1–2:\nBy file: src\/greeting\.ts \(1\), src\/index\.ts \(1\), src\/main\.ts \(3\)\n/);
			assert.match(text, /\n\[… 3 more references; call again with offset=2 …\]$/);
			assert.equal(first.metadata.nextOffset, 2);
			const last = await h.text('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet', limit: 2, offset: 4 });
			assert.match(last, /showing 5–5:\n[\s\S]*src\/main\.ts:3: greet\('b'\);$/);
		});

		it('leaves the declaration out when asked', async () => {
			const languages = fakeLanguages({ references: async () => references(), definitions: async () => [at('src/greeting.ts', 0, 16, 5)] });
			const text = await makeHarness(tree.root, { languages }).text('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet', includeDeclaration: false });
			assert.match(text, /^4 references to "greet" in 2 files \(declaration left out\)/);
			assert.doesNotMatch(text, /greeting\.ts/);
		});

		it('shows a place outside the workspace shortened, with its one line', async () => {
			const library = { path: outside.file('node_modules/lib/index.d.ts'), range: range(0, 24, 5) };
			const text = await makeHarness(tree.root, { languages: fakeLanguages({ references: async () => [library, at('src/main.ts', 1, 0, 5)] }) })
				.text('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet' });
			assert.match(text, /src\/main\.ts:2: greet\('a'\);\n\n…\/node_modules\/lib\/index\.d\.ts:1: export declare function greet\(name: string\): string;$/);
			assert.doesNotMatch(text, /secret/);
		});

		it('names the nearest identifiers when the line does not hold the symbol, and asks the server nothing', async () => {
			const languages = fakeLanguages();
			const error = await makeHarness(tree.root, { languages }).error('find_references', { path: 'src/main.ts', line: 2, symbol: 'greeet' });
			assert.equal(error.code, 'no_match');
			assert.match(error.message, /^Line 2 of src\/main\.ts does not contain "greeet"\. Nearest on that line: greet \(column 1\)/);
			assert.deepEqual(languages.asked.filter(call => !call.startsWith('open')), []);
		});

		it('refuses a file outside the workspace through the boundary', async () => {
			const error = await makeHarness(tree.root, { languages: fakeLanguages() }).error('find_references', { path: outside.file('node_modules/lib/index.d.ts'), line: 1, symbol: 'greet' });
			assert.equal(error.code, 'outside_boundary');
		});
	});

	describe('waiting for the language server', () => {
		it('waits while the server starts and while it loads the project, and asks once it is ready', async () => {
			const states: Readiness[] = ['silent', 'loading', 'ready'];
			let state: Readiness = 'silent';
			const languages = fakeLanguages({
				readiness: async () => (state = states.shift() ?? 'ready'),
				// A server answers from a partial view while it loads: that answer must not be taken.
				references: async () => (state === 'ready' ? [at('src/main.ts', 1, 0, 5), at('src/greeting.ts', 0, 16, 5)] : state === 'loading' ? [at('src/main.ts', 1, 0, 5)] : []),
			});
			const text = await makeHarness(tree.root, { languages }).text('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet' });
			assert.match(text, /^2 references to "greet" in 2 files/);
			assert.equal(languages.asked.filter(call => call.startsWith('readiness')).length, 3);
		});

		it('takes the answer of a server that has neither outline nor hover', async () => {
			const languages = fakeLanguages({ readiness: async () => 'silent', references: async () => [at('src/main.ts', 1, 0, 5)] });
			assert.match(await makeHarness(tree.root, { languages }).text('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet' }), /^1 reference to "greet" in 1 file/);
		});

		it('gives up on a project that keeps loading', async () => {
			const error = await makeHarness(tree.root, { languages: fakeLanguages({ readiness: async () => 'loading' }) }).error('hover', { path: 'src/main.ts', line: 2, symbol: 'greet' });
			assert.equal(error.code, 'timeout');
			assert.match(error.message, /^The typescript language server did not answer for src\/main\.ts within 1 s \(it is still loading the project, or the question is too big\)/);
		});

		it('says plainly when no language service answers, never an empty result, and waits less the next time', async () => {
			const h = makeHarness(tree.root, { languages: fakeLanguages({ readiness: async () => 'silent', open: async () => ({ languageId: 'cobol' }) }) });
			const first = await h.error('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet' });
			assert.equal(first.code, 'unavailable');
			assert.match(first.message, /^No language service answered for src\/main\.ts \(language "cobol"\) within 1 s: VS Code has no extension for this language, or its server is still starting\. Nothing was found or ruled out\. Search the text with grep instead/);
			assert.match((await h.error('hover', { path: 'src/main.ts', line: 2, symbol: 'greet' })).message, /within 0\.2 s/);
		});

		it('takes an empty answer as the answer once the server answers for the file', async () => {
			const text = await makeHarness(tree.root, { languages: fakeLanguages() }).text('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet' });
			assert.equal(text, 'The language server knows no references to "greet" at src/main.ts:2.');
		});

		it('gives up on a server that does not answer in time', async () => {
			const never = () => new Promise<never>(() => undefined);
			const error = await makeHarness(tree.root, { languages: fakeLanguages({ references: never }) }).error('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet' });
			assert.equal(error.code, 'timeout');
			assert.match(error.message, /did not answer for src\/main\.ts within 1 s \(it is still loading the project, or the question is too big\)/);
		});

		it('stops waiting when the call is cancelled', async () => {
			const controller = new AbortController();
			const languages = fakeLanguages({ references: () => new Promise<never>(() => undefined) });
			const pending = makeHarness(tree.root, { languages }).invoke('find_references', { path: 'src/main.ts', line: 2, symbol: 'greet' }, { signal: controller.signal });
			setTimeout(() => controller.abort(), 50);
			assert.equal((await pending).error?.code, 'cancelled');
		});
	});

	describe('go_to_definition and hover', () => {
		it('shows the declaration\'s first lines, numbered', async () => {
			const definition = at('src/greeting.ts', 0, 16, 5, { start: { line: 0, character: 0 }, end: { line: 2, character: 1 } });
			const languages = fakeLanguages({ definitions: async () => [definition] });
			const text = await makeHarness(tree.root, { languages }).text('go_to_definition', { path: 'src/main.ts', line: 3, symbol: 'greet' });
			assert.equal(text, 'The definition of "greet" (src/main.ts:3):\n\nsrc/greeting.ts:1\n1\texport function greet(name: string): string {\n2\t\treturn `Hello, ${name}!`;\n3\t}');
			assert.deepEqual(languages.asked.filter(call => call.startsWith('definitions')), ['definitions src/main.ts 2:0 definition']);
		});

		it('shows only the line of a declaration outside the workspace, and passes the kind on', async () => {
			const library = { path: outside.file('node_modules/lib/index.d.ts'), range: range(0, 24, 5), extent: { start: { line: 0, character: 0 }, end: { line: 1, character: 30 } } };
			const languages = fakeLanguages({ definitions: async () => [library] });
			const text = await makeHarness(tree.root, { languages }).text('go_to_definition', { path: 'src/main.ts', line: 2, symbol: 'greet', kind: 'type_definition' });
			assert.match(text, /^The type definition of "greet" \(src\/main\.ts:2\):\n\n…\/node_modules\/lib\/index\.d\.ts:1 \(outside the workspace; only this line is shown\)\n1\texport declare function greet\(name: string\): string;$/);
			assert.ok(languages.asked.some(call => call.endsWith(' type_definition')));
		});

		it('hover returns the server\'s text under the place it asked about', async () => {
			const languages = fakeLanguages({ hover: async () => ['```typescript\nfunction greet(name: string): string\n```', 'Says hello.'] });
			const text = await makeHarness(tree.root, { languages }).text('hover', { path: 'src/main.ts', line: 1, symbol: 'greet' });
			assert.equal(text, '"greet" at src/main.ts:1:\n\n```typescript\nfunction greet(name: string): string\n```\n\n---\n\nSays hello.');
		});
	});

	describe('find_symbols', () => {
		const symbol = (name: string, kind: any, rel: string, line: number, extra: object = {}) => ({ name, kind, location: at(rel, line, 0, name.length), ...extra });

		it('lists a file\'s outline as a tree with line ranges', async () => {
			const outline = [symbol('Greeter', 'class', 'src/greeting.ts', 0, {
				location: at('src/greeting.ts', 0, 6, 7, { start: { line: 0, character: 0 }, end: { line: 2, character: 1 } }),
				children: [symbol('hello', 'method', 'src/greeting.ts', 1)],
			})];
			const text = await makeHarness(tree.root, { languages: fakeLanguages({ documentSymbols: async () => outline }) }).text('find_symbols', { path: 'src/greeting.ts' });
			assert.equal(text, 'Outline of src/greeting.ts: 2 symbols:\n\nclass Greeter — lines 1–3\n  method hello — line 2');
			const filtered = await makeHarness(tree.root, { languages: fakeLanguages({ documentSymbols: async () => outline }) }).text('find_symbols', { path: 'src/greeting.ts', kind: 'method' });
			assert.equal(filtered, 'Symbols of src/greeting.ts (kind method): 1 symbol:\n\nmethod hello (in Greeter) — line 2');
		});

		it('searches the workspace: exact names first, filtered by kind and folder', async () => {
			const found = [
				symbol('greetAll', 'function', 'src/main.ts', 1),
				symbol('greet', 'function', 'src/greeting.ts', 0, { container: 'greeting' }),
				symbol('Greet', 'interface', 'src/index.ts', 0),
			];
			const h = makeHarness(tree.root, { languages: fakeLanguages({ workspaceSymbols: async () => found }) });
			assert.equal(await h.text('find_symbols', { query: 'greet' }), 'Symbols matching "greet": 3 symbols:\n\nsrc/greeting.ts:1: function greet (in greeting)\nsrc/index.ts:1: interface Greet\nsrc/main.ts:2: function greetAll');
			assert.match(await h.text('find_symbols', { query: 'greet', kind: 'interface' }), /: 1 symbol:\n\nsrc\/index\.ts:1: interface Greet$/);
			const none = await h.text('find_symbols', { query: 'greet', path: 'node_modules' }).catch((error: Error) => error.message);
			assert.match(none, /does not exist|No symbol/);
		});

		it('does not call an empty search a proof that a name is unused', async () => {
			const text = await makeHarness(tree.root, { languages: fakeLanguages() }).text('find_symbols', { query: 'nothingLikeThis' });
			assert.match(text, /^No symbol matching "nothingLikeThis" in the language servers' index\. The index covers only languages whose server has started, so this does not prove the name is unused/);
		});
	});

	describe('call_hierarchy', () => {
		const item = (name: string, rel: string, line: number): CallItem => ({ name, kind: 'function', location: at(rel, line, 0, name.length), handle: name });

		it('follows callers to the depth asked, with the call lines, and does not loop', async () => {
			const greet = item('greet', 'src/greeting.ts', 0);
			const main = item('main', 'src/main.ts', 1);
			const languages = fakeLanguages({
				prepareCallHierarchy: async () => [greet],
				incomingCalls: async target => (target.handle === 'greet' ? [{ item: main, sites: [range(1, 0, 5), range(2, 0, 5)] }] : [{ item: greet, sites: [range(1, 2, 3)] }]),
			});
			const text = await makeHarness(tree.root, { languages }).text('call_hierarchy', { path: 'src/greeting.ts', line: 1, symbol: 'greet', depth: 3 });
			assert.equal(text, [
				'Callers of greet (function, src/greeting.ts:1), 3 levels:',
				'- main (function) src/main.ts:2',
				'    src/main.ts:2: greet(\'a\');',
				'    src/main.ts:3: greet(\'b\');',
				'  - greet (function) src/greeting.ts:1 (shown above)',
				'      src/greeting.ts:2: \treturn `Hello, ${name}!`;',
			].join('\n'));
		});
	});

	describe('rename_symbol', () => {
		const renameEdits = (): EditOperation[] => [
			{ kind: 'text', path: tree.file('src/greeting.ts'), edits: [{ range: range(0, 16, 5), newText: 'welcome' }] },
			{ kind: 'text', path: tree.file('src/index.ts'), edits: [{ range: range(0, 9, 5), newText: 'welcome' }] },
			{ kind: 'text', path: tree.file('src/main.ts'), edits: [{ range: range(0, 9, 5), newText: 'welcome' }, { range: range(1, 0, 5), newText: 'welcome' }, { range: range(2, 0, 5), newText: 'welcome' }] },
		];

		it('applies the server\'s edit to three files after one approval of the multi-file diff', async () => {
			const languages = fakeLanguages({ rename: async () => renameEdits() });
			const h = makeHarness(tree.root, { languages });
			const text = await h.text('rename_symbol', { path: 'src/main.ts', line: 2, symbol: 'greet', newName: 'welcome' });
			assert.equal(text, 'Renamed "greet" to "welcome": 5 edits in 3 files, +5 −5.\nM src/greeting.ts (+1 −1)\nM src/index.ts (+1 −1)\nM src/main.ts (+3 −3)');
			assert.equal(h.asked.length, 1);
			const request = h.asked[0];
			assert.equal(request.kind, 'files');
			assert.equal(request.title, 'Rename greet → welcome in 3 files: src/greeting.ts, src/index.ts, src/main.ts');
			assert.equal(fs.readFileSync(tree.file('src/main.ts'), 'utf8'), 'import { welcome } from \'./index\';\nwelcome(\'a\');\nwelcome(\'b\');\n');
			assert.equal(fs.readFileSync(tree.file('src/index.ts'), 'utf8'), 'export { welcome } from \'./greeting\';\n');
		});

		it('changes nothing when the person declines', async () => {
			const h = makeHarness(tree.root, { languages: fakeLanguages({ rename: async () => renameEdits() }), approve: false });
			assert.equal((await h.error('rename_symbol', { path: 'src/main.ts', line: 2, symbol: 'greet', newName: 'welcome' })).code, 'declined');
			for (const [rel, content] of Object.entries(FILES)) assert.equal(fs.readFileSync(tree.file(rel), 'utf8'), content);
		});

		it('returns the provider\'s reason when it refuses, and its own when the new name is no identifier', async () => {
			const refusing = fakeLanguages({ rename: async () => { throw new LanguageServiceRefusal('You cannot rename this element.'); } });
			const refused = await makeHarness(tree.root, { languages: refusing }).error('rename_symbol', { path: 'src/main.ts', line: 2, symbol: 'greet', newName: 'welcome' });
			assert.equal(refused.message, 'The language server refused to rename "greet" to "welcome": You cannot rename this element. Nothing was changed.');
			const h = makeHarness(tree.root, { languages: fakeLanguages({ rename: async () => renameEdits() }) });
			assert.match((await h.error('rename_symbol', { path: 'src/main.ts', line: 2, symbol: 'greet', newName: '1st-greet' })).message, /"1st-greet" is not an identifier/);
			assert.match((await h.error('rename_symbol', { path: 'src/main.ts', line: 2, symbol: 'greet', newName: 'class' })).message, /"class" is a reserved word in typescript/);
			assert.equal(h.asked.length, 0);
			for (const [rel, content] of Object.entries(FILES)) assert.equal(fs.readFileSync(tree.file(rel), 'utf8'), content);
		});

		it('refuses the whole rename when one edit reaches outside the workspace', async () => {
			const library = outside.file('node_modules/lib/index.d.ts');
			const edits = [...renameEdits(), { kind: 'text' as const, path: library, edits: [{ range: range(0, 24, 5), newText: 'welcome' }] }];
			const h = makeHarness(tree.root, { languages: fakeLanguages({ rename: async () => edits }) });
			const error = await h.error('rename_symbol', { path: 'src/main.ts', line: 2, symbol: 'greet', newName: 'welcome' });
			assert.equal(error.code, 'outside_boundary');
			assert.match(error.message, /^The language server's change reaches .*index\.d\.ts, which Toolbelt may not change: .* Nothing was changed\.$/);
			assert.equal(h.asked.length, 0);
			assert.equal(fs.readFileSync(tree.file('src/main.ts'), 'utf8'), FILES['src/main.ts']);
		});

		it('edits the unsaved text of an open editor, not the disk\'s', async () => {
			const dirty = new Map([[tree.file('src/index.ts'), 'export { greet } from \'./greeting\'; // unsaved\n']]);
			const h = makeHarness(tree.root, { languages: fakeLanguages({ rename: async () => renameEdits() }), dirty });
			await h.text('rename_symbol', { path: 'src/main.ts', line: 2, symbol: 'greet', newName: 'welcome' });
			assert.equal(fs.readFileSync(tree.file('src/index.ts'), 'utf8'), 'export { welcome } from \'./greeting\'; // unsaved\n');
		});
	});

	describe('code_actions and apply_code_action', () => {
		const problem = (): Diagnostic => ({ path: tree.file('src/main.ts'), line: 2, column: 1, severity: 'error', message: 'Cannot find name \'greet\'.', source: 'ts', code: '2304' });
		const fix = (): CodeActionInfo => ({
			title: 'Add import from "./greeting"',
			kind: 'quickfix',
			isPreferred: true,
			edit: [{ kind: 'text', path: tree.file('src/main.ts'), edits: [{ range: range(0, 0, 0), newText: 'import { farewell } from \'./greeting\';\n' }] }],
		});
		const commandOnly: CodeActionInfo = { title: 'Install missing types', isPreferred: false, command: '_typescript.applyCodeActionCommand' };

		it('lists the line\'s problems and the actions, and says which cannot be applied', async () => {
			const languages = fakeLanguages({ codeActions: async () => [fix(), commandOnly] });
			const text = await makeHarness(tree.root, { languages, diagnostics: async () => [problem()] }).text('code_actions', { path: 'src/main.ts', line: 2 });
			assert.equal(text, [
				'Code actions for src/main.ts:2 (quick fixes):',
				'Problems on that line:',
				'  src/main.ts:2:1 error 2304: Cannot find name \'greet\'. (ts)',
				'',
				'1. Add import from "./greeting" (quickfix, preferred)',
				'2. Install missing types — runs an editor command only: cannot be previewed, so Toolbelt does not apply it',
				'',
				'Apply one with apply_code_action: the same path and line, and its title.',
			].join('\n'));
			assert.ok(languages.asked.includes('codeActions src/main.ts {"start":{"line":1,"character":0},"end":{"line":1,"character":11}} quickfix'), languages.asked.join('\n'));
		});

		it('waits for a freshly opened file\'s problems before it says there is no fix', async () => {
			let reported = false;
			setTimeout(() => { reported = true; }, 300);
			const languages = fakeLanguages({ codeActions: async () => (reported ? [fix()] : []) });
			const text = await makeHarness(tree.root, { languages, diagnostics: async () => (reported ? [problem()] : []) }).text('code_actions', { path: 'src/main.ts', line: 2 });
			assert.match(text, /1\. Add import from "\.\/greeting"/);
		});

		it('applies an action\'s edit through the pipeline, with a note when it also carries a command', async () => {
			const withCommand = { ...fix(), command: '_typescript.applyCodeActionCommand' };
			const h = makeHarness(tree.root, { languages: fakeLanguages({ codeActions: async () => [withCommand] }) });
			const text = await h.text('apply_code_action', { path: 'src/main.ts', line: 2, title: 'Add import from "./greeting"' });
			assert.match(text, /^Applied "Add import from "\.\/greeting"" at src\/main\.ts:2: 1 file changed, \+1 −0\.\nM src\/main\.ts \(\+1 −0\)\nThe action also runs the editor command _typescript\.applyCodeActionCommand after its edit; Toolbelt applied only the edit/);
			assert.equal(h.asked[0].title, 'Add import from "./greeting" (1 file: src/main.ts)');
			assert.match(fs.readFileSync(tree.file('src/main.ts'), 'utf8'), /^import \{ farewell \} from '\.\/greeting';\nimport \{ greet \}/);
		});

		it('refuses an action that only runs a command, and names the offered titles for an unknown one', async () => {
			const h = makeHarness(tree.root, { languages: fakeLanguages({ codeActions: async () => [fix(), commandOnly] }) });
			const refused = await h.error('apply_code_action', { path: 'src/main.ts', line: 2, title: 'Install missing types' });
			assert.equal(refused.code, 'unavailable');
			assert.match(refused.message, /runs the editor command _typescript\.applyCodeActionCommand instead of making an edit, so what it does cannot be shown as a diff first/);
			const unknown = await h.error('apply_code_action', { path: 'src/main.ts', line: 2, title: 'Add import' });
			assert.match(unknown.message, /No code action titled "Add import" at src\/main\.ts:2\. Offered there: "Add import from \\"\.\/greeting\\"", "Install missing types"\./);
			assert.equal(h.asked.length, 0);
			assert.equal(fs.readFileSync(tree.file('src/main.ts'), 'utf8'), FILES['src/main.ts']);
		});

		it('applies file operations in the edit: a created file, a moved one and a deleted one', async () => {
			const action: CodeActionInfo = {
				title: 'Move greet to a new file',
				isPreferred: false,
				edit: [
					{ kind: 'create', path: tree.file('src/greet.ts'), contents: Buffer.from('') },
					{ kind: 'text', path: tree.file('src/greet.ts'), edits: [{ range: range(0, 0, 0), newText: 'export const greet = 1;\n' }] },
					{ kind: 'rename', from: tree.file('src/index.ts'), to: tree.file('src/barrel.ts') },
					{ kind: 'text', path: tree.file('src/barrel.ts'), edits: [{ range: range(0, 25, 8), newText: 'greet' }] },
					{ kind: 'delete', path: tree.file('src/greeting.ts') },
				],
			};
			const h = makeHarness(tree.root, { languages: fakeLanguages({ codeActions: async () => [action] }) });
			const text = await h.text('apply_code_action', { path: 'src/main.ts', line: 1, kind: 'refactor', title: action.title });
			assert.match(text, /\nA src\/greet\.ts \(\+1 −0\)\nD src\/greeting\.ts \(\+0 −3\)\nR src\/index\.ts → src\/barrel\.ts \(\+1 −1\)$/);
			assert.equal(fs.readFileSync(tree.file('src/greet.ts'), 'utf8'), 'export const greet = 1;\n');
			assert.equal(fs.readFileSync(tree.file('src/barrel.ts'), 'utf8'), 'export { greet } from \'./greet\';\n');
			assert.equal(fs.existsSync(tree.file('src/index.ts')) || fs.existsSync(tree.file('src/greeting.ts')), false);
		});

		it('refuses an edit that cannot be shown as a diff', async () => {
			const action: CodeActionInfo = { title: 'Insert snippet', isPreferred: false, edit: [{ kind: 'unsupported', what: 'a snippet edit (with placeholders to fill in)' }] };
			const error = await makeHarness(tree.root, { languages: fakeLanguages({ codeActions: async () => [action] }) }).error('apply_code_action', { path: 'src/main.ts', line: 1, title: 'Insert snippet' });
			assert.match(error.message, /includes a snippet edit \(with placeholders to fill in\), which cannot be shown as a diff/);
		});
	});
});

describe('code tools outside VS Code (CLI)', () => {
	async function cli(args: string[]): Promise<{ code: number; stdout: string }> {
		let stdout = '';
		const write = process.stdout.write;
		process.stdout.write = ((chunk: string) => { stdout += chunk; return true; }) as typeof process.stdout.write;
		try {
			return { code: await main(args), stdout };
		} finally {
			process.stdout.write = write;
		}
	}

	it('lists them as needing VS Code and refuses them with one sentence saying so', async () => {
		const listed = JSON.parse((await cli(['list'])).stdout) as { name: string; needsVscode: boolean }[];
		assert.deepEqual(listed.filter(tool => tool.needsVscode).map(tool => tool.name), [
			'find_symbols', 'go_to_definition', 'find_references', 'hover', 'call_hierarchy', 'rename_symbol', 'code_actions', 'apply_code_action',
		]);
		const tree = makeTree({ 'a.ts': 'export const a = 1;\n' });
		try {
			const { code, stdout } = await cli(['run', 'find_references', '--root', tree.root, '--storage', testStorageDir(), '--input', '{"path":"a.ts","line":1,"symbol":"a"}']);
			assert.equal(code, 1);
			const result = JSON.parse(stdout);
			assert.equal(result.error.code, 'unavailable');
			assert.equal(result.error.message, 'find_references needs VS Code: it asks the language servers running in the editor, and there are none here. Search the text with grep instead.');
		} finally {
			tree.cleanup();
		}
	});
});
