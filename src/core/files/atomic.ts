import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { type Boundary, realPathOf } from '../policy/boundary';
import type { CheckedFiles, FileChange, WrittenVersions } from '../context';
import { BoundaryError, CancelledError, fromNodeError, ToolError } from '../results/errors';
import { readWhole } from './files';
import { byteParts, FileBytes } from './splicedBytes';
import { DiskSplice } from './diskBytes';
import { forEachLimited } from './inParallel';
import { isProcessAlive } from '../processAlive';
import { CREATE_FLAGS, inPinnedFolder, makeFolders, PinnedFolder, realPathOfDescriptor, removeEmptyFolders, withFileForReading } from './verifiedOpen';

/**
 * Atomic writes: the new bytes go to a temp file in the same folder (same file system, so the
 * rename cannot turn into a copy), are flushed to disk, and then renamed over the target. A reader
 * or a crash sees the old file or the new one, never a mix. A temp left by a killed process is
 * removed by the next write to the same file.
 *
 * The looks around each temp and rename (lstat, access, fstat, the descriptor's path) are
 * synchronous calls: each returns at once, while as a round trip through Node's four I/O threads
 * it costs several times the call and waits behind the other temps' flushes. What makes or fills
 * an entry goes to those threads (the temp's creation, its writes, its flush): those wait for the
 * disk's journal, and side by side the waits overlap; on a busy disk, made in turn on this thread,
 * a 200-file set took longer. The renames, made in turn anyway, are synchronous too.
 */

/** `.name.tb<pid>-<random>.tmp`: the pid lets a later write tell a dead writer's temp from a live one. */
const TEMP_PATTERN = /^\.(.*)\.tb(\d+)-[0-9a-f]{8}\.tmp$/;
/** Room left in a 255-byte file name for the temp decoration. */
const MAX_BASE_CHARS = 200;

/** The name of a new temp for a file named `name`, in the same folder. */
function tempNameFor(name: string): string {
	return `.${name.slice(0, MAX_BASE_CHARS)}.tb${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
}

export interface AtomicWriteOptions {
	/** Permission bits for a new file (an existing file keeps its own). */
	readonly mode?: number;
	readonly signal?: AbortSignal;
	/**
	 * Where the write must land: every folder and file it opens is checked against it after the
	 * open. Without it, only the intended folder is checked (it must be the one the path led to).
	 */
	readonly boundary?: Boundary;
	/** How messages name the file (default: its path). */
	readonly display?: string;
}

/**
 * Where a path's bytes land: the real path of its folder and the name in it. Writes follow a
 * symlink (its target changes, the link stays); removals take the entry itself.
 */
interface Place {
	readonly folder: string;
	readonly name: string;
	readonly display: string;
}

/** `known`: real paths the caller resolved for writing just before (a write's own path, followed). */
async function placeOf(target: string, display: string, boundary: Boundary | undefined, follow: boolean, known?: ReadonlyMap<string, string>): Promise<Place> {
	const at = follow ? target : path.dirname(target);
	// What the folder really is is checked when it is opened (Folders.pin), whoever resolved the path.
	const real = (follow ? known?.get(target) : undefined)
		?? (boundary ? (await boundary.resolve(at, 'write')).real : (await realPathOf(at, display)).real);
	return follow ? { folder: path.dirname(real), name: path.basename(real), display } : { folder: real, name: path.basename(target), display };
}

/**
 * The folders one write (or change set) works in, each opened and checked once and kept open until
 * it is done: a temp is renamed, or removed, in the very folder it was made in, even if that
 * folder's path was changed meanwhile.
 */
class Folders {
	private readonly pinned = new Map<string, Promise<PinnedFolder>>();
	private readonly listings = new Map<PinnedFolder, Promise<string[]>>();
	/** Folders made for the writes (real paths), whichever write made them. */
	private readonly made: string[] = [];

	constructor(private readonly boundary: Boundary | undefined) {}

	/** The existing folder at a real path. */
	pin(real: string, display: string): Promise<PinnedFolder> {
		let folder = this.pinned.get(real);
		if (!folder) {
			folder = PinnedFolder.open(display, { reach: this.boundary, expect: real });
			this.pinned.set(real, folder);
		}
		return folder;
	}

	/** The folder at a real path, made (with its missing parents) if need be; `created` lists what this call made. */
	async make(real: string, display: string): Promise<{ folder: PinnedFolder; created: string[] }> {
		const known = this.pinned.get(real);
		if (known) return { folder: await known, created: [] };
		const making = makeFolders(real, display, this.boundary);
		this.pinned.set(real, making.then(result => result.folder));
		const result = await making;
		this.made.push(...result.created);
		return result;
	}

	/**
	 * Removes the folders made that are empty, deepest first, once the writes are taken back: staged
	 * at once, one write may have made the folder another one's file went in.
	 */
	removeMade(): Promise<void> {
		return removeEmptyFolders([...this.made].sort((a, b) => a.length - b.length), this.boundary);
	}

	/** A folder's entries, read once per change set (dead temps are looked for in them). */
	listing(folder: PinnedFolder): Promise<string[]> {
		let names = this.listings.get(folder);
		if (!names) {
			names = fs.promises.readdir(folder.self).catch(() => []);
			this.listings.set(folder, names);
		}
		return names;
	}

	/** Flushes the renames and removals in each folder to disk. */
	async sync(): Promise<void> {
		await Promise.all([...this.pinned.values()].map(folder => folder.then(pinned => pinned.sync(), () => undefined)));
	}

	async close(): Promise<void> {
		await Promise.all([...this.pinned.values()].map(folder => folder.then(pinned => pinned.close(), () => undefined)));
		this.pinned.clear();
	}
}

/** A temp file holding the new bytes, flushed to disk, waiting to be renamed over its target. */
interface Staged {
	readonly place: Place;
	/** The folder it was made in, still open. */
	readonly folder: PinnedFolder;
	/** The temp's name, in the same folder. */
	readonly temp: string;
	/**
	 * The temp's identity: after the rename, the target must be this very file. Its size too: a
	 * file system may give a file made after ours was removed our inode number back.
	 */
	readonly dev: number;
	readonly ino: number;
	readonly size: number;
	/** Folders made for it (real paths, outermost first). */
	readonly created: string[];
	/** The regular file it replaces, as it was when staged (none: there was none). */
	readonly replaced?: fs.Stats;
	/** The target's version, seen where it landed after the rename (see landing). */
	landed?: { mtimeMs: number; size: number };
}

interface StageOptions extends AtomicWriteOptions {
	/** Make the missing folders on the way (a new file, or a moved one). */
	readonly createFolders?: boolean;
	/** The target must not exist (a created file): someone else making it meanwhile stops the write. */
	readonly mustBeNew?: boolean;
}

/**
 * Writes `bytes` to `target` atomically. A symlink is written through (its target changes, the
 * link stays), and an existing file keeps its permission bits (and owner, where allowed).
 */
export function writeFileAtomic(target: string, bytes: Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
	return withFolders(options.boundary, folders => writeIn(folders, target, bytes, options));
}

/** Runs a write in its own set of folders; on success, flushes them to disk. */
async function withFolders<T>(boundary: Boundary | undefined, work: (folders: Folders) => Promise<T>): Promise<T> {
	const folders = new Folders(boundary);
	try {
		const result = await work(folders);
		await folders.sync();
		return result;
	} finally {
		await folders.close();
	}
}

async function writeIn(folders: Folders, target: string, bytes: Uint8Array, options: AtomicWriteOptions): Promise<void> {
	const place = await placeOf(target, options.display ?? target, options.boundary, true);
	const staged = await stageWrite(folders, place, bytes, options);
	await commitStaged(staged, options.boundary, options.signal);
}

/**
 * Everything of an atomic write that can fail, short of the rename: nothing visible changes. The
 * folder is opened and checked first; the temp is created in it exclusively, never through a link,
 * and checked again (where it really is) before a byte is written.
 */
async function stageWrite(folders: Folders, place: Place, bytes: FileBytes, options: StageOptions): Promise<Staged> {
	const { folder, created } = options.createFolders
		? await folders.make(place.folder, place.display)
		: { folder: await folders.pin(place.folder, place.display), created: [] };
	const temp = tempNameFor(place.name);
	let fd: number | undefined;
	let made = false;
	try {
		const existing = lstatOrUndefined(folder.entry(place.name));
		if (existing?.isDirectory()) throw Object.assign(new Error(`EISDIR: ${place.display}`), { code: 'EISDIR' });
		if (existing && options.mustBeNew) {
			throw new ToolError('already_exists', `${place.display} was created by someone else while this change was prepared. Nothing was written. Read it, then decide whether to overwrite it.`);
		}
		// A symlink put in the file's place meanwhile is replaced, never followed.
		const current = existing?.isFile() ? existing : undefined;
		// A rename needs only the folder's permission; a file its owner made read-only must stay so.
		if (current) fs.accessSync(folder.entry(place.name), fs.constants.W_OK);
		await removeDeadTempsIn(folder, place.name, await folders.listing(folder));
		fd = await createTemp(folder.entry(temp), current ? current.mode & 0o7777 : options.mode ?? 0o666);
		made = true;
		const stat = checkCreated(fd, folder, temp, place, options.boundary);
		await writeAll(fd, bytes, options);
		if (current) keepOwnerAndMode(fd, stat, current);
		await flush(fd);
		const written = fd;
		// Closed once, even if the close fails (the descriptor is gone then all the same).
		fd = undefined;
		fs.closeSync(written);
		return { place, folder, temp, dev: stat.dev, ino: stat.ino, size: bytes.byteLength, created, replaced: current };
	} catch (error) {
		if (fd !== undefined) closeQuietly(fd);
		if (made) await fs.promises.unlink(folder.entry(temp)).catch(() => undefined);
		await removeEmptyFolders(created, options.boundary);
		throw error;
	}
}

function lstatOrUndefined(at: string): fs.Stats | undefined {
	try {
		return fs.lstatSync(at);
	} catch {
		return undefined;
	}
}

function closeQuietly(fd: number): void {
	try {
		fs.closeSync(fd);
	} catch {
		// Closing a descriptor that is ours fails only if it is closed already.
	}
}

/**
 * Creates a temp (never through a link), on an I/O thread: making an entry waits for the file
 * system's journal, which a busy disk makes slow, and temps made side by side overlap those waits.
 */
function createTemp(at: string, mode: number): Promise<number> {
	return new Promise((resolve, reject) => fs.open(at, CREATE_FLAGS, mode, (error, fd) => (error ? reject(error) : resolve(fd))));
}

/** Flushes a file's data (and what is needed to read it back) to disk, on an I/O thread. */
function flush(fd: number): Promise<void> {
	return new Promise((resolve, reject) => fs.fsync(fd, error => (error ? reject(error) : resolve())));
}

/**
 * The temp must be the entry made in the folder that was checked (by identity: the folder itself
 * may have been renamed meanwhile, taking it along), and really be inside the boundary.
 */
function checkCreated(fd: number, folder: PinnedFolder, temp: string, place: Place, boundary: Boundary | undefined): fs.Stats {
	const stat = fs.fstatSync(fd);
	const entry = lstatOrUndefined(folder.entry(temp));
	const real = realPathOfDescriptor(fd, folder.entry(temp), stat);
	if (!entry || entry.dev !== stat.dev || entry.ino !== stat.ino || real === undefined) throw landedElsewhere(place.display);
	boundary?.assertReachable(real, 'write', place.display);
	return stat;
}

/** The visible step: the temp renamed over the target inside its checked folder, then checked where it landed. */
async function commitStaged(staged: Staged, boundary: Boundary | undefined, signal?: AbortSignal): Promise<void> {
	try {
		if (signal?.aborted) throw new CancelledError('The write');
		renameStaged(staged);
		if (landing(staged, boundary, staged.folder.whereNow()) !== 'landed') throw landedElsewhere(staged.place.display);
	} catch (error) {
		await discardStaged(staged, boundary);
		throw error;
	}
}

function renameStaged(staged: Staged): void {
	fs.renameSync(staged.folder.entry(staged.temp), staged.folder.entry(staged.place.name));
}

/**
 * Where a renamed temp is. 'landed': it is the target, in a folder inside the boundary (`where`:
 * the folder's real path now). 'removed': it is the target but the folder is not inside (moved
 * out, or its path swapped), so it was removed again. 'lost': the target is no longer the file
 * written (gone, or replaced by someone else), which is left alone.
 */
function landing(staged: Staged, boundary: Boundary | undefined, where: string | undefined): 'landed' | 'removed' | 'lost' {
	const target = staged.folder.entry(staged.place.name);
	const landed = lstatOrUndefined(target);
	if (landed === undefined || landed.dev !== staged.dev || landed.ino !== staged.ino || landed.size !== staged.size) return 'lost';
	if (where !== undefined && isReachable(boundary, where, staged.place.display)) {
		staged.landed = { mtimeMs: landed.mtimeMs, size: landed.size };
		return 'landed';
	}
	try {
		fs.unlinkSync(target);
	} catch {
		// Gone already.
	}
	return 'removed';
}

function isReachable(boundary: Boundary | undefined, real: string, display: string): boolean {
	try {
		boundary?.assertReachable(real, 'write', display);
		return true;
	} catch {
		return false;
	}
}

function landedElsewhere(display: string): ToolError {
	return new ToolError('io', `${display} was not written where it was meant to go: a folder or symlink on its path changed while writing, so what was written is removed again. Check the path with list_dir, then try again.`);
}

/** Takes back a single write that was not committed: its temp, and the folders made for it. */
async function discardStaged(staged: Staged, boundary: Boundary | undefined): Promise<void> {
	await removeTemp(staged);
	await removeEmptyFolders(staged.created, boundary);
}

function removeTemp(staged: Staged): Promise<void> {
	return fs.promises.unlink(staged.folder.entry(staged.temp)).catch(() => undefined);
}

/** Removes one entry (never what a symlink there points to) through its checked folder. */
async function removeEntry(folders: Folders, place: Place): Promise<void> {
	const folder = await folders.pin(place.folder, place.display);
	await fs.promises.unlink(folder.entry(place.name)).catch(ignoreMissing);
}

/**
 * Writes the bytes (pieces in turn, never joined: see SplicedBytes; a file left on disk copied
 * around its edit from a checked descriptor: see DiskSplice) at the descriptor's position, on the
 * I/O threads (see createTemp).
 */
async function writeAll(fd: number, bytes: FileBytes, { signal, boundary }: StageOptions): Promise<void> {
	if (bytes instanceof DiskSplice) {
		const { path: source, display } = bytes.source;
		await withFileForReading(source, display, boundary, 'write', ({ handle: from }) => bytes.copyTo(chunk => writeFully(fd, chunk), from, display, signal));
		return;
	}
	// Chunks keep a cancel of a huge write prompt.
	const CHUNK = 8 * 1024 * 1024;
	for (const part of byteParts(bytes)) {
		for (let offset = 0; offset < part.length; offset += CHUNK) {
			if (signal?.aborted) throw new CancelledError('The write');
			await writeFully(fd, part.subarray(offset, offset + CHUNK));
		}
	}
}

async function writeFully(fd: number, piece: Uint8Array): Promise<void> {
	for (let written = 0; written < piece.length;) written += await writeSome(fd, piece, written);
}

function writeSome(fd: number, piece: Uint8Array, from: number): Promise<number> {
	return new Promise((resolve, reject) => fs.write(fd, piece, from, piece.length - from, null, (error, count) => (error ? reject(error) : resolve(count))));
}

/** Gives the temp (`made`: as created) the mode and owner of the file it replaces (`stat`); best effort. */
function keepOwnerAndMode(fd: number, made: fs.Stats, stat: fs.Stats): void {
	try {
		// The umask may have taken bits off at creation; most often it took none.
		if ((made.mode & 0o7777) !== (stat.mode & 0o7777)) fs.fchmodSync(fd, stat.mode & 0o7777);
	} catch {
		// A file system without modes keeps what it has.
	}
	try {
		// Only root may give a file away; anyone else leaves it as theirs, which is what rename would
		// do anyway. (Windows has no getuid, and there chown does nothing.)
		if (stat.uid !== process.getuid?.()) fs.fchownSync(fd, stat.uid, stat.gid);
	} catch {
		// Not allowed: the file stays ours.
	}
}

/** Removes temps of this file left by writers that died (SIGKILL, power loss) before renaming. */
export async function removeDeadTemps(target: string): Promise<string[]> {
	try {
		const folder = await fs.promises.realpath(path.dirname(target));
		return await inPinnedFolder(target, { expect: folder }, pinned => removeDeadTempsIn(pinned, path.basename(target)));
	} catch {
		// No folder to look in (or none that can be opened and listed): no temps either.
		return [];
	}
}

/** `names`: the folder's entries, when they were just read. */
async function removeDeadTempsIn(folder: PinnedFolder, name: string, names?: readonly string[]): Promise<string[]> {
	const base = name.slice(0, MAX_BASE_CHARS);
	names ??= await fs.promises.readdir(folder.self);
	const removed: string[] = [];
	for (const entry of names) {
		const match = TEMP_PATTERN.exec(entry);
		// A live writer's temp is left alone, this process's own writes under way included.
		if (!match || match[1] !== base || isProcessAlive(Number(match[2]))) continue;
		await fs.promises.unlink(folder.entry(entry)).then(() => removed.push(entry), () => undefined);
	}
	return removed;
}

/** Whether a file name is one of our temps (listings hide them). */
export function isAtomicTemp(name: string): boolean {
	return TEMP_PATTERN.test(name);
}

/** One change, ready to commit, and what it takes to undo it. */
interface Prepared {
	readonly change: FileChange;
	/** The new bytes in a temp beside the target; absent for deletions. */
	readonly staged?: Staged;
	/** Disk bytes before (null: there was no file; undefined: not kept, as a set of one change is never put back). */
	readonly original: Uint8Array | null | undefined;
	readonly originalMode?: number;
	/** What the entry removed (a deletion's, a move's source) pointed to, when it was a symlink: put back as one. */
	readonly link?: string;
}

/** A seam for tests to make the commit phase fail at a chosen file (a disk error cannot be ordered). */
export interface CommitFaults {
	beforeCommit?(change: FileChange, index: number): void;
}

export interface ApplyOptions extends CommitFaults, CheckedFiles {
	/** Where every write and removal must land (see AtomicWriteOptions.boundary). */
	readonly boundary?: Boundary;
}

/** Temps written at once while staging: fsyncs overlap, without flooding the disk. */
const STAGING_CONCURRENCY = 8;

/**
 * Applies a change set all or nothing, in two phases. Staging writes and flushes every new file
 * to a temp beside its target (in parallel): whatever fails there (disk full, permissions, a
 * folder swapped for a link) fails before anything visible changed. Committing then renames the
 * temps into place and removes deleted files, in order, with nothing else between the renames, so
 * the moment some files are new and others not is short; where each write landed is checked after
 * (a move's at once). If a step or a check fails, or the signal fires, the files already committed
 * are put back, newest first. Each folder is flushed once at the end.
 *
 * What the flushes buy: a temp is flushed before its rename, so after a crash each file is its old
 * bytes or its new ones, never a torn or empty file (a rename can reach the disk before data that
 * was not flushed); the folders are flushed once each, after every rename, so the set is on disk
 * when this returns. Given the bytes the caller just checked (`onDisk`) and the real paths it just
 * resolved (`realPaths`), files are neither read nor resolved again: each folder and temp is
 * checked where it is opened all the same.
 */
export function applyChangesAtomically(changes: readonly FileChange[], signal?: AbortSignal, options: ApplyOptions = {}): Promise<WrittenVersions> {
	return withFolders(options.boundary, folders => applyIn(folders, changes, signal, options));
}

/** Returns the versions of the files written, as their landing checks saw them (the change set's own). */
async function applyIn(folders: Folders, changes: readonly FileChange[], signal: AbortSignal | undefined, options: ApplyOptions): Promise<WrittenVersions> {
	const { boundary } = options;
	const prepared: (Prepared | undefined)[] = new Array(changes.length);
	try {
		await forEachLimited(changes, STAGING_CONCURRENCY, async (change, index) => {
			// describeFailure words a cancel of the set itself.
			if (signal?.aborted) throw new CancelledError();
			prepared[index] = await prepare(folders, change, changes.length > 1, options, signal);
		}).catch(async error => {
			await Promise.all(prepared.map(item => item?.staged && removeTemp(item.staged)));
			await folders.removeMade();
			throw error;
		});
	} catch (error) {
		throw describeFailure(error, failedChange(error, changes), 0, []);
	}
	const ready = prepared as Prepared[];
	const committed: Prepared[] = [];
	let failure: { error: unknown; item: Prepared } | undefined;
	for (const item of ready) {
		try {
			if (signal?.aborted) throw new CancelledError();
			options.beforeCommit?.(item.change, committed.length);
			await commit(folders, item, boundary);
			committed.push(item);
		} catch (error) {
			failure = { error, item };
			break;
		}
	}
	// Writes are checked where they landed once all are renamed, also before a rollback: one that
	// did not land is not put back (it was removed, or someone else's file is there now).
	const landings = landingsOf(committed, boundary);
	const strays = committed.filter(item => landings.has(item) && landings.get(item) !== 'landed');
	if (!failure && strays.length > 0) failure = { error: landedElsewhere(strays[0].change.displayPath), item: strays[0] };
	if (!failure) return new Map(ready.flatMap(({ change, staged }) => (staged?.landed ? [[change.movedTo?.path ?? change.path, staged.landed] as const] : [])));
	const kept = committed.filter(item => !strays.includes(item));
	// The temps not renamed (those renamed are gone from their names already).
	await Promise.all(ready.map(item => item.staged && removeTemp(item.staged)));
	const lost = strays.filter(item => landings.get(item) === 'lost').map(item => item.change.displayPath);
	const unrestored = [...lost, ...await rollback(folders, kept, boundary)];
	await folders.removeMade();
	throw describeFailure(failure.error, failure.item.change, kept.length, unrestored);
}

/**
 * Where each renamed write landed (see landing). They are checked once all are renamed, off the
 * path of the renames; the writes in one folder share its look at where it is now.
 */
function landingsOf(committed: readonly Prepared[], boundary: Boundary | undefined): Map<Prepared, 'landed' | 'removed' | 'lost'> {
	const writes = committed.filter(item => item.staged && !isMove(item.change));
	const whereNow = new Map<PinnedFolder, string | undefined>();
	return new Map(writes.map(item => {
		const folder = item.staged!.folder;
		if (!whereNow.has(folder)) whereNow.set(folder, folder.whereNow());
		return [item, landing(item.staged!, boundary, whereNow.get(folder))];
	}));
}

/** The change a staging error belongs to (forEachLimited tags it). */
function failedChange(error: unknown, changes: readonly FileChange[]): FileChange {
	const index = (error as { changeIndex?: number })?.changeIndex;
	return changes[index ?? 0];
}

async function prepare(folders: Folders, change: FileChange, remember: boolean, options: ApplyOptions, signal?: AbortSignal): Promise<Prepared> {
	const { boundary } = options;
	const moves = isMove(change);
	const known = change.before === null ? undefined : options.onDisk?.get(change.path);
	const source = await sourceOf(change, remember, known, boundary);
	const link = remember && (change.after === null || moves) ? await linkAt(change, boundary) : undefined;
	if (change.after === null) return { change, original: remember ? originalOf(known, source) : undefined, originalMode: remember ? source.mode : undefined, link };
	const display = change.movedTo?.displayPath ?? change.displayPath;
	const place = await placeOf(change.movedTo?.path ?? change.path, display, boundary, true, options.realPaths);
	const fresh = change.before === null || moves;
	const mode = change.movedTo && source.mode !== undefined ? source.mode & 0o7777 : undefined;
	const staged = await stageWrite(folders, place, change.after, { signal, boundary, createFolders: change.before === null || change.movedTo !== undefined, mustBeNew: fresh, mode });
	if (!remember) return { change, staged, original: undefined };
	// A file written in place: the one the temp replaces tells whether it is still there, and its mode.
	if (change.before !== null && !change.movedTo && source.bytes === undefined) return { change, staged, original: staged.replaced ? known : null, originalMode: staged.replaced?.mode };
	return { change, staged, original: originalOf(known, source), originalMode: source.mode, link };
}

/** What the entry at a change's path points to, if it is a symlink (its bytes are its target's). */
async function linkAt(change: FileChange, boundary: Boundary | undefined): Promise<string | undefined> {
	try {
		const place = await placeOf(change.path, change.displayPath, boundary, false);
		// A folder of its own, closed after: the change set's pin of it is made when the commit needs it.
		return await inPinnedFolder(place.display, { reach: boundary, expect: place.folder }, folder => fs.promises.readlink(folder.entry(place.name)));
	} catch {
		// Not a symlink, or nothing there to read: the commit itself says what is wrong with the path.
		return undefined;
	}
}

/** Puts a removed symlink back, through its checked folder; never over anything made there since. */
async function restoreLink(folders: Folders, change: FileChange, link: string, boundary: Boundary | undefined): Promise<void> {
	const place = await placeOf(change.path, change.displayPath, boundary, false);
	const folder = await folders.pin(place.folder, place.display);
	await fs.promises.symlink(link, folder.entry(place.name));
}

/**
 * What is read of a change's source before it is staged: its bytes, for the rollback, unless the
 * caller just read them (`known`); its mode where a move keeps it or a deletion is put back with
 * it. A file written in place is not read at all when its bytes are known (see prepare).
 */
function sourceOf(change: FileChange, remember: boolean, known: Uint8Array | undefined, boundary: Boundary | undefined): Promise<{ bytes?: Uint8Array | null; mode?: number }> {
	if (change.before === null) return Promise.resolve({ bytes: null });
	const wantBytes = remember && known === undefined;
	const wantMode = change.movedTo !== undefined || (remember && change.after === null);
	return wantBytes || wantMode ? readOriginal(change.path, change.displayPath, boundary, wantBytes) : Promise.resolve({});
}

/** The bytes a rollback puts back: those read now, or the known ones unless the file is gone. */
function originalOf(known: Uint8Array | undefined, source: { bytes?: Uint8Array | null }): Uint8Array | null | undefined {
	return source.bytes === undefined ? known : source.bytes;
}

/** A file's bytes (when wanted, for the rollback) and mode, read through a checked descriptor; nothing when it is gone. */
async function readOriginal(absolute: string, display: string, boundary: Boundary | undefined, wantBytes: boolean): Promise<{ bytes?: Uint8Array | null; mode?: number }> {
	try {
		return await withFileForReading(absolute, display, boundary, 'write', async ({ handle, stat }) => ({
			bytes: wantBytes ? await readWhole(handle, stat.size) : undefined,
			mode: stat.mode,
		}));
	} catch (error) {
		if (error instanceof BoundaryError) throw error;
		return { bytes: null };
	}
}

function isMove(change: FileChange): boolean {
	return change.movedTo !== undefined && path.resolve(change.path) !== path.resolve(change.movedTo.path);
}

/**
 * The visible step: the removal, or the rename into place. A write is checked where it landed
 * later, with the others (landingsOf); a move at once, before its source is removed.
 */
async function commit(folders: Folders, { change, staged }: Prepared, boundary: Boundary | undefined): Promise<void> {
	if (!staged) {
		await removeEntry(folders, await placeOf(change.path, change.displayPath, boundary, false));
		return;
	}
	if (!isMove(change)) {
		renameStaged(staged);
		return;
	}
	await commitStaged(staged, boundary);
	try {
		await removeEntry(folders, await placeOf(change.path, change.displayPath, boundary, false));
	} catch (error) {
		await removeEntry(folders, staged.place).catch(() => undefined);
		throw error;
	}
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
	if (error.code !== 'ENOENT') throw error;
}

/** Undoes committed changes, newest first (the folders made are removed after). Returns the display paths it could not restore. */
async function rollback(folders: Folders, applied: readonly Prepared[], boundary: Boundary | undefined): Promise<string[]> {
	const unrestored: string[] = [];
	for (const { change, staged, original, originalMode, link } of [...applied].reverse()) {
		try {
			// What was written where no file was (a new file, a move's target, a file gone since it was planned) goes.
			if (staged && (original === null || isMove(change))) await removeEntry(folders, staged.place);
			if (link !== undefined) {
				await restoreLink(folders, change, link, boundary);
			} else if (original) {
				await writeIn(folders, change.path, original, { boundary, display: change.displayPath, ...(originalMode !== undefined ? { mode: originalMode & 0o7777 } : {}) });
			}
		} catch {
			unrestored.push(change.displayPath);
		}
	}
	return unrestored;
}

function describeFailure(error: unknown, failed: FileChange, appliedCount: number, unrestored: readonly string[]): ToolError {
	// A file found changed while its new bytes were copied from it (see DiskSplice) says so itself.
	if (error instanceof ToolError && error.code === 'stale_write' && appliedCount === 0) return error;
	const cause = error instanceof CancelledError ? 'the call was cancelled' : fromNodeError(error, failed.displayPath).message;
	const state = unrestored.length > 0
		? `The files written before it could not all be restored: ${unrestored.join(', ')} may hold the new content. Tell the user; the originals are in the backup.`
		: appliedCount > 0
			? 'The files written before it were restored: nothing was changed.'
			: 'Nothing was changed.';
	if (error instanceof CancelledError) return new ToolError('cancelled', `Writing the changes stopped at ${failed.displayPath}: ${cause}. ${state}`);
	return new ToolError('io', `Could not write ${failed.displayPath}: ${cause} ${state}`);
}
