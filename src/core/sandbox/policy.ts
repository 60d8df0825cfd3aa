import { Dirent, existsSync, lstatSync, readdirSync, Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import picomatch from 'picomatch';
import { protectedGlob } from '../policy/boundary';
import { contains } from '../files/paths';

/**
 * What a sandboxed process may see and change, as plain data that bwrap.ts (Linux) and
 * seatbelt.ts (macOS) each turn into their own form. Paths are real paths on the host; inside the
 * sandbox everything sits at the same path as outside.
 */

export type MountAccess = 'write' | 'read' | 'hide';

export interface Mount {
	readonly path: string;
	readonly access: MountAccess;
	/** For `hide`: a folder is replaced by an empty one, a file by an empty file. */
	readonly directory?: boolean;
	/**
	 * For `read`: the path does not exist yet and must not be created (a protected `.env`). bwrap
	 * needs something there to mount on (placeholders.ts makes an empty file or folder and removes it
	 * afterwards); sandbox-exec denies the path as it is.
	 */
	readonly missing?: 'file' | 'directory';
}

export interface SandboxPolicy {
	/** `host`: the whole file system, read-only, beneath the mounts; `empty`: nothing but the mounts. */
	readonly base: 'host' | 'empty';
	readonly mounts: readonly Mount[];
	readonly network: boolean;
	/** A private folder on the host for the process's temp files (its /tmp on Linux, its TMPDIR). */
	readonly tmpDir?: string;
}

/**
 * Read-protected by default, on top of `toolbelt.sandbox.denyRead`: credentials and keys, browser
 * profiles (cookies, saved passwords), and the sockets of agents that hold keys or run anything
 * (ssh/gpg agents and the desktop bus live under /run/user; docker's socket is root for the asking).
 */
export const DEFAULT_DENY_READ: readonly string[] = [
	'~/.ssh', '~/.aws', '~/.gnupg', '~/.config/gh', '~/.netrc', '~/.docker', '~/.kube',
	'~/.git-credentials', '~/.config/gcloud', '~/.azure', '~/.password-store', '~/.local/share/keyrings',
	'~/.mozilla', '~/.config/google-chrome', '~/.config/chromium', '~/.config/BraveSoftware', '~/.config/microsoft-edge',
	'~/snap/firefox', '~/snap/chromium',
	'~/Library/Keychains', '~/Library/Cookies', '~/Library/Safari', '~/Library/Application Support/Google/Chrome',
	'~/Library/Application Support/Firefox', '~/Library/Application Support/Chromium', '~/Library/Application Support/BraveSoftware',
	'~/Library/Application Support/Microsoft Edge',
	'/run/user', '/run/docker.sock', '/var/run/docker.sock',
];

/** Entries a protected-path walk looks at before it gives up (a huge tree is cut, and says so). */
const PROTECTED_SCAN_LIMIT = 50_000;

const CASE_INSENSITIVE_PLATFORMS: readonly NodeJS.Platform[] = ['darwin', 'win32'];

export interface CommandPolicyInput {
	/** Workspace folders: writable. */
	readonly roots: readonly string[];
	/** Globs relative to a workspace folder; their existing matches stay read-only. */
	readonly protectedPaths: readonly string[];
	/** Added to DEFAULT_DENY_READ; absolute or `~/…` (checked by settings). */
	readonly denyRead: readonly string[];
	readonly network: boolean;
	readonly home: string;
	/** The folder holding every workspace's Toolbelt storage: hidden. */
	readonly storageRoot?: string;
	/** This workspace's command logs: readable, even inside the hidden storage. */
	readonly logDir?: string;
	readonly tmpDir: string;
	readonly platform?: NodeJS.Platform;
	readonly scanLimit?: number;
	/** This workspace's protected-path walks so far (see ProtectedScanCache). */
	readonly scanCache?: ProtectedScanCache;
}

/** The policy of run_command and exec_command (README, "Sandbox"). */
export interface CommandPolicy {
	readonly policy: SandboxPolicy;
	/** The walk for protected paths saw the whole workspace. */
	readonly scanComplete: boolean;
	/** Globs whose matches cannot all be guarded before they exist (see namedPlaces). */
	readonly unguarded: readonly string[];
	/**
	 * Protected paths that exist now and did not when the policy was made (what a command created
	 * where no mount could guard it), by real path; a second walk, skipped when every glob was
	 * guarded or the first walk stopped at its bound.
	 */
	createdSince(): Promise<string[]>;
}

export async function commandPolicy(input: CommandPolicyInput): Promise<CommandPolicy> {
	const roots = await realRoots(input.roots);
	const scanOptions = scanOptionsOf(input);
	const named = input.protectedPaths.map(namedPlaces);
	const unguarded = named.filter(each => !each.complete).map(each => each.glob);
	// The walk yields between slices of folders: the other look-ups' I/O goes on meanwhile.
	const [scan, hidden, logDir, guarded] = await Promise.all([
		findProtected(roots, input.protectedPaths, scanOptions),
		existingHidden([...DEFAULT_DENY_READ, ...input.denyRead, ...(input.storageRoot ? [input.storageRoot] : [])], input.home),
		input.logDir ? realOrUndefined(input.logDir) : undefined,
		Promise.all(roots.flatMap(root => named.flatMap(each => each.places).map(place => guardPlace(root, place)))),
	]);
	const readOnly = new Map<string, Mount>();
	for (const mount of [...scan.paths.map(found => ({ path: found, access: 'read' as const })), ...guarded]) {
		if (mount && !readOnly.has(mount.path)) readOnly.set(mount.path, mount);
	}
	const mounts: Mount[] = [
		...roots.map(root => ({ path: root, access: 'write' as const })),
		...readOnly.values(),
		...hidden,
		...(logDir ? [{ path: logDir, access: 'read' as const }] : []),
	];
	return {
		policy: { base: 'host', mounts, network: input.network, tmpDir: input.tmpDir },
		scanComplete: scan.complete,
		unguarded,
		createdSince: async () => {
			// A walk cut short sees a different part of the tree each time: no comparison to make.
			if (unguarded.length === 0 || !scan.complete) return [];
			const before = new Set(scan.paths);
			return (await findProtected(roots, input.protectedPaths, scanOptions)).paths.filter(found => !before.has(found));
		},
	};
}

/** What a command's walk and its warm-up need to know of the command's policy. */
type ScanInput = Pick<CommandPolicyInput, 'roots' | 'protectedPaths' | 'platform' | 'scanLimit' | 'scanCache'>;

/**
 * Starts the walk for protected paths that a command about to be approved will need, when this
 * workspace's cache has none for these globs: while the person reads the request, the folders are
 * listed, and the command's own walk, which still looks at every folder once the command is
 * approved, then reads only the ones changed. Resolves when that walk is done.
 */
export async function warmProtectedScan(input: ScanInput): Promise<void> {
	const cache = input.scanCache;
	if (!cache) return;
	const roots = await realRoots(input.roots);
	const options = scanOptionsOf(input);
	if (!cache.cold(scanSignature(input.protectedPaths, options.nocase))) return;
	await findProtected(roots, input.protectedPaths, options);
}

async function realRoots(roots: readonly string[]): Promise<string[]> {
	return (await Promise.all(roots.map(realOrUndefined))).filter((root): root is string => root !== undefined);
}

function scanOptionsOf(input: ScanInput): ScanOptions {
	return {
		nocase: CASE_INSENSITIVE_PLATFORMS.includes(input.platform ?? process.platform),
		limit: input.scanLimit ?? PROTECTED_SCAN_LIMIT,
		cache: input.scanCache,
	};
}

/** A place inside a workspace folder that a protected glob names before anything is there. */
export interface NamedPlace {
	/** Workspace-relative, POSIX. */
	readonly relative: string;
	/** Made as a folder when missing (`.git` of `**\/.git/**`); otherwise whatever is made there is blocked. */
	readonly directory: boolean;
}

/**
 * Where a protected glob's matches can be named before they exist, so that a sandboxed command
 * cannot create them: a literal path (`.env`, `.vscode/settings.json`), the top-level instance of
 * `**\/name` and `**\/name/**` (`.git`), the top-level name a `**\/name*` starts with (`.env` of
 * `**\/.env*`), and the whole folder holding a one-level pattern (`.vscode` of `.vscode/*.json`).
 * `complete`: these places hold every possible match; otherwise (`*.pem`, `src/**\/.env*`, a
 * nested `.env`) what a command creates is found after it ran (findProtected, before and after).
 */
export function namedPlaces(glob: string): { glob: string; places: NamedPlace[]; complete: boolean } {
	const trimmed = glob.replace(/\/+$/, '');
	const folder = trimmed.endsWith('/**');
	const stem = folder ? trimmed.slice(0, -3) : trimmed;
	const directory = folder || trimmed !== glob;
	if (stem === '' || stem.startsWith('/') || stem.split('/').includes('..')) return { glob, places: [], complete: false };
	const literal = (text: string) => text !== '' && !picomatch.scan(text).isGlob;
	if (literal(stem)) return { glob, places: [{ relative: stem, directory }], complete: true };
	if (stem.startsWith('**/')) {
		const rest = stem.slice(3);
		if (literal(rest)) return { glob, places: [{ relative: rest, directory }], complete: false };
		const prefix = rest.slice(0, -1);
		if (rest.endsWith('*') && !folder && literal(prefix) && !prefix.includes('/')) return { glob, places: [{ relative: prefix, directory: false }], complete: false };
		return { glob, places: [], complete: false };
	}
	const { base, glob: pattern } = picomatch.scan(stem);
	if (base !== '' && !pattern.includes('/') && !pattern.includes('**')) return { glob, places: [{ relative: base, directory: true }], complete: true };
	return { glob, places: [], complete: false };
}

/**
 * The read-only mount that guards a named place in one workspace folder: the place itself when it
 * exists, else its first missing component (`.git` for `.git/hooks`), made as a placeholder by the
 * runtime. Nothing when a file or link is on the way (nothing can be created below a file; a link
 * leads to a place guarded where it is).
 */
async function guardPlace(root: string, place: NamedPlace): Promise<Mount | undefined> {
	const parts = place.relative.split('/').filter(Boolean);
	let current = root;
	for (const [index, part] of parts.entries()) {
		const next = path.join(current, part);
		const last = index === parts.length - 1;
		const stat = await fs.lstat(next).catch(() => undefined);
		if (!stat) return { path: next, access: 'read', missing: last && !place.directory ? 'file' : 'directory' };
		if (stat.isSymbolicLink()) return undefined;
		if (last) return { path: next, access: 'read' };
		if (!stat.isDirectory()) return undefined;
		current = next;
	}
	return undefined;
}

/**
 * The policy a search runs under (ripgrep for grep and find_files): the searched folders
 * read-only and nothing else of the user's, no network, nothing writable. A link swapped in
 * during the search then leads nowhere. `programDirs` holds the program and what it loads.
 */
export async function readOnlySearchPolicy(folders: readonly string[], programDirs: readonly string[]): Promise<SandboxPolicy> {
	const real = (await Promise.all([...folders, ...programDirs].map(realOrUndefined))).filter((found): found is string => found !== undefined);
	// By their own names: with a merged /usr, /bin and /lib64 are links that programs are started through.
	const system = SYSTEM_READS.filter(entry => existsSync(entry));
	return { base: 'empty', mounts: [...new Set([...real, ...system])].map(found => ({ path: found, access: 'read' })), network: false };
}

/** What a program needs to start: the loader, shared libraries, their cache. */
const SYSTEM_READS = ['/usr', '/lib', '/lib64', '/bin', '/etc/ld.so.cache'];

/** `~/x` against the home folder; other entries as they are. */
function expandHome(entry: string, home: string): string {
	return entry === '~' ? home : /^~[\\/]/.test(entry) ? path.join(home, entry.slice(2)) : entry;
}

/** The deny entries that exist, by real path (a symlinked ~/.ssh hides its target), each once. */
async function existingHidden(entries: readonly string[], home: string): Promise<Mount[]> {
	const seen = new Map<string, Mount>();
	await Promise.all(entries.map(async entry => {
		const real = await realOrUndefined(expandHome(entry, home));
		if (!real || seen.has(real)) return;
		const stat = await fs.stat(real).catch(() => undefined);
		if (stat) seen.set(real, { path: real, access: 'hide', directory: stat.isDirectory() });
	}));
	return [...seen.values()];
}

interface ScanOptions {
	readonly nocase: boolean;
	readonly limit: number;
	/** What earlier walks of this workspace saw, reused where a folder is unchanged. */
	readonly cache?: ProtectedScanCache;
}

/**
 * What a walk found in one folder: matches by absolute path (matching symlinks apart, resolved on
 * every walk since their targets can move), and the subfolders to enter.
 */
interface FolderScan {
	readonly entries: number;
	readonly found: readonly string[];
	readonly links: readonly string[];
	readonly folders: readonly FolderRef[];
}

/** A folder to walk: its workspace folder, its path relative to that (POSIX) and its absolute path. */
interface FolderRef {
	readonly root: string;
	readonly folder: string;
	readonly absolute: string;
}

/** A folder as lstat saw it before its entries were read: any change to its entries changes this. */
interface FolderState {
	readonly dev: number;
	readonly ino: number;
	readonly mtimeMs: number;
	readonly ctimeMs: number;
}

/** A folder's scan and the state it was read in. */
interface Remembered {
	readonly state: FolderState;
	readonly scan: FolderScan;
}

/**
 * The protected-path walks of one workspace remember each folder they read, with its state, so
 * that the next walk (the one after the command, the next command's) reads only the folders whose
 * entries changed and lstats the rest: a folder's mtime and ctime change whenever an entry is
 * added, removed or renamed, and ctime cannot be set back (a command's `touch -d` resets mtime
 * only). Both are stamped from a coarse clock (a few ms on ext4, 2 s on FAT), so a folder changed
 * in the last SETTLE_MS before it was read may change again with the same stamps: such a listing is
 * not reused. What a walk remembers replaces what the one before it did, so it holds at most the
 * folders of one bounded walk.
 */
export class ProtectedScanCache {
	private rules = '';
	private folders = new Map<string, Remembered>();
	/** The last walk started, and when it is done (failed or not). */
	private last?: { readonly rules: string; readonly done: Promise<void> };

	/** `settleMs`: how long a folder must have been unchanged when read for its listing to be reused. */
	constructor(private readonly settleMs = SETTLE_MS) {}

	/**
	 * Runs a walk for `rules` once the one before it for the same rules is done (whose listings it
	 * then reuses, rather than read every folder alongside it). Walks for other rules do not wait.
	 */
	queue<T>(rules: string, walk: () => Promise<T>): Promise<T> {
		const before = this.last?.rules === rules ? this.last.done : Promise.resolve();
		const result = before.then(walk);
		this.last = { rules, done: result.then(() => undefined, () => undefined) };
		return result;
	}

	/** Whether no walk for `rules` has left anything to reuse or is under way. */
	cold(rules: string): boolean {
		return this.last?.rules !== rules && !(this.rules === rules && this.folders.size > 0);
	}

	/** Starts a walk for these rules: what an earlier walk for other rules saw is of no use. */
	begin(rules: string): ReadonlyMap<string, Remembered> {
		if (rules !== this.rules) {
			this.rules = rules;
			this.folders = new Map();
		}
		return this.folders;
	}

	/** Whether a listing read at `readAt` (ms) of a folder in `state` may be reused later. */
	settled(state: FolderState, readAt: number): boolean {
		return readAt - Math.max(state.mtimeMs, state.ctimeMs) >= this.settleMs;
	}

	/** What this walk saw becomes what the next one reuses (walks that overlap each leave a valid set). */
	end(rules: string, seen: Map<string, Remembered>): void {
		if (rules === this.rules) this.folders = seen;
	}
}

/** See ProtectedScanCache: more than FAT's 2 s timestamps, and any local file system's clock tick. */
const SETTLE_MS = 3_000;

function sameState(a: FolderState, b: FolderState): boolean {
	return a.ino === b.ino && a.dev === b.dev && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

/**
 * Existing matches of the protected globs below the roots, by real path: a folder matched by
 * `x/**` is returned whole and not entered. Symlinks are not followed; one that matches counts by
 * its target when that is inside a root (outside, the target is read-only anyway). The walk stops
 * after the folder where it passed `limit` entries: `complete` says whether it saw everything.
 */
export function findProtected(roots: readonly string[], globs: readonly string[], options: ScanOptions): Promise<{ paths: string[]; complete: boolean }> {
	const signature = scanSignature(globs, options.nocase);
	// Queued at once, in the caller's turn: a warm-up's `cold` check and its walk cannot be split.
	return options.cache ? options.cache.queue(signature, () => walkProtected(roots, globs, options, signature)) : walkProtected(roots, globs, options, signature);
}

/** What a ProtectedScanCache keeps walks apart by: listings are reused only for the same globs and case rule. */
function scanSignature(globs: readonly string[], nocase: boolean): string {
	return `${nocase}\0${globs.join('\0')}`;
}

async function walkProtected(roots: readonly string[], globs: readonly string[], options: ScanOptions, signature: string): Promise<{ paths: string[]; complete: boolean }> {
	const rules = entryRules(globs, options.nocase);
	const cache = options.cache;
	const known = cache?.begin(signature) ?? new Map<string, Remembered>();
	const seen = new Map<string, Remembered>();
	const found = new Set<string>();
	let budget = options.limit;
	// Breadth first, each folder lstat'ed and, when changed, read, both synchronously: a few µs,
	// where an async call costs several times that in CPU (and a first walk's thousands of
	// readdirs twice the time, even with the thread pool's four at once). Others run between slices
	// of SLICE_MS. A remembered folder's subfolders come with their paths made: an unchanged tree
	// costs its lstat calls and little else (no strings or objects per folder to collect).
	let batch: readonly FolderRef[] = roots.map(root => ({ root, folder: '', absolute: root }));
	let sliceStart = performance.now();
	while (batch.length > 0) {
		const next: FolderRef[] = [];
		for (const { root, folder, absolute } of batch) {
			const stat = folderStat(absolute);
			const remembered = stat && known.get(absolute);
			let scan = EMPTY_SCAN;
			if (remembered && sameState(remembered.state, stat)) {
				seen.set(absolute, remembered);
				scan = remembered.scan;
			} else if (stat) {
				const state: FolderState = { dev: stat.dev, ino: stat.ino, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs };
				const readAt = Date.now();
				const read = scanFolder(root, folder, rules);
				if (read && cache?.settled(state, readAt)) seen.set(absolute, { state, scan: read });
				scan = read ?? EMPTY_SCAN;
			}
			budget -= scan.entries;
			for (const match of scan.found) found.add(match);
			for (const link of scan.links) {
				const target = await realOrUndefined(link);
				if (target && roots.some(other => contains(other, target))) found.add(target);
			}
			if (budget < 0) {
				cache?.end(signature, seen);
				return { paths: [...found], complete: false };
			}
			for (const subfolder of scan.folders) next.push(subfolder);
			if (performance.now() - sliceStart >= SLICE_MS) {
				await new Promise(resolve => setImmediate(resolve));
				sliceStart = performance.now();
			}
		}
		batch = next;
	}
	cache?.end(signature, seen);
	return { paths: [...found], complete: true };
}

/** How long a protected-path walk keeps the thread before it lets other work run. */
const SLICE_MS = 8;

const EMPTY_SCAN: FolderScan = { entries: 0, found: [], links: [], folders: [] };

/** The folder's lstat, or undefined when it is gone, unreadable, or no longer a folder (a link swapped in is not followed). */
function folderStat(absolute: string): Stats | undefined {
	try {
		// Stamps as float ms (µs precision): a reused listing's stamps are seconds older than any change since.
		const stat = lstatSync(absolute, { throwIfNoEntry: false });
		return stat?.isDirectory() ? stat : undefined;
	} catch {
		return undefined;
	}
}

/**
 * One folder's entries against the rules. Only the entry's own path is tested: the walk entered
 * no folder that a rule covers, so no folder above it matches.
 */
function scanFolder(root: string, folder: string, rules: EntryRules): FolderScan | undefined {
	let entries: Dirent[];
	try {
		entries = readdirSync(path.join(root, folder), { withFileTypes: true });
	} catch {
		return undefined;
	}
	const found: string[] = [];
	const links: string[] = [];
	const folders: FolderRef[] = [];
	for (const entry of entries) {
		const relative = folder ? `${folder}/${entry.name}` : entry.name;
		const matched = rules.matches(relative);
		if (entry.isDirectory()) {
			if (matched) found.push(path.join(root, relative));
			else if (rules.mayHold(relative)) folders.push({ root, folder: relative, absolute: `${root}${path.sep}${relative}` });
		} else if (matched) {
			(entry.isSymbolicLink() ? links : found).push(path.join(root, relative));
		}
	}
	return { entries: entries.length, found, links, folders };
}

/** The protected globs as a walk asks them about each entry it lists. */
interface EntryRules {
	/** Whether any glob matches the workspace-relative path. */
	matches(relative: string): boolean;
	/** Whether any glob could match something inside that folder. */
	mayHold(relative: string): boolean;
}

/**
 * The globs for a walk, whose tens of thousands of entries almost all match none: each entry is
 * first put to the globs' bare regular expressions (what picomatch's matcher runs after its own
 * checks, which a plain test skips), and only one that passes to the full matchers, so that the
 * answer stays theirs. The matchers' memo of paths is of no use here (a walk asks about each path
 * once) and is not filled by the many misses.
 */
function entryRules(globs: readonly string[], nocase: boolean): EntryRules {
	const rules = globs.map(glob => protectedGlob(glob, nocase));
	// picomatch's matcher also takes an input equal to the glob's own text, whatever the regex says;
	// it builds its regex for Windows' slashes on Windows, as these are built.
	const literals = new Set(rules.map(rule => rule.pattern));
	const expressions = rules.filter(rule => rule.pattern !== '').map(rule => picomatch.makeRe(rule.pattern, { dot: true, nocase, windows: process.platform === 'win32' }));
	return {
		matches: relative => (literals.has(relative) || expressions.some(expression => expression.test(relative))) && rules.some(rule => rule.matches(relative)),
		mayHold: relative => rules.some(rule => rule.mayHold(relative)),
	};
}

async function realOrUndefined(absolute: string): Promise<string | undefined> {
	try {
		return await fs.realpath(absolute);
	} catch {
		return undefined;
	}
}
