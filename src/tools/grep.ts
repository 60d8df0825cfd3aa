import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { listedName } from '../core/results/listedName';
import { textResult, ToolResult } from '../core/results/result';
import { formatBytes } from '../core/results/truncate';
import { rgJsonHandler, RgJsonLine } from '../core/search/rgJson';
import { cleanRelative, comparePaths, filterArgs, inputErrorOf, isHiddenBelow, RG_SAFE_FILE_BYTES, runRg, warningsOf } from '../core/search/ripgrep';
import { formatCount } from '../core/results/truncate';
import { Window, windowOf, windowPattern } from './grepWindows';
import { globList, searchConfinement, SearchScope, searchScopes } from './searchScope';
import { defineTool } from './tool';
import { grepVirtual } from './virtual/search';

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
 * stoppable one. A line is kept as its window of ~300 characters, so this bounds what a pattern
 * matching everywhere wastes before the switch.
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
		'Search file contents with ripgrep: matching lines as `path:line: text` grouped by file, long lines trimmed around the match, with totals if the search completed.',
		'Honours .gitignore and the editor\'s excludes. find_files finds files by name.',
	].join(' '),
	schema,
	describe: input => `Searching for ${JSON.stringify(input.pattern)}${input.path ? ` in ${input.path}` : ''}`,
	run,
});

interface Hit {
	readonly line: number;
	readonly match: boolean;
	/** The line as shown: whole, or its window when long. */
	readonly window: Window;
	/** Where the line ends in its file (before its line ending), in bytes. */
	readonly end: number;
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
	/** Files with matches that hold binary data: rg stopped reading them there, or their lines from there on are not shown. */
	readonly binary: string[];
	readonly pcre2: boolean;
}

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	if (!ctx.boundary.fileSystem.local) return grepVirtual(input, ctx);
	const scopes = await searchScopes(ctx, input.path, 'any', 'grep');
	const limit = input.limit ?? ctx.settings.limits.grepMatches;
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
		...(context > 0 ? ['--context', String(context)] : []),
	];
	const options = { scopes, args, pattern: input.pattern, fixedStrings: input.fixedStrings ?? false, windowed: true, includeHidden: input.includeHidden ?? false, ctx };
	// Paging needs one order for every page. A parallel search finishes fastest but in no fixed order,
	// so its results are sorted here; when there are too many to hold, a sorted (single-threaded)
	// search runs instead and is stopped as soon as this page is full. Both orders are the same.
	const cap = Math.max(wanted, Math.floor(COLLECT_MATCHES / (1 + 2 * context)));
	let collected = await collect({ ...options, sorted: false, stopAfter: cap });
	if (!collected.complete) collected = await collect({ ...options, sorted: true, stopAfter: wanted });
	else collected.files.sort((a, b) => a.order - b.order || comparePaths(a.relative, b.relative));
	const page = pageOf(collected.files, offset, limit, context);
	ctx.note({ target: input.pattern });
	return render(input, collected, page, offset, limit, ctx);
}

interface CollectOptions {
	readonly scopes: SearchScope[];
	readonly args: string[];
	readonly pattern: string;
	readonly fixedStrings: boolean;
	/**
	 * The pattern goes to rg wrapped (windowPattern), so that a line's first match holds its window;
	 * false: as given, when rg refused the wrapped one (its words then name the person's pattern).
	 */
	readonly windowed: boolean;
	readonly includeHidden: boolean;
	readonly sorted: boolean;
	/** Stop once this many matching lines are in hand. */
	readonly stopAfter: number;
	readonly ctx: ToolContext;
	/**
	 * rg on one thread, printing as it reads. On several, rg holds each file's output whole until
	 * the file is done, which a long matching line can take past its memory bound.
	 */
	readonly oneThread?: boolean;
	/** Files larger than RG_SAFE_FILE_BYTES are skipped: a search before ran out of memory on a giant line. */
	readonly skipLarge?: boolean;
}

/** The lines rg reported for the file it is printing, held until its end message says whether it is binary. */
interface PendingFile {
	/** As rg printed it. */
	readonly path: string;
	readonly relative: string;
	/** A dot-file a glob let through: not shown. */
	readonly hidden: boolean;
	readonly hits: Hit[];
}

async function collect(options: CollectOptions, pcre2 = false): Promise<Collected> {
	const files: FileHits[] = [];
	const warnings: string[] = [];
	const binary: string[] = [];
	let matches = 0;
	let complete = true;
	const { regex, lead } = options.windowed ? windowPattern({ pattern: options.pattern, fixedStrings: options.fixedStrings, pcre2 }) : { regex: options.pattern, lead: 0 };
	const patternArgs = [...(!options.windowed && options.fixedStrings ? ['--fixed-strings'] : []), '--regexp', regex];
	for (const scope of options.scopes) {
		const byPath = new Map<string, FileHits>();
		let pending: PendingFile | undefined;
		/** Adds the pending file's lines up to stopAfter matches; false once past it (the search is stopped). */
		const flush = (binaryOffset?: number): boolean => {
			const found = pending;
			pending = undefined;
			if (!found || found.hidden) return true;
			let hits = found.hits;
			if (binaryOffset !== undefined) {
				if (hits.some(hit => hit.match)) binary.push(found.relative);
				// Lines holding binary data, or after it, are not shown: rg reads a file named as path to its end.
				hits = hits.filter(hit => hit.end <= binaryOffset);
			}
			for (const hit of hits) {
				let file = byPath.get(found.relative);
				if (!file) {
					file = { order: scope.order, cwd: scope.cwd, relative: found.relative, hits: [], matches: 0 };
					byPath.set(found.relative, file);
					files.push(file);
				}
				if (hit.match && matches >= options.stopAfter) {
					complete = false;
					return false;
				}
				file.hits.push(hit);
				if (hit.match) {
					file.matches++;
					matches++;
				}
			}
			return true;
		};
		// A file with more matching lines than this call can use ends the search anyway, so rg may stop
		// reading it there: in a parallel search it would otherwise hold a huge file's results whole.
		const perFile = ['--max-count', String(options.stopAfter + 1)];
		const sizeCap = options.skipLarge ? ['--max-filesize', String(RG_SAFE_FILE_BYTES)] : [];
		const threads = options.sorted ? ['--sort', 'path'] : options.oneThread ? ['--threads', '1'] : [];
		const args = [...options.args, ...perFile, ...sizeCap, ...threads, ...(pcre2 ? ['--pcre2'] : []), ...patternArgs, '--', scope.arg];
		const result = await runRg(args, {
			cwd: scope.cwd,
			signal: options.ctx.signal,
			confine: searchConfinement(options.ctx),
			boundMemory: true,
			// rg prints each file's messages together, ending with its end message.
			...rgJsonHandler(message => {
				if (message.type === 'end') return message.path === pending?.path ? flush(message.binaryOffset) : undefined;
				if (pending && pending.path !== message.path && !flush()) return false;
				if (!pending) {
					const relative = cleanRelative(message.path);
					pending = { path: message.path, relative, hidden: !options.includeHidden && !scope.isFile && isHiddenBelow(relative, scope.arg), hits: [] };
				}
				if (!pending.hidden) pending.hits.push(hitOf(message, lead));
			}),
		});
		if (result.outOfMemory) {
			// Whatever was found before the abort is dropped: the search is made again, whole, on one
			// thread (which holds no file's output), then without the big files.
			if (!options.sorted && !options.oneThread) return collect({ ...options, oneThread: true }, pcre2);
			if (!options.skipLarge) return collect({ ...options, skipLarge: true }, pcre2);
		}
		if (!result.stopped) flush();
		if (result.code === 2 && !result.stopped) {
			const bad = inputErrorOf(result.stderr);
			if (bad && !pcre2 && /look-around|backreferences/.test(bad)) return collect(options, true);
			// Said of the wrapped pattern, rg's words would show the wrapping: they come from the pattern as given.
			if (bad && options.windowed && !/glob/.test(bad)) return collect({ ...options, windowed: false }, pcre2);
			if (bad && matches === 0) throw new ToolError('invalid_input', `ripgrep refused the search:\n${bad}\nFix the ${/glob/.test(bad) ? 'glob' : 'pattern'} and try again${/glob/.test(bad) ? '' : ' (or set fixedStrings: true to search for the text literally)'}.`);
			warnings.push(...warningsOf(result.stderr));
		}
		if (!complete) break;
	}
	if (options.skipLarge) warnings.unshift(`files larger than ${formatBytes(RG_SAFE_FILE_BYTES)} were skipped, because one of them has a line too long for grep to search within its memory bound (a minified or generated file?); search a narrower path or with include globs that leave it out, or read a large file with read_file`);
	// A file seen only through context lines of a stopped search has no matches to show.
	return { files: files.filter(file => file.matches > 0), matches, complete, warnings, binary, pcre2 };
}

function hitOf(message: RgJsonLine, lead: number): Hit {
	return { line: message.lineNumber, match: message.type === 'match', window: windowOf(message, lead), end: message.absoluteOffset + message.text.length };
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

function render(input: Input, collected: Collected, page: readonly PageFile[], offset: number, limit: number, ctx: ToolContext): ToolResult {
	const budget = ctx.settings.limits.readBytes;
	const out: string[] = [];
	let bytes = 0;
	let shown = 0;
	let filesShown = 0;
	let cutLines = 0;
	for (const { file, hits, chosen } of page) {
		const display = listedName(ctx.boundary.display(path.join(file.cwd, file.relative)));
		const block: string[] = [];
		let previous: number | undefined;
		let blockShown = 0;
		let full = false;
		for (const hit of hits) {
			const selected = hit.match && chosen.has(hit.line);
			const window = hit.window;
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
	const binary = collected.binary.map(listedName).join(', ');
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
