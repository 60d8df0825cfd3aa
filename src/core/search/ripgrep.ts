import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { findOnPath } from '../commands/process';
import { CancelledError, ToolError } from '../results/errors';
import type { Program } from '../sandbox/bwrap';
import { readOnlySearch, SandboxHostOptions, sandboxFailedToStart, searchSandboxFailed } from '../sandbox/runtime';

/**
 * ripgrep for find_files and grep: the binary that ships inside `@vscode/ripgrep` (no download),
 * its arguments, and its output read line by line as it streams, so a caller can stop it (kill it)
 * as soon as it has what it needs.
 */

/** A lazy memo of a fact that never changes while the process runs (where rg is), so it may be module-wide. */
let cachedPath: string | undefined;

/**
 * The rg binary. Found lazily so the module loads where the package is missing (it is external to
 * the bundle). @vscode/ripgrep is an ES module whose whole work is to resolve its platform
 * package's binary; loading it from CommonJS starts Node's ESM loader (tens of ms on a CLI's
 * first search), so the same resolution is made here first, and the package asked only when that
 * finds nothing (a layout npm nested differently).
 */
export function rgPath(): string {
	if (!cachedPath) {
		try {
			cachedPath = platformBinary() ?? (require('@vscode/ripgrep') as { rgPath: string }).rgPath;
		} catch (error) {
			throw new ToolError('io', `The search engine (ripgrep from @vscode/ripgrep) is not available: ${(error as Error).message}. Reinstall the extension.`);
		}
		// Inside a packaged extension the binary lives in node_modules.asar.unpacked.
		cachedPath = cachedPath.replace(/\bnode_modules\.asar\b/, 'node_modules.asar.unpacked');
	}
	return cachedPath;
}

/** What @vscode/ripgrep resolves: `@vscode/ripgrep-<platform>-<arch>/bin/rg`, its arch overridable as npm's is. */
function platformBinary(): string | undefined {
	const arch = process.env.npm_config_arch || process.arch;
	try {
		return require.resolve(`@vscode/ripgrep-${process.platform}-${arch}/bin/${process.platform === 'win32' ? 'rg.exe' : 'rg'}`);
	} catch {
		return undefined;
	}
}

export interface FilterOptions {
	/** Dot-files and dot-folders too. */
	readonly includeHidden: boolean;
	/** Ignore no .gitignore/.ignore rules, and descend `.git`, `node_modules` and excluded folders. */
	readonly includeIgnored: boolean;
	/** Globs files must match (any of them). Without a slash they match the file name at any depth. */
	readonly include?: readonly string[];
	/** Globs of files and folders to skip (relative to the workspace folder when they hold a slash). */
	readonly exclude?: readonly string[];
	/** The person's `files.exclude` / `search.exclude` (skipped unless includeIgnored). */
	readonly searchExcludes?: readonly string[];
}

/** Folders never descended unless ignored files are asked for (whatever .gitignore says). */
export const ALWAYS_SKIPPED = ['.git', 'node_modules'];

/**
 * The filtering arguments shared by `--files` walks and searches. Includes without a slash go
 * through a file type (`--type-add`) rather than `--glob`: ripgrep lets a `--glob` whitelist win
 * over .gitignore, a type does not. Hidden files a whitelist lets through are dropped by
 * `isHiddenBelow` on the way out.
 */
export function filterArgs(options: FilterOptions): string[] {
	const args = ['--no-config', '--no-require-git'];
	if (options.includeHidden) args.push('--hidden');
	if (options.includeIgnored) {
		args.push('--no-ignore');
	} else {
		for (const folder of ALWAYS_SKIPPED) args.push('--glob', `!${folder}`);
		for (const glob of options.searchExcludes ?? []) args.push('--glob', `!${glob}`);
	}
	for (const glob of options.exclude ?? []) args.push('--glob', `!${glob}`);
	const include = (options.include ?? []).map(simplifyGlob);
	const byName = include.filter(isNameGlob);
	const byPath = include.filter(glob => !isNameGlob(glob));
	if (byName.length > 0 && byPath.length === 0) {
		for (const glob of byName) args.push('--type-add', `toolbelt:${glob}`);
		args.push('--type', 'toolbelt');
	} else {
		for (const glob of include) args.push('--glob', glob);
	}
	return args;
}

/** `**\/*.ts` means the same as `*.ts` (any depth), and the latter can use the faster, ignore-aware type filter. */
function simplifyGlob(glob: string): string {
	let simple = glob.trim();
	while (simple.startsWith('**/') && !simple.slice(3).includes('/')) simple = simple.slice(3);
	return simple.startsWith('./') ? simple.slice(2) : simple;
}

function isNameGlob(glob: string): boolean {
	// A ':' would be read as part of a type definition.
	return !glob.includes('/') && !glob.includes(':') && !glob.startsWith('!');
}


export interface RgRun {
	/** Exit code (null when killed). */
	readonly code: number | null;
	/** The start of stderr (bounded). */
	readonly stderr: string;
	/** True when a line handler asked to stop and rg was killed. */
	readonly stopped: boolean;
	/**
	 * rg ran out of the memory it may use (`boundMemory`) and aborted: a line too long to hold
	 * (a giant single-line file). What it printed before is all there is.
	 */
	readonly outOfMemory: boolean;
}

/** What a caller does with rg's standard output, one line (without its '\n') at a time. */
export interface LineHandler {
	/** A line of at most `maxLineBytes`, as bytes (valid during the call only). Return false to stop rg (it is killed at once). */
	line(bytes: Buffer): boolean | void;
	/**
	 * Takes a longer line piece by piece, so that no line is ever held whole. Without it such a
	 * line reaches `line` cut to its first `maxLineBytes`, and the rest is skipped.
	 */
	readonly long?: LongLineHandler;
}

export interface LongLineHandler {
	/** The first `maxLineBytes` of the line. */
	start(head: Buffer): void;
	/** The next piece of it. */
	more(piece: Buffer): void;
	/** The line ended. Return false to stop rg. */
	end(): boolean | void;
}

/**
 * What a caller does with rg's standard output read as text, one line (without its '\n') at a
 * time: cheaper than bytes where the output is many short lines (file paths), decoded a chunk at
 * a time instead of a line at a time. A line longer than `maxLineBytes` characters reaches it cut.
 */
export interface TextLineHandler {
	/** Return false to stop rg (it is killed at once). */
	text(line: string): boolean | void;
	/** What ends a line: '\n' (the default), or '\0' for rg's --null paths, which may hold newlines. */
	readonly separator?: '\n' | '\0';
}

export type RgOptions = RgRunOptions & (LineHandler | TextLineHandler);

interface RgRunOptions {
	readonly cwd: string;
	readonly signal?: AbortSignal;
	/** Longest line held in memory (default 64 KB): what a line costs, whatever rg prints. */
	readonly maxLineBytes?: number;
	/**
	 * Runs rg in the read-only search sandbox, seeing `cwd` and nothing else of the user's, so a
	 * folder swapped for a link to the outside mid-search leads nowhere. Undefined: rg runs plainly
	 * (toolbelt.sandbox.mode "off", or a host without a sandbox). Set, rg also runs plainly when the
	 * sandbox fails to start and the check then finds this host has none (see searchSandboxFailed).
	 */
	readonly confine?: SandboxHostOptions;
	/**
	 * Caps rg's address space (rgMemoryLimit, Linux with prlimit): rg holds a whole line to search
	 * it, so a 200 MB line cost it 432 MB. Over the cap it aborts (`outOfMemory`).
	 */
	readonly boundMemory?: boolean;
}

/**
 * The address space a bounded rg may use: a base for its code, regex caches and buffers, plus its
 * threads' stacks (one per core by default). Measured (rg 14, static): a workspace search needs
 * under 32 MB; a line of up to about a quarter of the base still fits, as its buffer doubles.
 */
export function rgMemoryLimit(cores = os.availableParallelism()): number {
	return RG_MEMORY_BASE + cores * RG_MEMORY_PER_THREAD;
}

const RG_MEMORY_BASE = 128 * 1024 * 1024;
const RG_MEMORY_PER_THREAD = 4 * 1024 * 1024;

/** A file no larger than this has no line that a bounded rg cannot hold: searched when others overflowed. */
export const RG_SAFE_FILE_BYTES = RG_MEMORY_BASE / 4;

/** How rg says it ran out (Rust's allocation failure, then an abort). */
const OUT_OF_MEMORY = /memory allocation of \d+ bytes failed/;

const STDERR_BYTES = 8 * 1024;
const MAX_LINE_BYTES = 64 * 1024;

/**
 * Runs rg and hands each stdout line to the handler as it arrives. Rejects with CancelledError when
 * the signal fires (rg is killed first). The one place rg is started: whatever wraps it (a sandbox)
 * wraps it here, and where that sandbox fails to start on a host found to have none, rg is started
 * a second time, plainly.
 */
export async function runRg(args: readonly string[], options: RgOptions): Promise<RgRun> {
	if (options.signal?.aborted) throw new CancelledError('The search');
	const rg = { file: rgPath(), args };
	const confined = options.confine && await confinedRg(rg, options.cwd, options.confine);
	if (confined) {
		const run = await startRg(options.boundMemory ? memoryBounded(confined) : confined, options);
		if (!run.sandboxFailed) return run;
		await searchSandboxFailed(run.stderr, options.confine);
	}
	return startRg(options.boundMemory ? memoryBounded(rg) : rg, options);
}

/**
 * rg in the search sandbox, entered at the folder's real path: the sandbox shows folders at their
 * real paths only, so a workspace opened through a link would not be there by its linked name
 * (and a plain rg's getcwd() sees the real path too, whose parents' ignore files it reads).
 */
async function confinedRg(rg: Program, folder: string, host: SandboxHostOptions): Promise<Program | undefined> {
	const cwd = await fs.promises.realpath(folder).catch(() => folder);
	return readOnlySearch(rg, { folders: [cwd, ...ancestorIgnoreFiles(cwd), path.dirname(rg.file)], cwd }, host);
}

/** One rg process (perhaps wrapped); `sandboxFailed`: the wrapper's sandbox never started it. */
function startRg(program: Program, options: RgOptions): Promise<RgRun & { sandboxFailed: boolean }> {
	if (options.signal?.aborted) return Promise.reject(new CancelledError('The search'));
	return new Promise((resolve, reject) => {
		// A throw here (spawnRg's) rejects the promise.
		const child = spawnRg(program, options.cwd);
		const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
		const lines = 'text' in options ? new TextLineSplitter(options, maxLineBytes) : new LineSplitter(options, maxLineBytes);
		let stderr = '';
		let printed = false;
		let stopped = false;
		let settled = false;
		const stop = () => {
			if (stopped) return;
			stopped = true;
			child.stdout.removeAllListeners('data');
			child.kill('SIGKILL');
		};
		const onAbort = () => stop();
		options.signal?.addEventListener('abort', onAbort, { once: true });
		child.stdout.on('data', (chunk: Buffer) => {
			printed = true;
			if (!stopped && !lines.push(chunk)) stop();
		});
		child.stderr.setEncoding('utf8');
		child.stderr.on('data', (chunk: string) => {
			if (stderr.length < STDERR_BYTES) stderr += chunk.slice(0, STDERR_BYTES - stderr.length);
		});
		const finish = (code: number | null) => {
			if (settled) return;
			settled = true;
			options.signal?.removeEventListener('abort', onAbort);
			if (!stopped) lines.end();
			if (options.signal?.aborted) reject(new CancelledError('The search'));
			else resolve({ code, stderr, stopped, outOfMemory: !stopped && OUT_OF_MEMORY.test(stderr), sandboxFailed: !printed && code !== 0 && sandboxFailedToStart(stderr) });
		};
		child.on('error', error => {
			if (settled) return;
			settled = true;
			options.signal?.removeEventListener('abort', onAbort);
			reject(new ToolError('io', `Could not start ripgrep: ${error.message}.`));
		});
		child.on('close', finish);
	});
}

/** rg with its output piped; stdin is /dev/null: with a pipe there, rg would search its standard input. */
function spawnRg(program: Program, cwd: string) {
	try {
		return spawn(program.file, [...program.args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
	} catch (error) {
		// Thrown, not emitted: an argument over the system's limit (a pattern or glob of 128 KiB or more).
		if ((error as NodeJS.ErrnoException).code !== 'E2BIG') throw error;
		throw new ToolError('invalid_input', 'The pattern or globs are too long for the system to pass to ripgrep (an argument can hold about 128 KB). Shorten them: search for a distinctive part, or split the search.');
	}
}

/** rg started through prlimit with its address space capped; as it is where there is no prlimit (not Linux). */
function memoryBounded(program: Program): Program {
	const prlimit = process.platform === 'linux' ? findOnPath('prlimit', process.env) : undefined;
	return prlimit ? { file: prlimit, args: [`--as=${rgMemoryLimit()}`, '--', program.file, ...program.args] } : program;
}

/**
 * Cuts a byte stream into lines for a LineHandler, holding at most `maxLineBytes` of any line: a
 * minified bundle or a pathological match can make rg print a line of hundreds of megabytes.
 * Pieces of a line that spans chunks are joined once, when it ends, so a line costs its length,
 * not its length times its chunks.
 */
export class LineSplitter {
	private pending: Buffer[] = [];
	private pendingBytes = 0;
	/** In a line longer than the cap: its head (when no long handler takes it) or true (when one does). */
	private overflow: Buffer | true | undefined;

	constructor(private readonly handler: LineHandler, private readonly maxLineBytes: number) {}

	/** Feeds a chunk; false once the handler asked to stop. */
	push(chunk: Buffer): boolean {
		let start = 0;
		for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
			this.take(chunk.subarray(start, newline), false);
			start = newline + 1;
			if (this.endLine() === false) return false;
		}
		if (start < chunk.length) this.take(chunk.subarray(start), true);
		return true;
	}

	/** The output ended: a last line without a newline still counts. */
	end(): void {
		if (this.pendingBytes > 0 || this.overflow) this.endLine();
	}

	/** `waits`: the piece outlives this chunk (the line goes on in the next one), so it is copied: a view would keep the whole chunk alive. */
	private take(piece: Buffer, waits: boolean): void {
		if (this.overflow === true) {
			this.handler.long!.more(piece);
			return;
		}
		if (this.overflow || piece.length === 0) return;
		const room = this.maxLineBytes - this.pendingBytes;
		if (piece.length <= room) {
			this.pending.push(waits ? Buffer.from(piece) : piece);
			this.pendingBytes += piece.length;
			return;
		}
		this.pending.push(piece.subarray(0, room));
		this.pendingBytes += room;
		const head = this.joined();
		if (this.handler.long) {
			this.overflow = true;
			this.handler.long.start(head);
			this.handler.long.more(piece.subarray(room));
		} else {
			// A copy: the chunks it came from are not kept.
			this.overflow = Buffer.from(head);
		}
	}

	private endLine(): boolean | void {
		const overflow = this.overflow;
		this.overflow = undefined;
		if (overflow === true) return this.handler.long!.end();
		return this.handler.line(overflow ?? this.joined());
	}

	private joined(): Buffer {
		const line = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
		this.pending = [];
		this.pendingBytes = 0;
		return line;
	}
}

/**
 * Cuts a byte stream into text lines for a TextLineHandler: each chunk is decoded whole (a
 * character split between chunks is completed by the next), then split. A line is held up to
 * `maxLineChars`; past that it is handed over cut when it ends, and the rest of it is skipped.
 */
export class TextLineSplitter {
	private readonly decoder = new StringDecoder('utf8');
	/** The start of a line that goes on in the next chunk. */
	private rest = '';
	/** The line is longer than the cap: its head, handed over when it ends. */
	private cut: string | undefined;

	constructor(private readonly handler: TextLineHandler, private readonly maxLineChars: number) {}

	/** Feeds a chunk; false once the handler asked to stop. */
	push(chunk: Buffer): boolean {
		const text = this.decoder.write(chunk);
		let start = 0;
		const separator = this.handler.separator ?? '\n';
		for (let end = text.indexOf(separator); end !== -1; end = text.indexOf(separator, start)) {
			const line = this.cut ?? (start === 0 ? this.rest + text.slice(0, end) : text.slice(start, end));
			this.cut = undefined;
			this.rest = '';
			start = end + 1;
			if (this.handler.text(line.length > this.maxLineChars ? line.slice(0, this.maxLineChars) : line) === false) return false;
		}
		if (this.cut === undefined && start < text.length) {
			this.rest = start === 0 ? this.rest + text : text.slice(start);
			if (this.rest.length > this.maxLineChars) {
				this.cut = this.rest.slice(0, this.maxLineChars);
				this.rest = '';
			}
		}
		return true;
	}

	/** The output ended: a last line without a newline still counts. */
	end(): void {
		const last = this.cut ?? this.rest + this.decoder.end();
		this.cut = undefined;
		this.rest = '';
		if (last.length > 0) this.handler.text(last.slice(0, this.maxLineChars));
	}
}

/** rg's own explanation of bad input (an invalid regex or glob), or undefined for other failures. */
export function inputErrorOf(stderr: string): string | undefined {
	const text = stderr.replace(/^rg: /gm, '').trim();
	if (/regex parse error|error parsing glob|invalid definition|unrecognized|PCRE2/.test(text)) return text;
	return undefined;
}

/** The other complaints rg printed (unreadable files and folders), for a warning line. */
export function warningsOf(stderr: string, max = 3): string[] {
	return stderr.split('\n').map(line => line.replace(/^rg: /, '').trim()).filter(Boolean).slice(0, max);
}

/**
 * Compares paths the way `rg --sort path` walks them: folder by folder, names compared by their
 * code points (UTF-8 byte order), so a sort of collected results and a sorted walk agree. Folder
 * by folder is the same as one pass over the whole paths with '/' sorting before every other
 * character (a name that ends first is the smaller), which needs no splitting.
 */
export function comparePaths(a: string, b: string): number {
	if (a === b) return 0;
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) {
		const x = a.charCodeAt(i);
		const y = b.charCodeAt(i);
		if (x !== y) return rankOf(x) - rankOf(y);
	}
	return a.length - b.length;
}

/**
 * A string whose plain order (`<`, compared natively) is comparePaths' order of the paths: a sort
 * of thousands of paths compares them tens of thousands of times, and comparePaths' loop over their
 * long shared prefixes cost a first find_files call tens of milliseconds before it was compiled.
 * '/' becomes the lowest code unit (no path holds a NUL); from U+D800 up, each unit becomes its rank.
 */
export function pathSortKey(relative: string): string {
	if (!HIGH_UNITS.test(relative)) return relative.replaceAll('/', '\0');
	let key = '';
	for (let i = 0; i < relative.length; i++) {
		const code = relative.charCodeAt(i);
		key += String.fromCharCode(code === 0x2f ? 0 : rankOf(code));
	}
	return key;
}

const HIGH_UNITS = /[\ud800-\uffff]/;

/** A code unit's place in the order: '/' first, then code points (surrogates, i.e. astral characters, after all of the BMP). */
function rankOf(code: number): number {
	if (code === 0x2f) return -1;
	if (code >= 0xd800 && code <= 0xdfff) return code + 0x2000;
	return code >= 0xe000 ? code - 0x800 : code;
}

/** True when a path, below the folder searched, goes through a dot-file or dot-folder. */
export function isHiddenBelow(relative: string, below: string): boolean {
	const rest = below === '.' || below === '' ? relative : relative.startsWith(`${below}/`) ? relative.slice(below.length + 1) : relative;
	return HIDDEN_PART.test(rest);
}

const HIDDEN_PART = /(^|\/)\.(?!\.?(\/|$))/;

/** A path rg printed (relative to its cwd, perhaps with `./`) as a clean relative POSIX path. */
export function cleanRelative(printed: string): string {
	const posix = path.sep === '\\' ? printed.replace(/\\/g, '/') : printed;
	return posix.startsWith('./') ? posix.slice(2) : posix;
}

/**
 * The ignore files of the folders above `folder` (rg honours a parent's .gitignore): shown in the
 * search sandbox too, so a workspace folder inside a repository skips what it skipped before.
 */
function ancestorIgnoreFiles(folder: string): string[] {
	const found: string[] = [];
	for (let current = path.dirname(path.resolve(folder)); ; current = path.dirname(current)) {
		for (const name of ['.gitignore', '.ignore', '.rgignore']) {
			const candidate = path.join(current, name);
			if (fs.existsSync(candidate)) found.push(candidate);
		}
		if (path.dirname(current) === current) return found;
	}
}
