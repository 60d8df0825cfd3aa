import { formatPatch, type StructuredPatch, structuredPatch } from 'diff';
import type { FileChange } from '../context';
import { countNewlines } from '../files/newlines';
import { FileBytes, SplicedBytes } from '../files/splicedBytes';
import { DiskBytes, DiskSplice } from '../files/diskBytes';
import { asBuffer } from '../files/bytes';

/** Lines kept beyond the context around a change when the shared ends are dropped. */
const TRIM_MARGIN_LINES = 16;
const EMPTY = Buffer.alloc(0);
const NEWLINE = 0x0a;

function wholeBuffer(bytes: FileBytes | DiskBytes | null): Buffer {
	if (!bytes) return EMPTY;
	if (bytes instanceof SplicedBytes || bytes instanceof DiskSplice || bytes instanceof DiskBytes) return bytes.whole();
	return asBuffer(bytes);
}

/** Bytes as text for a diff (a BOM at the start is dropped; invalid UTF-8 shows as U+FFFD). */
function asText(bytes: Uint8Array): string {
	return new TextDecoder('utf-8').decode(bytes);
}

/**
 * Blocks compared at once (memcmp), largest first: one native call per megabyte, not per page, and
 * the first difference narrowed down in native steps too (a byte loop over a page per file was
 * most of the cost of line counts in a fresh process, before the loop is compiled).
 */
const BLOCKS = [1 << 20, 4096, 256, 16];

/** Bytes both buffers start with. */
function commonPrefix(a: Buffer, b: Buffer): number {
	const n = Math.min(a.length, b.length);
	let i = 0;
	for (const block of BLOCKS) while (i + block <= n && a.compare(b, i, i + block, i, i + block) === 0) i += block;
	while (i < n && a[i] === b[i]) i++;
	return i;
}

/** Bytes both buffers end with, not reaching into the first `prefix` bytes of either. */
function commonSuffix(a: Buffer, b: Buffer, prefix: number): number {
	const n = Math.min(a.length, b.length) - prefix;
	let i = 0;
	for (const block of BLOCKS) while (i + block <= n && a.compare(b, b.length - i - block, b.length - i, a.length - i - block, a.length - i) === 0) i += block;
	while (i < n && a[a.length - 1 - i] === b[b.length - 1 - i]) i++;
	return i;
}

/**
 * The two texts without the lines they share at both ends (beyond the context and a margin), and
 * how many lines were dropped at the start. The diff library compares every line of both texts;
 * an edit of one line in a 50 MB file must cost neither that comparison nor decoding 50 MB twice,
 * so the shared ends are found on the bytes and only the middle is decoded. Cuts fall just after
 * a '\n' byte, which never sits inside a UTF-8 sequence.
 */
function trimCommonLines(before: Uint8Array | DiskBytes | null, after: FileBytes | null, context: number): { a: string; b: string; skipped: number } {
	// A file left on disk came with the lines around its edit: they are the middle (a wider one is as good).
	if (before instanceof DiskBytes && after instanceof DiskSplice && after.source === before && before.excerpt.linesAround >= context + TRIM_MARGIN_LINES) {
		return { a: asText(before.excerpt.bytes), b: asText(after.excerptAfter()), skipped: before.excerpt.lines };
	}
	const a = wholeBuffer(before);
	// Pieces of these very old bytes are compared by where they sit; anything else, byte by byte.
	const b = after instanceof SplicedBytes && sameMemory(after.base, a) ? after : wholeBuffer(after);
	const { prefix, suffix } = sharedEnds(a, b);
	// Around repeated lines the library may place a change a little differently than the byte
	// scan does, and needs room for its context there: keep a margin beyond the context.
	const margin = context + TRIM_MARGIN_LINES;
	// Start after the last line ending inside the shared prefix, then step back over the margin.
	let start = prefix > 0 ? a.lastIndexOf(NEWLINE, prefix - 1) + 1 : 0;
	for (let i = 0; i < margin && start > 0; i++) start = start >= 2 ? a.lastIndexOf(NEWLINE, start - 2) + 1 : 0;
	// End after the first line ending inside the shared suffix (so both texts end a line there),
	// then step forward over the margin.
	let endA = a.length;
	const newline = suffix > 0 ? a.indexOf(NEWLINE, a.length - suffix) : -1;
	if (newline !== -1) {
		endA = newline + 1;
		for (let i = 0; i < margin && endA < a.length; i++) endA = a.indexOf(NEWLINE, endA) + 1 || a.length;
	}
	const endB = b.byteLength - (a.length - endA);
	const skipped = countNewlines(a, 0, start);
	return { a: asText(a.subarray(start, endA)), b: asText(b instanceof SplicedBytes ? b.slice(start, endB) : b.subarray(start, endB)), skipped };
}

function sameMemory(x: Buffer, y: Buffer): boolean {
	return x.buffer === y.buffer && x.byteOffset === y.byteOffset && x.length === y.length;
}

/**
 * Bytes both versions start and end with (not overlapping). New bytes made of pieces of the old
 * ones say where they are unchanged without a comparison: only the pieces around the edits differ.
 */
function sharedEnds(a: Buffer, b: Buffer | SplicedBytes): { prefix: number; suffix: number } {
	if (!(b instanceof SplicedBytes)) {
		const prefix = commonPrefix(a, b);
		return { prefix, suffix: commonSuffix(a, b, prefix) };
	}
	const prefix = b.unchangedPrefix();
	return { prefix, suffix: Math.min(b.unchangedSuffix(), Math.min(a.length, b.byteLength) - prefix) };
}

/**
 * How much line-comparison work one file's diff may take: a shortest edit script costs about
 * (lines of both texts) × (lines changed), which for a whole rewrite of a large file is
 * quadratic (20,000 lines rewritten took the diff library 74 s). Past this, the changed region is
 * shown as removed whole and added whole: still a correct diff, and linear.
 */
const DIFF_WORK_LIMIT = 20_000_000;

/** A unified diff of one change, with a/ and b/ paths as git prints them. */
export function unifiedDiff(change: FileChange, context = 3): string {
	const from = change.before ? `a/${change.displayPath}` : '/dev/null';
	const to = change.after ? `b/${change.movedTo?.displayPath ?? change.displayPath}` : '/dev/null';
	const trimmed = trimCommonLines(change.before, change.after, context);
	const lines = lineCount(trimmed.a) + lineCount(trimmed.b);
	const maxEditLength = Math.max(1, Math.floor(DIFF_WORK_LIMIT / Math.max(1, lines)));
	const patch = structuredPatch(from, to, trimmed.a, trimmed.b, undefined, undefined, { context, maxEditLength })
		?? replacedWhole(from, to, trimmed.a, trimmed.b, context);
	// The hunks are of the trimmed texts: shift them back to the lines of the whole files.
	for (const hunk of patch.hunks) {
		hunk.oldStart += trimmed.skipped;
		hunk.newStart += trimmed.skipped;
	}
	// The library starts with a line of '=' under an Index header; git's shape is easier to read.
	return formatPatch(patch).replace(/^=+\n/m, '');
}

/** One hunk that removes every line of `a` and adds every line of `b` (each side diffed against nothing: linear). */
function replacedWhole(from: string, to: string, a: string, b: string, context: number): StructuredPatch {
	const removed = structuredPatch(from, to, a, '', undefined, undefined, { context }).hunks[0];
	const added = structuredPatch(from, to, '', b, undefined, undefined, { context }).hunks[0];
	const hunk = {
		oldStart: removed?.oldStart ?? 0,
		oldLines: removed?.oldLines ?? 0,
		newStart: added?.newStart ?? 0,
		newLines: added?.newLines ?? 0,
		lines: [...(removed?.lines ?? []), ...(added?.lines ?? [])],
	};
	return { oldFileName: from, newFileName: to, oldHeader: undefined, newHeader: undefined, hunks: [hunk] };
}

function lineCount(text: string): number {
	let count = 1;
	for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
	return count;
}

export interface LineCounts {
	readonly added: number;
	readonly removed: number;
}

/**
 * The lines a change adds and removes: the counts of unifiedDiff's hunks, without building them.
 * Any shortest edit script between the two line lists has the same counts (removed = lines before
 * − lines kept, added = lines after − lines kept), so the length of one is enough, taken on the
 * same trimmed texts. Past DIFF_WORK_LIMIT every line between the shared ends counts as
 * replaced, as unifiedDiff then shows it.
 */
export function lineCounts(change: FileChange): LineCounts {
	const trimmed = trimCommonLines(change.before, change.after, 0);
	return countLineEdits(linesOf(trimmed.a), linesOf(trimmed.b));
}

/**
 * lineCounts of two texts already split into lines as linesOf gives them (see lineKeys in
 * patch/fileLines.ts): the shared lines at both ends, which the bytes would have trimmed, are
 * taken off here all the same, so the counts and the work limit are lineCounts' own.
 */
export function countLineEdits(before: readonly string[], after: readonly string[]): LineCounts {
	const edits = shortestEditLength(before, after);
	// edits = removed + added, and after.length − before.length = added − removed.
	return { added: (edits + after.length - before.length) / 2, removed: (edits - after.length + before.length) / 2 };
}

/**
 * The lines as the diff library compares them, where a line includes its line break: here without
 * it (a CRLF line keeps its '\r'), and a last line that has none marked by a '\n' (which no
 * other line can hold).
 */
function linesOf(text: string): string[] {
	const lines = text.split('\n');
	const last = lines.pop()!;
	if (last !== '') lines.push(`${last}\n`);
	return lines;
}

/**
 * The number of insertions and deletions in a shortest edit script from `a` to `b` (Myers' greedy
 * search: O((N+M)·D) time, one array of N+M+3 furthest points), or N+M past DIFF_WORK_LIMIT. `reach[k]` is the furthest x on
 * diagonal k = x − y; a step right deletes a[x], a step down inserts b[y], a diagonal keeps a line.
 */
function shortestEditLength(a: readonly string[], b: readonly string[]): number {
	// Shared lines at both ends are in every shortest script: off first, so that the limit's
	// answer (everything between replaced) stays exact for a region rewritten whole.
	let start = 0;
	while (start < a.length && start < b.length && a[start] === b[start]) start++;
	let endA = a.length;
	let endB = b.length;
	while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
		endA--;
		endB--;
	}
	if (start > 0 || endA < a.length) return shortestEditLength(a.slice(start, endA), b.slice(start, endB));
	const n = a.length;
	const m = b.length;
	const offset = m + 1;
	// -1: no path reaches that diagonal yet.
	const reach = new Int32Array(n + m + 3).fill(-1);
	reach[offset + 1] = 0;
	for (let edits = 0; ; edits++) {
		// Past the work limit, count the region as replaced whole, as unifiedDiff then shows it.
		if (edits * (n + m) > DIFF_WORK_LIMIT) return n + m;
		// Diagonals of the same parity as `edits`, within the grid (−m ≤ k ≤ n).
		const first = edits <= m ? -edits : -m + ((edits - m) & 1);
		for (let k = first; k <= Math.min(edits, n); k += 2) {
			// Down from diagonal k+1 keeps x (valid while y stays within b); right from k−1 adds one (while x stays within a).
			const down = reach[offset + k + 1] !== -1 && reach[offset + k + 1] - k <= m ? reach[offset + k + 1] : -1;
			const right = reach[offset + k - 1] !== -1 && reach[offset + k - 1] < n ? reach[offset + k - 1] + 1 : -1;
			let x = Math.max(down, right);
			if (x === -1) continue;
			while (x < n && x - k < m && a[x] === b[x - k]) x++;
			reach[offset + k] = x;
			if (x === n && x - k === m) return edits;
		}
	}
}

export function unifiedDiffs(changes: readonly FileChange[], context = 3): string {
	return changes.map(change => unifiedDiff(change, context)).join('\n');
}
