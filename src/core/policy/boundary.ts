import * as fs from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';
import { BoundaryError, BoundaryRule, fromNodeError, ToolError } from '../results/errors';
import { contains, relativeTo, toPosix } from '../files/paths';
import { FileSystem, nodeFileSystem } from '../files/fileSystem';

/**
 * Every path a tool touches goes through here (TOOLS.md principle 1). Paths are checked twice:
 * lexically (what the model wrote, `..` and all) and by real path (symlinks followed), and both
 * must land inside a workspace folder, or inside a read-only extra root for reads.
 */

export interface WorkspaceRoot {
	readonly name: string;
	/** Absolute. */
	readonly path: string;
}

export interface BoundaryOptions {
	/** Workspace folders; the first is the default for relative paths. */
	roots: WorkspaceRoot[];
	fileAccess: 'workspace' | 'unrestricted';
	/** Absolute; read-only extra roots. Relative entries are ignored (relative to what?). */
	additionalReadPaths: string[];
	/** Globs relative to a workspace folder, e.g. '**\/.git/**', '**\/.env*'; a glob naming a folder covers what it holds. */
	protectedPaths: string[];
	/**
	 * Absolute folders the tools never reach, even inside a workspace folder: Toolbelt's own storage
	 * (backups, other workspaces' command logs). An additionalReadPaths entry inside one (this
	 * workspace's command logs) stays readable.
	 */
	privatePaths?: string[];
	/**
	 * Where the folders' files are when they are not on disk (a virtual workspace): paths are then
	 * the POSIX paths of the folders' URIs, and there are no symlinks to follow, so a path is its own
	 * real path and whether it exists is asked of this file system.
	 */
	fileSystem?: FileSystem;
}

export type Access = 'read' | 'write';

export interface ResolvedPath {
	readonly input: string;
	/** Lexical absolute path: what the tool opens or writes. */
	readonly absolute: string;
	/** Real path, or for a missing path the real path of the nearest existing parent joined with the rest. */
	readonly real: string;
	/** The folder it is in; undefined for additionalReadPaths and for unrestricted paths outside. */
	readonly root: WorkspaceRoot | undefined;
	/** What the model sees (see Boundary.display). */
	readonly display: string;
	readonly exists: boolean;
	readonly isProtected: boolean;
}

/** A place paths may live in: its path as configured and its real path (equal unless it is a symlink). */
interface Place {
	readonly path: string;
	readonly real: string;
}

interface RootPlace extends Place {
	readonly root: WorkspaceRoot;
	/** Whether the file system matches names here regardless of case (protected globs follow it). */
	readonly caseInsensitive: boolean;
}

/** What `Boundary.create` finds out about the configured folders, in the order of the options' lists. */
export interface ResolvedFolders {
	readonly realRoots?: readonly string[];
	readonly realExtras?: readonly string[];
	readonly caseInsensitive?: readonly boolean[];
}

/** Symlink hops followed by hand for dangling links, as Linux's own limit (MAXSYMLINKS). */
const MAX_LINK_HOPS = 40;

/**
 * The platforms whose usual file systems match names regardless of case (`.GIT/config` is
 * `.git/config`): the default where a folder's name cannot tell (see probeCaseInsensitive).
 */
const PLATFORM_CASE_INSENSITIVE = process.platform === 'win32' || process.platform === 'darwin';

export class Boundary {
	private readonly places: readonly RootPlace[];
	private readonly extras: readonly Place[];
	private readonly privates: readonly Place[];
	/** Per place, then per glob; compiled when first asked (see protectedMatchers). */
	private compiledMatchers: readonly (readonly Matcher[])[] | undefined;
	/** For paths outside every folder: matched by their whole path, with the platform's case rule. */
	private compiledOutsideMatchers: readonly Matcher[] | undefined;

	/**
	 * Takes the folders as they are configured; use `Boundary.create`, which finds their real paths
	 * and case rule, unless those are known (`folders`).
	 */
	constructor(private readonly options: BoundaryOptions, folders: ResolvedFolders = {}) {
		this.places = options.roots.map((root, index) => {
			const lexical = path.resolve(root.path);
			return { root, path: lexical, real: folders.realRoots?.[index] ?? lexical, caseInsensitive: folders.caseInsensitive?.[index] ?? PLATFORM_CASE_INSENSITIVE };
		});
		this.extras = absoluteExtras(options.additionalReadPaths).map((extra, index) => ({ path: extra, real: folders.realExtras?.[index] ?? extra }));
		this.privates = absoluteExtras(options.privatePaths ?? []).map(folder => ({ path: folder, real: folder }));
	}

	/**
	 * The protected globs, compiled on the first check of a path: a call that never resolves one
	 * (a search of the whole workspace) does not pay for compiling them, a good part of its first
	 * call in a fresh process.
	 */
	private get protectedMatchers(): readonly (readonly Matcher[])[] {
		return (this.compiledMatchers ??= this.places.map(place => this.options.protectedPaths.map(glob => protectedMatcher(glob, place.caseInsensitive))));
	}

	private get outsideMatchers(): readonly Matcher[] {
		return (this.compiledOutsideMatchers ??= this.options.protectedPaths.map(glob => protectedMatcher(glob, PLATFORM_CASE_INSENSITIVE)));
	}

	/** Resolves the real paths of the folders once (a root may itself be a symlink) and how each matches case. */
	static async create(options: BoundaryOptions): Promise<Boundary> {
		// Nothing of a virtual workspace is on this disk: looking its paths up here would find other files.
		if (options.fileSystem && !options.fileSystem.local) return new Boundary(options, { caseInsensitive: options.roots.map(() => false) });
		const realRoots = await Promise.all(options.roots.map(root => realOrSelf(path.resolve(root.path))));
		const realExtras = await Promise.all(absoluteExtras(options.additionalReadPaths).map(realOrSelf));
		const caseInsensitive = await Promise.all(realRoots.map(probeCaseInsensitive));
		const realPrivates = await Promise.all(absoluteExtras(options.privatePaths ?? []).map(realOrSelf));
		return new Boundary({ ...options, privatePaths: [...new Set([...(options.privatePaths ?? []), ...realPrivates])] }, { realRoots, realExtras, caseInsensitive });
	}

	get roots(): readonly WorkspaceRoot[] {
		return this.options.roots;
	}

	/**
	 * Where the workspace's files are: the Node adapter on disk, the editor's file system for a
	 * virtual workspace (tools branch on `fileSystem.local`).
	 */
	get fileSystem(): FileSystem {
		return this.options.fileSystem ?? nodeFileSystem;
	}

	private get virtual(): boolean {
		return !this.fileSystem.local;
	}

	private async virtualPathOf(absolute: string): Promise<{ real: string; exists: boolean }> {
		const exists = await this.fileSystem.stat(absolute).then(() => true, () => false);
		return { real: absolute, exists };
	}

	private get unrestricted(): boolean {
		return this.options.fileAccess === 'unrestricted';
	}

	/** Checks a path the model gave; throws BoundaryError naming the rule it breaks. */
	async resolve(input: string, access: Access): Promise<ResolvedPath> {
		checkSyntax(input);
		const relative = !path.isAbsolute(input);
		if (relative && this.places.length === 0) throw noWorkspace(input);
		const absolute = relative ? this.resolveRelative(input) : path.resolve(input);
		const lexicalRoot = this.rootPlaceOf(absolute);
		if (!lexicalRoot) this.checkOutside(input, absolute, access, relative ? 'escapes_workspace' : 'outside_workspace');
		const { real, exists } = this.virtual ? await this.virtualPathOf(absolute) : await realPathOf(absolute, input);
		// Resolving drops a trailing slash: without this, writing "dir/" would create a file named dir.
		if (access === 'write' && !exists && /[\\/]$/.test(input)) throw folderPath(input);
		const realRoot = this.rootPlaceOf(real, true);
		if (!realRoot) this.checkRealOutside(input, absolute, real, access);
		this.checkNotPrivate(input, absolute, access);
		this.checkNotPrivate(input, real, access);
		return {
			input,
			absolute,
			real,
			root: (lexicalRoot ?? realRoot)?.root,
			display: this.display(absolute),
			exists,
			isProtected: this.isProtected(absolute) || this.isProtected(real),
		};
	}

	/** Relative paths go against the first folder, or the one named by the first segment in multi-root. */
	private resolveRelative(input: string): string {
		const [first, ...rest] = input.split(/[\\/]/);
		const named = this.places.length > 1 ? this.places.find(place => place.root.name === first) : undefined;
		return named ? path.resolve(named.path, ...rest) : path.resolve(this.places[0].path, input);
	}

	/** A path lexically outside every folder: fine when unrestricted, or for reads in an extra root. */
	private checkOutside(input: string, absolute: string, access: Access, rule: BoundaryRule): void {
		if (this.unrestricted) return;
		if (this.extras.some(extra => containsEither(extra, absolute))) {
			if (access === 'write') throw readOnly(input);
			return;
		}
		if (this.places.length === 0) throw noWorkspace(input);
		throw rule === 'escapes_workspace'
			? new BoundaryError(rule, input, `${quote(input)} leaves the workspace through ".." (rule: escapes_workspace). Use a path inside ${this.describeRoots()}.`)
			: new BoundaryError(rule, input, `${quote(input)} is outside the workspace (rule: outside_workspace). Only paths inside ${this.describeRoots()} can be used${this.describeExtras(access)}; give a path relative to the workspace folder.`);
	}

	/** The path is (lexically) allowed, but symlinks take it somewhere else. */
	private checkRealOutside(input: string, absolute: string, real: string, access: Access): void {
		if (this.unrestricted) return;
		if (this.extras.some(extra => contains(extra.real, real) || contains(extra.path, real))) {
			if (access === 'write') throw readOnly(input, real);
			return;
		}
		const where = this.rootPlaceOf(absolute) ? 'outside the workspace' : 'outside the read-only folder it is in';
		throw new BoundaryError('symlink_escape', input, `${quote(input)} goes through a symlink to ${real}, ${where} (rule: symlink_escape). Symlinks may only point inside the workspace; use the target's own path if it is inside ${this.describeRoots()}, or ask the user.`);
	}

	/**
	 * Checks where something opened really is (the real path of its descriptor), after it was opened:
	 * a folder or symlink on its path may have been swapped since `resolve` looked. Throws unless the
	 * place may be used for `access` (`display` names the path in the message).
	 */
	assertReachable(real: string, access: Access, display: string): void {
		this.checkNotPrivate(display, real, access);
		if (this.unrestricted || this.rootPlaceOf(real, true)) return;
		if (access === 'read' && this.extras.some(extra => contains(extra.real, real) || contains(extra.path, real))) return;
		throw new BoundaryError('swapped_during_call', display, `${quote(display)} led to ${real} when it was opened, outside the workspace (rule: swapped_during_call): a folder or symlink on its path changed while the call ran. Nothing was read or written there. Check the path with list_dir; use a path inside ${this.describeRoots()}.`);
	}

	/** Toolbelt's own storage is out of reach, except this workspace's command logs for reading. */
	private checkNotPrivate(input: string, absolute: string, access: Access): void {
		if (!this.privates.some(folder => contains(folder.path, absolute))) return;
		if (access === 'read' && this.extras.some(extra => containsEither(extra, absolute))) return;
		throw new BoundaryError('private_storage', input, `${quote(input)} is inside Toolbelt's own storage (backups and command logs of workspaces) (rule: private_storage). Tools do not read or change it; only this workspace's command logs can be read, at the paths run_command gives.`);
	}

	/** The innermost folder holding a path, by configured path or by real path (`realOnly` for real paths). */
	private rootPlaceOf(absolute: string, realOnly = false): RootPlace | undefined {
		let best: RootPlace | undefined;
		for (const place of this.places) {
			const holds = realOnly ? contains(place.real, absolute) : containsEither(place, absolute);
			if (holds && (!best || place.path.length > best.path.length)) best = place;
		}
		return best;
	}

	/**
	 * What the model sees for a path: workspace-relative POSIX (`src/a.ts`, `.` for the folder) with one
	 * folder; `folderName/rest` (`folderName` for the folder) with several; the absolute path otherwise.
	 */
	display(absolutePath: string): string {
		const absolute = this.absoluteOf(absolutePath);
		const place = this.rootPlaceOf(absolute);
		if (!place) return absolute;
		const relative = toPosix(relativeInside(place, absolute) ?? '');
		if (this.places.length === 1) return relative || '.';
		return relative ? `${place.root.name}/${relative}` : place.root.name;
	}

	/**
	 * Whether a path matches `protectedPaths`, relative to every folder holding it. Paths outside
	 * every folder are matched by their whole path, so `**`-globs such as `**\/.env*` still apply.
	 * This looks only at the path given; `resolve` also checks the real path, so a symlink onto
	 * `.git/config` counts.
	 */
	isProtected(absolutePath: string): boolean {
		// The globs for paths outside are compiled only when such a path comes (a compile costs far more than a match).
		if (this.options.protectedPaths.length === 0) return false;
		const absolute = this.absoluteOf(absolutePath);
		let inside = false;
		for (const [index, place] of this.places.entries()) {
			const relative = relativeInside(place, absolute);
			if (relative === undefined) continue;
			inside = true;
			const posix = toPosix(relative);
			if (this.protectedMatchers[index].some(matches => matches(posix))) return true;
		}
		// Stryker disable next-line Regex: a drive letter, or slashes left after path.normalize, occur only on Windows.
		const whole = toPosix(absolute).replace(/^([a-zA-Z]:)?\/+/, '');
		return !inside && this.outsideMatchers.some(matches => matches(whole));
	}

	/** Normalises a path we found ourselves; a relative one is taken against the first folder, never the process's cwd. */
	private absoluteOf(input: string): string {
		if (path.isAbsolute(input) || this.places.length === 0) return path.normalize(input);
		return path.resolve(this.places[0].path, input);
	}

	private describeRoots(): string {
		const names = this.places.map(place => (this.places.length === 1 ? place.path : `${place.root.name} (${place.path})`));
		return names.length === 1 ? `the workspace folder ${names[0]}` : `the workspace folders ${names.join(', ')}`;
	}

	private describeExtras(access: Access): string {
		if (access === 'write' || this.extras.length === 0) return '';
		return ` or, for reading, inside ${this.extras.map(extra => extra.path).join(', ')}`;
	}
}

function checkSyntax(input: string): void {
	if (input.trim() === '') {
		throw new BoundaryError('empty', input, 'The path is empty (rule: empty). Give a workspace-relative path such as "src/index.ts", or "." for the workspace folder.');
	}
	if (input.includes('\0')) {
		throw new BoundaryError('nul_byte', input, `The path ${quote(input)} contains a NUL byte (rule: nul_byte). Remove it and try again.`);
	}
	if (input.startsWith('~')) {
		// Expanding it would make the home folder reachable by default; paths are workspace-relative.
		throw new BoundaryError('home_shorthand', input, `The path ${quote(input)} starts with "~" (rule: home_shorthand). "~" is not expanded: use a workspace-relative path such as "src/index.ts" (write "./~name" for a file whose name starts with "~").`);
	}
}

function noWorkspace(input: string): BoundaryError {
	return new BoundaryError('no_workspace', input, `No workspace folder is open, so ${quote(input)} cannot be resolved (rule: no_workspace). Ask the user to open a folder, then try again.`);
}

function readOnly(input: string, real?: string): BoundaryError {
	const via = real ? ` (through a symlink to ${real})` : '';
	return new BoundaryError('read_only', input, `${quote(input)}${via} is in a read-only location from toolbelt.additionalReadPaths (rule: read_only). It can be read but not changed; write inside the workspace instead.`);
}

function folderPath(input: string): BoundaryError {
	const folder = input.replace(/[\\/]+$/, '');
	return new BoundaryError('folder_path', input, `${quote(input)} ends with a slash, so it names a folder, and there is none there to change (rule: folder_path). Give the path of a file, such as ${quote(`${folder}/index.ts`)}: folders are created for the files written in them.`);
}

function quote(input: string): string {
	return JSON.stringify(input);
}

function absoluteExtras(paths: readonly string[]): string[] {
	return paths.filter(extra => path.isAbsolute(extra)).map(extra => path.resolve(extra));
}

function containsEither(place: Place, absolute: string): boolean {
	return contains(place.path, absolute) || contains(place.real, absolute);
}

function relativeInside(place: Place, absolute: string): string | undefined {
	return relativeTo(place.path, absolute) ?? relativeTo(place.real, absolute);
}

type Matcher = (relative: string) => boolean;

/**
 * One protected glob, read as everything that checks protected paths reads it (the boundary
 * here, the sandbox's walk for protected paths). `caseInsensitive` follows the file system (see
 * probeCaseInsensitive).
 */
export interface ProtectedGlob {
	/** The glob as matched: trailing slashes dropped (`foo/` names the folder `foo`). */
	readonly pattern: string;
	/**
	 * A workspace-relative POSIX path is protected: it, or a folder above it, matches. A glob that
	 * names a folder (`foo`, `foo/`, `foo/**`) protects what it holds.
	 */
	covers(relative: string): boolean;
	/**
	 * The path itself matches, folders above it not tested: what `covers` says in a walk that
	 * entered no covered folder (policy.ts findProtected), without testing every ancestor again.
	 */
	matches(relative: string): boolean;
	/**
	 * A folder above or at the glob's fixed part (`.vscode` for `.vscode/*.json`; none when the glob
	 * has no fixed part): moving or deleting it is a change to the protected files it may hold.
	 */
	leadsTo(relative: string): boolean;
	/** A folder below which a match may still be found: on the way to the fixed part, or inside it. */
	mayHold(relative: string): boolean;
}

export function protectedGlob(glob: string, caseInsensitive: boolean): ProtectedGlob {
	const pattern = glob.replace(/\/+$/, '');
	if (pattern === '') return { pattern, covers: () => false, matches: () => false, leadsTo: () => false, mayHold: () => false };
	const matches = remembered(picomatch(pattern, { dot: true, nocase: caseInsensitive }));
	const fold = (text: string) => (caseInsensitive ? text.toLowerCase() : text);
	const base = fold(picomatch.scan(pattern).base);
	const leadsTo = (relative: string) => {
		const folded = fold(relative);
		return base !== '' && (folded === '' || base === folded || base.startsWith(`${folded}/`));
	};
	return {
		pattern,
		covers: relative => {
			if (matches(relative)) return true;
			for (let slash = relative.indexOf('/'); slash !== -1; slash = relative.indexOf('/', slash + 1)) {
				if (matches(relative.slice(0, slash))) return true;
			}
			return false;
		},
		matches,
		leadsTo,
		mayHold: relative => base === '' || leadsTo(relative) || fold(relative).startsWith(`${base}/`),
	};
}

/** Paths whose answer one glob keeps (then it starts over): a bound on the memory, not on the walk. */
const REMEMBERED_PATHS = 4096;

/**
 * A glob's answers kept by path: the boundary asks about every file of a patch several times (its
 * path and real path, when staged and again when committed), and about the same folders above
 * them for each; a picomatch call costs far more than a look-up, most of all in a fresh process.
 */
function remembered(test: (relative: string) => boolean): (relative: string) => boolean {
	const known = new Map<string, boolean>();
	return relative => {
		let answer = known.get(relative);
		if (answer === undefined) {
			if (known.size >= REMEMBERED_PATHS) known.clear();
			answer = test(relative);
			known.set(relative, answer);
		}
		return answer;
	};
}

/**
 * Whether a workspace-relative POSIX path is protected by one glob, for the boundary: what the
 * glob covers, and the folders leading to its fixed part.
 */
export function protectedMatcher(glob: string, caseInsensitive: boolean): Matcher {
	const rule = protectedGlob(glob, caseInsensitive);
	return relative => rule.covers(relative) || rule.leadsTo(relative);
}

/**
 * Whether names under a folder match regardless of case, probed once per workspace folder: the
 * folder's own name, with its letters' case flipped, is looked up in its parent and must lead to
 * the same folder (dev/ino). This asks the file system, not the platform: a case-sensitive APFS
 * volume on macOS or a casefolded ext4 folder on Linux is seen as it is. It tests the parent's
 * rule, which is the folder's own unless the folder is a mount point; when no name on the way
 * has a letter, the platform's usual rule applies.
 */
export async function probeCaseInsensitive(real: string): Promise<boolean> {
	for (let current = real; path.dirname(current) !== current; current = path.dirname(current)) {
		const name = path.basename(current);
		const flipped = [...name].map(char => (char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase())).join('');
		if (flipped === name) continue;
		const [self, other] = await Promise.all([fs.stat(current), fs.stat(path.join(path.dirname(current), flipped))].map(stat => stat.catch(() => undefined)));
		if (!self) break;
		return other !== undefined && other.dev === self.dev && other.ino === self.ino;
	}
	return PLATFORM_CASE_INSENSITIVE;
}

async function realOrSelf(absolute: string): Promise<string> {
	try {
		return await fs.realpath(absolute);
	} catch {
		return absolute;
	}
}

/**
 * The real path of a path that may not exist: the nearest existing ancestor's real path joined
 * with the rest. A dangling symlink on the way is followed by hand, since writing through it
 * would create its target.
 *
 * The path of an existing file is asked synchronously: realpath(3) looks each folder up in
 * memory, so a round trip through the I/O threads costs more than the call, and a change set
 * resolves every path twice (planned, then committed).
 */
export async function realPathOf(absolute: string, input: string, hops = 0): Promise<{ real: string; exists: boolean }> {
	try {
		return { real: realpathSync.native(absolute), exists: true };
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') throw fromNodeError(error, input);
	}
	const link = await fs.lstat(absolute).then(stat => stat.isSymbolicLink(), () => false);
	if (link) {
		if (hops >= MAX_LINK_HOPS) throw new ToolError('io', `${quote(input)} goes through too many symlinks (a loop?). Use a path without symlinks.`);
		const parent = await realPathOf(path.dirname(absolute), input, hops + 1);
		const text = await fs.readlink(absolute).catch(() => undefined);
		// No longer a link (it changed since lstat): resolve it again as it is now.
		if (text === undefined) return realPathOf(absolute, input, hops + 1);
		const target = path.resolve(parent.real, text);
		return { real: (await realPathOf(target, input, hops + 1)).real, exists: false };
	}
	const parent = path.dirname(absolute);
	if (parent === absolute) return { real: absolute, exists: false };
	const resolved = await realPathOf(parent, input, hops);
	return { real: path.join(resolved.real, path.basename(absolute)), exists: false };
}
