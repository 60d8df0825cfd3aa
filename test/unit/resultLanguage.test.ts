import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { grepMatcher, matchSpans } from '../../src/ui/resultHighlight';

const root = path.join(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const grammar = JSON.parse(fs.readFileSync(path.join(root, 'syntaxes', 'toolbelt-result.tmLanguage.json'), 'utf8'));

/** A grammar rule's regex, as JavaScript reads it (the expressions used here mean the same in Oniguruma). */
function rule(name: string, index?: number): RegExp {
	const entry = grammar.repository[name];
	return new RegExp((index === undefined ? entry : entry.patterns[index]).match);
}

describe('result documents: their language', () => {
	it('is contributed with its grammar and configuration, and shows no editor line numbers or boxed characters', () => {
		const [language] = manifest.contributes.languages;
		assert.equal(language.id, 'toolbelt-result');
		const [contributed] = manifest.contributes.grammars;
		assert.equal(contributed.scopeName, grammar.scopeName);
		for (const file of [language.configuration, contributed.path]) assert.ok(fs.existsSync(path.join(root, file)), file);
		const configuration = JSON.parse(fs.readFileSync(path.join(root, language.configuration), 'utf8'));
		assert.deepEqual(configuration.brackets, [], 'no bracket pairs: an unmatched { in a result is not an error');
		assert.deepEqual(manifest.contributes.configurationDefaults['[toolbelt-result]'], {
			'editor.lineNumbers': 'off',
			'editor.unicodeHighlight.ambiguousCharacters': false,
			'editor.unicodeHighlight.invisibleCharacters': false,
			// In Restricted Mode VS Code boxes every non-ASCII character (— · … ✂) unless told not to.
			'editor.unicodeHighlight.nonBasicASCII': false,
		});
	});

	it('marks paths and line numbers, read lines, omission markers, failed commands and diffs', () => {
		const match = rule('location', 0).exec('src/hello.ts:2: \treturn 1;');
		assert.deepEqual([match?.[1], match?.[3]], ['src/hello.ts', '2']);
		assert.equal(rule('location', 1).exec('src/hello.ts-3- }')?.[3], '3');
		assert.equal(rule('numberedLine').exec('12\tconst x = 1;')?.[1], '12');
		assert.equal(rule('readHeader').exec('src/hello.ts: lines 1–3 of 5')?.[1], 'src/hello.ts');
		assert.equal(rule('omitted').exec('[… 2 lines omitted; use offset=4 to continue …]')?.[0], '[… 2 lines omitted; use offset=4 to continue …]');
		assert.ok(rule('commandEnd', 1).test('Exit code 2 after 0.1 s.'));
		assert.ok(!rule('commandEnd', 1).test('Exit code 0 after 0.1 s.'));
		assert.ok(rule('outputSection').test('--- stderr (1 line, 5 B) ---'));
		assert.ok(new RegExp(grammar.repository.diff.begin).test('--- a/README.md'));
		assert.ok(!new RegExp(grammar.repository.diff.begin).test('--- stdout (3 lines, 24 B) ---'));
		assert.ok(rule('heading').test('Search Text — Searching for Hello'));
		assert.ok(rule('heading').test('## Result'));
	});
});

describe('result documents: grep matches', () => {
	it('finds the matches on matching lines, not in their paths or on context lines', () => {
		const matcher = grepMatcher({ pattern: 'hel+o', ignoreCase: true })!;
		assert.deepEqual(matchSpans('src/hello.ts:2: \treturn `Hello, ${name}!`;', matcher), [[25, 30]]);
		assert.deepEqual(matchSpans('src/hello.ts-1- hello in context', matcher), []);
		assert.deepEqual(matchSpans('1 matching line in 1 file for "hello"', matcher), []);
	});

	it('reads literals literally, and marks nothing for a pattern JavaScript cannot read', () => {
		const literal = grepMatcher({ pattern: 'a.b(', fixedStrings: true })!;
		assert.deepEqual(matchSpans('x.txt:1: a.b( axb(', literal), [[9, 13]]);
		assert.equal(grepMatcher({ pattern: '(?<!x' }), undefined);
		assert.equal(grepMatcher({}), undefined);
		const empty = grepMatcher({ pattern: 'x*' })!;
		assert.deepEqual(matchSpans('a.txt:1: axxb', empty), [[10, 12]], 'empty matches are skipped, not looped on');
	});
});
