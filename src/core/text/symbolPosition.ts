import { ToolError } from '../results/errors';
import type { SourcePosition, SourceRange } from '../languages';
import { cutLine, formatCount } from '../results/truncate';

/**
 * Positions the way a model gives them: a line (1-based) and the symbol's text on it, with an
 * occurrence number or a column when the text is there more than once. Models miscount columns
 * but quote names well, so the name decides and the column only picks among its occurrences.
 */

export interface SymbolTarget {
	/** 1-based. */
	readonly line: number;
	readonly symbol: string;
	/** 1-based; which occurrence on the line. */
	readonly occurrence?: number;
	/** 1-based character column that one occurrence covers. */
	readonly column?: number;
}

export interface LocatedSymbol {
	/** Where the language server is asked: the start of the symbol's last identifier part. */
	readonly position: SourcePosition;
	/** The chosen occurrence's whole text. */
	readonly range: SourceRange;
	/** How many times the symbol is on the line, and which one (1-based) was taken. */
	readonly occurrences: number;
	readonly chosen: number;
}

const IDENTIFIER_CHAR = /[\p{L}\p{N}\p{Mn}\p{Mc}\p{Pc}$]/u;
const IDENTIFIER_RUN = /[\p{L}\p{Nl}_$][\p{L}\p{N}\p{Mn}\p{Mc}\p{Pc}$]*/gu;
/** Lines searched above and below for the symbol when the given line lacks it. */
const NEARBY_LINES = 10;

/** Finds the symbol on its line; the error names what the line holds instead. */
export function locateSymbol(lines: readonly string[], target: SymbolTarget, display: string): LocatedSymbol {
	const { line, symbol } = target;
	checkLine(lines, line, display);
	const text = lines[line - 1];
	const starts = occurrencesOf(text, symbol);
	if (starts.length === 0) throw notOnLine(lines, target, display);
	const index = chooseOccurrence(starts, target, display);
	const start = starts[index];
	return {
		position: { line: line - 1, character: start + lastIdentifierOffset(symbol) },
		range: { start: { line: line - 1, character: start }, end: { line: line - 1, character: start + symbol.length } },
		occurrences: starts.length,
		chosen: index + 1,
	};
}

export function checkLine(lines: readonly string[], line: number, display: string): void {
	if (line <= lines.length) return;
	throw new ToolError('invalid_input', `${display} has ${formatCount(lines.length)} line${lines.length === 1 ? '' : 's'}, so line ${formatCount(line)} does not exist. Check the line number with read_file or grep.`);
}

/** Start offsets of `symbol` in `text`, as a whole word where the symbol starts or ends with a word character. */
export function occurrencesOf(text: string, symbol: string): number[] {
	const starts: number[] = [];
	if (symbol === '') return starts;
	const checkBefore = IDENTIFIER_CHAR.test(symbol[0]);
	const checkAfter = IDENTIFIER_CHAR.test(symbol[symbol.length - 1]);
	for (let at = text.indexOf(symbol); at !== -1; at = text.indexOf(symbol, at + 1)) {
		const before = at > 0 ? text[at - 1] : '';
		const after = text[at + symbol.length] ?? '';
		if (checkBefore && before !== '' && IDENTIFIER_CHAR.test(before)) continue;
		if (checkAfter && after !== '' && IDENTIFIER_CHAR.test(after)) continue;
		starts.push(at);
	}
	return starts;
}

function chooseOccurrence(starts: readonly number[], target: SymbolTarget, display: string): number {
	const columns = () => starts.map(start => start + 1).join(', ');
	if (target.column !== undefined) {
		const at = target.column - 1;
		const index = starts.findIndex(start => at >= start && at < start + target.symbol.length);
		if (index === -1) {
			throw new ToolError('no_match', `Column ${target.column} of line ${target.line} in ${display} is not inside "${target.symbol}", which starts at column${starts.length === 1 ? '' : 's'} ${columns()}. Give one of those columns, or leave column out.`);
		}
		return index;
	}
	const occurrence = target.occurrence ?? 1;
	if (occurrence > starts.length) {
		throw new ToolError('no_match', `"${target.symbol}" appears ${starts.length === 1 ? 'once' : `${starts.length} times`} on line ${target.line} of ${display} (column${starts.length === 1 ? '' : 's'} ${columns()}), so occurrence ${occurrence} does not exist.`);
	}
	return occurrence - 1;
}

/** `foo.bar` asks about `bar`: the offset of the last identifier inside the symbol text (0 when none). */
function lastIdentifierOffset(symbol: string): number {
	let offset = 0;
	for (const match of symbol.matchAll(IDENTIFIER_RUN)) offset = match.index;
	return offset;
}

function notOnLine(lines: readonly string[], target: SymbolTarget, display: string): ToolError {
	const text = lines[target.line - 1];
	const near = nearestIdentifiers(text, target.symbol);
	const elsewhere = nearbyLines(lines, target);
	const parts = [
		`Line ${target.line} of ${display} does not contain "${target.symbol}".`,
		near.length ? `Nearest on that line: ${near.map(one => `${one.name} (column ${one.column})`).join(', ')}.` : 'That line holds no identifier.',
		`The line reads: ${JSON.stringify(cutLine(text, 200).text)}.`,
		elsewhere.length ? `"${target.symbol}" is on line${elsewhere.length === 1 ? '' : 's'} ${elsewhere.join(', ')} nearby.` : '',
		'Give the line where the symbol is, and its exact text.',
	];
	return new ToolError('no_match', parts.filter(Boolean).join(' '), { nearest: near.map(one => one.name), nearbyLines: elsewhere });
}

/** The line's identifiers most like the symbol (by edit distance, case ignored), best first. */
function nearestIdentifiers(text: string, symbol: string): { name: string; column: number }[] {
	const wanted = symbol.toLowerCase();
	const seen = new Set<string>();
	const scored: { name: string; column: number; score: number }[] = [];
	for (const match of text.matchAll(IDENTIFIER_RUN)) {
		if (seen.has(match[0])) continue;
		seen.add(match[0]);
		const name = match[0].toLowerCase();
		const contains = name.includes(wanted) || wanted.includes(name);
		scored.push({ name: match[0], column: match.index + 1, score: editDistance(name, wanted) - (contains ? 0.5 : 0) });
	}
	return scored.sort((a, b) => a.score - b.score || a.column - b.column).slice(0, 3).map(({ name, column }) => ({ name, column }));
}

/** Lines within NEARBY_LINES of the given one holding the symbol, nearest first (at most 3). */
function nearbyLines(lines: readonly string[], target: SymbolTarget): number[] {
	const found: number[] = [];
	for (let distance = 1; distance <= NEARBY_LINES && found.length < 3; distance++) {
		for (const line of [target.line - distance, target.line + distance]) {
			if (line >= 1 && line <= lines.length && found.length < 3 && occurrencesOf(lines[line - 1], target.symbol).length) found.push(line);
		}
	}
	return found;
}

function editDistance(a: string, b: string): number {
	let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
	for (let i = 1; i <= a.length; i++) {
		const current = [i];
		for (let j = 1; j <= b.length; j++) {
			current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
		}
		previous = current;
	}
	return previous[b.length];
}
