import { findLines, LEVEL_DESCRIPTIONS, MATCH_LEVELS, MatchLevel, nearestLines, normalizeUnicode } from '../text/match';
import { FileLines, hasFinalNewline } from './fileLines';
import { Hunk, PatchApplyError, showLine } from './model';

/**
 * Places a file's hunks and splices them in. A hunk is placed by its old lines (context and
 * removed), found with the tolerance ladder of match.ts; line numbers only choose between
 * several places. Context lines keep the file's own bytes, whatever level found them.
 *
 * Hunks with line numbers (unified) may sit anywhere and must not overlap; hunks without them
 * (Codex) are sought top to bottom, each after the one before, as Codex does.
 */

export interface PatchedFile {
	readonly file: FileLines;
	/** Hunks placed with tolerance (not exactly), for the result. */
	readonly notes: string[];
}

interface Placement {
	readonly hunk: Hunk;
	/** 0-based first old line. */
	readonly start: number;
	/** How many old lines it replaces. */
	readonly length: number;
	readonly level: MatchLevel;
}

type Choice =
	| { kind: 'found'; start: number; level: MatchLevel }
	| { kind: 'ambiguous'; starts: number[]; level: MatchLevel }
	| { kind: 'blocked'; starts: number[]; level: MatchLevel }
	| { kind: 'none' };

export function applyHunks(file: FileLines, hunks: readonly Hunk[], display: string): PatchedFile {
	const placer = new Placer(file.lines, display);
	for (const hunk of hunks) placer.place(hunk);
	return { ...splice(file, placer.placed, display), notes: placer.notes };
}

/** Places hunks one by one, remembering where the previous ones went. */
class Placer {
	readonly placed: Placement[] = [];
	readonly notes: string[] = [];
	/**
	 * Where the previous hunk's old lines ended: Codex hunks are sought from there. Undefined until
	 * a hunk pins a place; a hunk that only appends pins none, so the next may change earlier lines.
	 */
	private cursor: number | undefined;
	/** How far the previous numbered hunk sat from its line number; the next one's number is shifted alike. */
	private drift = 0;

	constructor(private readonly lines: readonly string[], private readonly display: string) {}

	place(hunk: Hunk): void {
		const old = hunk.lines.filter(line => line.kind !== 'add').map(line => line.text);
		const numbered = hunk.oldStart !== undefined;
		let from = numbered ? 0 : this.cursor ?? 0;
		let hint = numbered ? Math.max(0, hunk.oldStart! - 1 + this.drift) : this.cursor;
		for (const anchor of hunk.anchors) {
			from = findAnchor(this.lines, anchor, from, hunk, this.display) + 1;
			hint = from;
		}
		// Models often repeat the `@@` line as the hunk's first context line: it then starts at the anchor.
		const lastAnchor = hunk.anchors[hunk.anchors.length - 1];
		if (lastAnchor !== undefined && old.length > 0 && sameLoosely(old[0], lastAnchor)) hint = from = from - 1;
		const { start, level } = old.length === 0
			? { start: this.insertion(hunk, from), level: 'exact' as const }
			: this.locate(hunk, old, numbered, from, hint);
		this.placed.push({ hunk, start, length: old.length, level });
		if (level !== 'exact') this.notes.push(`${this.display} hunk ${hunk.number}: placed at line ${start + 1}, matched ${LEVEL_DESCRIPTIONS[level]}.`);
		// As in Codex, a hunk that only adds lines pins no place for the next one (without an anchor
		// it goes to the end of the file); only its anchors, if any, moved the search on.
		if (old.length > 0) this.cursor = start + old.length;
		else if (hunk.anchors.length > 0) this.cursor = from;
		if (numbered) this.drift = start - (old.length === 0 ? hunk.oldStart! : hunk.oldStart! - 1);
	}

	/** Where a hunk that only adds lines goes; never inside lines another hunk changes. */
	private insertion(hunk: Hunk, from: number): number {
		const start = insertionPoint(hunk, this.lines.length, from, this.drift);
		const inside = this.placed.find(other => start > other.start && start < other.start + other.length);
		if (inside) throw overlap(this.display, hunk, inside, start, 0);
		return start;
	}

	private locate(hunk: Hunk, old: readonly string[], numbered: boolean, from: number, hint: number | undefined): { start: number; level: MatchLevel } {
		// Numbered hunks may come in any order, so a place another hunk already took is not theirs.
		const blocked = (at: number) => numbered && this.placed.some(other => overlaps(at, old.length, other));
		const choice = choose(this.lines, old, from, hint, hunk.endOfFile || hunk.oldNoNewline, blocked);
		switch (choice.kind) {
			case 'found':
				return choice;
			case 'none':
				throw notFound(this.lines, old, hunk, this.display, from, hint);
			case 'ambiguous':
				throw ambiguous(this.display, hunk, choice.starts, choice.level, hint !== undefined);
			case 'blocked': {
				const other = this.placed.find(candidate => overlaps(choice.starts[0], old.length, candidate))!;
				throw overlap(this.display, hunk, other, choice.starts[0], old.length);
			}
		}
	}
}

function insertionPoint(hunk: Hunk, length: number, from: number, drift: number): number {
	if (hunk.endOfFile) return length;
	if (hunk.anchors.length > 0) return from;
	// `@@ -12,0 +13,2 @@` adds after line 12; a Codex hunk that only adds, with nothing to go by, appends.
	if (hunk.oldStart !== undefined) return Math.min(length, Math.max(0, hunk.oldStart + drift));
	return length;
}

/** Whether lines start..start+length share a line with another hunk's, or enclose its insertion point. */
function overlaps(start: number, length: number, other: Placement): boolean {
	return start < other.start + other.length && other.start < start + length;
}

/**
 * The first ladder level that finds the block decides. Among its places: the one ending at the
 * file's end when the hunk says so, the only one, or the one nearest the hint; a tie or no hint
 * is an ambiguity.
 */
function choose(
	lines: readonly string[], pattern: readonly string[], from: number, hint: number | undefined,
	preferEnd: boolean, blocked: (start: number) => boolean,
): Choice {
	// Right where the line number says, exactly: nothing can be nearer, so the file need not be searched.
	// (The hint is never before `from`: a hunk searched from a place is hinted at that place.)
	if (hint !== undefined && exactlyAt(lines, pattern, hint) && !blocked(hint) && (!preferEnd || hint + pattern.length === lines.length)) {
		return { kind: 'found', start: hint, level: 'exact' };
	}
	for (const level of MATCH_LEVELS) {
		const all = findLines(lines, pattern, level, from);
		if (all.length === 0) continue;
		const free = all.filter(start => !blocked(start));
		if (free.length === 0) return { kind: 'blocked', starts: all, level };
		if (preferEnd) {
			const atEnd = free.find(start => start + pattern.length === lines.length);
			if (atEnd !== undefined) return { kind: 'found', start: atEnd, level };
		}
		if (free.length === 1) return { kind: 'found', start: free[0], level };
		if (hint === undefined) return { kind: 'ambiguous', starts: free, level };
		const byDistance = [...free].sort((a, b) => Math.abs(a - hint) - Math.abs(b - hint));
		if (Math.abs(byDistance[0] - hint) === Math.abs(byDistance[1] - hint)) return { kind: 'ambiguous', starts: free, level };
		return { kind: 'found', start: byDistance[0], level };
	}
	return { kind: 'none' };
}

function exactlyAt(lines: readonly string[], pattern: readonly string[], start: number): boolean {
	if (start + pattern.length > lines.length) return false;
	for (let i = 0; i < pattern.length; i++) if (lines[start + i] !== pattern[i]) return false;
	return true;
}

/** The first line at or after `from` equal to a Codex `@@` anchor (at the first level that finds one). */
function findAnchor(lines: readonly string[], anchor: string, from: number, hunk: Hunk, display: string): number {
	for (const level of MATCH_LEVELS) {
		const found = findLines(lines, [anchor], level, from);
		if (found.length > 0) return found[0];
	}
	const where = from > 0 ? ` after line ${from}` : '';
	// Searched from the top, it can only be found when the search above began further down.
	const earlier = firstLoosely(lines, [anchor]);
	const hintText = earlier !== undefined
		? ` It is at line ${earlier + 1}, before the previous hunk: hunks must be in file order.`
		: similarLineText(lines, anchor);
	return fail(`${display}: hunk ${hunk.number} (patch line ${hunk.patchLine}): its '@@ ${anchor}' line was not found${where}. The text after '@@ ' must equal a whole line of the file (whitespace aside).${hintText} Nothing was changed.`, display, hunk);
}

function sameLoosely(a: string, b: string): boolean {
	return normalizeUnicode(a).trim() === normalizeUnicode(b).trim();
}

/** The first place of `old` in the whole file, at the first ladder level that finds one. */
function firstLoosely(lines: readonly string[], old: readonly string[]): number | undefined {
	for (const level of MATCH_LEVELS) {
		const found = findLines(lines, old, level);
		if (found.length > 0) return found[0];
	}
	return undefined;
}

/** The line an anchor most likely meant: the first that contains it, else the most alike; '' for none. */
function similarLineText(lines: readonly string[], anchor: string): string {
	// Anchors come trimmed and non-empty from the parsers.
	const wanted = normalizeUnicode(anchor);
	const containing = lines.findIndex(line => normalizeUnicode(line).includes(wanted));
	const similar = containing !== -1 ? containing : nearestLines(lines, [anchor])?.index;
	return similar === undefined ? '' : ` The most similar line is ${similar + 1}: ${showLine(lines[similar])}.`;
}

function notFound(lines: readonly string[], old: readonly string[], hunk: Hunk, display: string, from: number, hint: number | undefined): PatchApplyError {
	const head = `${display}: hunk ${hunk.number} (patch line ${hunk.patchLine}) does not fit the file`;
	// Searched from the top, the lines can only be found when the search began further down.
	const earlier = firstLoosely(lines, old);
	if (earlier !== undefined) {
		const anchor = hunk.anchors[hunk.anchors.length - 1];
		const why = anchor !== undefined
			? `above its '@@ ${anchor}' line. A hunk's lines come after its '@@' line; fix or drop that line.`
			: `at or before the end of the previous hunk (line ${from}). Hunks must be in file order and must not overlap; merge overlapping hunks into one.`;
		return applyError(`${head}: its lines are only at line ${earlier + 1}, ${why} Nothing was changed.`, display, hunk);
	}
	const count = old.length === 1 ? 'its old line (context or removed) is' : `its ${old.length} old lines (context and removed) are`;
	// A Codex hunk's hint is where the previous hunk ended, not a line number to quote.
	const miss = nearMiss(lines, old, hunk.oldStart !== undefined ? hint : undefined);
	return applyError(`${head}: ${count} not in the file, even ignoring whitespace and Unicode punctuation.${miss} Read the file again and rebuild the hunk from its current text. Nothing was changed.`, display, hunk);
}

/** The closest block and its first differing line, or a sentence saying nothing is close. */
function nearMiss(lines: readonly string[], old: readonly string[], hint: number | undefined): string {
	if (lines.length === 0) return ' The file is empty.';
	const nearest = nearestLines(lines, old);
	if (!nearest) return ` Nothing in the file resembles ${old.length === 1 ? 'it' : 'them'}${hint !== undefined ? ` (the hunk's line number points at line ${hint + 1})` : ''}.`;
	const start = nearest.index;
	// Some line differs: a block alike in every line would have been found (firstLoosely, from the top).
	const offset = old.findIndex((line, i) => lines[start + i] === undefined || !sameLoosely(lines[start + i], line));
	const percent = Math.round(nearest.similarity * 100);
	const where = `The nearest near-miss starts at line ${start + 1} (${percent}% alike)`;
	const found = lines[start + offset];
	const detail = found === undefined
		? `the file ends where the hunk expects ${showLine(old[offset])}`
		: `expected ${showLine(old[offset])}, found ${showLine(found)}`;
	return ` ${where}; first difference at line ${start + offset + 1}: ${detail}.`;
}

function ambiguous(display: string, hunk: Hunk, starts: readonly number[], level: MatchLevel, hadHint: boolean): PatchApplyError {
	const shown = starts.slice(0, 5).map(start => start + 1).join(', ') + (starts.length > 5 ? `, … (${starts.length} in all)` : '');
	const why = hadHint ? 'its line number is equally near two of them' : 'there is no line number or earlier hunk to choose by';
	return applyError(`${display}: hunk ${hunk.number} (patch line ${hunk.patchLine}) matches ${starts.length} places ${LEVEL_DESCRIPTIONS[level]} (lines ${shown}), and ${why}. Add context lines that differ between those places, or an '@@ <line of the enclosing function or class>' anchor. Nothing was changed.`, display, hunk);
}

function overlap(display: string, hunk: Hunk, other: Placement, start: number, length: number): PatchApplyError {
	const range = (from: number, count: number) => (count <= 1 ? `line ${from + 1}` : `lines ${from + 1}–${from + count}`);
	const own = length === 0 ? `adds lines at line ${start + 1}` : `fits only at ${range(start, length)}`;
	return applyError(`${display}: hunk ${hunk.number} (patch line ${hunk.patchLine}) conflicts with hunk ${other.hunk.number}: it ${own}, which hunk ${other.hunk.number} already changes (${range(other.start, Math.max(1, other.length))}). Merge the two hunks into one, or fix their context. Nothing was changed.`, display, hunk);
}

function applyError(message: string, display: string, hunk: Hunk): PatchApplyError {
	return new PatchApplyError(message, { path: display, hunk: hunk.number, patchLine: hunk.patchLine });
}

function fail(message: string, display: string, hunk: Hunk): never {
	throw applyError(message, display, hunk);
}

/** Builds the new lines: untouched lines and context lines with their own endings, added lines with the file's. */
function splice(file: FileLines, placed: Placement[], display: string): Omit<PatchedFile, 'notes'> {
	// A stable sort: insertions at one place stay in patch order.
	const order = [...placed].sort((a, b) => a.start - b.start || a.length - b.length);
	for (let i = 1; i < order.length; i++) {
		const before = order[i - 1];
		const after = order[i];
		if (after.start < before.start + before.length) throw overlap(display, after.hunk, before, after.start, after.length);
	}
	const lines: string[] = [];
	const endings: string[] = [];
	let next = 0;
	let finalNewline = hasFinalNewline(file);
	const total = file.lines.length;
	for (const placement of order) {
		for (; next < placement.start; next++) {
			lines.push(file.lines[next]);
			endings.push(file.endings[next]);
		}
		let at = placement.start;
		for (const line of placement.hunk.lines) {
			if (line.kind === 'context') {
				lines.push(file.lines[at]);
				endings.push(file.endings[at]);
				at++;
			} else if (line.kind === 'remove') {
				at++;
			} else {
				lines.push(line.text);
				endings.push(file.eol);
			}
		}
		next = placement.start + placement.length;
		const hunk = placement.hunk;
		// `\ No newline at end of file` on one side only: the patch adds or removes the final newline.
		if (next === total && hunk.oldNoNewline !== hunk.newNoNewline) finalNewline = !hunk.newNoNewline;
	}
	for (; next < total; next++) {
		lines.push(file.lines[next]);
		endings.push(file.endings[next]);
	}
	// A line that had no ending (the old last line) gets the file's when lines now follow it; the
	// last line has none when the file ends without a newline (fill from -1: nothing when no lines).
	const ended = endings.map(ending => (ending === '' ? file.eol : ending));
	if (!finalNewline) ended.fill('', -1);
	return { file: { bom: file.bom, eol: file.eol, lines, endings: ended } };
}
