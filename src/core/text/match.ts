/**
 * Locating text a model quoted from memory: exactly first, then with growing tolerance
 * (trailing whitespace, then indentation, then Unicode look-alikes such as curly quotes, dashes
 * and non-breaking spaces). Tolerance only *finds* the place: the caller replaces exactly the
 * located region and leaves every byte around it as it was. Used by edit_file (text) and
 * apply_patch (blocks of lines).
 */

import { LineTable, lineTable, linesAt } from './text';

export type MatchLevel = 'exact' | 'trailing' | 'trim' | 'unicode';

/** The ladder, strictest first. */
export const MATCH_LEVELS: readonly MatchLevel[] = ['exact', 'trailing', 'trim', 'unicode'];

/** How each level sees a line before comparing. */
const LINE_KEYS: Record<MatchLevel, (line: string) => string> = {
	exact: line => line,
	trailing: line => line.trimEnd(),
	trim: line => line.trim(),
	unicode: line => normalizeUnicode(line).trim(),
};

/** Words for messages: "located ignoring …". */
export const LEVEL_DESCRIPTIONS: Record<MatchLevel, string> = {
	exact: 'exactly',
	trailing: 'ignoring trailing whitespace',
	trim: 'ignoring indentation and trailing whitespace',
	unicode: 'ignoring whitespace and Unicode look-alikes (curly quotes, dashes, special spaces)',
};

const UNICODE_LOOKALIKES: Record<string, string> = {
	'\u2018': '\'', '\u2019': '\'', '\u201a': '\'', '\u201b': '\'', '\u2032': '\'', '\u00b4': '\'',
	'\u201c': '"', '\u201d': '"', '\u201e': '"', '\u201f': '"', '\u2033': '"', '\u00ab': '"', '\u00bb': '"',
	'\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-', '\u2212': '-',
	'\u00a0': ' ', '\u2000': ' ', '\u2001': ' ', '\u2002': ' ', '\u2003': ' ', '\u2004': ' ', '\u2005': ' ',
	'\u2006': ' ', '\u2007': ' ', '\u2008': ' ', '\u2009': ' ', '\u200a': ' ', '\u202f': ' ', '\u205f': ' ',
	'\u3000': ' ',
};
const LOOKALIKE_PATTERN = new RegExp(`[${Object.keys(UNICODE_LOOKALIKES).join('')}]`, 'g');

/**
 * Maps Unicode look-alikes to their ASCII forms, one character for one character, so offsets in
 * the normalised text are offsets in the original.
 */
export function normalizeUnicode(text: string): string {
	return text.replace(LOOKALIKE_PATTERN, char => UNICODE_LOOKALIKES[char]);
}

/** Every start line where the needle matches at one level (overlapping starts included). */
export function findLines(haystack: readonly string[], needle: readonly string[], level: MatchLevel, from = 0, atEnd = false): number[] {
	const key = LINE_KEYS[level];
	const wanted = needle.map(key);
	const last = haystack.length - needle.length;
	const found: number[] = [];
	const keyed: (string | undefined)[] = level === 'exact' ? (haystack as string[]) : new Array(haystack.length);
	const at = (i: number) => keyed[i] ?? (keyed[i] = key(haystack[i]));
	for (let i = atEnd ? Math.max(from, last) : from; i <= last; i++) {
		let j = 0;
		while (j < wanted.length && at(i + j) === wanted[j]) j++;
		if (j === wanted.length) found.push(i);
	}
	return found;
}

/** A region of a text, by character offsets. */
export interface TextRange {
	readonly start: number;
	readonly end: number;
	/**
	 * For line matches that ignored indentation: re-indents the replacement the way the located
	 * lines differ from the quoted ones (the model's indentation was off by a constant prefix).
	 */
	readonly reindent?: (replacement: string) => string;
}

export type TextLocation =
	| { readonly kind: 'found'; readonly level: MatchLevel; readonly ranges: readonly TextRange[] }
	| { readonly kind: 'ambiguous'; readonly level: MatchLevel; readonly lines: readonly number[] }
	| { readonly kind: 'none' };

/**
 * Where `needle` occurs in `text`. Without `all`, more than one occurrence is `ambiguous` (with
 * their 1-based line numbers); with `all`, every non-overlapping occurrence at the first level
 * that finds any. Both texts must use the same line endings (see text.ts `fitToFormat`).
 */
export function locateText(text: string, needle: string, all = false): TextLocation {
	if (needle === '') return { kind: 'none' };
	const exact = occurrences(text, needle);
	if (exact.length > 0) return rangesOrAmbiguous(text, 'exact', exact.map(start => ({ start, end: start + needle.length })), all);

	const table = lineTable(text);
	const quoted = quotedLines(needle);
	for (const level of ['trailing', 'trim'] as const) {
		const found = lineRanges(text, table, quoted, level);
		if (found.length > 0) return rangesOrAmbiguous(text, level, found, all);
	}
	// Look-alikes map one character to one, so an occurrence in the normalised text is one in the text.
	const lookalikes = occurrences(normalizeUnicode(text), normalizeUnicode(needle));
	if (lookalikes.length > 0) return rangesOrAmbiguous(text, 'unicode', lookalikes.map(start => ({ start, end: start + needle.length })), all);
	const found = lineRanges(text, table, quoted, 'unicode');
	if (found.length > 0) return rangesOrAmbiguous(text, 'unicode', found, all);
	return { kind: 'none' };
}

function rangesOrAmbiguous(text: string, level: MatchLevel, ranges: TextRange[], all: boolean): TextLocation {
	if (ranges.length === 1 || all) return { kind: 'found', level, ranges };
	return { kind: 'ambiguous', level, lines: linesAt(text, ranges.map(range => range.start)) };
}

/** Non-overlapping occurrences, left to right. */
function occurrences(text: string, needle: string): number[] {
	const found: number[] = [];
	for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) found.push(at);
	return found;
}

interface QuotedLines {
	readonly lines: string[];
	/** The quoted text ended with a line ending: the region takes the last line's ending too. */
	readonly endsWithNewline: boolean;
}

/** A CRLF quote keeps its '\r's: every line level ignores trailing whitespace, and they are that. */
function quotedLines(needle: string): QuotedLines {
	const lines = needle.split('\n');
	// The needle is not empty (locateText's first check), so a last line of '' is a final line ending.
	const endsWithNewline = lines[lines.length - 1] === '';
	if (endsWithNewline) lines.pop();
	return { lines, endsWithNewline };
}

/** Non-overlapping line matches at one level, as character ranges of whole lines. */
function lineRanges(text: string, table: LineTable, quoted: QuotedLines, level: MatchLevel): TextRange[] {
	// A needle of only blank lines would match everywhere once whitespace is ignored.
	if (quoted.lines.every(line => line.trim() === '')) return [];
	const ranges: TextRange[] = [];
	let nextFree = 0;
	for (const index of findLines(table.lines, quoted.lines, level)) {
		if (index < nextFree) continue;
		const last = index + quoted.lines.length - 1;
		const end = quoted.endsWithNewline ? (last + 1 < table.starts.length ? table.starts[last + 1] : text.length) : table.ends[last];
		// At the trailing level the indentation is equal, so the reindenter comes back undefined.
		const reindent = reindenter(table.lines.slice(index, last + 1), quoted.lines);
		ranges.push({ start: table.starts[index], end, ...(reindent ? { reindent } : {}) });
		nextFree = last + 1;
	}
	return ranges;
}

function leadingWhitespace(line: string): string {
	return /^[ \t]*/.exec(line)![0];
}

/**
 * When the quoted lines differ from the located ones only in indentation, the model's idea of the
 * indentation was off (two spaces for a tab, a level too shallow). The same correction applied to
 * the replacement keeps it at the file's indentation: each quoted indentation maps to the file's,
 * and deeper levels follow the unit the pairs reveal (one quoted unit = one file unit). When the
 * pairs contradict each other, the replacement is used as written.
 */
function reindenter(located: readonly string[], quoted: readonly string[]): ((replacement: string) => string) | undefined {
	const pairs: [string, string][] = [];
	for (let i = 0; i < quoted.length; i++) {
		if (quoted[i].trim() !== '') pairs.push([leadingWhitespace(quoted[i]), leadingWhitespace(located[i])]);
	}
	const map = new Map<string, string>();
	for (const [q, f] of pairs) {
		if (map.has(q) && map.get(q) !== f) return undefined;
		map.set(q, f);
	}
	if (pairs.every(([q, f]) => q === f)) return undefined;
	const [quotedBase, fileBase] = pairs.reduce((best, pair) => (pair[0].length < best[0].length ? pair : best));
	const units = indentUnits(pairs, quotedBase, fileBase);
	const convert = (indent: string): string => {
		const mapped = map.get(indent);
		if (mapped !== undefined) return mapped;
		if (!indent.startsWith(quotedBase)) return indent;
		const extra = indent.slice(quotedBase.length);
		if (!units) return fileBase + extra;
		let levels = 0;
		while (units.quoted && extra.startsWith(units.quoted.repeat(levels + 1))) levels++;
		return fileBase + units.file.repeat(levels) + extra.slice(units.quoted.length * levels);
	};
	return replacement => replacement
		.split('\n')
		.map(line => {
			if (line.trim() === '') return line;
			const indent = leadingWhitespace(line);
			return convert(indent) + line.slice(indent.length);
		})
		.join('\n');
}

/** One level of indentation as quoted and as in the file, when every pair agrees on it. */
function indentUnits(pairs: readonly [string, string][], quotedBase: string, fileBase: string): { quoted: string; file: string } | undefined {
	let unit: { quoted: string; file: string } | undefined;
	for (const [q, f] of pairs) {
		if (!q.startsWith(quotedBase) || !f.startsWith(fileBase)) return undefined;
		const qExtra = q.slice(quotedBase.length);
		if (qExtra !== '' && (!unit || qExtra.length < unit.quoted.length)) unit = { quoted: qExtra, file: f.slice(fileBase.length) };
	}
	if (!unit) return undefined;
	for (const [q, f] of pairs) {
		const qExtra = q.slice(quotedBase.length);
		const levels = qExtra.length / unit.quoted.length;
		if (!Number.isInteger(levels) || qExtra !== unit.quoted.repeat(levels) || f.slice(fileBase.length) !== unit.file.repeat(levels)) return undefined;
	}
	return unit;
}

/** Near-misses are looked for only in texts up to this many lines (the search is quadratic-ish). */
const NEAR_MISS_MAX_LINES = 200_000;

/**
 * The block of the haystack most like the needle, for "not found" messages: its 0-based start and
 * a similarity from 0 to 1. Undefined when nothing is even remotely alike.
 */
export function nearestLines(haystack: readonly string[], needle: readonly string[]): { index: number; similarity: number } | undefined {
	const quoted = needle.map(line => normalizeUnicode(line).trim());
	const anchor = quoted.findIndex(line => line !== '');
	if (anchor === -1 || haystack.length > NEAR_MISS_MAX_LINES) return undefined;
	const anchorGrams = bigrams(quoted[anchor]);
	// Rank by the first non-blank quoted line, then score the best few by the whole block.
	const ranked: { index: number; score: number }[] = [];
	for (let i = 0; i < haystack.length; i++) {
		const score = dice(anchorGrams, bigrams(normalizeUnicode(haystack[i]).trim()));
		if (score > 0.3) ranked.push({ index: i - anchor, score });
	}
	// A stable sort: equally alike lines stay in file order, so the earliest block wins a tie.
	ranked.sort((a, b) => b.score - a.score);
	let best: { index: number; similarity: number } | undefined;
	for (const { index } of ranked.slice(0, 20)) {
		const start = Math.max(0, index);
		let total = 0;
		for (let j = 0; j < quoted.length; j++) {
			const line = haystack[start + j];
			total += line === undefined ? 0 : dice(bigrams(quoted[j]), bigrams(normalizeUnicode(line).trim()));
		}
		const similarity = total / quoted.length;
		if (!best || similarity > best.similarity) best = { index: start, similarity };
	}
	return best && best.similarity > 0.3 ? best : undefined;
}

function bigrams(text: string): Map<string, number> {
	const grams = new Map<string, number>();
	for (let i = 0; i < text.length - 1; i++) {
		const gram = text.slice(i, i + 2);
		grams.set(gram, (grams.get(gram) ?? 0) + 1);
	}
	if (text.length === 1) grams.set(text, 1);
	return grams;
}

/** Sørensen–Dice similarity of two bigram multisets (1 for two empty strings). */
function dice(a: Map<string, number>, b: Map<string, number>): number {
	let sizeA = 0;
	let sizeB = 0;
	let common = 0;
	for (const count of a.values()) sizeA += count;
	for (const [gram, count] of b) {
		sizeB += count;
		common += Math.min(count, a.get(gram) ?? 0);
	}
	if (sizeA + sizeB === 0) return 1;
	return (2 * common) / (sizeA + sizeB);
}
