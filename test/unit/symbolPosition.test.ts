import * as assert from 'node:assert/strict';
import { ToolError } from '../../src/core/results/errors';
import { locateSymbol, occurrencesOf } from '../../src/core/text/symbolPosition';
import { applyTextEdits } from '../../src/core/changes/workspaceEdit';

const lines = [
	'import { greet } from "./greeting";',
	'const greeting = greet(greet("a"));',
	'config.load(loader);',
	'',
	'export function farewell(name: string) {}',
];

function errorOf(run: () => unknown): ToolError {
	try {
		run();
	} catch (error) {
		assert.ok(error instanceof ToolError);
		return error;
	}
	throw new Error('expected an error');
}

describe('locating a symbol on a line', () => {
	it('finds whole words only, and takes the first of several unless told', () => {
		assert.deepEqual(occurrencesOf(lines[1], 'greet'), [17, 23]);
		const first = locateSymbol(lines, { line: 2, symbol: 'greet' }, 'a.ts');
		assert.deepEqual([first.position, first.occurrences, first.chosen], [{ line: 1, character: 17 }, 2, 1]);
		assert.equal(locateSymbol(lines, { line: 2, symbol: 'greet', occurrence: 2 }, 'a.ts').position.character, 23);
		assert.equal(locateSymbol(lines, { line: 2, symbol: 'greeting' }, 'a.ts').position.character, 6);
	});

	it('picks the occurrence a column falls in, and says which columns there are when it falls in none', () => {
		assert.equal(locateSymbol(lines, { line: 2, symbol: 'greet', column: 26 }, 'a.ts').chosen, 2);
		assert.match(errorOf(() => locateSymbol(lines, { line: 2, symbol: 'greet', column: 3 }, 'a.ts')).message, /Column 3 of line 2 in a\.ts is not inside "greet", which starts at columns 18, 24/);
		assert.match(errorOf(() => locateSymbol(lines, { line: 2, symbol: 'greet', occurrence: 3 }, 'a.ts')).message, /appears 2 times on line 2 of a\.ts \(columns 18, 24\), so occurrence 3 does not exist/);
	});

	it('asks about the last name of a dotted symbol', () => {
		const at = locateSymbol(lines, { line: 3, symbol: 'config.load' }, 'a.ts');
		assert.deepEqual(at.position, { line: 2, character: 7 });
		assert.deepEqual(at.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 11 } });
	});

	it('names the nearest identifiers on the line and the nearby lines that hold the symbol', () => {
		const error = errorOf(() => locateSymbol(lines, { line: 2, symbol: 'farewell' }, 'a.ts'));
		assert.equal(error.code, 'no_match');
		assert.match(error.message, /^Line 2 of a\.ts does not contain "farewell"\. Nearest on that line: /);
		assert.match(error.message, /The line reads: "const greeting = greet\(greet\(\\"a\\"\)\);"\./);
		assert.match(error.message, /"farewell" is on line 5 nearby\./);
		const typo = errorOf(() => locateSymbol(lines, { line: 2, symbol: 'gret' }, 'a.ts'));
		assert.match(typo.message, /Nearest on that line: greet \(column 18\)/);
		// A symbol ending in punctuation is matched as text there: "load(" is the call, not "loader".
		assert.deepEqual(occurrencesOf(lines[2], 'load('), [7]);
	});

	it('refuses a line past the end with the file\'s length', () => {
		assert.match(errorOf(() => locateSymbol(lines, { line: 9, symbol: 'x' }, 'a.ts')).message, /^a\.ts has 5 lines, so line 9 does not exist/);
	});
});

describe('applying a language server\'s text edits', () => {
	const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
	const range = (line: number, from: number, to: number) => ({ start: { line, character: from }, end: { line, character: to } });

	it('applies every edit against the original text, whatever their order', () => {
		const out = applyTextEdits(Buffer.from('let a = a + 1;\nuse(a);\n'), [
			{ range: range(1, 4, 5), newText: 'b' },
			{ range: range(0, 4, 5), newText: 'b' },
			{ range: range(0, 8, 9), newText: 'b' },
		], 'x.ts');
		assert.equal(text(out), 'let b = b + 1;\nuse(b);\n');
	});

	it('keeps a CRLF file CRLF and a BOM file\'s BOM, and clamps a position past the line end as VS Code does', () => {
		const out = applyTextEdits(Buffer.from('\ufeffone\r\ntwo\r\n'), [
			{ range: range(0, 3, 99), newText: ' and\nmore' },
		], 'x.ts');
		assert.equal(text(out), '\ufeffone and\r\nmore\r\ntwo\r\n');
	});

	it('refuses overlapping edits and binary files', () => {
		assert.throws(() => applyTextEdits(Buffer.from('abcdef\n'), [{ range: range(0, 0, 3), newText: 'x' }, { range: range(0, 2, 4), newText: 'y' }], 'x.ts'), /overlapping edits/);
		assert.throws(() => applyTextEdits(Buffer.from([0, 1, 2, 0]), [{ range: range(0, 0, 1), newText: 'x' }], 'x.bin'), /binary file/);
	});
});
