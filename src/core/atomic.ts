import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FileChange } from './context';
import { CancelledError, fromNodeError, ToolError } from './errors';

/**
 * Atomic writes: the new bytes go to a temp file in the same folder (same file system, so the
 * rename cannot turn into a copy), are flushed to disk, and then renamed over the target. A reader
 * or a crash sees the old file or the new one, never a mix. A temp left by a killed process is
 * removed by the next write to the same file.
 */

/** `.name.tb<pid>-<random>.tmp`: the pid lets a later write tell a dead writer's temp from a live one. */
const TEMP_PATTERN = /^\.(.*)\.tb(\d+)-[0-9a-f]{8}\.tmp$/;
/** Room left in a 255-byte file name for the temp decoration. */
const MAX_BASE_CHARS = 200;

function tempNameFor(target: string): string {
	const base = path.basename(target).slice(0, MAX_BASE_CHARS);
	return path.join(path.dirname(target), `.${base}.tb${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

export interface AtomicWriteOptions {
	/** Permission bits for a new file (an existing file keeps its own). */
	readonly mode?: number;
	readonly signal?: AbortSignal;
}

/** A temp file holding the new bytes, flushed to disk, waiting to be renamed over its target. */
interface Staged {
	readonly temp: string;
	readonly destination: string;
}

/**
 * Writes `bytes` to `target` atomically. A symlink is written through (its target changes, the
 * link stays), and an existing file keeps its permission bits (and owner, where allowed).
 */
export async function writeFileAtomic(target: string, bytes: Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
	const staged = await stageWrite(target, bytes, options);
	await renameStaged(staged, options.signal);
	await syncDirectory(path.dirname(staged.destination));
}

/** Everything of an atomic write that can fail, short of the rename: nothing visible changes. */
async function stageWrite(target: string, bytes: Uint8Array, options: AtomicWriteOptions): Promise<Staged> {
	const destination = await realTarget(target);
	const existing = await fs.promises.stat(destination).catch(() => undefined);
	if (existing?.isDirectory()) throw Object.assign(new Error(`EISDIR: ${destination}`), { code: 'EISDIR' });
	// A rename needs only the folder's permission; a file its owner made read-only must stay so.
	if (existing) await fs.promises.access(destination, fs.constants.W_OK);
	await removeDeadTemps(destination);
	const temp = tempNameFor(destination);
	let handle: fs.promises.FileHandle | undefined;
	try {
		handle = await fs.promises.open(temp, 'wx', existing ? existing.mode & 0o7777 : options.mode ?? 0o666);
		await writeAll(handle, bytes, options.signal);
		if (existing) await keepOwnerAndMode(handle, existing);
		await handle.sync();
		await handle.close();
		return { temp, destination };
	} catch (error) {
		await handle?.close().catch(() => undefined);
		await fs.promises.unlink(temp).catch(() => undefined);
		throw error;
	}
}

async function renameStaged(staged: Staged, signal?: AbortSignal): Promise<void> {
	try {
		if (signal?.aborted) throw new CancelledError('The write');
		await fs.promises.rename(staged.temp, staged.destination);
	} catch (error) {
		await discardStaged(staged);
		throw error;
	}
}

async function discardStaged(staged: Staged | undefined): Promise<void> {
	if (staged) await fs.promises.unlink(staged.temp).catch(() => undefined);
}

async function writeAll(handle: fs.promises.FileHandle, bytes: Uint8Array, signal?: AbortSignal): Promise<void> {
	// Chunks keep a cancel of a huge write prompt.
	const CHUNK = 8 * 1024 * 1024;
	for (let offset = 0; offset < bytes.length; offset += CHUNK) {
		if (signal?.aborted) throw new CancelledError('The write');
		const piece = bytes.subarray(offset, offset + CHUNK);
		let written = 0;
		while (written < piece.length) written += (await handle.write(piece, written, piece.length - written)).bytesWritten;
	}
}

async function keepOwnerAndMode(handle: fs.promises.FileHandle, stat: fs.Stats): Promise<void> {
	await handle.chmod(stat.mode & 0o7777).catch(() => undefined);
	if (process.platform !== 'win32' && typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
		// Only root may give a file away; anyone else leaves it as theirs, which is what rename would do anyway.
		await handle.chown(stat.uid, stat.gid).catch(() => undefined);
	}
}

/** The file a path leads to: a symlink is written through, so the link itself survives. */
async function realTarget(target: string): Promise<string> {
	try {
		const stat = await fs.promises.lstat(target);
		if (!stat.isSymbolicLink()) return target;
		return await fs.promises.realpath(target);
	} catch {
		return target;
	}
}

/** Flushes the rename itself to disk (the folder's entry); not possible on every platform. */
async function syncDirectory(folder: string): Promise<void> {
	if (process.platform === 'win32') return;
	const handle = await fs.promises.open(folder, 'r').catch(() => undefined);
	if (!handle) return;
	await handle.sync().catch(() => undefined);
	await handle.close().catch(() => undefined);
}

/** Removes temps of this file left by writers that died (SIGKILL, power loss) before renaming. */
export async function removeDeadTemps(target: string): Promise<string[]> {
	const folder = path.dirname(target);
	const base = path.basename(target).slice(0, MAX_BASE_CHARS);
	let names: string[];
	try {
		names = await fs.promises.readdir(folder);
	} catch {
		return [];
	}
	const removed: string[] = [];
	for (const name of names) {
		const match = TEMP_PATTERN.exec(name);
		if (!match || match[1] !== base || isAlive(Number(match[2]))) continue;
		await fs.promises.unlink(path.join(folder, name)).then(() => removed.push(name), () => undefined);
	}
	return removed;
}

function isAlive(pid: number): boolean {
	if (pid === process.pid) return true;
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		// EPERM: it exists but belongs to someone else.
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
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
	/** Disk bytes before (null: there was no file). */
	readonly original: Uint8Array | null;
	readonly originalMode?: number;
	/** Folders created for a new file, deepest last. */
	readonly createdDirs: string[];
}

/** A seam for tests to make the commit phase fail at a chosen file (a disk error cannot be ordered). */
export interface CommitFaults {
	beforeCommit?(change: FileChange, index: number): void;
}

/** Temps written at once while staging: fsyncs overlap, without flooding the disk. */
const STAGING_CONCURRENCY = 8;

/**
 * Applies a change set all or nothing, in two phases. Staging writes and flushes every new file
 * to a temp beside its target (in parallel): whatever fails there (disk full, permissions) fails
 * before anything visible changed. Committing then renames the temps into place and removes
 * deleted files, in order; if one of those steps fails, or the signal fires, the files already
 * committed are put back. Each folder is flushed once at the end.
 */
export async function applyChangesAtomically(changes: readonly FileChange[], signal?: AbortSignal, faults?: CommitFaults): Promise<void> {
	const prepared: (Prepared | undefined)[] = new Array(changes.length);
	try {
		await forEachLimited(changes, STAGING_CONCURRENCY, async (change, index) => {
			if (signal?.aborted) throw new CancelledError('Writing the changes');
			prepared[index] = await prepare(change, changes.length > 1, signal);
		}).catch(async error => {
			await Promise.all(prepared.map(item => item && discard(item)));
			throw error;
		});
	} catch (error) {
		throw describeFailure(error, failedChange(error, changes), 0, []);
	}
	const ready = prepared as Prepared[];
	const committed: Prepared[] = [];
	let current: Prepared | undefined;
	try {
		for (const item of ready) {
			current = item;
			if (signal?.aborted) throw new CancelledError('Writing the changes');
			faults?.beforeCommit?.(item.change, committed.length);
			await commit(item);
			committed.push(item);
		}
	} catch (error) {
		await Promise.all(ready.filter(item => !committed.includes(item)).map(discard));
		const unrestored = await rollback(committed);
		throw describeFailure(error, (current ?? ready[0]).change, committed.length, unrestored);
	}
	const folders = new Set(ready.flatMap(({ change }) => [change.path, change.movedTo?.path].filter((p): p is string => !!p).map(p => path.dirname(p))));
	await Promise.all([...folders].map(syncDirectory));
}

/** The change a staging error belongs to (forEachLimited tags it). */
function failedChange(error: unknown, changes: readonly FileChange[]): FileChange {
	const index = (error as { changeIndex?: number })?.changeIndex;
	return changes[index ?? 0];
}

async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
	let next = 0;
	let failed = false;
	const worker = async () => {
		while (!failed && next < items.length) {
			const index = next++;
			try {
				await work(items[index], index);
			} catch (error) {
				failed = true;
				if (error && typeof error === 'object') Object.assign(error, { changeIndex: index });
				throw error;
			}
		}
	};
	const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
	const rejected = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
	if (rejected) throw rejected.reason;
}

async function prepare(change: FileChange, remember: boolean, signal?: AbortSignal): Promise<Prepared> {
	const source = change.path;
	const target = change.movedTo?.path ?? change.path;
	// The source's mode serves both the rollback and a moved file (which keeps its permissions).
	const sourceMode = change.before !== null && (remember || change.movedTo)
		? (await fs.promises.stat(source).catch(() => undefined))?.mode
		: undefined;
	const original = remember && change.before !== null ? await fs.promises.readFile(source).catch(() => null) : null;
	const originalMode = remember ? sourceMode : undefined;
	if (change.after === null) return { change, original, originalMode, createdDirs: [] };
	const createdDirs = change.before === null || change.movedTo ? await makeParents(target) : [];
	try {
		const mode = change.movedTo ? sourceMode : undefined;
		const staged = await stageWrite(target, change.after, { signal, ...(mode !== undefined ? { mode: mode & 0o7777 } : {}) });
		return { change, staged, original, originalMode, createdDirs };
	} catch (error) {
		await removeFolders(createdDirs);
		throw error;
	}
}

/** The visible step: the rename into place, or the removal. */
async function commit({ change, staged }: Prepared): Promise<void> {
	if (!staged) {
		await fs.promises.unlink(change.path).catch(ignoreMissing);
		return;
	}
	await renameStaged(staged);
	if (change.movedTo && path.resolve(change.path) !== path.resolve(change.movedTo.path)) {
		try {
			await fs.promises.unlink(change.path).catch(ignoreMissing);
		} catch (error) {
			await fs.promises.unlink(staged.destination).catch(() => undefined);
			throw error;
		}
	}
}

async function discard(item: Prepared): Promise<void> {
	await discardStaged(item.staged);
	await removeFolders(item.createdDirs);
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
	if (error.code !== 'ENOENT') throw error;
}

/** `mkdir -p`, returning the folders it created (outermost first). */
async function makeParents(file: string): Promise<string[]> {
	const missing: string[] = [];
	for (let folder = path.dirname(file); ; folder = path.dirname(folder)) {
		const exists = await fs.promises.stat(folder).then(() => true, () => false);
		if (exists || path.dirname(folder) === folder) break;
		missing.unshift(folder);
	}
	if (missing.length) await fs.promises.mkdir(missing[missing.length - 1], { recursive: true });
	return missing;
}

/** Removes folders made for a new file, innermost first, if they are still empty. */
async function removeFolders(createdDirs: readonly string[]): Promise<void> {
	for (const folder of [...createdDirs].reverse()) await fs.promises.rmdir(folder).catch(() => undefined);
}

/** Undoes committed changes, newest first. Returns the display paths it could not restore. */
async function rollback(applied: readonly Prepared[]): Promise<string[]> {
	const unrestored: string[] = [];
	for (const { change, original, originalMode, createdDirs } of [...applied].reverse()) {
		try {
			const target = change.movedTo?.path ?? change.path;
			if (change.after !== null && (change.before === null || change.movedTo)) {
				await fs.promises.unlink(target).catch(ignoreMissing);
			}
			if (change.before !== null && original !== null) {
				await writeFileAtomic(change.path, original, originalMode !== undefined ? { mode: originalMode & 0o7777 } : {});
			}
			await removeFolders(createdDirs);
		} catch {
			unrestored.push(change.displayPath);
		}
	}
	return unrestored;
}

function describeFailure(error: unknown, failed: FileChange, appliedCount: number, unrestored: readonly string[]): ToolError {
	const cause = error instanceof CancelledError ? 'the call was cancelled' : fromNodeError(error, failed.displayPath).message;
	const state = unrestored.length > 0
		? `The files written before it could not all be restored: ${unrestored.join(', ')} may hold the new content. Tell the user; the originals are in the backup.`
		: appliedCount > 0
			? 'The files written before it were restored: nothing was changed.'
			: 'Nothing was changed.';
	if (error instanceof CancelledError) return new ToolError('cancelled', `Writing the changes stopped at ${failed.displayPath}: ${cause}. ${state}`);
	return new ToolError('io', `Could not write ${failed.displayPath}: ${cause} ${state}`);
}
