import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FileChange } from '../context';
import { ToolError } from '../results/errors';
import { compactStamp } from '../files/files';
import { PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE } from '../files/storage';
import { OpenedFile, openForReading, pathOfOpened, Reach } from '../files/verifiedOpen';
import { FileSystem, nodeFileSystem } from '../files/fileSystem';
import { wholeBytes } from '../files/splicedBytes';
import type { FileIdentity } from './stale';

/**
 * Before every mutation the files it touches are copied to `<storageDir>/backups/<set>/`, with a
 * manifest.json saying where each came from. The command palette lists the sets and restores one
 * by committing the change set `restoreChanges` builds (so a restore is itself confirmed, backed
 * up and undoable).
 */

export const BACKUP_FOLDER = 'backups';
/** Sets kept; older ones are removed after each new backup. */
export const MAX_BACKUP_SETS = 200;
const MANIFEST = 'manifest.json';

export interface BackupEntry {
	/** Absolute path of the file the change touched. */
	readonly path: string;
	readonly displayPath: string;
	/** False when the change created the file: restoring means deleting it. */
	readonly existed: boolean;
	/** File name of the copy inside the set's folder (when existed). */
	readonly copy?: string;
	/** Where the change moved the file, when it did. */
	readonly movedTo?: string;
}

export interface BackupSet {
	readonly id: string;
	/** The folder holding the copies and manifest.json. */
	readonly dir: string;
	readonly title: string;
	/** The tool whose change this set precedes (absent in sets from older versions). */
	readonly tool?: string;
	readonly createdAt: number;
	readonly files: readonly BackupEntry[];
}

export interface BackupOptions {
	/** The tool whose change this is, recorded in the manifest. */
	readonly tool?: string;
	/** Where the originals must be (see copyOriginal). */
	readonly reach?: Reach;
	/** The set's time; a tool host takes it from its BackupClock. */
	readonly createdAt?: number;
	/** Files' bytes just read through a checked descriptor (by the commit's last check): written out, not read again. */
	readonly onDisk?: ReadonlyMap<string, Uint8Array>;
	/** The files are not on disk (a virtual workspace): copy the bytes each change was planned on (see copyPlanned). */
	readonly fromPlan?: boolean;
	/**
	 * Files of `onDisk` that the host replaces by renaming a new file over them (Node's atomic writes,
	 * never an editor's in-place save): where each really is and which file its bytes were read
	 * from. Each is backed up by a hard link to that very file instead of a copy (see linkOriginal).
	 */
	readonly replaced?: ReadonlyMap<string, LinkSource>;
	/** Makes a hard link (tests put a failing one here: another file system, a refusing one). */
	readonly link?: (existing: string, newPath: string) => void;
	/** Sets kept after this one (MAX_BACKUP_SETS; a test keeps a few). */
	readonly maxSets?: number;
}

export interface LinkSource {
	/** The file's real path, as the check that read its bytes found it. */
	readonly real: string;
	/** The file those bytes were read from. */
	readonly identity: FileIdentity;
}

/** A backup made as a hard link to the original, until `sealBackups` gave it a life of its own. */
interface Linked {
	readonly copy: string;
	/** The bytes checked: written out instead if the link cannot stay. */
	readonly bytes: Uint8Array;
	/** The file's mtime when its bytes were checked: another one at the seal means it was written in place meanwhile. */
	readonly mtimeMs: number;
}

/** What backupOriginals made: the set, the copies' paths, and the links to seal once the change is written. */
export interface Backup {
	readonly set: BackupSet;
	readonly copies: string[];
	/** Copies that are hard links to the originals (see sealBackups); empty without `replaced`. */
	readonly linked: readonly Linked[];
}

/**
 * Copies the current disk content of every file a change set touches. Returns the copies' paths.
 * Each original is opened and checked against `reach` before it is copied, so a swapped folder
 * cannot slip an outside file into a backup (that a restore would then write into the workspace).
 * Backups are private to the user: folders 0700, files 0600.
 */
export async function backupOriginals(storageDir: string, title: string, changes: readonly FileChange[], options: BackupOptions = {}): Promise<Backup> {
	const { tool, reach, createdAt = Date.now(), onDisk, fromPlan = false, replaced, link = fs.linkSync, maxSets = MAX_BACKUP_SETS } = options;
	const root = path.join(storageDir, BACKUP_FOLDER);
	const id = `${compactStamp(createdAt)}-${randomBytes(3).toString('hex')}`;
	const dir = path.join(root, id);
	await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_FOLDER_MODE });
	const linked: Linked[] = [];
	// Every file is waited for, so that nothing is still being written into the set when a failed one is removed.
	const settled = await Promise.allSettled(changes.map(async (change, index): Promise<BackupEntry> => {
		const copy = `${index}-${path.basename(change.path)}`;
		const known = onDisk?.get(change.path);
		const target = path.join(dir, copy);
		const source = replaced?.get(change.path);
		if (known && source && linkOriginal(source, known, target, link)) linked.push({ copy: target, bytes: known, mtimeMs: source.identity.mtimeMs });
		else if (known) await writeCopy(known, target);
		const existed = known ? true : fromPlan ? await copyPlanned(change, target) : await copyOriginal(change, target, reach);
		return {
			path: change.path,
			displayPath: change.displayPath,
			existed,
			...(existed ? { copy } : {}),
			...(change.movedTo ? { movedTo: change.movedTo.path } : {}),
		};
	}));
	const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
	const files = settled.flatMap(result => (result.status === 'fulfilled' ? [result.value] : []));
	try {
		if (failed) throw failed.reason;
		await fs.promises.writeFile(path.join(dir, MANIFEST), JSON.stringify({ id, title, ...(tool ? { tool } : {}), createdAt, files }, null, '\t'), { mode: PRIVATE_FILE_MODE });
	} catch (error) {
		// The change will not be made: a set left half made would keep links to live workspace files (never sealed) and no manifest.
		await fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined);
		throw error;
	}
	const copies = files.filter(file => file.copy).map(file => path.join(dir, file.copy!));
	const set: BackupSet = { id, dir, title, ...(tool ? { tool } : {}), createdAt, files };
	await prune(root, maxSets);
	return { set, copies, linked };
}

/**
 * A backup by hard link: once the host has renamed the new file over the original, the original's
 * bytes are no longer at any path of the workspace, only here; the link is the copy, made for the
 * cost of one directory entry instead of a new file (which on a busy ext4 journal costs a
 * millisecond or more each). False, with nothing left behind, where that cannot be: another file
 * system (EXDEV), a refusal (EPERM under protected_hardlinks, EMLINK), a link that is not to the
 * file whose bytes were checked (a folder or the file swapped since: another identity), one that
 * shares that file with a third name (nlink above 2: written through that name, the backup would
 * change with it), or a file written since the check (another size or mtime: the backup must
 * hold what the change was computed on). The caller then writes a copy.
 */
function linkOriginal(source: LinkSource, bytes: Uint8Array, copy: string, link: (existing: string, newPath: string) => void): boolean {
	try {
		// link() takes a symlink itself, never its target: one swapped in for the file fails the identity check.
		link(source.real, copy);
	} catch {
		return false;
	}
	// A symlink linked in its place has an inode of its own; link() never crosses file systems (EXDEV), so dev only completes the identity.
	const made = fs.lstatSync(copy);
	if (made.dev === source.identity.dev && made.ino === source.identity.ino && made.nlink === 2 && unwritten(made, bytes, source.identity.mtimeMs)) return true;
	fs.unlinkSync(copy);
	return false;
}

/**
 * Whether a linked file still holds the bytes checked: their size, and no write since (its mtime;
 * a rewrite of the same size is seen only there). Reading it again would cost what the link saves.
 */
function unwritten(stat: fs.Stats, bytes: Uint8Array, mtimeMs: number): boolean {
	return stat.size === bytes.byteLength && stat.mtimeMs === mtimeMs;
}

/**
 * Once the change is written (or failed), each linked backup must be the only name of its file:
 * then nobody writes it through the workspace any more, and it is made owner-only like a copy. A
 * link whose file is still at its path (the change failed or did not replace it), has another
 * name, or was written in place before it was replaced is replaced by a copy of the bytes checked, written beside it and renamed over it. Best
 * effort: the change is decided by now, and a link left is still what the file held before it.
 */
export async function sealBackups(linked: readonly Linked[]): Promise<void> {
	for (const { copy, bytes, mtimeMs } of linked) {
		try {
			const stat = fs.lstatSync(copy);
			// Written through the workspace name before the change replaced it: the bytes checked, not those.
			if (stat.nlink === 1 && unwritten(stat, bytes, mtimeMs)) {
				fs.chmodSync(copy, PRIVATE_FILE_MODE);
				continue;
			}
		} catch {
			// Not ours to change (another owner's file): a copy instead.
		}
		await replaceWithCopy(copy, bytes).catch(() => undefined);
	}
}

async function replaceWithCopy(copy: string, bytes: Uint8Array): Promise<void> {
	const temp = `${copy}.copy`;
	await writeCopy(bytes, temp);
	fs.renameSync(temp, copy);
}

/** Copies up to this size are written from this thread: into the page cache, in microseconds. */
const SYNC_COPY_BYTES = 1024 * 1024;

/**
 * A copy of bytes the caller has just read from the file through a checked descriptor (no second
 * open). Created owner-only: the umask can take bits off that mode, never add any. A small copy
 * is written synchronously: its open, write and close as round trips through the I/O threads
 * cost several times the calls, for every file of a change set.
 */
async function writeCopy(bytes: Uint8Array, copy: string): Promise<void> {
	const options = { flag: 'wx', mode: PRIVATE_FILE_MODE };
	if (bytes.byteLength <= SYNC_COPY_BYTES) fs.writeFileSync(copy, bytes, options);
	else await fs.promises.writeFile(copy, bytes, options);
}

/**
 * For files that are not on disk (a virtual workspace): the bytes the change was planned on, which
 * the pipeline has just found byte for byte in the file. False when the change creates the file.
 */
async function copyPlanned(change: FileChange, copy: string): Promise<boolean> {
	if (change.before === null) return false;
	await fs.promises.writeFile(copy, wholeBytes(change.before), { mode: PRIVATE_FILE_MODE });
	return true;
}

/** False when there was no file to copy. */
async function copyOriginal(change: FileChange, copy: string, reach: Reach | undefined): Promise<boolean> {
	let file: OpenedFile;
	try {
		file = await openForReading(change.path, change.displayPath, reach, 'write');
	} catch (error) {
		if (error instanceof ToolError && error.code === 'not_found') return false;
		throw error;
	}
	try {
		// copyFile may clone (reflink) on file systems that can: a 50 MB backup costs next to nothing there.
		await fs.promises.copyFile(pathOfOpened(file), copy, fs.constants.COPYFILE_FICLONE);
		await fs.promises.chmod(copy, PRIVATE_FILE_MODE);
		return true;
	} finally {
		await file.handle.close().catch(() => undefined);
	}
}

/** Backup times strictly increasing within one tool host, so two changes in one millisecond still list in order. */
export class BackupClock {
	private last = 0;

	next(now = Date.now()): number {
		this.last = Math.max(now, this.last + 1);
		return this.last;
	}
}

/** Backup sets, newest first. Sets with an unreadable manifest are skipped. */
export async function listBackups(storageDir: string): Promise<BackupSet[]> {
	const root = path.join(storageDir, BACKUP_FOLDER);
	const ids = await fs.promises.readdir(root).catch(() => [] as string[]);
	const sets: BackupSet[] = [];
	for (const id of ids) {
		try {
			const manifest = JSON.parse(await fs.promises.readFile(path.join(root, id, MANIFEST), 'utf8'));
			const tool = typeof manifest.tool === 'string' ? { tool: manifest.tool } : {};
			sets.push({ id, dir: path.join(root, id), title: String(manifest.title), ...tool, createdAt: Number(manifest.createdAt), files: manifest.files });
		} catch {
			// A set whose manifest was never written (crash during backup) has nothing reliable to restore.
		}
	}
	return sets.sort((a, b) => b.createdAt - a.createdAt || b.id.localeCompare(a.id));
}

/**
 * The change set that puts a backup's files back: each file gets its copy's bytes, files the
 * change created are deleted, and moved files return to where they were.
 */
export async function restoreChanges(set: BackupSet, display: (absolute: string) => string, fileSystem: FileSystem = nodeFileSystem): Promise<FileChange[]> {
	const changes: FileChange[] = [];
	for (const entry of set.files) {
		const current = entry.movedTo ?? entry.path;
		// The workspace's file (on disk, or through the port in a virtual workspace); the copy is on disk.
		const now = await fileSystem.readFile(current).catch(() => null);
		const original = entry.existed && entry.copy ? await fs.promises.readFile(path.join(set.dir, entry.copy)) : null;
		if (now === null && original === null) continue;
		if (entry.movedTo && now !== null && original !== null) {
			// Back to the old place with the old bytes.
			changes.push({ path: current, displayPath: display(current), before: now, after: original, movedTo: { path: entry.path, displayPath: display(entry.path) } });
			continue;
		}
		if (entry.movedTo && now !== null) changes.push({ path: current, displayPath: display(current), before: now, after: null });
		if (entry.movedTo) {
			if (original !== null) changes.push({ path: entry.path, displayPath: display(entry.path), before: null, after: original });
			continue;
		}
		changes.push({ path: entry.path, displayPath: display(entry.path), before: now, after: original });
	}
	return changes;
}

async function prune(root: string, maxSets: number): Promise<void> {
	const ids = await oldestFirst(root, await fs.promises.readdir(root).catch(() => [] as string[]));
	const excess = ids.length - maxSets;
	for (const id of ids.slice(0, Math.max(0, excess))) {
		await fs.promises.rm(path.join(root, id), { recursive: true, force: true }).catch(() => undefined);
	}
}

/**
 * Set names, oldest first. A name holds its time to the second and a random suffix, so names order
 * sets of different seconds; within one second only the manifests' times do (as in listBackups).
 * Only those few manifests are read. A set without a readable manifest counts as the newest of its
 * second: it may be another window's set still being written.
 */
async function oldestFirst(root: string, ids: readonly string[]): Promise<string[]> {
	const secondOf = (id: string) => id.slice(0, id.lastIndexOf('-'));
	const sorted = [...ids].sort();
	const sharing = sorted.filter((id, index) => secondOf(id) === secondOf(sorted[index - 1] ?? '') || secondOf(id) === secondOf(sorted[index + 1] ?? ''));
	const times = new Map(await Promise.all(sharing.map(async id => [id, await manifestTime(path.join(root, id))] as const)));
	return sorted.sort((a, b) => secondOf(a).localeCompare(secondOf(b)) || (times.get(a) ?? 0) - (times.get(b) ?? 0) || a.localeCompare(b));
}

async function manifestTime(dir: string): Promise<number> {
	try {
		const createdAt = Number(JSON.parse(await fs.promises.readFile(path.join(dir, MANIFEST), 'utf8')).createdAt);
		return Number.isFinite(createdAt) ? createdAt : Infinity;
	} catch {
		return Infinity;
	}
}
