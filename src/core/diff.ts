import { createTwoFilesPatch, structuredPatch } from 'diff';
import type { FileChange } from './context';

/** Bytes as text for a diff; undefined for content that is not text. */
function asText(bytes: Uint8Array | null): string {
	return bytes ? new TextDecoder('utf-8').decode(bytes) : '';
}

/** Lines kept beyond the context around a change when the shared ends are dropped. */
const TRIM_MARGIN_LINES = 16;

/**
 * The two texts without the lines they share at both ends (beyond `context` lines), and how many
 * lines were dropped at the start. The diff library compares every line of both texts; an edit of
 * one line in a 50 MB file must not cost a line-by-line comparison of the whole file.
 */
function trimCommonLines(a: string, b: string, context: number): { a: string; b: string; skipped: number } {
	const max = Math.min(a.length, b.length);
	let prefix = 0;
	while (prefix < max && a.charCodeAt(prefix) === b.charCodeAt(prefix)) prefix++;
	let suffix = 0;
	while (suffix < max - prefix && a.charCodeAt(a.length - 1 - suffix) === b.charCodeAt(b.length - 1 - suffix)) suffix++;
	// Start after the last line ending inside the shared prefix, then step back over the context lines.
	// A few lines more than the context: around repeated lines the library may place a change a
	// little differently than the character scan does, and needs room for its context there.
	const margin = context + TRIM_MARGIN_LINES;
	let start = prefix > 0 ? a.lastIndexOf('\n', prefix - 1) + 1 : 0;
	for (let i = 0; i < margin && start > 0; i++) start = start >= 2 ? a.lastIndexOf('\n', start - 2) + 1 : 0;
	// End after the first line ending inside the shared suffix (so both texts end a line there),
	// then step forward over the context lines.
	let endA = a.length;
	const newline = suffix > 0 ? a.indexOf('\n', a.length - suffix) : -1;
	if (newline !== -1) {
		endA = newline + 1;
		for (let i = 0; i < margin && endA < a.length; i++) endA = a.indexOf('\n', endA) + 1 || a.length;
	}
	const endB = b.length - (a.length - endA);
	if (start === 0 && endA === a.length) return { a, b, skipped: 0 };
	let skipped = 0;
	for (let at = a.indexOf('\n'); at !== -1 && at < start; at = a.indexOf('\n', at + 1)) skipped++;
	return { a: a.slice(start, endA), b: b.slice(start, endB), skipped };
}

/** Shifts hunk headers of a diff of trimmed texts back to the lines of the whole files. */
function shiftHunks(patch: string, skipped: number): string {
	if (skipped === 0) return patch;
	return patch.replace(/^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@/gm, (_, a: string, ac = '', b: string, bc = '') =>
		`@@ -${Number(a) + skipped}${ac} +${Number(b) + skipped}${bc} @@`);
}

/** A unified diff of one change, with a/ and b/ paths as git prints them. */
export function unifiedDiff(change: FileChange, context = 3): string {
	const from = change.before ? `a/${change.displayPath}` : '/dev/null';
	const to = change.after ? `b/${change.movedTo?.displayPath ?? change.displayPath}` : '/dev/null';
	const trimmed = trimCommonLines(asText(change.before), asText(change.after), context);
	const patch = createTwoFilesPatch(from, to, trimmed.a, trimmed.b, undefined, undefined, { context });
	// The library starts with a line of '=' under an Index header; git's shape is easier to read.
	return shiftHunks(patch.replace(/^=+\n/m, ''), trimmed.skipped);
}

export function unifiedDiffs(changes: readonly FileChange[], context = 3): string {
	return changes.map(change => unifiedDiff(change, context)).join('\n');
}

/** Lines added and removed by a change. */
export function diffStat(change: FileChange): { added: number; removed: number } {
	const trimmed = trimCommonLines(asText(change.before), asText(change.after), 0);
	const patch = structuredPatch('a', 'b', trimmed.a, trimmed.b, undefined, undefined, { context: 0 });
	let added = 0;
	let removed = 0;
	for (const hunk of patch.hunks) {
		for (const line of hunk.lines) {
			if (line.startsWith('+')) added++;
			else if (line.startsWith('-')) removed++;
		}
	}
	return { added, removed };
}
