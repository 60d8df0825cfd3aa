import {
	FileOperation, Hunk, HunkLine, PatchParseError, PatchTextLine, showLine,
} from './model';

/**
 * The Codex envelope:
 *
 *   *** Begin Patch
 *   *** Add File: path        then lines `+text`
 *   *** Delete File: path
 *   *** Update File: path     optionally `*** Move to: path`, then hunks:
 *     @@ [anchor]             (stackable; the first hunk may omit it)
 *     ` text` / `-text` / `+text` lines, an empty line being an empty context line
 *     *** End of File         (optional: the hunk ends where the file ends)
 *   *** End Patch
 *
 * Markers may carry surrounding whitespace, as Codex allows.
 */

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File:';
const DELETE = '*** Delete File:';
const UPDATE = '*** Update File:';
const MOVE = '*** Move to:';
const END_OF_FILE = '*** End of File';

const HEADERS_HINT = `'${ADD} <path>', '${DELETE} <path>', '${UPDATE} <path>' or '${END}'`;

export function isCodexPatch(lines: readonly PatchTextLine[]): boolean {
	return lines.length > 0 && lines[0].text.trim() === BEGIN;
}

export function parseCodex(lines: readonly PatchTextLine[]): FileOperation[] {
	const first = lines[0];
	if (!first || first.text.trim() !== BEGIN) {
		throw new PatchParseError(first?.number ?? 1, `expected '${BEGIN}', found ${showLine(first?.text ?? '')}.`);
	}
	const endIndex = lines.findIndex((line, index) => index > 0 && line.text.trim() === END);
	if (endIndex === -1) {
		const last = lines[lines.length - 1];
		throw new PatchParseError(last.number, `expected '${END}' as the last line, found ${showLine(last.text)}. Close the patch with '${END}'.`);
	}
	const after = lines.slice(endIndex + 1).find(line => line.text.trim() !== '');
	if (after) throw new PatchParseError(after.number, `nothing may follow '${END}' (line ${lines[endIndex].number}), found ${showLine(after.text)}. Put every file section before '${END}'.`);

	const reader = new Reader(lines.slice(1, endIndex), lines[endIndex].number);
	const operations: FileOperation[] = [];
	while (!reader.done) {
		const line = reader.peek();
		if (line.text.trim() === '') {
			reader.next();
			continue;
		}
		operations.push(parseSection(reader));
	}
	if (operations.length === 0) {
		throw new PatchParseError(lines[endIndex].number, `the patch names no file: there is no file section between '${BEGIN}' and '${END}'. Add one per file to change, e.g. '${UPDATE} <path>' followed by '@@' hunks (or '${ADD} <path>', '${DELETE} <path>'), and send it again.`);
	}
	return operations;
}

class Reader {
	private index = 0;
	constructor(private readonly lines: readonly PatchTextLine[], readonly endLine: number) {}
	get done(): boolean {
		return this.index >= this.lines.length;
	}
	peek(): PatchTextLine {
		return this.lines[this.index];
	}
	next(): PatchTextLine {
		return this.lines[this.index++];
	}
}

function headerPath(line: PatchTextLine, marker: string): string | undefined {
	const trimmed = line.text.trim();
	if (!trimmed.startsWith(marker)) return undefined;
	const path = trimmed.slice(marker.length).trim();
	if (path === '') throw new PatchParseError(line.number, `'${marker}' needs a path after it, e.g. '${marker} src/index.ts'.`);
	return path;
}

function isSectionHeader(text: string): boolean {
	const trimmed = text.trim();
	return trimmed.startsWith(ADD) || trimmed.startsWith(DELETE) || trimmed.startsWith(UPDATE);
}

function parseSection(reader: Reader): FileOperation {
	const header = reader.next();
	const addPath = headerPath(header, ADD);
	if (addPath !== undefined) return parseAdd(reader, addPath, header.number);
	const deletePath = headerPath(header, DELETE);
	if (deletePath !== undefined) return { kind: 'delete', path: deletePath, patchLine: header.number, hunks: [] };
	const updatePath = headerPath(header, UPDATE);
	if (updatePath !== undefined) return parseUpdate(reader, updatePath, header.number);
	const extra = header.text.startsWith('+') ? ' Lines of an added file each start with "+" (an empty line is a lone "+"), directly under its header.' : '';
	throw new PatchParseError(header.number, `expected a file header: ${HEADERS_HINT}; found ${showLine(header.text)}.${extra}`);
}

function parseAdd(reader: Reader, path: string, patchLine: number): FileOperation {
	const content: string[] = [];
	while (!reader.done && reader.peek().text.startsWith('+')) content.push(reader.next().text.slice(1));
	return { kind: 'add', path, patchLine, lines: content, finalNewline: true };
}

function parseUpdate(reader: Reader, path: string, patchLine: number): FileOperation {
	let moveTo: string | undefined;
	if (!reader.done) {
		const move = headerPath(reader.peek(), MOVE);
		if (move !== undefined) {
			moveTo = move;
			reader.next();
		}
	}
	const hunks: Hunk[] = [];
	while (!reader.done) {
		const line = reader.peek();
		if (line.text.trim() === '') {
			// Blank lines between hunks separate them; inside a hunk they are empty context lines.
			reader.next();
			continue;
		}
		if (isSectionHeader(line.text)) break;
		if (line.text.trim().startsWith('***') && line.text.trim() !== END_OF_FILE) {
			throw new PatchParseError(line.number, `expected a hunk ('@@'), the next file header (${HEADERS_HINT}); found ${showLine(line.text)}.${line.text.trim().startsWith(MOVE) ? ` '${MOVE}' must come directly after its '${UPDATE}' line.` : ''}`);
		}
		hunks.push(parseHunk(reader, hunks.length + 1));
	}
	if (hunks.length === 0 && moveTo === undefined) {
		throw new PatchParseError(patchLine, `'${UPDATE} ${path}' has no hunks. Add at least one hunk ('@@' then lines starting with ' ', '-' or '+'), or remove the section.`);
	}
	return { kind: 'update', path, patchLine, moveTo, hunks };
}

function parseHunk(reader: Reader, number: number): Hunk {
	const start = reader.peek();
	const anchors: string[] = [];
	let oldStart: number | undefined;
	let sawMarker = false;
	while (!reader.done && /^\s*@@(\s|$)/.test(reader.peek().text)) {
		const text = reader.next().text.trim().slice(2).trim();
		sawMarker = true;
		// A unified-diff header (`@@ -12,5 +12,6 @@`) written into the envelope: keep its line as a hint.
		const numbers = /^-(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/.exec(text);
		if (numbers) oldStart = Number(numbers[1]);
		else if (text !== '') anchors.push(text);
	}
	if (!sawMarker && number > 1) {
		throw new PatchParseError(start.number, `expected '@@' to start hunk ${number}, found ${showLine(start.text)}. Each hunk after the first starts with an '@@' line.`);
	}
	const lines: HunkLine[] = [];
	let endOfFile = false;
	let blankRun = 0;
	while (!reader.done) {
		const line = reader.peek();
		const text = line.text;
		if (text.trim() === END_OF_FILE) {
			reader.next();
			endOfFile = true;
			break;
		}
		if (text === '') {
			lines.push({ kind: 'context', text: '' });
			blankRun++;
			reader.next();
			continue;
		}
		const prefix = text[0];
		if (prefix === ' ' || prefix === '-' || prefix === '+') {
			lines.push({ kind: prefix === ' ' ? 'context' : prefix === '-' ? 'remove' : 'add', text: text.slice(1) });
			blankRun = 0;
			reader.next();
			continue;
		}
		if (text.trimStart().startsWith('@@') || text.trimStart().startsWith('***')) break;
		throw new PatchParseError(line.number, `expected a hunk line starting with ' ' (context), '-' (removed) or '+' (added), found ${showLine(text)}. A context line needs its leading space.`);
	}
	// Blank lines right before the next '@@' or header usually separate hunks rather than being context.
	if (!endOfFile && blankRun > 0) lines.splice(lines.length - blankRun, blankRun);
	if (lines.length === 0) {
		throw new PatchParseError(start.number, `hunk ${number} has no lines. After '@@' give the lines to change, each starting with ' ', '-' or '+'.`);
	}
	return { number, patchLine: start.number, lines, oldStart, anchors, endOfFile, oldNoNewline: false, newNoNewline: false };
}
