import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { ToolError } from '../core/errors';
import { textResult, ToolResult } from '../core/result';
import { cleanRelative, comparePaths, filterArgs, inputErrorOf, isHiddenBelow, runRg, warningsOf } from '../core/ripgrep';
import { formatCount } from '../core/truncate';
import { globList, SearchScope, searchScopes } from './searchScope';
import { defineTool } from './tool';

const schema = Type.Object({
	pattern: Type.String({ minLength: 1, description: 'Regex (non-empty), or literal text with fixedStrings.' }),
	path: Type.Optional(Type.String({ description: 'File or folder (default: the whole workspace).' })),
	glob: Type.Optional(Type.String({ description: 'Only files matching these globs, comma-separated: "*.ts", "src/**/*.py,*.pyi". A glob without a slash matches names at any depth.' })),
	exclude: Type.Optional(Type.String({ description: 'Skip what matches these globs, e.g. "dist,*.min.js".' })),
	ignoreCase: Type.Optional(Type.Boolean({ description: 'Case-insensitive (default false).' })),
	fixedStrings: Type.Optional(Type.Boolean({ description: 'pattern is plain text (default false).' })),
	context: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'Lines around each match (0–10, default 0).' })),
	limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000, description: 'Most matching lines (1–2000, default 100).' })),
	offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Matching lines to skip (≥ 0, default 0).' })),
	includeHidden: Type.Optional(Type.Boolean({ description: 'Search dot-files (default false).' })),
	includeIgnored: Type.Optional(Type.Boolean({ description: 'Search ignored files, .git and node_modules (default false).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

/** Lines longer than this are shown as a window around the match. */
const GREP_LINE_CHARS = 300;
/**
 * Matching lines collected from an unsorted (parallel) search before switching to a sorted,
 * stoppable one. rg's JSON costs about 500 bytes per matching line (more with many submatches),
 * so this bounds what a pattern matching everywhere wastes before the switch (~0.5 MB).
 */
const COLLECT_MATCHES = 1_000;

export const grepTool = defineTool({
	name: 'grep',
	referenceName: 'tbGrep',
	displayName: 'Search Text',
	group: 'read',
	mutating: false,
	icon: 'search',
	tags: ['files', 'search', 'read'],
	userDescription: 'Search file contents with ripgrep: regex or literal, globs, context lines, paging.',
	modelDescription: [
		'Search file contents with ripgrep: matching lines as `path:line: text` grouped by file (context lines `path-line- text`), in a stable order, with totals when the search completed.',
		'pattern is a Rust regex (look-around and backreferences switch to PCRE2). Honours .gitignore and the editor\'s excludes; long lines are trimmed around the match. To find files by name use find_files.',
	].join(' '),
	schema,
	describe: input => `Searching for ${JSON.stringify(input.pattern)}${input.path ? ` in ${input.path}` : ''}`,
	run,
});

interface Hit {
	readonly line: number;
	readonly text: string;
	readonly match: boolean;
	/** The line was too long and only a window around the match is in `text`. */
	readonly cut: boolean;
}

interface FileHits {
	readonly order: number;
	readonly cwd: string;
	readonly relative: string;
	readonly hits: Hit[];
	matches: number;
}

interface Collected {
	readonly files: FileHits[];
	readonly matches: number;
	/** False when the search stopped before the end: `matches` is a lower bound. */
	readonly complete: boolean;
	readonly warnings: string[];
	readonly pcre2: boolean;
}

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	const scopes = await searchScopes(ctx, input.path, 'any', 'grep');
	const limit = input.limit ?? ctx.limits.grepMatches;
	const offset = input.offset ?? 0;
	const context = input.context ?? 0;
	const wanted = offset + limit + 1;
	const args = [
		'--json',
		...filterArgs({
			includeHidden: input.includeHidden ?? false,
			includeIgnored: input.includeIgnored ?? false,
			include: globList(input.glob),
			exclude: globList(input.exclude),
			searchExcludes: ctx.settings.searchExcludes,
		}),
		input.ignoreCase ? '--ignore-case' : '--case-sensitive',
		...(input.fixedStrings ? ['--fixed-strings'] : []),
		...(context > 0 ? ['--context', String(context)] : []),
	];
	const options = { scopes, args, pattern: input.pattern, includeHidden: input.includeHidden ?? false, ctx };
	// Paging needs one order for every page. A parallel search finishes fastest but in no fixed order,
	// so its results are sorted here; when there are too many to hold, a sorted (single-threaded)
	// search runs instead and is stopped as soon as this page is full. Both orders are the same.
	const cap = Math.max(wanted, Math.floor(COLLECT_MATCHES / (1 + 2 * context)));
	let collected = await collect({ ...options, sorted: false, stopAfter: cap });
	if (!collected.complete) collected = await collect({ ...options, sorted: true, stopAfter: wanted });
	else collected.files.sort((a, b) => a.order - b.order || comparePaths(a.relative, b.relative));
	ctx.note({ target: input.pattern });
	return render(input, collected, offset, limit, context, ctx);
}

interface CollectOptions {
	readonly scopes: SearchScope[];
	readonly args: string[];
	readonly pattern: string;
	readonly includeHidden: boolean;
	readonly sorted: boolean;
	/** Stop once this many matching lines are in hand. */
	readonly stopAfter: number;
	readonly ctx: ToolContext;
}

async function collect(options: CollectOptions, pcre2 = false): Promise<Collected> {
	const files: FileHits[] = [];
	const warnings: string[] = [];
	let matches = 0;
	let complete = true;
	for (const scope of options.scopes) {
		const byPath = new Map<string, FileHits>();
		// A file with more matching lines than this call can use ends the search anyway, so rg may stop
		// reading it there: in a parallel search it would otherwise hold a huge file's results whole.
		const perFile = ['--max-count', String(options.stopAfter + 1)];
		const args = [...options.args, ...perFile, ...(options.sorted ? ['--sort', 'path'] : []), ...(pcre2 ? ['--pcre2'] : []), '--regexp', options.pattern, '--', scope.arg];
		const result = await runRg(args, {
			cwd: scope.cwd,
			signal: options.ctx.signal,
			onLine: bytes => {
				const message = readMessage(bytes);
				if (!message) return;
				const relative = cleanRelative(message.path);
				if (!options.includeHidden && !scope.isFile && isHiddenBelow(relative, scope.arg)) return;
				let file = byPath.get(relative);
				if (!file) {
					file = { order: scope.order, cwd: scope.cwd, relative, hits: [], matches: 0 };
					byPath.set(relative, file);
					files.push(file);
				}
				const isMatch = message.type === 'match';
				if (isMatch && matches >= options.stopAfter) {
					complete = false;
					return false;
				}
				file.hits.push({ line: message.lineNumber, text: message.text, cut: message.cut, match: isMatch });
				if (isMatch) {
					file.matches++;
					matches++;
				}
			},
		});
		if (result.code === 2 && !result.stopped) {
			const bad = inputErrorOf(result.stderr);
			if (bad && !pcre2 && /look-around|backreferences/.test(bad)) return collect(options, true);
			if (bad && matches === 0) throw new ToolError('invalid_input', `ripgrep refused the search:\n${bad}\nFix the ${/glob/.test(bad) ? 'glob' : 'pattern'} and try again${/glob/.test(bad) ? '' : ' (or set fixedStrings: true to search for the text literally)'}.`);
			warnings.push(...warningsOf(result.stderr));
		}
		if (!complete) break;
	}
	// A file seen only through context lines of a stopped search has no matches to show.
	return { files: files.filter(file => file.matches > 0), matches, complete, warnings, pcre2 };
}

interface RgMessage {
	type: string;
	data: {
		path: RgText;
		lines: RgText;
		line_number: number;
		submatches?: { start: number; end: number }[];
	};
}

type RgText = { text: string } | { bytes: string };

/** A match or context line as shown: where it is and its text (a window around the match when long). */
interface ShownLine extends Window {
	readonly type: 'match' | 'context';
	readonly path: string;
	readonly lineNumber: number;
}

/** A line as shown, and whether it was cut to a window around the match. */
interface Window {
	readonly text: string;
	readonly cut: boolean;
}

const MATCH_PREFIX = Buffer.from('{"type":"match"');
const CONTEXT_PREFIX = Buffer.from('{"type":"context"');
function readMessage(bytes: Buffer): ShownLine | undefined {
	const type = startsWith(bytes, MATCH_PREFIX) ? 'match' : startsWith(bytes, CONTEXT_PREFIX) ? 'context' : undefined;
	// begin/end/summary messages carry nothing shown here: skip their parse.
	if (!type) return undefined;
	if (bytes.length > LONG_MESSAGE_BYTES) {
		const long = readLongMessage(bytes, type);
		if (long) return long;
	}
	let message: RgMessage;
	try {
		message = JSON.parse(bytes.toString('utf8')) as RgMessage;
	} catch {
		return undefined;
	}
	return { type, path: textOf(message.data.path), lineNumber: message.data.line_number, ...displayLine(message.data) };
}

/** Messages longer than this are read at the byte level (see readLongMessage). */
const LONG_MESSAGE_BYTES = 16 * 1024;
const LINES_KEY = Buffer.from('},"lines":{"text":"');
const LINE_NUMBER_KEY = Buffer.from('"},"line_number":');

/**
 * Minified files put megabytes on one line, and rg's JSON holds each matching line whole: parsing
 * it and counting characters up to the match would cost more than the search. Here only the small
 * parts around the line text are parsed, and the window around the match is cut from the escaped
 * bytes (jumping from backslash to backslash) and decoded alone. The cut is counted in bytes.
 * Keys are found by plain search: inside JSON strings every quote is escaped, so
 * `"},"line_number":` cannot occur in a path or a line. Undefined means: use the full parse.
 */
function readLongMessage(bytes: Buffer, type: 'match' | 'context'): ShownLine | undefined {
	const linesAt = bytes.indexOf(LINES_KEY);
	const numberAt = bytes.lastIndexOf(LINE_NUMBER_KEY);
	if (linesAt === -1 || numberAt < linesAt) return undefined;
	try {
		const head = JSON.parse(`${bytes.toString('utf8', 0, linesAt)}}}}`) as { data: { path: RgText } };
		const tail = JSON.parse(`{${bytes.toString('utf8', numberAt + 3, bytes.length - 1)}`) as Pick<RgMessage['data'], 'line_number' | 'submatches'>;
		const line = new EscapedLine(bytes, linesAt + LINES_KEY.length, numberAt);
		return { type, path: textOf(head.data.path), lineNumber: tail.line_number, ...line.window(tail.submatches?.[0]?.start ?? 0) };
	} catch {
		return undefined;
	}
}

/** A JSON string's body (rg escapes only `"`, `\\` and control characters: each escape is one byte). */
class EscapedLine {
	/** Length of the line in raw bytes, without its line ending. */
	readonly rawLength: number;
	private readonly end: number;

	constructor(private readonly bytes: Buffer, private readonly start: number, end: number) {
		this.end = end;
		let raw = this.rawOffsetOf(end);
		// The line ending is part of rg's text: `\n`, perhaps after `\r`.
		for (const escape of ['n', 'r']) {
			if (this.end - this.start >= 2 && bytes[this.end - 2] === 0x5c && bytes[this.end - 1] === escape.charCodeAt(0)) {
				this.end -= 2;
				raw--;
			}
		}
		this.rawLength = raw;
	}

	/** GREP_LINE_CHARS bytes around a raw byte offset, decoded, with the cut marked in bytes. */
	window(matchAt: number): Window {
		const wantedFrom = Math.max(0, Math.min(matchAt - Math.floor(GREP_LINE_CHARS / 3), this.rawLength - GREP_LINE_CHARS));
		const wantedTo = Math.min(this.rawLength, wantedFrom + GREP_LINE_CHARS);
		// Continuation bytes are never escaped, so moving back over them moves back as many raw bytes.
		const [fromEscaped, toEscaped] = [this.escapedOffsetOf(wantedFrom), this.escapedOffsetOf(wantedTo)];
		const [first, last] = [this.charStart(fromEscaped), this.charStart(toEscaped)];
		const from = wantedFrom - (fromEscaped - first);
		const to = wantedTo - (toEscaped - last);
		const text = JSON.parse(`"${this.bytes.toString('utf8', first, last)}"`) as string;
		const before = from > 0 ? `[… ${formatCount(from)} bytes] ` : '';
		const after = to < this.rawLength ? ` [${formatCount(this.rawLength - to)} bytes …]` : '';
		return { text: `${before}${text}${after}`, cut: from > 0 || to < this.rawLength };
	}

	/** Raw bytes before an escaped position. */
	private rawOffsetOf(escaped: number): number {
		let raw = 0;
		let at = this.start;
		for (let slash = this.bytes.indexOf(0x5c, at); slash !== -1 && slash < escaped; slash = this.bytes.indexOf(0x5c, at)) {
			raw += slash - at + 1;
			at = slash + this.escapeLength(slash);
		}
		return raw + Math.max(0, escaped - at);
	}

	/** The escaped position of a raw byte offset. */
	private escapedOffsetOf(raw: number): number {
		let left = raw;
		let at = this.start;
		for (let slash = this.bytes.indexOf(0x5c, at); slash !== -1 && slash < this.end; slash = this.bytes.indexOf(0x5c, at)) {
			if (slash - at >= left) break;
			left -= slash - at + 1;
			at = slash + this.escapeLength(slash);
			if (left === 0) return at;
		}
		return Math.min(this.end, at + left);
	}

	private escapeLength(slash: number): number {
		return this.bytes[slash + 1] === 0x75 /* u */ ? 6 : 2;
	}

	/** Moves back off UTF-8 continuation bytes, so a cut never splits a character. */
	private charStart(escaped: number): number {
		let at = escaped;
		while (at > this.start && at < this.end && (this.bytes[at] & 0xc0) === 0x80) at--;
		return at;
	}
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
	return bytes.length >= prefix.length && bytes.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}

/** rg gives text as UTF-8, or as base64 bytes when it is not valid UTF-8. */
function textOf(value: RgText): string {
	return 'text' in value ? value.text : Buffer.from(value.bytes, 'base64').toString('utf8');
}

/** The line without its ending, cut to a window around the first match when long. */
function displayLine(data: RgMessage['data']): Window {
	const raw = withoutLineEnd(textOf(data.lines));
	if (raw.length <= GREP_LINE_CHARS) return { text: raw, cut: false };
	const at = charIndexOfByte(raw, data.submatches?.[0]?.start ?? 0);
	let start = Math.max(0, Math.min(at - Math.floor(GREP_LINE_CHARS / 3), raw.length - GREP_LINE_CHARS));
	let end = start + GREP_LINE_CHARS;
	// Never split a surrogate pair.
	if (start > 0 && isLowSurrogate(raw.charCodeAt(start))) start--;
	if (end < raw.length && isLowSurrogate(raw.charCodeAt(end))) end++;
	const before = start > 0 ? `[… ${formatCount(start)} chars] ` : '';
	const after = end < raw.length ? ` [${formatCount(raw.length - end)} chars …]` : '';
	return { text: `${before}${raw.slice(start, end)}${after}`, cut: true };
}

/** A regex anchored at the end would be tried at every position of a megabyte line; this is O(1). */
function withoutLineEnd(text: string): string {
	if (!text.endsWith('\n')) return text;
	return text.endsWith('\r\n') ? text.slice(0, -2) : text.slice(0, -1);
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

function render(input: Input, collected: Collected, offset: number, limit: number, context: number, ctx: ToolContext): ToolResult {
	const budget = ctx.limits.readBytes;
	const out: string[] = [];
	let bytes = 0;
	let index = 0;
	let shown = 0;
	let filesShown = 0;
	let fullPage = false;
	let cutLines = 0;
	for (const file of collected.files) {
		if (fullPage) break;
		if (index + file.matches <= offset) {
			index += file.matches;
			continue;
		}
		const display = ctx.boundary.display(path.join(file.cwd, file.relative));
		const chosen = new Set<number>();
		for (const hit of file.hits) {
			if (!hit.match) continue;
			if (index >= offset && index < offset + limit) chosen.add(hit.line);
			index++;
		}
		const near = (line: number) => {
			for (let d = -context; d <= context; d++) if (chosen.has(line + d)) return true;
			return false;
		};
		const block: string[] = [];
		let previous: number | undefined;
		let blockShown = 0;
		for (const hit of file.hits) {
			const selected = hit.match && chosen.has(hit.line);
			if (!selected && !(context > 0 && near(hit.line))) continue;
			if (previous !== undefined && hit.line > previous + 1) block.push('--');
			const mark = selected ? ':' : '-';
			const text = `${display}${mark}${hit.line}${mark}${hit.text === '' ? '' : ` ${hit.text}`}`;
			const size = Buffer.byteLength(text) + 1;
			if (shown + blockShown > 0 && bytes + size > budget && selected) {
				fullPage = true;
				break;
			}
			if (hit.cut) cutLines++;
			block.push(text);
			bytes += size;
			previous = hit.line;
			if (selected) blockShown++;
		}
		if (blockShown > 0) {
			if (out.length > 0) out.push('');
			out.push(...block);
			shown += blockShown;
			filesShown++;
		}
		if (index >= offset + limit) fullPage = true;
	}
	const where = input.path ? ` in ${input.path}` : '';
	const pattern = JSON.stringify(input.pattern);
	const total = collected.complete
		? `${formatCount(collected.matches)} matching line${collected.matches === 1 ? '' : 's'} in ${formatCount(collected.files.length)} file${collected.files.length === 1 ? '' : 's'}`
		: `more than ${formatCount(offset + limit)} matching lines (the search stopped once this page was full)`;
	const lines: string[] = [];
	if (collected.matches === 0) {
		lines.push(`No matches for ${pattern}${where}.${input.includeIgnored ? '' : ' Ignored files (.gitignore, editor excludes, .git, node_modules) were not searched: set includeIgnored to search them.'}${input.includeHidden ? '' : ' Hidden (dot) files were not searched: set includeHidden to search them.'}`);
	} else if (shown === 0) {
		lines.push(`${total} for ${pattern}${where}; offset ${offset} is past the end. Use a smaller offset.`);
	} else {
		lines.push(`${total} for ${pattern}${where}; showing ${formatCount(offset + 1)}–${formatCount(offset + shown)}${collected.pcre2 ? ' (searched with PCRE2 for look-around/backreferences)' : ''}:`, '', ...out);
	}
	const nextOffset = offset + shown;
	const more = shown > 0 && (collected.complete ? nextOffset < collected.matches : true);
	if (more) {
		const left = collected.complete ? `${formatCount(collected.matches - nextOffset)} more matching line${collected.matches - nextOffset === 1 ? '' : 's'}` : 'more matching lines';
		lines.push('', `[… ${left} omitted; use offset=${nextOffset} for the next page, or narrow path, glob or pattern …]`);
	}
	if (cutLines > 0) lines.push(`(${cutLines} long line${cutLines === 1 ? ' was' : 's were'} trimmed around the match; read_file shows them whole)`);
	if (collected.warnings.length) lines.push(`(some files could not be searched: ${collected.warnings.join('; ')})`);
	return textResult(lines.join('\n'), {
		truncated: more || cutLines > 0,
		matches: shown,
		files: filesShown,
		totalMatches: collected.complete ? collected.matches : undefined,
		totalFiles: collected.complete ? collected.files.length : undefined,
		complete: collected.complete,
		offset,
		...(more ? { nextOffset } : {}),
	});
}
