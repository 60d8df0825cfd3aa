import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Access } from '../policy/boundary';
import { fromNodeError, ToolError } from '../results/errors';

/**
 * Race-free file access. The boundary checks a path before a call uses it, but a folder on that
 * path can be swapped for a symlink to somewhere else in between. So every open is checked after
 * the fact: what the descriptor is, not what the path looked like before.
 *
 * - Linux: `/proc/self/fd/N` is the open file itself. Its link text is the file's real path now,
 *   and a path through it (`/proc/self/fd/N/name`, N a folder) is looked up in that very folder,
 *   as openat(2) would: entries are created, renamed and removed in the folder that was checked,
 *   whatever its path does meanwhile.
 * - Elsewhere (macOS: fcntl F_GETPATH is not reachable from Node; Windows): the real path is taken
 *   with realpath and accepted only when it names the descriptor's file (same dev/ino); entries
 *   are addressed by that real path, and each step is checked again after it. That narrows the
 *   window to the step itself but does not close it: a swap timed inside one step can still lead a
 *   read outside, or leave an empty temp file or folder there (the README says so).
 */

/** Checks where something opened really is; the Boundary is one (see Boundary.assertReachable). */
export interface Reach {
	assertReachable(real: string, access: Access, display: string): void;
}

const PROC_FD = '/proc/self/fd';
const DELETED = ' (deleted)';
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_DIRECTORY = fs.constants.O_DIRECTORY ?? 0;
/** A FIFO must not block the open: it is refused right after (O_NONBLOCK changes nothing for regular files). */
const READ_FLAGS = O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0);
/** A temp file is always new and never reached through a link. */
export const CREATE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

/** A lazy memo of a fact that never changes while the process runs, so it may be module-wide. */
let procFd: boolean | undefined;

/** Whether `/proc/self/fd` names this process's descriptors (Linux with /proc mounted). Checked once. */
function hasProcFd(): boolean {
	if (procFd === undefined) {
		procFd = false;
		if (process.platform === 'linux') {
			try {
				const fd = fs.openSync('/', O_RDONLY);
				try {
					procFd = fs.readlinkSync(`${PROC_FD}/${fd}`) === '/';
				} finally {
					fs.closeSync(fd);
				}
			} catch {
				// No /proc: the portable checks apply.
			}
		}
	}
	return procFd;
}

/** Tests: `false` runs the portable checks (those of macOS and Windows) on Linux; `undefined` detects again. */
export function useProcFd(value: boolean | undefined): void {
	procFd = value;
}

/**
 * Where an open descriptor really is, or undefined when that cannot be told (not a path, or —
 * without /proc — realpath now names another file than the one opened).
 *
 * Synchronous: on Linux a look at /proc (no disk), elsewhere a few metadata calls. A check made
 * for every file of a change set costs more as a round trip through the I/O threads than the
 * call itself, and there it would queue behind other files' flushes.
 */
export function realPathOfDescriptor(fd: number, opened: string, stat: fs.Stats): string | undefined {
	if (hasProcFd()) {
		const link = readlinkOrUndefined(`${PROC_FD}/${fd}`);
		// pipe:[…], anon_inode:[…] and the like are not paths.
		if (link === undefined || !path.isAbsolute(link)) return undefined;
		if (!link.endsWith(DELETED) || sameFile(link, stat)) return link;
		// Removed since it was opened: the kernel marks the last place it had.
		return link.slice(0, -DELETED.length);
	}
	const real = realpathOrUndefined(opened);
	if (real === undefined || !sameFile(real, stat)) return undefined;
	// A swap back and forth between realpath and stat could make them agree: the path must resolve the same after.
	return realpathOrUndefined(opened) === real ? real : undefined;
}

function readlinkOrUndefined(at: string): string | undefined {
	try {
		return fs.readlinkSync(at);
	} catch {
		return undefined;
	}
}

function realpathOrUndefined(at: string): string | undefined {
	try {
		return fs.realpathSync.native(at);
	} catch {
		return undefined;
	}
}

function sameFile(at: string, stat: fs.Stats): boolean {
	const now = fs.statSync(at, { throwIfNoEntry: false });
	return now !== undefined && now.dev === stat.dev && now.ino === stat.ino;
}

/** What reading an opened file takes: a FileHandle's calls, over a descriptor opened in place (see openVerified). */
export interface ReadHandle {
	/** -1 once closed, as a FileHandle's: a number kept past the close never reads another file. */
	readonly fd: number;
	read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number; buffer: Buffer }>;
	stat(): Promise<fs.Stats>;
	/** Closes once; later calls do nothing. */
	close(): Promise<void>;
}

/**
 * A descriptor with a FileHandle's reading calls. Opened and closed on this thread: for a file
 * read whole from the page cache, the open and the close as round trips through the I/O threads
 * cost more than the reads, and on a busy machine each wakes a thread that may take the CPU from
 * this one (a 200-file patch opens every file twice). Reads go through the threads unless the
 * caller reads in place (files.ts readAt).
 */
class Descriptor implements ReadHandle {
	private open: number;

	constructor(fd: number) {
		this.open = fd;
	}

	get fd(): number {
		return this.open;
	}

	read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number; buffer: Buffer }> {
		return new Promise((resolve, reject) => fs.read(this.open, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve({ bytesRead, buffer }))));
	}

	async stat(): Promise<fs.Stats> {
		return fs.fstatSync(this.open);
	}

	async close(): Promise<void> {
		const fd = this.open;
		if (fd === -1) return;
		this.open = -1;
		fs.closeSync(fd);
	}
}

type ReadOpen = (at: string) => ReadHandle;
const openDescriptor: ReadOpen = at => new Descriptor(fs.openSync(at, READ_FLAGS));
let readOpen: ReadOpen = openDescriptor;

/** Tests: `wrap` sees every open of a file to read (its path, and the real open to call); undefined restores the real one. */
export function watchReadOpens(wrap: ((at: string, open: ReadOpen) => ReadHandle) | undefined): void {
	readOpen = wrap ? at => wrap(at, openDescriptor) : openDescriptor;
}

export interface OpenedFile {
	readonly handle: ReadHandle;
	readonly stat: fs.Stats;
	/** Where the file really is, checked against the boundary. */
	readonly real: string;
}

/**
 * Opens a path for reading and checks, before a byte is read, that the descriptor leads where
 * `access` may reach (see Reach; without one, anywhere). The caller closes the handle. Any kind of
 * file is returned: see openForReading for regular files only.
 */
export async function openVerified(absolute: string, display: string, reach: Reach | undefined, access: Access): Promise<OpenedFile> {
	let handle: ReadHandle;
	try {
		// O_NONBLOCK: opening a FIFO returns at once, so the open may be made on this thread.
		handle = readOpen(absolute);
	} catch (error) {
		throw fromNodeError(error, display);
	}
	try {
		// The descriptor's stat and real path in place (see realPathOfDescriptor): two round trips fewer per file.
		const stat = fs.fstatSync(handle.fd);
		const real = realPathOfDescriptor(handle.fd, absolute, stat);
		if (real === undefined) throw changedWhileOpening(display);
		reach?.assertReachable(real, access, display);
		return { handle, stat, real };
	} catch (error) {
		await handle.close().catch(() => undefined);
		throw error;
	}
}

/**
 * openVerified for the content of a regular file: a folder, FIFO, device or socket is refused
 * after the open (which never blocks), before anything is read.
 */
export async function openForReading(absolute: string, display: string, reach: Reach | undefined, access: Access = 'read'): Promise<OpenedFile> {
	const file = await openVerified(absolute, display, reach, access);
	if (file.stat.isFile()) return file;
	await file.handle.close().catch(() => undefined);
	if (file.stat.isDirectory()) throw new ToolError('is_directory', `${display} is a directory, not a file. Use list_dir to see what it holds, and give the path of a file.`);
	throw new ToolError('io', `${display} is not a regular file (a device, socket or pipe); these tools neither read nor change such files. Give the path of a regular file.`);
}

/** Runs `work` on a file opened by openForReading, and closes it. */
export async function withFileForReading<T>(absolute: string, display: string, reach: Reach | undefined, access: Access, work: (file: OpenedFile) => Promise<T>): Promise<T> {
	const file = await openForReading(absolute, display, reach, access);
	try {
		return await work(file);
	} finally {
		await file.handle.close().catch(() => undefined);
	}
}

/**
 * A path that opens the very file a descriptor holds: `/proc/self/fd/N` on Linux, its checked real
 * path elsewhere. For calls that take a path, not a descriptor (copyFile keeps its cheap clone).
 */
export function pathOfOpened(file: OpenedFile): string {
	return hasProcFd() ? `${PROC_FD}/${file.handle.fd}` : file.real;
}

export interface PinOptions {
	/** Checked against the folder's real path once opened (default: for writing). */
	readonly reach?: Reach;
	readonly access?: Access;
	/** The real path the folder must have: anything else is refused. */
	readonly expect?: string;
	/** What to open (default: `expect`). */
	readonly at?: string;
	/** Refuse a symlink in the last place of `at` (a folder found by listing its parent). */
	readonly noFollow?: boolean;
}

/**
 * A folder opened and checked: its entries are addressed through it, not through the path that
 * led to it (see the top of this file).
 */
export class PinnedFolder {
	private constructor(private readonly handle: fs.promises.FileHandle | undefined, readonly real: string) {}

	/** Opens a folder and checks what was opened before anything is done in it. */
	static async open(display: string, options: PinOptions): Promise<PinnedFolder> {
		const at = options.at ?? options.expect;
		if (at === undefined) throw new Error('PinnedFolder.open needs `at` or `expect`');
		if (process.platform === 'win32') {
			// Folders cannot be opened as descriptors there: the real path is checked as a path.
			const real = await fs.promises.realpath(at).catch(error => { throw fromNodeError(error, display); });
			return PinnedFolder.checked(undefined, real, display, options);
		}
		let handle: fs.promises.FileHandle;
		try {
			handle = await fs.promises.open(at, O_RDONLY | O_DIRECTORY | (options.noFollow ? O_NOFOLLOW : 0));
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			// O_NOFOLLOW met a symlink: ELOOP (EMLINK on FreeBSD); macOS may say ENOTDIR, taken just below.
			if (options.noFollow && (code === 'ELOOP' || code === 'EMLINK')) throw changedWhileOpening(display);
			// The folder was there when the path was resolved: gone now means moved meanwhile.
			if (options.expect !== undefined && (code === 'ENOENT' || code === 'ENOTDIR')) throw folderChanged(display, options.expect, 'is gone');
			throw fromNodeError(error, display);
		}
		try {
			const stat = fs.fstatSync(handle.fd);
			const real = realPathOfDescriptor(handle.fd, at, stat);
			if (real === undefined) throw changedWhileOpening(display);
			return PinnedFolder.checked(handle, real, display, options);
		} catch (error) {
			await handle.close().catch(() => undefined);
			throw error;
		}
	}

	private static checked(handle: fs.promises.FileHandle | undefined, real: string, display: string, options: PinOptions): PinnedFolder {
		options.reach?.assertReachable(real, options.access ?? 'write', display);
		if (options.expect !== undefined && real !== options.expect) throw folderChanged(display, options.expect, `now leads to ${real}`);
		return new PinnedFolder(handle, real);
	}

	/** A path to an entry of this very folder: through its descriptor on Linux, by real path elsewhere. */
	entry(name: string): string {
		return this.handle && hasProcFd() ? `${PROC_FD}/${this.handle.fd}/${name}` : path.join(this.real, name);
	}

	/** The path that opens the folder itself (for readdir). */
	get self(): string {
		return this.handle && hasProcFd() ? `${PROC_FD}/${this.handle.fd}` : this.real;
	}

	/** Opens a sub-folder through this one, never following a symlink in its place. */
	child(name: string, display: string, options: Pick<PinOptions, 'reach' | 'access'>): Promise<PinnedFolder> {
		return PinnedFolder.open(display, { ...options, at: this.entry(name), expect: path.join(this.real, name), noFollow: true });
	}

	/** Where the folder is now: renaming it (inside the workspace) moves what it holds along. */
	whereNow(): string | undefined {
		if (!this.handle) return realpathOrUndefined(this.real);
		try {
			return realPathOfDescriptor(this.handle.fd, this.real, fs.fstatSync(this.handle.fd));
		} catch {
			return undefined;
		}
	}

	/** Flushes the folder's entries (a rename into it) to disk, where the platform can. */
	async sync(): Promise<void> {
		await this.handle?.sync().catch(() => undefined);
	}

	async close(): Promise<void> {
		await this.handle?.close().catch(() => undefined);
	}
}

/** Runs `work` in a pinned folder, and closes it. */
export async function inPinnedFolder<T>(display: string, options: PinOptions, work: (folder: PinnedFolder) => Promise<T>): Promise<T> {
	const folder = await PinnedFolder.open(display, options);
	try {
		return await work(folder);
	} finally {
		await folder.close();
	}
}

/**
 * `mkdir -p` that cannot be led astray: from the nearest existing folder, each missing level is
 * made inside the folder checked before it and opened without following links, then checked in
 * turn. Returns the deepest folder, pinned, and the real paths of the folders made (outermost
 * first); on failure, what it made is removed again.
 */
export async function makeFolders(realFolder: string, display: string, reach: Reach | undefined): Promise<{ folder: PinnedFolder; created: string[] }> {
	const missing: string[] = [];
	let existing = realFolder;
	while (!(await fs.promises.stat(existing).then(stat => stat.isDirectory(), () => false)) && path.dirname(existing) !== existing) {
		missing.unshift(path.basename(existing));
		existing = path.dirname(existing);
	}
	let folder = await PinnedFolder.open(display, { reach, expect: existing });
	const created: string[] = [];
	try {
		for (const name of missing) {
			// Another writer of the same change set may have made it first: that is fine, it is checked all the same.
			const made = await fs.promises.mkdir(folder.entry(name)).then(() => true, (error: NodeJS.ErrnoException) => {
				if (error.code === 'EEXIST') return false;
				throw fromNodeError(error, display);
			});
			if (made) created.push(path.join(folder.real, name));
			const child = await folder.child(name, display, { reach });
			await folder.close();
			folder = child;
		}
		return { folder, created };
	} catch (error) {
		await folder.close();
		await removeEmptyFolders(created, reach);
		throw error;
	}
}

/** Removes folders (real paths, outermost first) innermost first, each through its checked parent, if still empty. */
export async function removeEmptyFolders(created: readonly string[], reach: Reach | undefined): Promise<void> {
	for (const folder of [...created].reverse()) {
		await inPinnedFolder(folder, { reach, expect: path.dirname(folder) }, parent => fs.promises.rmdir(parent.entry(path.basename(folder))))
			.catch(() => undefined);
	}
}

function folderChanged(display: string, folder: string, how: string): ToolError {
	return new ToolError('stale_write', `The folder of ${display} changed while the call ran: ${folder} ${how}. Nothing was written there. Check the path with list_dir, then try again.`);
}

function changedWhileOpening(display: string): ToolError {
	return new ToolError('io', `${display} changed while it was being opened (a folder or symlink on its path was replaced). Nothing was read or written. Check the path with list_dir, then try again.`);
}
