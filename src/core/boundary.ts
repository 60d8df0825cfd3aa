import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import picomatch from 'picomatch';
import { BoundaryError, BoundaryRule, fromNodeError, ToolError } from './errors';
import { contains, relativeTo, toPosix } from './paths';

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
	/** Globs relative to a workspace folder, e.g. '.git/**', '**\/.env*'. */
	protectedPaths: string[];
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
}

/** Symlink hops followed by hand for dangling links, as Linux's own limit (MAXSYMLINKS). */
const MAX_LINK_HOPS = 40;

/** The file systems where `.GIT/config` is `.git/config`. */
const CASE_INSENSITIVE = process.platform === 'win32' || process.platform === 'darwin';

export class Boundary {
	private readonly places: readonly RootPlace[];
	private readonly extras: readonly Place[];
	private readonly protectedMatchers: readonly ((relative: string) => boolean)[];

	/**
	 * Takes the roots as real paths already; use `Boundary.create`, which resolves them, unless the
	 * real paths are known (`realRoots` / `realExtras` in the same order as the options' lists).
	 */
	constructor(private readonly options: BoundaryOptions, realRoots?: readonly string[], realExtras?: readonly string[]) {
		this.places = options.roots.map((root, index) => {
			const lexical = path.resolve(root.path);
			return { root, path: lexical, real: realRoots?.[index] ?? lexical };
		});
		this.extras = absoluteExtras(options.additionalReadPaths).map((extra, index) => ({ path: extra, real: realExtras?.[index] ?? extra }));
		this.protectedMatchers = options.protectedPaths.map(protectedMatcher);
	}

	/** Resolves the real paths of the roots once (a root may itself be a symlink). */
	static async create(options: BoundaryOptions): Promise<Boundary> {
		const realRoots = await Promise.all(options.roots.map(root => realOrSelf(path.resolve(root.path))));
		const realExtras = await Promise.all(absoluteExtras(options.additionalReadPaths).map(realOrSelf));
		return new Boundary(options, realRoots, realExtras);
	}

	get roots(): readonly WorkspaceRoot[] {
		return this.options.roots;
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
		const { real, exists } = await realPathOf(absolute, input);
		const realRoot = this.rootPlaceOf(real, true);
		if (!realRoot) this.checkRealOutside(input, absolute, real, access);
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
			if (access === 'write') throw readOnly(input, real === absolute ? undefined : real);
			return;
		}
		const where = this.rootPlaceOf(absolute) ? 'outside the workspace' : 'outside the read-only folder it is in';
		throw new BoundaryError('symlink_escape', input, `${quote(input)} goes through a symlink to ${real}, ${where} (rule: symlink_escape). Symlinks may only point inside the workspace; use the target's own path if it is inside ${this.describeRoots()}, or ask the user.`);
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
		if (this.protectedMatchers.length === 0) return false;
		const absolute = this.absoluteOf(absolutePath);
		const candidates: string[] = [];
		for (const place of this.places) {
			const relative = relativeInside(place, absolute);
			if (relative !== undefined) candidates.push(toPosix(relative));
		}
		if (candidates.length === 0) candidates.push(toPosix(absolute).replace(/^([a-zA-Z]:)?\/+/, ''));
		return candidates.some(relative => this.protectedMatchers.some(matches => matches(relative)));
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

function quote(input: string): string {
	return JSON.stringify(input);
}

function absoluteExtras(paths: readonly string[]): string[] {
	return paths.filter(extra => extra !== '' && path.isAbsolute(extra)).map(extra => path.resolve(extra));
}

function containsEither(place: Place, absolute: string): boolean {
	return contains(place.path, absolute) || contains(place.real, absolute);
}

function relativeInside(place: Place, absolute: string): string | undefined {
	return relativeTo(place.path, absolute) ?? relativeTo(place.real, absolute);
}

function protectedMatcher(glob: string): (relative: string) => boolean {
	// `build/` names the folder `build` (picomatch would match nothing with the slash).
	const matches = picomatch(glob.replace(/(.)\/+$/, '$1'), { dot: true, nocase: CASE_INSENSITIVE });
	// A folder above a protected glob's fixed part (`.vscode` for `.vscode/*.json`) holds protected
	// files: moving or deleting it is a change to them.
	const base = picomatch.scan(glob).base;
	return relative => matches(relative) || inMatchedFolder(relative, matches) || (base !== '' && (relative === '' || base === relative || base.startsWith(`${relative}/`)));
}

/** Whether a folder above the path matches: a glob naming a folder (`secrets`, `build/`) protects what it holds, as in .gitignore. */
function inMatchedFolder(relative: string, matches: (relative: string) => boolean): boolean {
	for (let slash = relative.indexOf('/'); slash !== -1; slash = relative.indexOf('/', slash + 1)) {
		if (matches(relative.slice(0, slash))) return true;
	}
	return false;
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
 */
async function realPathOf(absolute: string, input: string, hops = 0): Promise<{ real: string; exists: boolean }> {
	try {
		return { real: await fs.realpath(absolute), exists: true };
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') throw fromNodeError(error, input);
	}
	const link = await fs.lstat(absolute).then(stat => stat.isSymbolicLink(), () => false);
	if (link) {
		if (hops >= MAX_LINK_HOPS) throw new ToolError('io', `${quote(input)} goes through too many symlinks (a loop?). Use a path without symlinks.`);
		const parent = await realPathOf(path.dirname(absolute), input, hops + 1);
		const target = path.resolve(parent.real, await fs.readlink(absolute));
		return { real: (await realPathOf(target, input, hops + 1)).real, exists: false };
	}
	const parent = path.dirname(absolute);
	if (parent === absolute) return { real: absolute, exists: false };
	const resolved = await realPathOf(parent, input, hops);
	return { real: path.join(resolved.real, path.basename(absolute)), exists: false };
}
