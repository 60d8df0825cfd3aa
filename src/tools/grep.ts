import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { textResult, ToolResult } from '../core/results/result';
import { formatBytes } from '../core/results/truncate';
import { cleanRelative, comparePaths, filterArgs, inputErrorOf, isHiddenBelow, RG_SAFE_FILE_BYTES, runRg, warningsOf } from '../core/search/ripgrep';
import { formatCount } from '../core/results/truncate';
import { fillWindows, FoundLine, GREP_LINE_CHARS, WindowSearch } from './grepWindows';
import { globList, searchConfinement, SearchScope, searchScopes } from './searchScope';
import { defineTool } from './tool';

const schema = Type.Object({
	pattern: Type.String({ minLength: 1, description: 'Rust regex (non-empty; look-around and backreferences switch to PCRE2), or text with fixedStrings.' }),
	path: Type.Optional(Type.String({ description: 'File or folder (default: whole workspace).' })),
	glob: Type.Optional(Type.String({ description: 'Only these comma-separated globs, e.g. "*.ts,src/**/*.py" (no slash: names at any depth).' })),
	exclude: Type.Optional(Type.String({ description: 'Skip these globs, e.g. "dist,*.min.js".' })),
	ignoreCase: Type.Optional(Type.Boolean({ description: 'Case-insensitive (default false).' })),
	fixedStrings: Type.Optional(Type.Boolean({ description: 'pattern is plain text (default false).' })),
	context: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'Lines around each match (0–10, default 0).' })),
	limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000, description: 'Most matching lines (1–2000, default 100).' })),
	offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Matching lines to skip (≥ 0, default 0).' })),
	includeHidden: Type.Optional(Type.Boolean({ description: 'Also dot-files (default false).' })),
	includeIgnored: Type.Optional(Type.Boolean({ description: 'Also ignored files, .git, node_modules (default false).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

/**
 * Matching lines collected from an unsorted (parallel) search before switching to a sorted,
 * stoppable one. rg prints a line in at most its path and ~330 bytes here (longer lines as a
 * preview), so this bounds what a pattern matching everywhere wastes before the switch.
 */
const COLLECT_MATCHES = 1_000;

/**
 * How rg prints lines: `path NUL number : text` (`-` for context lines), no colours, no group
 * separators, a line longer than GREP_LINE_CHARS (with its ending) as a preview of its start.
 * Without --json or --column rg never looks for a line's second match, so a line with a million
 * matches costs what a line with one costs; windows of long lines come later (grepWindows).
 */
const RECORD_ARGS = ['--no-heading', '--with-filename', '--null', '--line-number', '--color', 'never', '--no-context-separator', '--max-columns', String(GREP_LINE_CHARS + 2), '--max-columns-preview'];

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
		'Search file contents with ripgrep: matching lines as `path:line: text` grouped by file, long lines trimmed around the match, with totals if the search completed.',
		'Honours .gitignore and the editor\'s excludes. find_files finds files by name.',
	].join(' '),
	schema,
	describe: input => `Searching for ${JSON.stringify(input.pattern)}${input.path ? ` in ${input.path}` : ''}`,
	run,
});

interface Hit extends FoundLine {
	readonly match: boolean;
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
	/** Files rg stopped reading (or did not show) because they hold binary data. */
	readonly binary: string[];
	readonly pcre2: boolean;
}

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	const scopes = await searchScopes(ctx, input.path, 'any', 'grep');
	const limit = input.limit ?? ctx.settings.limits.grepMatches;
	const offset = input.offset ?? 0;
	const context = input.context ?? 0;
	const wanted = offset + limit + 1;
	const args = [
		...RECORD_ARGS,
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
	const page = pageOf(collected.files, offset, limit, context);
	await fillWindows(longLinesOf(page, context), {
		pattern: input.pattern,
		fixedStrings: input.fixedStrings ?? false,
		ignoreCase: input.ignoreCase ?? false,
		pcre2: collected.pcre2,
		context,
		signal: ctx.signal,
		confine: searchConfinement(ctx),
	});
	ctx.note({ target: input.pattern });
	return render(input, collected, page, offset, limit, ctx);
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
	/** Files larger than RG_SAFE_FILE_BYTES are skipped: a search before ran out of memory on a giant line. */
	readonly skipLarge?: boolean;
}

async function collect(options: CollectOptions, pcre2 = false): Promise<Collected> {
	const files: FileHits[] = [];
	const warnings: string[] = [];
	const binary: string[] = [];
	let matches = 0;
	let complete = true;
	for (const scope of options.scopes) {
		const byPath = new Map<string, FileHits>();
		// A file with more matching lines than this call can use ends the search anyway, so rg may stop
		// reading it there: in a parallel search it would otherwise hold a huge file's results whole.
		const perFile = ['--max-count', String(options.stopAfter + 1)];
		const sizeCap = options.skipLarge ? ['--max-filesize', String(RG_SAFE_FILE_BYTES)] : [];
		const args = [...options.args, ...perFile, ...sizeCap, ...(options.sorted ? ['--sort', 'path'] : []), ...(pcre2 ? ['--pcre2'] : []), '--regexp', options.pattern, '--', scope.arg];
		const records = new RecordReader();
		const result = await runRg(args, {
			cwd: scope.cwd,
			signal: options.ctx.signal,
			confine: searchConfinement(options.ctx),
			boundMemory: true,
			line: bytes => {
				const record = records.read(bytes);
				if (!record) return;
				if ('binary' in record) {
					binary.push(cleanRelative(record.binary));
					return;
				}
				const relative = cleanRelative(record.path);
				if (!options.includeHidden && !scope.isFile && isHiddenBelow(relative, scope.arg)) return;
				let file = byPath.get(relative);
				if (!file) {
					file = { order: scope.order, cwd: scope.cwd, relative, hits: [], matches: 0 };
					byPath.set(relative, file);
					files.push(file);
				}
				if (record.match && matches >= options.stopAfter) {
					complete = false;
					return false;
				}
				file.hits.push(hitOf(record));
				if (record.match) {
					file.matches++;
					matches++;
				}
			},
		});
		// Whatever was found before the abort is dropped: the search is made again, whole, without the big files.
		if (result.outOfMemory && !options.skipLarge) return collect({ ...options, skipLarge: true }, pcre2);
		if (result.code === 2 && !result.stopped) {
			const bad = inputErrorOf(result.stderr);
			if (bad && !pcre2 && /look-around|backreferences/.test(bad)) return collect(options, true);
			if (bad && matches === 0) throw new ToolError('invalid_input', `ripgrep refused the search:\n${bad}\nFix the ${/glob/.test(bad) ? 'glob' : 'pattern'} and try again${/glob/.test(bad) ? '' : ' (or set fixedStrings: true to search for the text literally)'}.`);
			warnings.push(...warningsOf(result.stderr));
		}
		if (!complete) break;
	}
	if (options.skipLarge) warnings.unshift(`files larger than ${formatBytes(RG_SAFE_FILE_BYTES)} were skipped, because one of them has a line too long for grep to search within its memory bound (a minified or generated file?); search a narrower path or with include globs that leave it out, or read a large file with read_file`);
	// A file seen only through context lines of a stopped search has no matches to show.
	return { files: files.filter(file => file.matches > 0), matches, complete, warnings, binary, pcre2 };
}

/** A line as rg printed it in the first pass. */
interface RgRecord {
	readonly path: string;
	readonly line: number;
	readonly match: boolean;
	/** The line without its ending, or its preview; a view of rg's output, valid during the call. */
	readonly text: Buffer;
}

/** Bytes of a preview kept for a line whose window is not found. */
const PREVIEW_BYTES = GREP_LINE_CHARS + 8;

function hitOf(record: RgRecord): Hit {
	const { line, match, text } = record;
	if (text.length <= GREP_LINE_CHARS) return { line, match, window: { text: text.toString('utf8'), cut: false } };
	// rg prints whole only lines of up to GREP_LINE_CHARS + 2 bytes with their ending; a preview is longer.
	return { line, match, preview: Buffer.from(text.subarray(0, PREVIEW_BYTES)), previewIsWhole: text.length <= GREP_LINE_CHARS + 2 };
}

const BINARY_NOTE = /^(.*): (?:WARNING: stopped searching binary file after match|binary file matches) \(found .* byte around offset \d+\)$/s;
const NEWLINE = Buffer.from('\n');
const MAX_PATH_BYTES = 64 * 1024;

/**
 * Reads the first pass's lines. A path holding a newline reaches here in pieces (rg ends the line
 * there), which are joined up to the NUL; rg's notes about binary files have no NUL.
 */
class RecordReader {
	private pathStart: Buffer | undefined;

	read(bytes: Buffer): RgRecord | { binary: string } | undefined {
		const nul = bytes.indexOf(0);
		if (nul === -1) {
			const note = BINARY_NOTE.exec(bytes.toString('utf8'));
			if (note) return { binary: note[1] };
			this.pathStart = Buffer.concat([this.pathStart ?? Buffer.alloc(0), bytes, NEWLINE]);
			// No path is that long: this is not one.
			if (this.pathStart.length > MAX_PATH_BYTES) this.pathStart = undefined;
			return undefined;
		}
		const path = this.pathStart ? Buffer.concat([this.pathStart, bytes.subarray(0, nul)]).toString('utf8') : bytes.toString('utf8', 0, nul);
		this.pathStart = undefined;
		let at = nul + 1;
		let line = 0;
		for (; at < bytes.length && bytes[at] >= 0x30 && bytes[at] <= 0x39; at++) line = line * 10 + bytes[at] - 0x30;
		const separator = bytes[at];
		if (at === nul + 1 || (separator !== 0x3a /* : */ && separator !== 0x2d /* - */)) return undefined;
		// rg ends the line at its '\n'; a '\r' before it is part of a CRLF ending.
		const end = bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
		return { path, line, match: separator === 0x3a, text: bytes.subarray(at + 1, Math.max(at + 1, end)) };
	}
}

/** A page of results: per file, the matches from `offset` (at most `limit` in all) and the context lines near them. */
interface PageFile {
	readonly file: FileHits;
	readonly hits: Hit[];
	/** Lines of the matches on the page. */
	readonly chosen: Set<number>;
}

function pageOf(files: readonly FileHits[], offset: number, limit: number, context: number): PageFile[] {
	const page: PageFile[] = [];
	let index = 0;
	for (const file of files) {
		if (index >= offset + limit) break;
		if (index + file.matches <= offset) {
			index += file.matches;
			continue;
		}
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
		const hits = file.hits.filter(hit => (hit.match && chosen.has(hit.line)) || (context > 0 && near(hit.line)));
		if (hits.length > 0) page.push({ file, hits, chosen });
	}
	return page;
}

/** The long lines of a page, by file, with how many matching lines rg must read to reach them. */
function longLinesOf(page: readonly PageFile[], context: number): WindowSearch[] {
	const searches: WindowSearch[] = [];
	for (const { file, hits } of page) {
		const lines = hits.filter(hit => hit.window === undefined);
		if (lines.length === 0) continue;
		// A context line is within `context` lines of the match that showed it, perhaps after it.
		const last = lines[lines.length - 1].line + context;
		const matchesUpTo = file.hits.filter(hit => hit.match && hit.line <= last).length;
		searches.push({ cwd: file.cwd, relative: file.relative, lines, matchesUpTo });
	}
	return searches;
}

function render(input: Input, collected: Collected, page: readonly PageFile[], offset: number, limit: number, ctx: ToolContext): ToolResult {
	const budget = ctx.settings.limits.readBytes;
	const out: string[] = [];
	let bytes = 0;
	let shown = 0;
	let filesShown = 0;
	let cutLines = 0;
	for (const { file, hits, chosen } of page) {
		const display = ctx.boundary.display(path.join(file.cwd, file.relative));
		const block: string[] = [];
		let previous: number | undefined;
		let blockShown = 0;
		let full = false;
		for (const hit of hits) {
			const selected = hit.match && chosen.has(hit.line);
			const window = hit.window!;
			if (previous !== undefined && hit.line > previous + 1) block.push('--');
			const mark = selected ? ':' : '-';
			const text = `${display}${mark}${hit.line}${mark}${window.text === '' ? '' : ` ${window.text}`}`;
			const size = Buffer.byteLength(text) + 1;
			if (shown + blockShown > 0 && bytes + size > budget && selected) {
				full = true;
				break;
			}
			if (window.cut) cutLines++;
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
		if (full) break;
	}
	const where = input.path ? ` in ${input.path}` : '';
	const pattern = JSON.stringify(input.pattern);
	const total = collected.complete
		? `${formatCount(collected.matches)} matching line${collected.matches === 1 ? '' : 's'} in ${formatCount(collected.files.length)} file${collected.files.length === 1 ? '' : 's'}`
		: `more than ${formatCount(offset + limit)} matching lines (the search stopped once this page was full)`;
	const lines: string[] = [];
	const binary = collected.binary.join(', ');
	if (collected.matches === 0 && binary) {
		lines.push(`No text matches for ${pattern}${where}; binary files match: ${binary} (read_file with encoding base64 reads them).`);
	} else if (collected.matches === 0) {
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
	if (binary && collected.matches > 0) lines.push(`(binary data in ${binary}: the search of these files stopped there; read_file with encoding base64 reads such files)`);
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
