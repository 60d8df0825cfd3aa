import type { RgJsonLine } from '../core/search/rgJson';
import { formatCount } from '../core/results/truncate';

/**
 * How grep shows a line longer than GREP_LINE_CHARS: a window around its first match, with what
 * was cut before and after counted. rg cannot be asked for a line's first match alone (its --json
 * lists every match: a megabyte of `a` searched for `a` is a million of them), so the search runs
 * with the pattern wrapped: up to WINDOW_LEAD bytes, the pattern, then up to WINDOW_TAIL bytes.
 * Each match then covers a window's worth of the line, so a line has at most one per ~300 bytes,
 * and the first one starts where the window does. The reader of rg's output (core/search/rgJson)
 * keeps only that match's first bytes of a long line, however long the line.
 */

/** Lines longer than this are shown as a window around the match. */
export const GREP_LINE_CHARS = 300;
/** The part of a window before the match. */
const WINDOW_LEAD = Math.floor(GREP_LINE_CHARS / 3);
/**
 * The part of a wrapped match after the pattern: with it a match's text holds a whole window (and
 * the bytes of a character cut at either end) even when the pattern matched nothing at its start.
 */
const WINDOW_TAIL = GREP_LINE_CHARS + 4;

/** A line as shown, and whether it was cut to a window. */
export interface Window {
	readonly text: string;
	readonly cut: boolean;
}

/**
 * The pattern wrapped so that a line's first match holds its window: up to WINDOW_LEAD bytes, the
 * pattern, up to WINDOW_TAIL bytes. Leftmost-first matching starts it exactly WINDOW_LEAD bytes
 * before the pattern's first match (or at the line's start); it matches the lines the pattern
 * matches. PCRE2 has no byte class in UTF mode, so there it starts at the match.
 */
export function windowPattern(options: { readonly pattern: string; readonly fixedStrings: boolean; readonly pcre2: boolean }): { regex: string; lead: number } {
	const body = options.fixedStrings ? escapeRegex(options.pattern) : options.pattern;
	if (options.pcre2) return { regex: `(?:${body})[^\\n]{0,${WINDOW_TAIL}}`, lead: 0 };
	// A Unicode word boundary between a lead and a tail sends rg's regex engine off its fast path on
	// non-ASCII text (40-70× slower, measured); with the tail alone it stays fast, and only a line
	// too long to be read whole then loses the part of its window before the match.
	if (!options.fixedStrings && WORD_BOUNDARY.test(body)) return { regex: `(?:${body})${TAIL}`, lead: 0 };
	return { regex: `(?-u:[^\\n]){0,${WINDOW_LEAD}}(?:${body})${TAIL}`, lead: WINDOW_LEAD };
}

/**
 * Up to WINDOW_TAIL bytes, written twice as alternatives: the second never changes a match (the
 * first is tried first and matches whatever it could), but it makes rg 15's regex engine skip
 * start-up work it does for a small wrapped pattern and not for a larger one. Measured (rg alone,
 * whole process, alternating): a one-line file 9.6 -> 3.9 ms (3.5 ms unwrapped); a rare pattern
 * over 207 MB 122.0 -> 116.7 ms (114.9 unwrapped). The price: a search dense with matches costs
 * 1.5-5% more CPU (every `e` of a 2 MB source map; `[a-z]+_[0-9]` over 23 MB), and grep stops
 * such a search once it has its page.
 */
const TAIL_ONCE = `(?-u:[^\\n]){0,${WINDOW_TAIL}}`;
const TAIL = `(?:${TAIL_ONCE}|${TAIL_ONCE})`;

/** `\b`, `\B`, `\<` or `\>` (not an escaped backslash followed by the letter). */
const WORD_BOUNDARY = /(?<!\\)(?:\\\\)*\\[bB<>]/;

function escapeRegex(text: string): string {
	return text.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

/**
 * How a line rg reported is shown: `lead` is how far before the pattern its first match starts
 * (windowPattern's lead; 0 for the pattern as given).
 */
export function windowOf(message: RgJsonLine, lead: number): Window {
	const { text, matchStart } = message;
	if ('whole' in text) return displayLine(text.whole, matchStart ? matchStart + lead : 0);
	return byteWindow(text.length, text.from, text.bytes);
}

/** The line cut to a window around a byte offset when long, counted in characters. */
export function displayLine(raw: string, matchByte: number): Window {
	if (raw.length <= GREP_LINE_CHARS) return { text: raw, cut: false };
	const at = charIndexOfByte(raw, matchByte);
	let start = Math.max(0, Math.min(at - WINDOW_LEAD, raw.length - GREP_LINE_CHARS));
	let end = start + GREP_LINE_CHARS;
	// Never split a surrogate pair.
	if (start > 0 && isLowSurrogate(raw.charCodeAt(start))) start--;
	if (end < raw.length && isLowSurrogate(raw.charCodeAt(end))) end++;
	const before = start > 0 ? `[… ${formatCount(start)} chars] ` : '';
	const after = end < raw.length ? ` [${formatCount(raw.length - end)} chars …]` : '';
	return { text: `${before}${raw.slice(start, end)}${after}`, cut: true };
}

/**
 * A window of a long line from its raw bytes starting at `from`, counted in bytes. A window that
 * would start or end inside a character starts after it or ends before it.
 */
function byteWindow(length: number, from: number, bytes: Buffer): Window {
	let first = 0;
	while (first < bytes.length && first < 3 && isContinuation(bytes[first])) first++;
	const start = from + first;
	const last = completeEnd(bytes, first, Math.max(first, Math.min(bytes.length, length - from, first + GREP_LINE_CHARS)));
	const end = from + last;
	const before = start > 0 ? `[… ${formatCount(start)} bytes] ` : '';
	const after = end < length ? ` [${formatCount(length - end)} bytes …]` : '';
	return { text: `${before}${bytes.toString('utf8', first, last)}${after}`, cut: start > 0 || end < length };
}

/** Where a cut at `to` must end so the last character is whole. */
function completeEnd(bytes: Buffer, from: number, to: number): number {
	let start = to - 1;
	while (start > from && to - start < 4 && isContinuation(bytes[start])) start--;
	if (start < from) return to;
	const lead = bytes[start];
	// Bytes that cannot start a character (invalid UTF-8) count as one.
	const size = lead >= 0xf5 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 1;
	return start + size <= to ? to : start;
}

/**
 * The string index of a UTF-8 byte offset (rg reports match positions in bytes). Walks only up to
 * the match, without re-encoding the line.
 */
function charIndexOfByte(text: string, byteOffset: number): number {
	let bytes = 0;
	let index = 0;
	while (index < text.length && bytes < byteOffset) {
		const code = text.charCodeAt(index);
		if (code < 0x80) bytes += 1;
		else if (code < 0x800) bytes += 2;
		else if (code >= 0xd800 && code <= 0xdbff) {
			bytes += 4;
			index++;
		} else bytes += 3;
		index++;
	}
	return index;
}

function isLowSurrogate(code: number): boolean {
	return code >= 0xdc00 && code <= 0xdfff;
}

function isContinuation(byte: number): boolean {
	return (byte & 0xc0) === 0x80;
}
