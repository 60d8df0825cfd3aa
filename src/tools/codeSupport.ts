import * as fs from 'node:fs';
import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { CancelledError, fromNodeError, ToolError } from '../core/results/errors';
import { looksBinary, statOrExplain } from '../core/files/files';
import type { LanguageServices, LanguageWaits, SourceLocation, SourcePosition } from '../core/languages';
import { LocatedSymbol, locateSymbol, SymbolTarget } from '../core/text/symbolPosition';
import { formatBytes, formatCount } from '../core/results/truncate';
import { listedName } from '../core/results/listedName';

/**
 * What the code tools (symbols, definitions, references, hover, calls, rename, code actions) share:
 * the position fields, reading the file a position is in, waiting for a language server that is
 * still starting, and showing locations as `path:line: text`.
 */

export const POSITION_FIELDS = {
	path: Type.String({ minLength: 1, description: 'File, workspace-relative (non-empty).' }),
	line: Type.Integer({ minimum: 1, description: 'The symbol\'s line (≥ 1).' }),
	symbol: Type.String({ minLength: 1, description: 'The identifier as written on that line (non-empty).' }),
	occurrence: Type.Optional(Type.Integer({ minimum: 1, description: 'Which one if on the line more than once (≥ 1, default 1).' })),
	column: Type.Optional(Type.Integer({ minimum: 1, description: 'Or a column (≥ 1) inside the one meant.' })),
};

export type PositionInput = SymbolTarget & { readonly path: string };

/**
 * How long a call waits for a language server to answer. A freshly opened TypeScript project takes
 * seconds to load; a language with no server never answers, and is given less time once known.
 * A port may bring its own (tests do).
 */
export const LANGUAGE_WAIT: LanguageWaits = Object.freeze({ firstMs: 20_000, silentMs: 3_000 });
const FIRST_PAUSE_MS = 200;
const MAX_PAUSE_MS = 1_000;
/** Files larger than this are not read for their lines (language servers skip them too). */
const MAX_SOURCE_BYTES = 16 * 1024 * 1024;
/** Characters of a result line shown around the symbol. */
const RESULT_LINE_CHARS = 240;

export function languageServices(ctx: ToolContext): LanguageServices {
	if (!ctx.host.languages) throw needsVscode(ctx.tool);
	return ctx.host.languages;
}

export function needsVscode(tool: string): ToolError {
	return new ToolError('unavailable', `${tool} needs VS Code: it asks the language servers running in the editor, and there are none here. Search the text with grep instead.`);
}

export interface SourceFile {
	readonly absolute: string;
	readonly display: string;
	readonly lines: string[];
	readonly languageId: string;
}

/** Resolves a file through the boundary, reads its lines (an editor's unsaved text first) and opens it for its language server. */
export async function openSource(ctx: ToolContext, services: LanguageServices, input: string): Promise<SourceFile> {
	const resolved = await ctx.boundary.resolve(input, 'read');
	const stat = await statOrExplain(resolved.absolute, resolved.display);
	if (stat.isDirectory()) throw new ToolError('is_directory', `${resolved.display} is a folder; give the path of a source file (find_files lists them).`);
	const text = await readSourceText(ctx, resolved.absolute).catch(error => { throw fromNodeError(error, resolved.display); });
	if (text === undefined) throw new ToolError('binary_file', `${resolved.display} is binary or larger than ${formatBytes(MAX_SOURCE_BYTES)}: not source the code tools can read. Use grep on it instead.`);
	const opened = await services.open(resolved.absolute).catch(error => {
		throw new ToolError('io', `VS Code could not open ${resolved.display} (${(error as Error).message}). Check the path, or read it with read_file.`);
	});
	return { absolute: resolved.absolute, display: resolved.display, lines: splitSourceLines(text), languageId: opened.languageId };
}

/** The file and the symbol's place in it; `note` says which occurrence was taken when there were several. */
export async function locate(ctx: ToolContext, services: LanguageServices, input: PositionInput): Promise<{ file: SourceFile; at: LocatedSymbol; note?: string }> {
	const file = await openSource(ctx, services, input.path);
	const at = locateSymbol(file.lines, input, file.display);
	const chosenImplicitly = at.occurrences > 1 && input.occurrence === undefined && input.column === undefined;
	const note = chosenImplicitly ? `("${input.symbol}" is on line ${input.line} ${at.occurrences} times; this is the first. Set occurrence to pick another.)` : undefined;
	return { file, at, ...(note ? { note } : {}) };
}

/** The file's text (an editor's unsaved text first) without its BOM; undefined for a binary or oversized file. */
async function readSourceText(ctx: ToolContext, absolute: string): Promise<string | undefined> {
	const dirty = ctx.host.dirtyText(absolute);
	if (dirty !== undefined) return stripBom(dirty);
	const stat = await fs.promises.stat(absolute);
	if (!stat.isFile() || stat.size > MAX_SOURCE_BYTES) return undefined;
	const bytes = await fs.promises.readFile(absolute);
	return looksBinary(bytes.subarray(0, 8192)) ? undefined : stripBom(bytes.toString('utf8'));
}

function stripBom(text: string): string {
	return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Lines as VS Code counts them: `\r\n`, `\n` and a lone `\r` end a line. */
function splitSourceLines(text: string): string[] {
	return text.split(/\r\n|\r|\n/);
}

/**
 * Asks a language server once it is ready. While it starts (nothing answers yet) or loads the
 * project (it answers from a partial view), the question waits, up to a bound; an answer given when
 * ready is the answer, empty or not. The model is told plainly when nothing answered, never handed
 * an empty result that reads as "none".
 */
export async function askLanguageServer<T>(
	ctx: ToolContext,
	services: LanguageServices,
	file: Pick<SourceFile, 'absolute' | 'display' | 'languageId'>,
	ask: () => Promise<T[]>,
	position?: SourcePosition,
): Promise<T[]> {
	const silent = ctx.state.silentLanguages;
	const waits = services.waits ?? LANGUAGE_WAIT;
	const waitMs = silent.has(file.languageId) ? waits.silentMs : waits.firstMs;
	const deadline = Date.now() + waitMs;
	let pause = FIRST_PAUSE_MS;
	for (;;) {
		const readiness = await beforeDeadline(services.readiness(file.absolute, position), deadline, ctx.signal) ?? 'loading';
		if (readiness === 'ready') {
			silent.delete(file.languageId);
			// A ready server may still take a while for a big question (references in a large project).
			const answer = await beforeDeadline(ask(), Date.now() + waits.firstMs, ctx.signal);
			if (answer === undefined) throw stillLoading(file, waits.firstMs);
			return answer;
		}
		if (readiness === 'silent') {
			// A server with neither outline nor hover may still answer this question.
			const answer = await beforeDeadline(ask(), deadline, ctx.signal);
			if (answer?.length) return answer;
		}
		if (Date.now() + pause > deadline) {
			if (readiness === 'loading') throw stillLoading(file, waitMs);
			silent.add(file.languageId);
			throw noLanguageServer(file, waitMs);
		}
		await sleep(pause, ctx.signal);
		pause = Math.min(pause * 2, MAX_PAUSE_MS);
	}
}

function noLanguageServer(file: Pick<SourceFile, 'display' | 'languageId'>, waitMs: number): ToolError {
	return new ToolError('unavailable', `No language service answered for ${file.display} (language "${file.languageId}") within ${waitMs / 1000} s: VS Code has no extension for this language, or its server is still starting. Nothing was found or ruled out. Search the text with grep instead, or try again in a moment.`);
}

function stillLoading(file: Pick<SourceFile, 'display' | 'languageId'>, waitMs: number): ToolError {
	return new ToolError('timeout', `The ${file.languageId} language server did not answer for ${file.display} within ${waitMs / 1000} s (it is still loading the project, or the question is too big). Try again in a moment, or search the text with grep.`);
}

/** The promise's value, or undefined when the deadline passes first; rejects when the call is cancelled. */
function beforeDeadline<T>(work: Promise<T>, deadline: number, signal: AbortSignal): Promise<T | undefined> {
	if (signal.aborted) return Promise.reject(new CancelledError());
	return new Promise<T | undefined>((resolve, reject) => {
		const timer = setTimeout(() => finish(() => resolve(undefined)), Math.max(0, deadline - Date.now()));
		const onAbort = () => finish(() => reject(new CancelledError()));
		const finish = (settle: () => void) => {
			clearTimeout(timer);
			signal.removeEventListener('abort', onAbort);
			settle();
		};
		signal.addEventListener('abort', onAbort, { once: true });
		work.then(value => finish(() => resolve(value)), error => finish(() => reject(error)));
	});
}

/** Waits `ms`; rejects when the call is cancelled meanwhile. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
	return beforeDeadline(new Promise<void>(() => undefined), Date.now() + ms, signal).then(() => undefined);
}

/**
 * Where a result points, and its lines. Files inside the workspace (or an extra read folder) are
 * shown workspace-relative with context; files outside it (a library's .d.ts, the language's own
 * runtime) are shown with the one line the language server pointed at and nothing more, so a
 * result never becomes a way to read outside the boundary.
 */
export interface Place {
	readonly display: string;
	readonly readable: boolean;
	readonly lines: string[] | undefined;
}

export class SourceLines {
	private readonly places = new Map<string, Promise<Place>>();

	constructor(private readonly ctx: ToolContext) {}

	place(absolute: string): Promise<Place> {
		let place = this.places.get(absolute);
		if (!place) {
			place = this.load(absolute);
			this.places.set(absolute, place);
		}
		return place;
	}

	private async load(absolute: string): Promise<Place> {
		const readable = await this.ctx.boundary.resolve(absolute, 'read').then(() => true, () => false);
		const display = listedName(readable ? this.ctx.boundary.display(absolute) : outsideDisplay(absolute));
		const text = await readSourceText(this.ctx, absolute).catch(() => undefined);
		return { display, readable, lines: text === undefined ? undefined : splitSourceLines(text) };
	}

	/** `path:line: text`, the text cut around the location's character. */
	async line(location: SourceLocation): Promise<string> {
		const place = await this.place(location.path);
		const { line, character } = location.range.start;
		const text = place.lines?.[line];
		return `${place.display}:${line + 1}:${text === undefined || text === '' ? '' : ` ${excerpt(text, character)}`}`;
	}

	/**
	 * The location's first lines (its declaration, up to `maxLines`), numbered like read_file, or its
	 * one line when the file is outside the workspace.
	 */
	async block(location: SourceLocation, maxLines: number): Promise<string[]> {
		const place = await this.place(location.path);
		const first = location.extent?.start.line ?? location.range.start.line;
		const name = location.range.start.line;
		if (!place.lines) return [`${place.display}:${name + 1}`];
		if (!place.readable) return [`${place.display}:${name + 1} (outside the workspace; only this line is shown)`, `${name + 1}\t${excerpt(place.lines[name] ?? '', location.range.start.character)}`];
		const start = Math.min(first, name);
		const last = Math.min(location.extent?.end.line ?? name, start + maxLines - 1, place.lines.length - 1);
		const shown = place.lines.slice(start, last + 1).map((text, i) => `${start + i + 1}\t${excerpt(text, 0)}`);
		const more = (location.extent?.end.line ?? name) - last;
		if (more > 0) shown.push(`[… ${formatCount(more)} more line${more === 1 ? '' : 's'}; read_file path=${place.display} offset=${last + 2} …]`);
		return [`${place.display}:${name + 1}`, ...shown];
	}
}

export interface Placed {
	readonly location: SourceLocation;
	readonly display: string;
	readonly readable: boolean;
}

/** Workspace files first, then outside ones; by path, line and column. */
export async function sortByPlace(lines: SourceLines, locations: readonly SourceLocation[]): Promise<Placed[]> {
	const placed = await Promise.all(locations.map(async location => {
		const place = await lines.place(location.path);
		return { location, display: place.display, readable: place.readable };
	}));
	return placed.sort((a, b) => Number(b.readable) - Number(a.readable)
		|| (a.display < b.display ? -1 : a.display > b.display ? 1 : 0)
		|| a.location.range.start.line - b.location.range.start.line
		|| a.location.range.start.character - b.location.range.start.character);
}

/** Each place once (providers may report one twice). */
export function uniqueLocations(locations: readonly SourceLocation[]): SourceLocation[] {
	const seen = new Set<string>();
	return locations.filter(location => {
		const key = `${location.path}\u0000${location.range.start.line}\u0000${location.range.start.character}`;
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	});
}

/** A path outside the workspace, shortened to what identifies it (`…/node_modules/typescript/lib/lib.es5.d.ts`). */
function outsideDisplay(absolute: string): string {
	const posix = absolute.split(path.sep).join('/');
	const at = posix.lastIndexOf('/node_modules/');
	return at === -1 ? posix : `…${posix.slice(at)}`;
}

/** The line, or a window of it around `character` when it is long. */
function excerpt(text: string, character: number): string {
	const line = text.trimEnd();
	if (line.length <= RESULT_LINE_CHARS) return line;
	const start = Math.max(0, Math.min(character - RESULT_LINE_CHARS / 4, line.length - RESULT_LINE_CHARS));
	const end = start + RESULT_LINE_CHARS;
	return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}

/** The paging footer every list of the code tools ends with. */
export function moreMarker(left: number, nextOffset: number, noun: string): string {
	return `[… ${formatCount(left)} more ${noun}${left === 1 ? '' : 's'}; call again with offset=${nextOffset} …]`;
}

/** `"greet" at src/a.ts:3` for progress lines. */
export function describeTarget(input: PositionInput): string {
	return `"${input.symbol}" at ${input.path}:${input.line}`;
}
