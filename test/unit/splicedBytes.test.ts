import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { applyPatch } from 'diff';
import { SplicedBytes, wholeBytes } from '../../src/core/files/splicedBytes';
import { replaceExactBytes } from '../../src/core/text/byteEdit';
import { applyChangesAtomically } from '../../src/core/files/atomic';
import { lineCounts, unifiedDiff } from '../../src/core/changes/diff';
import type { FileChange } from '../../src/core/context';
import { makeTree } from './helpers';

type Edit = { oldText: string; newText: string; replaceAll?: boolean };

/** The edits as one joined buffer each time, as replaceExactBytes did before it kept pieces. */
function referenceEdit(before: Buffer, edits: readonly Edit[]): string | undefined {
	let bytes = before;
	for (const edit of edits) {
		const needle = Buffer.from(edit.oldText);
		const found: number[] = [];
		for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + needle.length)) found.push(at);
		if (found.length === 0 || (found.length > 1 && !edit.replaceAll)) return undefined;
		const parts: Buffer[] = [];
		let from = 0;
		for (const at of found) {
			parts.push(bytes.subarray(from, at), Buffer.from(edit.newText));
			from = at + needle.length;
		}
		parts.push(bytes.subarray(from));
		bytes = Buffer.concat(parts);
	}
	return bytes.toString();
}

/** The edit's new bytes, which must still be pieces of the old ones. */
function pieces(before: Buffer, edits: readonly Edit[]): SplicedBytes {
	const after = replaceExactBytes(before, edits)!.after;
	assert.ok(after instanceof SplicedBytes, 'kept as pieces');
	return after;
}

describe('SplicedBytes', () => {
	let seed = 11;
	const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
	const word = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');

	it('gives what joined buffers give, for edits in turn whose matches run across earlier replacements', () => {
		let compared = 0;
		for (let round = 0; round < 3000; round++) {
			// A small alphabet, so later needles often span the joins of earlier edits.
			const before = Buffer.from(word('ab\nc', 1 + random(40)));
			const edits = Array.from({ length: 1 + random(3) }, () => ({ oldText: word('ab\nc', 1 + random(4)), newText: word('abxy\n', random(5)), replaceAll: random(2) === 0 }));
			const expected = referenceEdit(before, edits);
			const result = replaceExactBytes(before, edits);
			assert.equal(result && Buffer.from(wholeBytes(result.after)).toString(), expected, `round ${round}: ${JSON.stringify({ before: before.toString(), edits })}`);
			// Every piece counts (the searches and the write walk them; too many are joined): none is empty.
			if (result?.after instanceof SplicedBytes) assert.ok(result.after.pieces.every(piece => piece.length > 0), `round ${round}: an empty piece`);
			if (expected !== undefined) compared++;
		}
		assert.ok(compared > 300, `enough rounds found their text (${compared})`);
	});

	it('keeps the old bytes in place: an edit of a big buffer copies only the new text', () => {
		const before = Buffer.alloc(8 << 20, 'a line of text\n');
		before.write('THE LINE', 4 << 20);
		const after = pieces(before, [{ oldText: 'THE LINE', newText: 'the new, longer line' }]);
		const copied = after.pieces.filter(piece => piece.buffer !== before.buffer).reduce((sum, piece) => sum + piece.length, 0);
		assert.equal(copied, 'the new, longer line'.length);
		assert.equal(after.byteLength, before.length + 12);
		assert.equal(after.unchangedPrefix(), 4 << 20);
		assert.equal(after.unchangedSuffix(), (4 << 20) - 8);
		assert.equal(after.equalsBase(), false);
	});

	it('finds itself equal to the old bytes when the edits undo each other, and not when only the length matches', () => {
		const before = Buffer.from('one two three\n');
		assert.equal(pieces(before, [{ oldText: 'two', newText: 'TWO' }, { oldText: 'TWO', newText: 'two' }]).equalsBase(), true);
		assert.equal(pieces(before, [{ oldText: 'two', newText: 'six' }]).equalsBase(), false);
		assert.equal(pieces(before, [{ oldText: 'two', newText: 'seven' }]).equalsBase(), false);
	});

	it('counts as unchanged only the old bytes in their old place, never memory past their end', () => {
		const memory = Buffer.from('abcdXYZW');
		const base = memory.subarray(0, 4);
		// The new text is memory that starts inside the old bytes and runs past them.
		const spliced = SplicedBytes.of(base).replaced([2], 2, memory.subarray(2, 6));
		assert.equal(spliced.whole().toString(), 'abcdXY');
		assert.equal(spliced.unchangedPrefix(), 2);
		assert.equal(spliced.unchangedSuffix(), 0);
		assert.equal(SplicedBytes.of(base).unchangedSuffix(), 4);
		assert.equal(SplicedBytes.of(base).equalsBase(), true);
	});

	it('leaves no empty piece between matches side by side', () => {
		const after = pieces(Buffer.from('aaaa'), [{ oldText: 'a', newText: 'bc', replaceAll: true }]);
		assert.deepEqual(after.pieces.map(piece => piece.toString()), ['bc', 'bc', 'bc', 'bc']);
	});

	it('is not the old bytes when it is only their start', () => {
		const before = Buffer.from('one two three\n');
		const cut = pieces(before, [{ oldText: ' three\n', newText: '' }]);
		assert.equal(cut.whole().toString(), 'one two');
		assert.equal(cut.equalsBase(), false);
	});

	it('counts as unchanged no memory just before the old bytes either', () => {
		const memory = Buffer.from('WXYZabcd');
		const base = memory.subarray(4, 8);
		// 'YZ' inserted at the start is memory that ends where the old bytes begin.
		const spliced = SplicedBytes.of(base).replaced([0], 0, memory.subarray(2, 4));
		assert.equal(spliced.whole().toString(), 'YZabcd');
		assert.equal(spliced.unchangedSuffix(), 4);
		assert.equal(spliced.unchangedPrefix(), 0);
	});

	it('tells the old bytes by their memory, not by an offset another buffer shares', () => {
		// Unpooled buffers all start at offset 0 of their own memory.
		const base = Buffer.alloc(64, 'a');
		const spliced = SplicedBytes.of(base).replaced([0], 2, Buffer.alloc(2, 'b'));
		assert.equal(spliced.unchangedPrefix(), 0);
		assert.equal(spliced.unchangedSuffix(), 62);
		assert.equal(SplicedBytes.of(base).replaced([0], 2, Buffer.alloc(2, 'a')).equalsBase(), true, 'equal by content');
		assert.equal(spliced.equalsBase(), false);
	});

	it('gives the old bytes themselves, not a copy, when nothing was cut', () => {
		const bytes = Buffer.from('unchanged\n');
		assert.equal(SplicedBytes.of(bytes).whole(), bytes);
		assert.equal(SplicedBytes.of(bytes).whole().buffer, bytes.buffer);
	});

	/** The bytes Buffer.concat copies while `work` runs (the windows a search cuts, or a join). */
	function bytesCopied(work: () => void): number {
		const concat = Buffer.concat;
		let copied = 0;
		Buffer.concat = ((list: readonly Uint8Array[], length?: number) => {
			const joined = concat(list, length);
			copied += joined.length;
			return joined;
		}) as typeof Buffer.concat;
		try {
			work();
		} finally {
			Buffer.concat = concat;
		}
		return copied;
	}

	it('searches a few pieces in place, copying only small windows at their joins', () => {
		const spliced = SplicedBytes.of(Buffer.alloc(100_000, 'x')).replaced([10_000, 50_000], 1, Buffer.from('y'));
		assert.equal(spliced.pieces.length, 5);
		const copied = bytesCopied(() => {
			assert.equal(spliced.indexOf(Buffer.from('not in there'), 0), -1);
			assert.equal(spliced.indexOf(Buffer.from('xxyxx'), 20_000), 49_998);
		});
		assert.ok(copied < 200, `${copied} bytes copied`);
	});

	it('joins pieces once, rather than copy more in windows than the whole holds', () => {
		// 200 one-byte edits: windows of a 100-byte needle at 400 joins would copy four times the bytes.
		const starts = Array.from({ length: 200 }, (_, index) => index * 100 + 50);
		const spliced = SplicedBytes.of(Buffer.alloc(20_000, 'x')).replaced(starts, 1, Buffer.from('y'));
		const needle = Buffer.concat([Buffer.alloc(49, 'x'), Buffer.from('y'), Buffer.alloc(50, 'x')]);
		const absent = Buffer.concat([needle.subarray(0, 99), Buffer.from('z')]);
		const first = bytesCopied(() => assert.equal(spliced.indexOf(absent, 0), -1));
		assert.ok(first <= spliced.byteLength, `${first} bytes copied for ${spliced.byteLength}`);
		assert.equal(bytesCopied(() => assert.equal(spliced.indexOf(needle, 19_000), 19_001)), 0, 'joined once, kept');
	});

	it('cuts windows across pieces and finds needles from any position', () => {
		const spliced = SplicedBytes.of(Buffer.from('hello world')).replaced([5], 1, Buffer.from('--'));
		assert.equal(spliced.slice(3, 9).toString(), 'lo--wo');
		assert.equal(spliced.indexOf(Buffer.from('o--w'), 0), 4);
		assert.equal(spliced.indexOf(Buffer.from('o'), 5), 8);
		assert.equal(spliced.indexOf(Buffer.from('o--w'), 5), -1);
		assert.equal(wholeBytes(spliced).toString(), 'hello--world');
	});

	it('diffs from the pieces as from the joined bytes: the diff applies and its counts are the line counts', () => {
		for (let round = 0; round < 400; round++) {
			const lines = Array.from({ length: 1 + random(60) }, (_, i) => (round % 2 === 0 ? `l${random(5)}` : `line ${i}`));
			const text = `${lines.join('\n')}\n`;
			const target = lines[random(lines.length)];
			const edit = { oldText: target, newText: random(2) ? `${target}\nadded ${round}` : 'changed', replaceAll: true };
			const result = replaceExactBytes(Buffer.from(text), [edit]);
			if (!result) continue;
			const change: FileChange = { path: '/x', displayPath: 'x', before: Buffer.from(text), after: result.after };
			const joined: FileChange = { ...change, after: new Uint8Array(wholeBytes(result.after)) };
			const diff = unifiedDiff(change);
			const after = Buffer.from(wholeBytes(result.after)).toString();
			assert.equal(applyPatch(text, diff), after, `round ${round}:\n${diff}`);
			assert.deepEqual(lineCounts(change), lineCounts(joined), `round ${round}`);
			if (round % 2 === 1) assert.equal(diff, unifiedDiff(joined), `round ${round}: unique lines diff alike`);
		}
	});

	it('diffs pieces of other bytes than the change\'s old ones by their content, not by where they sit', () => {
		// Far apart (beyond the context and margin the diff keeps around a change).
		const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`);
		const before = Buffer.from(`${lines.join('\n')}\n`);
		lines[50] = 'other 50';
		const after = SplicedBytes.of(Buffer.from(`${lines.join('\n')}\n`)).replaced([0], 4, Buffer.from('LINE'));
		const diff = unifiedDiff({ path: '/x', displayPath: 'x', before, after });
		assert.equal(applyPatch(before.toString(), diff), after.whole().toString());
		assert.deepEqual(lineCounts({ path: '/x', displayPath: 'x', before, after }), { added: 2, removed: 2 });
	});

	it('joins the bytes once an edit would cut them into too many pieces to search and write one by one', () => {
		// 3,000 matches: kept as pieces, every later search and the write would walk 6,000 of them.
		const before = Buffer.from('ab\n'.repeat(3000));
		const result = replaceExactBytes(before, [{ oldText: 'a', newText: 'xy', replaceAll: true }, { oldText: 'b', newText: 'c', replaceAll: true }])!;
		assert.ok(!(result.after instanceof SplicedBytes), 'one buffer');
		assert.equal(Buffer.from(result.after).toString(), 'xyc\n'.repeat(3000));
		assert.deepEqual(result.counts, [3000, 3000]);
		// A few matches stay pieces of the old bytes.
		assert.ok(replaceExactBytes(before.subarray(0, 30), [{ oldText: 'a', newText: 'xy', replaceAll: true }])!.after instanceof SplicedBytes);
	});

	it('is written to disk piece by piece as the joined bytes', async () => {
		const tree = makeTree({ 'a.txt': 'first\nmiddle\nlast\n' });
		try {
			const before = fs.readFileSync(tree.file('a.txt'));
			const after = replaceExactBytes(before, [{ oldText: 'middle', newText: 'centre ✓' }])!.after;
			await applyChangesAtomically([{ path: tree.file('a.txt'), displayPath: 'a.txt', before, after }]);
			assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'first\ncentre ✓\nlast\n');
		} finally {
			tree.cleanup();
		}
	});
});
