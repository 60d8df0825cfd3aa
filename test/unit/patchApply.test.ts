import * as assert from 'node:assert/strict';
import { decodeFileLines, encodeFileLines } from '../../src/core/patch/fileLines';
import { applyHunks } from '../../src/core/patch/hunks';
import { PatchApplyError, UpdateOperation } from '../../src/core/patch/model';
import { parsePatch } from '../../src/core/patch/parse';

/** Applies the hunks of a one-file patch to a text and returns the new text. */
function apply(text: string, patch: string): { text: string; notes: string[] } {
	const operation = parsePatch(patch).operations[0] as UpdateOperation;
	const result = applyHunks(decodeFileLines(Buffer.from(text, 'utf8'), 'f.txt'), operation.hunks, 'f.txt');
	return { text: Buffer.from(encodeFileLines(result.file)).toString('utf8'), notes: result.notes };
}

function failure(text: string, patch: string): PatchApplyError {
	try {
		apply(text, patch);
	} catch (error) {
		assert.ok(error instanceof PatchApplyError, `expected a PatchApplyError, got ${error}`);
		return error;
	}
	assert.fail('the patch applied, but an error was expected');
}

const codex = (...lines: string[]) => ['*** Begin Patch', '*** Update File: f.txt', ...lines, '*** End Patch'].join('\n');
const unified = (...lines: string[]) => ['--- a/f.txt', '+++ b/f.txt', ...lines].join('\n');

describe('patch applying: placing hunks', () => {
	it('prefers an exact match over a tolerant one elsewhere', () => {
		const result = apply('key  \nmiddle\nkey\n', codex('@@', '-key', '+KEY'));
		assert.equal(result.text, 'key  \nmiddle\nKEY\n');
		assert.deepEqual(result.notes, []);
	});

	it('walks the ladder: trailing whitespace, indentation, Unicode punctuation, and says which it used', () => {
		assert.deepEqual(apply('a \nb\n', codex('@@', ' a', '-b', '+B')).notes, ['f.txt hunk 1: placed at line 1, matched ignoring trailing whitespace.']);
		assert.equal(apply('\t\tx = 1\n', codex('@@', '-x = 1', '+\t\tx = 2')).text, '\t\tx = 2\n');
		assert.equal(apply('say \u201chi\u201d \u2013 ok\n', codex('@@', '-say "hi" - ok', '+say "bye"')).text, 'say "bye"\n');
	});

	it('keeps the file\'s own bytes for context lines found with tolerance', () => {
		assert.equal(apply('  keep me   \nold\n', codex('@@', ' keep me', '-old', '+new')).text, '  keep me   \nnew\n');
	});

	it('lets the line number choose between equal places, nearest first', () => {
		const text = 'x\ny\nx\ny\nx\ny\n';
		assert.equal(apply(text, unified('@@ -3,2 +3,2 @@', '-x', '+X', ' y')).text, 'x\ny\nX\ny\nx\ny\n');
		assert.equal(apply(text, unified('@@ -6,2 +6,2 @@', '-x', '+X', ' y')).text, 'x\ny\nx\ny\nX\ny\n');
	});

	it('refuses a tie: two places equally near the line number', () => {
		const error = failure('x\nmid\nx\n', unified('@@ -2 +2 @@', '-x', '+X'));
		assert.match(error.message, /hunk 1 \(patch line 3\) matches 2 places exactly \(lines 1, 3\), and its line number is equally near two of them/);
	});

	it('refuses several places at every tolerant level when nothing chooses between them', () => {
		for (const [text, patch, level] of [
			['a  \nmid\na\t\n', codex('@@', '-a', '+A'), 'ignoring trailing whitespace'],
			['\tz = 1\nmid\n  z = 1\n', codex('@@', '-z = 1', '+Z'), 'ignoring indentation and trailing whitespace'],
			['“q”\nmid\n„q”\n', codex('@@', '-"q"', '+Q'), 'ignoring whitespace and Unicode look-alikes'],
		]) {
			const { message } = failure(text, patch);
			assert.ok(message.includes(`matches 2 places ${level}`) && message.includes('(lines 1, 3), and there is no line number'), message);
		}
	});

	it('carries the offset of one hunk to the next hunk\'s line number (as GNU patch does)', () => {
		const text = ['pad', 'pad', 'a', 'b', 'pad', 'c', 'x', 'pad', 'c', 'x', 'pad', 'c', 'x'].join('\n') + '\n';
		// The headers say lines 1 and 6, but the file has two more lines on top: hunk 2 belongs at line 8, not 5.
		const result = apply(text, unified('@@ -1,2 +1,2 @@', '-a', '+A', ' b', '@@ -6,2 +6,2 @@', ' pad', '-c', '+C'));
		assert.equal(result.text, ['pad', 'pad', 'A', 'b', 'pad', 'c', 'x', 'pad', 'C', 'x', 'pad', 'c', 'x'].join('\n') + '\n');
	});

	it('seeks Codex hunks top to bottom, each after the previous one', () => {
		assert.equal(apply('top\nv\nw\nv\nw\n', codex('@@', ' top', '-v', '+V1', '@@', '-v', '+V2')).text, 'top\nV1\nw\nV2\nw\n');
	});

	it('accepts a hunk whose first context line repeats its @@ anchor', () => {
		const text = 'def f():\n    return 1\n\ndef g():\n    return 1\n';
		assert.equal(apply(text, codex('@@ def g():', ' def g():', '-    return 1', '+    return 2')).text, 'def f():\n    return 1\n\ndef g():\n    return 2\n');
	});

	it('puts pure insertions where the patch says', () => {
		assert.equal(apply('a\nb\n', unified('@@ -0,0 +1 @@', '+top')).text, 'top\na\nb\n');
		assert.equal(apply('a\nb\n', unified('@@ -1,0 +2 @@', '+mid')).text, 'a\nmid\nb\n');
		assert.equal(apply('a\nb\n', codex('@@ a', '+after a')).text, 'a\nafter a\nb\n');
		assert.equal(apply('a\nb\n', codex('@@', '+end')).text, 'a\nb\nend\n');
		assert.equal(apply('', codex('@@', '+first')).text, 'first\n');
	});

	it('refuses an insertion inside lines another hunk changes', () => {
		const error = failure('a\nb\nc\n', unified('@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c', '@@ -1,0 +2 @@', '+x'));
		assert.match(error.message, /hunk 2 \(patch line 8\) conflicts with hunk 1: it adds lines at line 2, which hunk 1 already changes \(lines 1–3\)/);
	});

	it('moves a hunk to a free place when its nearest match is taken by another hunk', () => {
		const result = apply('k\nk\n', unified('@@ -1 +1 @@', '-k', '+K1', '@@ -1 +1 @@', '-k', '+K2'));
		assert.equal(result.text, 'K1\nK2\n');
	});

	it('reports the nearest near-miss: where it is and the first line that differs', () => {
		const text = ['function add(a, b) {', '  const sum = a + b;', '  return sum;', '}', ''].join('\n');
		const error = failure(text, codex('@@', ' function add(a, b) {', '   const sum = a + b;', '-  return total;', '+  return sum * 1;', ' }'));
		assert.match(error.message, /^f\.txt: hunk 1 \(patch line 3\) does not fit the file: its 4 old lines \(context and removed\) are not in the file/);
		assert.match(error.message, /The nearest near-miss starts at line 1 \(\d+% alike\); first difference at line 3: expected " {2}return total;", found " {2}return sum;"\./);
		assert.deepEqual(error.details, { path: 'f.txt', hunk: 1, patchLine: 3 });
	});

	it('says when the file ends where the hunk expects more', () => {
		assert.match(failure('a\nb\n', codex('@@', ' a', ' b', '-c', '+C')).message, /first difference at line 3: the file ends where the hunk expects "c"/);
	});

	it('replaces removed lines by added ones in place', () => {
		const result = apply('1\n2\n3\n', codex('@@', '-1', '+one', '+uno', ' 2', '-3'));
		assert.equal(result.text, 'one\nuno\n2\n');
	});
});

describe('patch applying: line endings, BOM and the final newline', () => {
	it('keeps CRLF, and gives added lines the file\'s ending', () => {
		assert.equal(apply('a\r\nb\r\nc\r\n', codex('@@', ' a', '-b', '+B1', '+B2', ' c')).text, 'a\r\nB1\r\nB2\r\nc\r\n');
	});

	it('keeps each line\'s own ending in a mixed file', () => {
		assert.equal(apply('a\nb\r\nc\n', codex('@@', ' a', ' b', '-c', '+C')).text, 'a\nb\r\nC\n');
	});

	it('keeps a BOM', () => {
		assert.equal(apply('\ufeffa\nb\n', codex('@@', '-b', '+B')).text, '\ufeffa\nB\n');
	});

	it('keeps a missing final newline, even when lines are added after the last one', () => {
		assert.equal(apply('a\nb', codex('@@', '-b', '+B')).text, 'a\nB');
		assert.equal(apply('a\nb', codex('@@', ' b', '+c')).text, 'a\nb\nc');
		assert.equal(apply('a\r\nb', codex('@@', ' a', '-b')).text, 'a');
	});

	it('adds or removes the final newline only when `\\ No newline at end of file` says so on one side', () => {
		assert.equal(apply('a\nb', unified('@@ -1,2 +1,2 @@', ' a', '-b', '\\ No newline at end of file', '+b')).text, 'a\nb\n');
		assert.equal(apply('a\nb\n', unified('@@ -1,2 +1,2 @@', ' a', '-b', '+b', '\\ No newline at end of file')).text, 'a\nb');
		assert.equal(apply('a\r\nb', unified('@@ -1,2 +1,2 @@', ' a', '-b', '\\ No newline at end of file', '+c')).text, 'a\r\nc\r\n');
	});

	it('prefers the end of the file for a hunk marked *** End of File', () => {
		assert.equal(apply('x\ny\nx\n', codex('@@', '-x', '+X', '*** End of File')).text, 'x\ny\nX\n');
	});
});
