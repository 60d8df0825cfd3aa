import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChangeContext, ChangeState, FileChange, FileVersion, WrittenVersions } from '../context';
import { fromNodeError, ToolError } from '../results/errors';
import { readAt, readHead, readWhole, SYNC_READ_BYTES } from '../files/files';
import { encodeText, hasBom } from '../text/text';
import { formatCount } from '../results/truncate';
import { everyInOrder } from '../files/inParallel';
import { OpenedFile, openForReading, ReadHandle } from '../files/verifiedOpen';
import { FileSystem, nodeFileSystem, readBounded } from '../files/fileSystem';
import { FileBytes, wholeBytes } from '../files/splicedBytes';
import { DiskBytes, DiskSplice } from '../files/diskBytes';
import { sameBytes } from '../files/bytes';

/**
 * The stale-write rules: a change is made on what the model last saw and committed only onto the
 * bytes it was computed from. Versions (stat, and a digest for small files) are recorded per tool
 * host when a file is read or written; anything else that changed a file in between is refused.
 */

/**
 * Each file must hold exactly the bytes its change was computed from (the editor's unsaved text
 * when there is some, as when it was planned): compared in full, so a same-size edit in the same
 * second is caught too.
 */
export async function checkStillAsShown(ctx: ChangeContext, changes: readonly FileChange[], disk: ReadonlyMap<string, FileVersion | null>): Promise<StillAsShown> {
	const read = await everyInOrder(changes, change => checkOneStillAsShown(ctx, change, disk));
	return {
		onDisk: new Map(changes.flatMap((change, index) => (read[index].bytes ? [[change.path, read[index].bytes] as const] : []))),
		realPaths: new Map(changes.flatMap((change, index) => (read[index].real !== undefined ? [[change.path, read[index].real] as const] : []))),
		identities: new Map(changes.flatMap((change, index) => (read[index].bytes && read[index].identity ? [[change.path, read[index].identity] as const] : []))),
	};
}

export interface StillAsShown {
	/** What each file holds on disk now, read through a checked descriptor (the backup copies it). */
	readonly onDisk: Map<string, Uint8Array>;
	/**
	 * Where each file checked on disk really is: a write must go to that very file, and a path that
	 * leads elsewhere when it is resolved for the write had a folder or symlink swapped in between.
	 */
	readonly realPaths: Map<string, string>;
	/** Which file (device and inode) each of `onDisk`'s bytes were read from: a backup may link that very file (see backups.ts). */
	readonly identities: Map<string, FileIdentity>;
}

/** A file as the file system knows it, whatever its path: two names with the same identity are one file. */
export interface FileIdentity {
	readonly dev: number;
	readonly ino: number;
	/**
	 * When its bytes were last written, as the check saw it: a write in place since (even of the
	 * same size) changes it, a link or a rename does not. A backup that links the file needs it.
	 */
	readonly mtimeMs: number;
}

/** The file's disk bytes when they were read (not an editor's text), and where it really is. */
async function checkOneStillAsShown(ctx: ChangeContext, change: FileChange, disk: ReadonlyMap<string, FileVersion | null>): Promise<{ bytes?: Uint8Array; real?: string; identity?: FileIdentity }> {
	if (change.before instanceof DiskBytes) return { real: await checkDiskStillAsShown(ctx, change, change.before) };
	const now = await readFileAsChanged(ctx, change.path, change.displayPath, undefined, change.before ?? undefined);
	// The editor's unsaved text may be unchanged while the file under it was rewritten: saving
	// the change would overwrite that.
	const planned = disk.get(change.path);
	if (now.fromEditor && planned) {
		const onDisk = await statOrNull(ctx.boundary.fileSystem, change.path);
		if (onDisk === null || !sameVersion(onDisk, planned)) throw staleError(change.displayPath, planned, onDisk, 'while waiting for confirmation');
	}
	if (change.before === null) {
		if (now.exists) throw new ToolError('already_exists', `${change.displayPath} was created by someone else since you were shown the change. Nothing was written. Read it, then decide whether to overwrite it.`);
		return {};
	}
	if (!now.exists || !sameBytes(now.bytes!, change.before)) {
		const what = now.exists ? 'changed' : 'was deleted or moved';
		throw new ToolError(
			'stale_write',
			`${change.displayPath} ${what} since you were shown the change, so the change shown no longer fits it. Nothing was written. Read it again with read_file, then redo your change on its current content.`,
			{ path: change.displayPath },
		);
	}
	return { bytes: now.fromEditor ? undefined : now.bytes!, real: now.real, identity: now.identity };
}

/**
 * A file left on disk (see DiskBytes) must still be there, with the size the change was computed
 * on, and no editor may have unsaved text over it now. Its content is checked where it is read
 * for the write, against the digest (DiskSplice.copyTo, or whole()): one read of a big file
 * instead of two, still before anything visible changes.
 */
async function checkDiskStillAsShown(ctx: ChangeContext, change: FileChange, before: DiskBytes): Promise<string> {
	const stale = (what: string) => new ToolError(
		'stale_write',
		`${change.displayPath} ${what} since you were shown the change, so the change shown no longer fits it. Nothing was written. Read it again with read_file, then redo your change on its current content.`,
		{ path: change.displayPath },
	);
	if (ctx.host.dirtyText(change.path) !== undefined) throw stale('got unsaved changes in an editor');
	let file: OpenedFile;
	try {
		file = await openForReading(change.path, change.displayPath, ctx.boundary, 'write');
	} catch (error) {
		if (error instanceof ToolError && (error.code === 'not_found' || error.code === 'not_directory')) throw stale('was deleted or moved');
		throw error;
	}
	await file.handle.close().catch(() => undefined);
	if (file.stat.size !== before.byteLength) throw stale('changed');
	return file.real;
}

/**
 * Refuses a change to a file that changed on disk since this tool host last read or wrote it
 * (the model's picture of it is out of date), or that no longer matches what the change was
 * computed from.
 */
export async function checkNotStale(ctx: ChangeContext, changes: readonly FileChange[]): Promise<Map<string, FileVersion | null>> {
	const stats = await everyInOrder(changes, async change => {
		const stat = await statOrNull(ctx.boundary.fileSystem, change.path);
		await checkOneNotStale(ctx, change, stat);
		return stat;
	});
	return new Map(changes.map((change, index) => [change.path, stats[index]]));
}

async function checkOneNotStale(ctx: ChangeContext, change: FileChange, stat: FileVersion | null): Promise<void> {
	if (change.before === null) {
		if (stat) throw new ToolError('already_exists', `${change.displayPath} was created by someone else while this change was prepared. Nothing was written. Read it, then decide whether to overwrite it.`);
		if (ctx.boundary.fileSystem.local) await assertWritable(await nearestExisting(path.dirname(change.path)), `the folder for ${change.displayPath}`);
		return;
	}
	if (!stat) throw new ToolError('stale_write', `${change.displayPath} was deleted or moved on disk since it was read. Nothing was written. Check with list_dir or find_files, then read it again.`);
	assertNotStale(ctx, change.path, change.displayPath, stat);
	const fromEditor = ctx.host.dirtyText(change.path) !== undefined;
	if (!fromEditor && stat.size !== change.before.byteLength) {
		throw staleError(change.displayPath, { mtimeMs: stat.mtimeMs, size: change.before.byteLength }, stat, 'while the change was being prepared');
	}
	if (ctx.boundary.fileSystem.local) await assertWritable(change.path, change.displayPath);
	if (change.movedTo && await statOrNull(ctx.boundary.fileSystem, change.movedTo.path)) {
		throw new ToolError('already_exists', `${change.movedTo.displayPath} already exists, so ${change.displayPath} cannot be moved there. Nothing was written.`);
	}
}

/** Refused before anyone is asked to approve: a read-only file (or folder) would fail the write anyway. */
async function assertWritable(absolute: string, what: string): Promise<void> {
	try {
		// In place, as statOrNull's look at the disk.
		fs.accessSync(absolute, fs.constants.W_OK);
	} catch (error) {
		const refusal = permissionRefusal((error as NodeJS.ErrnoException).code, what);
		if (refusal) throw refusal;
	}
}

/**
 * The refusal for a failed write-access check, by its error code; undefined when the failure is not
 * about permission (the write itself then says what is wrong). Apart from assertWritable because
 * EACCES needs a user other than root and EROFS a read-only mount, which a unit test cannot count on.
 */
export function permissionRefusal(code: string | undefined, what: string): ToolError | undefined {
	if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return undefined;
	return new ToolError('io', `Permission denied: ${what} is read-only for this user${code === 'EROFS' ? ' (read-only file system)' : ''}. Nothing was written. Ask the user to make it writable.`);
}

async function nearestExisting(folder: string): Promise<string> {
	for (let current = folder; ; current = path.dirname(current)) {
		if (await statOrNull(nodeFileSystem, current) || path.dirname(current) === current) return current;
	}
}

function staleError(displayPath: string, known: FileVersion, now: FileVersion | null, when: string): ToolError {
	const what = now === null
		? 'it was deleted'
		: known.size === now.size && known.mtimeMs === now.mtimeMs
			? 'same size and time stamp, other content'
			: [
			known.size !== now.size ? `size ${formatCount(known.size)} → ${formatCount(now.size)} bytes` : 'same size',
			known.mtimeMs !== now.mtimeMs ? `modified ${new Date(now.mtimeMs).toISOString()}` : undefined,
		].filter(Boolean).join(', ');
	return new ToolError(
		'stale_write',
		`${displayPath} changed on disk ${when} (${what}). Nothing was written, so the other change is not lost. Read the file again with read_file, then redo your change on its current content.`,
		{ path: displayPath, known, now },
	);
}

/**
 * A file's version, or null when nothing is there. On disk it is asked synchronously: a stat
 * returns at once, and a change set asks it of every file (a round trip through the I/O threads
 * each would cost several times the call).
 */
async function statOrNull(fileSystem: FileSystem, absolute: string): Promise<FileVersion | null> {
	try {
		const stat = fileSystem.local ? fs.statSync(absolute) : await fileSystem.stat(absolute);
		return { mtimeMs: stat.mtimeMs, size: stat.size };
	} catch {
		return null;
	}
}

/**
 * What this tool host wrote is what it knows: the next change to these files is not stale.
 * `written`: the versions the host saw right after writing (the others are asked of the disk).
 */
export async function recordVersions(state: ChangeState, changes: readonly FileChange[], fileSystem: FileSystem = nodeFileSystem, written?: WrittenVersions): Promise<void> {
	// The stats are taken together; the versions are recorded in change order (a file may be moved, then written).
	const versions = await everyInOrder(changes, change => {
		if (change.after === null) return Promise.resolve(null);
		const target = change.movedTo?.path ?? change.path;
		return Promise.resolve(written?.get(target) ?? statOrNull(fileSystem, target));
	});
	for (const [index, change] of changes.entries()) {
		const target = change.movedTo?.path ?? change.path;
		if (change.movedTo) state.fileVersions.delete(change.path);
		const version = versions[index];
		if (change.after !== null && version) state.fileVersions.set(target, withDigest(version, change.after));
		else state.fileVersions.delete(target);
	}
}

/** A file as a change starts from: the open editor's unsaved text when there is one, else the disk. */
export interface CurrentFile {
	readonly exists: boolean;
	/** Null when the file does not exist. */
	readonly bytes: Uint8Array | null;
	/** The bytes are an editor's unsaved text (re-encoded with the file's BOM). */
	readonly fromEditor: boolean;
	/** Where the file read really is (a local file that exists). */
	readonly real?: string;
	/** The file the bytes were read from (a local file read from disk, not an editor's text). */
	readonly identity?: FileIdentity;
}

/**
 * Reads what a change is made on. Refuses folders and special files, and a file that changed on
 * disk since this tool host last read it (so an edit is never computed from text the model has
 * not seen). `first` sees the file's version before anything else does (a size limit).
 */
export async function readCurrent(ctx: ChangeContext, absolute: string, displayPath: string, first?: (version: FileVersion) => void): Promise<CurrentFile> {
	const current = await readFileAsChanged(ctx, absolute, displayPath, stat => {
		first?.(stat);
		assertNotStale(ctx, absolute, displayPath, stat);
	});
	// Same size and time stamp is not the same file: a rewrite within one tick of a coarse clock keeps both.
	const known = ctx.state.fileVersions.get(absolute);
	if (current.bytes && !current.fromEditor && known?.sha256 !== undefined && known.sha256 !== digest(current.bytes)) {
		throw staleError(displayPath, known, { mtimeMs: known.mtimeMs, size: current.bytes.byteLength }, 'since you last read it');
	}
	return current;
}

/**
 * A file over DIGEST_MAX_BYTES that a change may be computed on without holding it (see DiskBytes):
 * opened through a checked descriptor, after the stale-write check, for the caller to read in
 * chunks and close. Undefined where the change must be made on bytes in memory: in VS Code (its
 * WorkspaceEdit takes the new bytes whole, and its diff views read both sides after the write), a
 * virtual workspace, an editor's unsaved text, a missing or small file (readCurrent then says why).
 */
export async function openLargeOnDisk(ctx: ChangeContext, absolute: string, displayPath: string): Promise<OpenedFile | undefined> {
	if (ctx.host.kind !== 'node' || !ctx.boundary.fileSystem.local || ctx.host.dirtyText(absolute) !== undefined) return undefined;
	// A plain stat first: most files edited are small, and a checked open costs several calls.
	if (((await statOrNull(nodeFileSystem, absolute))?.size ?? 0) <= DIGEST_MAX_BYTES) return undefined;
	let file: OpenedFile;
	try {
		file = await openForReading(absolute, displayPath, ctx.boundary, 'write');
	} catch (error) {
		if (error instanceof ToolError && (error.code === 'not_found' || error.code === 'not_directory')) return undefined;
		throw error;
	}
	try {
		assertNotStale(ctx, absolute, displayPath, { mtimeMs: file.stat.mtimeMs, size: file.stat.size });
	} catch (error) {
		await file.handle.close().catch(() => undefined);
		throw error;
	}
	if (file.stat.size > DIGEST_MAX_BYTES) return file;
	await file.handle.close().catch(() => undefined);
	return undefined;
}

/** Files up to this size get a digest in their recorded version (reading them whole is cheap). */
export const DIGEST_MAX_BYTES = 1024 * 1024;

/** The version of an open file as it is now: its stat, and a digest of its content when it is small. */
export async function currentVersion(handle: ReadHandle): Promise<FileVersion> {
	const stat = await handle.stat();
	const version = { mtimeMs: stat.mtimeMs, size: stat.size };
	if (stat.size > DIGEST_MAX_BYTES) return version;
	const bytes = await readWhole(handle, stat.size).catch(() => null);
	return withDigest(version, bytes);
}

export function withDigest(version: FileVersion, bytes: FileBytes | null): FileVersion {
	// New bytes copied from a file left on disk are not in memory, and that file is gone now.
	if (bytes instanceof DiskSplice) return version;
	return bytes !== null && bytes.byteLength === version.size && bytes.byteLength <= DIGEST_MAX_BYTES ? { ...version, sha256: digest(wholeBytes(bytes)) } : version;
}

function digest(bytes: Uint8Array): string {
	return createHash('sha256').update(bytes).digest('hex');
}

/** A file as a change sees it (the editor's unsaved text first), after `check` has seen its version. */
async function readFileAsChanged(ctx: ChangeContext, absolute: string, displayPath: string, check?: (version: FileVersion) => void, expected?: Uint8Array): Promise<CurrentFile> {
	if (!ctx.boundary.fileSystem.local) return readVirtualAsChanged(ctx, absolute, displayPath, check);
	let file: OpenedFile;
	try {
		// What a change is made on must be inside the workspace when it is read, not only when it was resolved.
		file = await openForReading(absolute, displayPath, ctx.boundary, 'write');
	} catch (error) {
		// not_directory: a part of the path is a file; the tool says which when it checks the folders.
		if (error instanceof ToolError && (error.code === 'not_found' || error.code === 'not_directory')) return { exists: false, bytes: null, fromEditor: false };
		throw error;
	}
	const { handle, stat } = file;
	try {
		check?.({ mtimeMs: stat.mtimeMs, size: stat.size });
		const dirty = ctx.host.dirtyText(absolute);
		if (dirty !== undefined) {
			const bom = hasBom(await readHead(handle, 3));
			return { exists: true, bytes: encodeText(dirty.startsWith('\ufeff') ? dirty.slice(1) : dirty, { bom }), fromEditor: true, real: file.real };
		}
		// A file that still holds what is expected is not read into a second copy of it.
		const identity = { dev: stat.dev, ino: stat.ino, mtimeMs: stat.mtimeMs };
		if (expected && await holdsExactly(handle, stat.size, expected)) return { exists: true, bytes: expected, fromEditor: false, real: file.real, identity };
		const bytes = await readWhole(handle, stat.size);
		return { exists: true, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), fromEditor: false, real: file.real, identity };
	} catch (error) {
		throw fromNodeError(error, displayPath);
	} finally {
		await handle.close().catch(() => undefined);
	}
}

/** Bytes compared a chunk at a time, so checking a big file costs no second copy of it. */
const COMPARE_CHUNK = 4 * 1024 * 1024;

/** Whether the open file's first `size` bytes are `expected`, and nothing else. */
async function holdsExactly(handle: ReadHandle, size: number, expected: Uint8Array): Promise<boolean> {
	if (size !== expected.byteLength) return false;
	const want = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
	const chunk = Buffer.allocUnsafe(Math.min(COMPARE_CHUNK, Math.max(size, 1)));
	const inPlace = size <= SYNC_READ_BYTES;
	for (let at = 0; at < size;) {
		const bytesRead = await readAt(handle, chunk, 0, Math.min(chunk.length, size - at), at, inPlace);
		if (bytesRead === 0 || want.compare(chunk, 0, bytesRead, at, at + bytesRead) !== 0) return false;
		at += bytesRead;
	}
	return true;
}

/** The stale-write rule on its own, for tools that want to fail before computing anything. */
export function assertNotStale(ctx: ChangeContext, absolute: string, displayPath: string, now: FileVersion): void {
	const known = ctx.state.fileVersions.get(absolute);
	if (known && !sameVersion(known, now)) throw staleError(displayPath, known, now, 'since you last read it');
}

function sameVersion(a: FileVersion, b: FileVersion): boolean {
	return a.mtimeMs === b.mtimeMs && a.size === b.size;
}

/**
 * A file of a virtual workspace: no descriptor to verify and no ranged reads, so it is read whole
 * (bounded, see readBounded). Its changes are written through the file system, not as an editor
 * edit, so a file with unsaved editor changes is refused rather than written under them.
 */
async function readVirtualAsChanged(ctx: ChangeContext, absolute: string, displayPath: string, check?: (version: FileVersion) => void): Promise<CurrentFile> {
	const fileSystem = ctx.boundary.fileSystem;
	if (ctx.host.dirtyText(absolute) !== undefined) {
		throw new ToolError('unavailable', `${displayPath} has unsaved changes in an editor, and in this workspace (${fileSystem.scheme}:) Toolbelt writes files directly, which would conflict with them. Nothing was written. Ask the user to save or revert ${displayPath}, then try again.`);
	}
	const stat = await fileSystem.stat(absolute).catch(() => null);
	if (stat === null) return { exists: false, bytes: null, fromEditor: false };
	if (stat.isDirectory()) throw new ToolError('is_directory', `${displayPath} is a directory, not a file. Use list_dir to see what it holds, and give the path of a file.`);
	if (!stat.isFile()) throw new ToolError('io', `${displayPath} is not a regular file (a device, socket or pipe); these tools neither read nor change such files. Give the path of a regular file.`);
	check?.({ mtimeMs: stat.mtimeMs, size: stat.size });
	return { exists: true, bytes: await readBounded(fileSystem, absolute, displayPath), fromEditor: false };
}
