import type { SandboxHostOptions } from '../core/sandbox/runtime';
import { rgJsonHandler, RgJsonLine } from '../core/search/rgJson';
import { cleanRelative, runRg } from '../core/search/ripgrep';
import { formatCount } from '../core/results/truncate';

/**
 * How grep shows a line longer than GREP_LINE_CHARS: a window around its first match, with what
 * was cut before and after counted. The first pass prints such lines only as previews (it cannot
 * ask rg where a match is without rg finding every match of the line: a megabyte of `a` searched
 * for `a` is a million submatches). The windows come from a second pass over just the files that
 * need one, with the pattern wrapped so that each line has one match: up to WINDOW_LEAD bytes
 * before it, then the rest of the line. That one match says where the window starts.
 */

/** Lines longer than this are shown as a window around the match. */
export const GREP_LINE_CHARS = 300;
/** The part of a window before the match. */
const WINDOW_LEAD = Math.floor(GREP_LINE_CHARS / 3);

/** A line as shown, and whether it was cut to a window. */
export interface Window {
	readonly text: string;
	readonly cut: boolean;
}

/** A line the first pass found: shown whole, or (when long) waiting for its window. */
export interface FoundLine {
	readonly line: number;
	/** How it is shown: set at once for a short line, by `fillWindows` for a long one. */
	window?: Window;
	/** The start of a long line as the first pass printed it. */
	readonly preview?: Buffer;
	/** rg printed the long line whole (it is just over the limit), not as a preview. */
	readonly previewIsWhole?: boolean;
}

export interface WindowSearch {
	readonly cwd: string;
	/** The file, relative to cwd, as the first pass printed it. */
	readonly relative: string;
	readonly lines: FoundLine[];
	/** Matching lines of the file up to the last one needed (context included): where rg may stop. */
	readonly matchesUpTo: number;
}

export interface WindowOptions {
	readonly pattern: string;
	readonly fixedStrings: boolean;
	readonly ignoreCase: boolean;
	readonly pcre2: boolean;
	readonly context: number;
	readonly signal: AbortSignal;
	readonly confine?: SandboxHostOptions;
}

/**
 * Finds the window of every long line: one rg run per folder (single-threaded, so its output
 * streams rather than being held per file), stopped once every window is in hand. A line whose
 * window cannot be found (the file changed between the passes) is shown from its preview.
 */
export async function fillWindows(searches: readonly WindowSearch[], options: WindowOptions): Promise<void> {
	const { regex, lead } = windowPattern(options);
	const byCwd = new Map<string, WindowSearch[]>();
	for (const search of searches) byCwd.set(search.cwd, [...(byCwd.get(search.cwd) ?? []), search]);
	for (const [cwd, group] of byCwd) {
		const wanted = new Map<string, FoundLine>();
		for (const search of group) for (const line of search.lines) wanted.set(keyOf(search.relative, line.line), line);
		const args = [
			'--json', '--no-config', '--threads', '1',
			options.ignoreCase ? '--ignore-case' : '--case-sensitive',
			...(options.pcre2 ? ['--pcre2'] : []),
			...(options.context > 0 ? ['--context', String(options.context)] : []),
			'--max-count', String(Math.max(...group.map(search => search.matchesUpTo))),
			'--regexp', regex, '--', ...group.map(search => search.relative),
		];
		await runRg(args, {
			cwd,
			signal: options.signal,
			confine: options.confine,
			...rgJsonHandler(message => {
				const key = keyOf(cleanRelative(message.path), message.lineNumber);
				const line = wanted.get(key);
				if (!line) return;
				line.window = windowOf(message, lead);
				wanted.delete(key);
				return wanted.size > 0;
			}),
		});
	}
	for (const search of searches) for (const line of search.lines) line.window ??= previewWindow(line.preview ?? Buffer.alloc(0), line.previewIsWhole ?? false);
}

function keyOf(relative: string, line: number): string {
	return `${line}:${relative}`;
}

/**
 * The pattern with one match per line: up to WINDOW_LEAD bytes, the pattern, the rest of the line.
 * Leftmost-first matching starts it exactly WINDOW_LEAD bytes before the pattern's first match (or
 * at the line's start). PCRE2 has no byte class in UTF mode, so there it starts at the match.
 */
export function windowPattern(options: Pick<WindowOptions, 'pattern' | 'fixedStrings' | 'pcre2'>): { regex: string; lead: number } {
	const body = options.fixedStrings ? escapeRegex(options.pattern) : options.pattern;
	if (options.pcre2) return { regex: `(?:${body})[^\\n]*`, lead: 0 };
	return { regex: `(?-u:[^\\n]){0,${WINDOW_LEAD}}(?:${body})(?-u:[^\\n])*`, lead: WINDOW_LEAD };
}

function escapeRegex(text: string): string {
	return text.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

function windowOf(message: RgJsonLine, lead: number): Window {
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

/** The first pass's preview, when no window was found: the line's start, or the line when rg printed it whole. */
function previewWindow(preview: Buffer, whole: boolean): Window {
	if (whole) return displayLine(preview.toString('utf8'), 0);
	const end = completeEnd(preview, 0, Math.min(GREP_LINE_CHARS, preview.length));
	return { text: `${preview.toString('utf8', 0, end)} [line continues …]`, cut: true };
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
