import { formatPatch, structuredPatch } from 'diff';
import type { FileChange } from '../context';

/** Lines kept beyond the context around a change when the shared ends are dropped. */
const TRIM_MARGIN_LINES = 16;
const EMPTY = Buffer.alloc(0);
const NEWLINE = 0x0a;

function asBuffer(bytes: Uint8Array | null): Buffer {
	if (!bytes) return EMPTY;
	return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Bytes as text for a diff (a BOM at the start is dropped; invalid UTF-8 shows as U+FFFD). */
function asText(bytes: Uint8Array): string {
	return new TextDecoder('utf-8').decode(bytes);
}

/** Bytes both buffers start with, compared a page at a time (memcmp) before byte by byte. */
function commonPrefix(a: Buffer, b: Buffer): number {
	const n = Math.min(a.length, b.length);
	const PAGE = 4096;
	let i = 0;
	while (i + PAGE <= n && a.compare(b, i, i + PAGE, i, i + PAGE) === 0) i += PAGE;
	while (i < n && a[i] === b[i]) i++;
	return i;
}

/** Bytes both buffers end with, not reaching into the first `prefix` bytes of either. */
function commonSuffix(a: Buffer, b: Buffer, prefix: number): number {
	const n = Math.min(a.length, b.length) - prefix;
	const PAGE = 4096;
	let i = 0;
	while (i + PAGE <= n && a.compare(b, b.length - i - PAGE, b.length - i, a.length - i - PAGE, a.length - i) === 0) i += PAGE;
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
function trimCommonLines(before: Uint8Array | null, after: Uint8Array | null, context: number): { a: string; b: string; skipped: number } {
	const a = asBuffer(before);
	const b = asBuffer(after);
	const prefix = commonPrefix(a, b);
	const suffix = commonSuffix(a, b, prefix);
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
	const endB = b.length - (a.length - endA);
	let skipped = 0;
	for (let at = a.indexOf(NEWLINE); at !== -1 && at < start; at = a.indexOf(NEWLINE, at + 1)) skipped++;
	return { a: asText(a.subarray(start, endA)), b: asText(b.subarray(start, endB)), skipped };
}

/** One file's unified diff, and the lines it adds and removes (counted on the hunks, not re-parsed). */
export interface FileDiff {
	readonly text: string;
	readonly added: number;
	readonly removed: number;
}

/** A unified diff of one change, with a/ and b/ paths as git prints them. */
export function fileDiff(change: FileChange, context = 3): FileDiff {
	const from = change.before ? `a/${change.displayPath}` : '/dev/null';
	const to = change.after ? `b/${change.movedTo?.displayPath ?? change.displayPath}` : '/dev/null';
	const trimmed = trimCommonLines(change.before, change.after, context);
	const patch = structuredPatch(from, to, trimmed.a, trimmed.b, undefined, undefined, { context });
	let added = 0;
	let removed = 0;
	for (const hunk of patch.hunks) {
		// The hunks are of the trimmed texts: shift them back to the lines of the whole files.
		hunk.oldStart += trimmed.skipped;
		hunk.newStart += trimmed.skipped;
		for (const line of hunk.lines) {
			if (line.startsWith('+')) added++;
			else if (line.startsWith('-')) removed++;
		}
	}
	// The library starts with a line of '=' under an Index header; git's shape is easier to read.
	return { text: formatPatch(patch).replace(/^=+\n/m, ''), added, removed };
}

export function unifiedDiff(change: FileChange, context = 3): string {
	return fileDiff(change, context).text;
}

export function unifiedDiffs(changes: readonly FileChange[], context = 3): string {
	return changes.map(change => unifiedDiff(change, context)).join('\n');
}
