import * as assert from 'node:assert/strict';
import { decodeFileLines, encodeFileLines } from '../../src/core/patch/fileLines';
import { applyHunks } from '../../src/core/patch/hunks';
import { UpdateOperation } from '../../src/core/patch/model';
import { parsePatch } from '../../src/core/patch/parse';

const codex = (...lines: string[]) => ['*** Begin Patch', '*** Update File: f.txt', ...lines, '*** End Patch'].join('\n');
const unified = (...lines: string[]) => ['--- a/f.txt', '+++ b/f.txt', ...lines].join('\n');

/** The patched text, or the error message when the hunks do not apply. */
function outcome(text: string, patch: string): string {
	const operation = parsePatch(patch).operations[0] as UpdateOperation;
	try {
		return Buffer.from(encodeFileLines(applyHunks(decodeFileLines(Buffer.from(text, 'utf8'), 'f.txt'), operation.hunks, 'f.txt').file)).toString('utf8');
	} catch (error) {
		return `ERROR ${(error as Error).message}`;
	}
}

describe('patch hunks: placement at its edges', () => {
	it('shifts each numbered hunk by where the one before it landed, pure insertions included', () => {
		// Hunk 1 says line 2 but sits at line 4: hunk 2's line 8 is taken as line 10.
		assert.equal(outcome('p\nk\nz\nq\nr\ns\nt\nu\nv\nc\nw\nc\nw\nc\n', unified('@@ -2,1 +2,1 @@', '-q', '+Q', '@@ -8,1 +8,1 @@', '-c', '+C')), 'p\nk\nz\nQ\nr\ns\nt\nu\nv\nC\nw\nc\nw\nc\n');
		assert.equal(outcome('z\nz\na\nb\nc\nd\ne\nf\n', unified('@@ -1,1 +1,1 @@', '-a', '+A', '@@ -4,0 +5,1 @@', '+ins')), 'z\nz\nA\nb\nc\nd\nins\ne\nf\n');
		// An insertion where it says leaves no shift: the x at lines 8 and 10 stay equally near line 9.
		assert.match(outcome('a\nb\nc\nd\ne\nf\ng\nx\nh\nx\n', unified('@@ -2,0 +3,1 @@', '+new', '@@ -9,1 +10,1 @@', '-x', '+X')), /^ERROR f\.txt: hunk 2 \(patch line 5\) matches 2 places exactly \(lines 8, 10\), and its line number is equally near two of them\./);
	});

	it('seeks a Codex hunk nearest the end of the previous one', () => {
		assert.equal(outcome('a\nx\ny\nx\n', codex('@@', '-a', '+A', '@@', '-x', '+X')), 'A\nX\ny\nx\n');
	});

	it('chooses the place nearest the line number, and refuses a tie', () => {
		assert.equal(outcome('a\nx\nb\nc\nd\ne\nx\nf\n', unified('@@ -4,1 +4,1 @@', '-x', '+X')), 'a\nX\nb\nc\nd\ne\nx\nf\n');
		assert.equal(outcome('a\nb\nc\nd\nx\nf\ng\nh\ni\nx\n', unified('@@ -8,1 +8,1 @@', '-x', '+X')), 'a\nb\nc\nd\nx\nf\ng\nh\ni\nX\n');
		assert.match(outcome('a\nb\nx\nc\nd\ne\nx\n', unified('@@ -5,1 +5,1 @@', '-x', '+X')), /matches 2 places exactly \(lines 3, 7\), and its line number is equally near two of them/);
	});

	it('takes the line number\'s place only when the old lines really are there', () => {
		assert.match(outcome('c\nb\nx\n', unified('@@ -2,2 +2,2 @@', '-b', '-c', '+B')), /^ERROR f\.txt: hunk 1 \(patch line 3\) does not fit the file: its 2 old lines \(context and removed\) are not in the file, even ignoring whitespace and Unicode punctuation\. The nearest near-miss starts at line 2 \(50% alike\); first difference at line 3: expected "c", found "x"\./);
	});

	it('puts a hunk that ends without a final newline at the end of the file, even when its line number says otherwise', () => {
		assert.equal(outcome('x\nmid\nx', unified('@@ -1 +1 @@', '-x', '\\ No newline at end of file', '+y', '\\ No newline at end of file')), 'x\nmid\ny');
	});

	it('appends an *** End of File insertion at the end, whatever its anchor', () => {
		assert.equal(outcome('a\nb\nc\n', codex('@@ a', '+x', '*** End of File')), 'a\nb\nc\nx\n');
	});

	it('applies numbered hunks given in any order, an insertion before a change at the same line', () => {
		assert.equal(outcome('a\nb\nc\nd\ne\nf\n', unified('@@ -5,1 +5,1 @@', '-e', '+E', '@@ -1,1 +1,1 @@', '-a', '+A')), 'A\nb\nc\nd\nE\nf\n');
		assert.equal(outcome('a\nb\nc\nd\ne\n', unified('@@ -3,2 +3,2 @@', '-c', '-d', '+C', '+D', '@@ -2,0 +3,1 @@', '+ins')), 'a\nb\nins\nC\nD\ne\n');
	});

	it('lets an insertion sit at the edge of another hunk\'s lines, never inside them', () => {
		assert.equal(outcome('a\nb\nc\nd\ne\n', unified('@@ -3,0 +4,1 @@', '+ins', '@@ -2,2 +2,2 @@', '-b', '-c', '+B', '+C')), 'a\nB\nC\nins\nd\ne\n');
		assert.equal(outcome('a\nb\nc\nd\ne\n', unified('@@ -3,0 +4,1 @@', '+ins', '@@ -2,3 +2,3 @@', '-b', '-c', '-d', '+B', '+C', '+D')),
			'ERROR f.txt: hunk 2 (patch line 5) conflicts with hunk 1: it fits only at lines 2–4, which hunk 1 already changes (line 4). Merge the two hunks into one, or fix their context. Nothing was changed.');
	});

	it('keeps the last line\'s own ending in a mixed file', () => {
		assert.equal(outcome('one\r\ntwo\nthree\r\n', codex('@@', '-one', '+ONE')), 'ONE\r\ntwo\nthree\r\n');
	});

	it('gives the old last line the file\'s ending when lines are added after it', () => {
		assert.equal(outcome('a\r\nb', codex('@@', ' b', '+c')), 'a\r\nb\r\nc');
	});

	it('moves the search past the anchor of a hunk that only adds lines', () => {
		assert.equal(outcome('x\ndef b():\nx\n', codex('@@ def b():', '+  pass', '@@', '-x', '+X')), 'x\ndef b():\n  pass\nX\n');
	});

	it('lets an insertion with nothing to go by give the next hunk no place to be near: two places stay ambiguous', () => {
		assert.match(outcome('x\ny\nx\n', codex('@@', '+end', '@@', '-x', '+X')), /^ERROR f\.txt: hunk 2 \(patch line 5\) matches 2 places exactly \(lines 1, 3\), and there is no line number or earlier hunk to choose by\./);
	});

	it('places a numbered hunk after a Codex one by its own number', () => {
		assert.equal(outcome('a\nb\nx\nc\nd\ne\nf\ng\nx\nh\n', codex('@@', '-a', '+A', '@@ -8,1 +8,1 @@', '-x', '+X')), 'A\nb\nx\nc\nd\ne\nf\ng\nX\nh\n');
	});

	it('applies adjacent numbered hunks given in any order', () => {
		assert.equal(outcome('a\nb\nc\nd\n', unified('@@ -3,1 +3,1 @@', '-c', '+C', '@@ -1,2 +1,2 @@', '-a', '-b', '+A', '+B')), 'A\nB\nC\nd\n');
		assert.equal(outcome('a\nb\nc\nd\ne\n', unified('@@ -2,2 +2,2 @@', '-b', '-c', '+B', '+C', '@@ -3,0 +4,1 @@', '+ins')), 'a\nB\nC\nins\nd\ne\n', 'an insertion right after a changed block');
	});

	it('prefers the end for *** End of File, but applies the hunk where its lines are when they are not last', () => {
		assert.equal(outcome('a\nb\nc\n', codex('@@', '-a', '+A', '*** End of File')), 'A\nb\nc\n');
	});

	it('leaves the final newline alone when a `\\ No newline` marker sits on a hunk that does not reach the end', () => {
		assert.equal(outcome('a\nb\nc\n', unified('@@ -1 +1 @@', '-a', '+A', '\\ No newline at end of file')), 'A\nb\nc\n');
	});
});

describe('patch hunks: what the errors say', () => {
	it('an @@ anchor: not found, found only before the previous hunk, or with the most similar line', () => {
		assert.equal(outcome('a\nb\nc\n', codex('@@ c', '-c', '+C', '@@ a', '-a', '+A')),
			'ERROR f.txt: hunk 2 (patch line 6): its \'@@ a\' line was not found after line 3. The text after \'@@ \' must equal a whole line of the file (whitespace aside). It is at line 1, before the previous hunk: hunks must be in file order. Nothing was changed.');
		assert.equal(outcome('a\nb\nc\n', codex('@@ c', '-c', '+C', '@@ zzz', '-a', '+A')),
			'ERROR f.txt: hunk 2 (patch line 6): its \'@@ zzz\' line was not found after line 3. The text after \'@@ \' must equal a whole line of the file (whitespace aside). Nothing was changed.');
		assert.equal(outcome('a\nb\nc\n', codex('@@ zzz', '-a', '+A')),
			'ERROR f.txt: hunk 1 (patch line 3): its \'@@ zzz\' line was not found. The text after \'@@ \' must equal a whole line of the file (whitespace aside). Nothing was changed.');
		assert.match(outcome('export class Foo {\n}\n', codex('@@ class Foo', '-}', '+};')), /was not found\. .* The most similar line is 1: "export class Foo \{"\. Nothing was changed\.$/);
		assert.match(outcome('def handler():\n  pass\n', codex('@@ def handle():', '-  pass', '+  return 1')), /The most similar line is 1: "def handler\(\):"\. Nothing was changed\.$/);
		// A line containing the anchor beats one that only looks like it.
		assert.match(outcome('def_load\nclass X:\n    async def load(self, path):\n', codex('@@ def load', '-x', '+y')), /The most similar line is 3: " {4}async def load\(self, path\):"\. Nothing was changed\.$/);
		assert.match(outcome('a  \nb\nc\n', codex('@@ c', '-c', '+C', '@@ a', '-a', '+A')), /It is at line 1, before the previous hunk: hunks must be in file order\./, 'found before only ignoring whitespace');
	});

	it('lines that are nowhere: an empty file, nothing alike (with the line number), a near miss, lines only before the previous hunk', () => {
		const tail = ' Read the file again and rebuild the hunk from its current text. Nothing was changed.';
		const head = 'ERROR f.txt: hunk 1 (patch line 3) does not fit the file: ';
		assert.equal(outcome('', codex('@@', '-x', '+y')), `${head}its old line (context or removed) is not in the file, even ignoring whitespace and Unicode punctuation. The file is empty.${tail}`);
		assert.equal(outcome('alpha\nbeta\n', codex('@@', '-zzzz qqqq', '+y')), `${head}its old line (context or removed) is not in the file, even ignoring whitespace and Unicode punctuation. Nothing in the file resembles it.${tail}`);
		assert.equal(outcome('alpha\nbeta\n', unified('@@ -5,1 +5,1 @@', '-zzzz qqqq', '+y')), `${head}its old line (context or removed) is not in the file, even ignoring whitespace and Unicode punctuation. Nothing in the file resembles it (the hunk's line number points at line 5).${tail}`);
		assert.equal(outcome('alpha\nbeta\n', codex('@@', '-zzzz', '-qqqq', '+y')), `${head}its 2 old lines (context and removed) are not in the file, even ignoring whitespace and Unicode punctuation. Nothing in the file resembles them.${tail}`);
		assert.equal(outcome('one\ntwo\n', codex('@@', '-one', '-two', '-three', '+x')), `${head}its 3 old lines (context and removed) are not in the file, even ignoring whitespace and Unicode punctuation. The nearest near-miss starts at line 1 (67% alike); first difference at line 3: the file ends where the hunk expects "three".${tail}`);
		assert.equal(outcome('a\nb\nc\n', codex('@@ b', '-b', '+B', '@@', '-a', '+A')),
			'ERROR f.txt: hunk 2 (patch line 6) does not fit the file: its lines are only at line 1, at or before the end of the previous hunk (line 2). Hunks must be in file order and must not overlap; merge overlapping hunks into one. Nothing was changed.');
		assert.match(outcome('a  \nb\nc\n', codex('@@', '-b', '+B', '@@', '-a', '+A')), /its lines are only at line 1, at or before the end of the previous hunk \(line 2\)\./, 'found before only ignoring whitespace');
		// A Codex hunk has no line number to quote: the place the search began is not one.
		assert.equal(outcome('a\nb\nc\n', codex('@@', '-a', '+A', '@@', '-zzzz', '+y')),
			'ERROR f.txt: hunk 2 (patch line 6) does not fit the file: its old line (context or removed) is not in the file, even ignoring whitespace and Unicode punctuation. Nothing in the file resembles it. Read the file again and rebuild the hunk from its current text. Nothing was changed.');
	});

	it('lines only above the hunk\'s own @@ anchor: says so, numbered or not', () => {
		const above = 'ERROR f.txt: hunk 1 (patch line 3) does not fit the file: its lines are only at line 1, above its \'@@ def b():\' line. A hunk\'s lines come after its \'@@\' line; fix or drop that line. Nothing was changed.';
		assert.equal(outcome('x\ndef b():\ny\n', codex('@@ def b():', '-x', '+X')), above);
		assert.equal(outcome('x\ndef b():\ny\n', codex('@@ -1,1 +1,1 @@', '@@ def b():', '-x', '+X')), above);
	});

	it('many places: the first five and how many in all', () => {
		assert.equal(outcome('x\nx\nx\nx\nx\nx\nx\n', codex('@@', '-x', '+y')),
			'ERROR f.txt: hunk 1 (patch line 3) matches 7 places exactly (lines 1, 2, 3, 4, 5, … (7 in all)), and there is no line number or earlier hunk to choose by. Add context lines that differ between those places, or an \'@@ <line of the enclosing function or class>\' anchor. Nothing was changed.');
		assert.match(outcome('x\nx\nx\nx\nx\n', codex('@@', '-x', '+y')), /matches 5 places exactly \(lines 1, 2, 3, 4, 5\), and/);
	});

	it('overlapping hunks: the lines each one takes', () => {
		assert.equal(outcome('a\nb\nc\nd\ne\n', unified('@@ -2,2 +2,2 @@', '-b', '-c', '+B', '+C', '@@ -3,2 +3,2 @@', '-c', '-d', '+C', '+D')),
			'ERROR f.txt: hunk 2 (patch line 8) conflicts with hunk 1: it fits only at lines 3–4, which hunk 1 already changes (lines 2–3). Merge the two hunks into one, or fix their context. Nothing was changed.');
		assert.equal(outcome('a\nb\nc\nd\ne\n', unified('@@ -2,1 +2,1 @@', '-b', '+B', '@@ -2,1 +2,1 @@', '-b', '+B')),
			'ERROR f.txt: hunk 2 (patch line 6) conflicts with hunk 1: it fits only at line 2, which hunk 1 already changes (line 2). Merge the two hunks into one, or fix their context. Nothing was changed.');
		assert.equal(outcome('a\nb\nc\nd\ne\n', unified('@@ -2,3 +2,3 @@', '-b', '-c', '-d', '+B', '+C', '+D', '@@ -3,0 +4,1 @@', '+ins')),
			'ERROR f.txt: hunk 2 (patch line 10) conflicts with hunk 1: it adds lines at line 4, which hunk 1 already changes (lines 2–4). Merge the two hunks into one, or fix their context. Nothing was changed.');
		// Errors come in patch order: the conflict before a later hunk that fits nowhere.
		assert.match(outcome('a\nb\nc\nd\ne\n', unified('@@ -2,3 +2,3 @@', '-b', '-c', '-d', '+B', '+C', '+D', '@@ -3,0 +4,1 @@', '+ins', '@@ -5,1 +5,1 @@', '-zzz', '+y')),
			/^ERROR f\.txt: hunk 2 \(patch line 10\) conflicts with hunk 1: it adds lines at line 4/);
		// A Codex hunk is sought after the previous hunk only, so it may land on an earlier numbered hunk's lines.
		assert.equal(outcome('a\nb\nc\nd\ne\nf\n', codex('@@ -5,1 +5,1 @@', '-e', '+E', '@@ -1,1 +1,1 @@', '-a', '+A', '@@', '-e', '+EE')),
			'ERROR f.txt: hunk 3 (patch line 9) conflicts with hunk 1: it fits only at line 5, which hunk 1 already changes (line 5). Merge the two hunks into one, or fix their context. Nothing was changed.');
	});
});
