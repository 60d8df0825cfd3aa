import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { backupOriginals } from './backups';
import type { ApprovalRequest, Diagnostic, FileChange, FileVersion, SharedState, ToolContext } from './context';
import { statOfDiff, unifiedDiff } from './diff';
import { CancelledError, fromNodeError, throwIfAborted, ToolError } from './errors';
import { readHead } from './files';
import { encodeText, hasBom } from './text';
import { formatCount } from './truncate';

/**
 * The one way files change (write_file, edit_file, write_output, apply_patch, the plan tools):
 * tools compute the complete change set in memory, then call `commitChanges` once.
 *
 *   stale-write check → approval → backup → host.applyChanges (all or nothing) → new versions
 *   recorded → diff shown (per toolbelt.showDiffs) → new diagnostics collected
 *
 * Nothing is written before approval, so the preview phase (prepareInvocation) sees the same
 * request the real call would make.
 */

export interface CommitResult {
	readonly changes: FileChange[];
	/** Unified diff of every change (git-style a/ b/ headers). */
	readonly diff: string;
	readonly stats: { path: string; added: number; removed: number }[];
	/** Paths of the backup copies of the originals (files that existed). */
	readonly backups: string[];
	/** New errors and warnings VS Code reported for the changed files after a short wait. */
	readonly diagnostics?: string;
}

/** How long to wait for language servers to react to a change, and how many new problems to report. */
export const DIAGNOSTICS_WAIT_MS = 1000;
const DIAGNOSTICS_POLL_MS = 100;
const DIAGNOSTICS_SETTLE_MS = 250;
export const MAX_NEW_DIAGNOSTICS = 10;

export async function commitChanges(ctx: ToolContext, title: string, changes: FileChange[]): Promise<CommitResult> {
	throwIfAborted(ctx.signal, 'The change');
	const seen = await checkNotStale(ctx, changes);
	const request: ApprovalRequest = { kind: 'files', title, changes, protectedPaths: await protectedPathsOf(ctx, changes) };
	const confirmed = await ctx.approve(request);
	throwIfAborted(ctx.signal, 'The change');
	// The person may have taken a while to decide: the files must still be what the change was made from.
	await checkStillAsSeen(ctx, changes, seen);

	const diagnosticsBefore = await snapshotDiagnostics(ctx, changes);
	const { copies } = await backupOriginals(ctx.host.storageDir, title, changes, ctx.tool).catch(error => {
		throw new ToolError('io', `Could not back up the original files before changing them (${(error as Error).message}). Nothing was changed.`);
	});
	try {
		await ctx.host.applyChanges(changes, ctx.signal);
	} catch (error) {
		if (error instanceof ToolError) throw error;
		// Hosts report what they know as ToolErrors; for anything else, claim no revert that may not have happened.
		throw new ToolError('io', `The change could not be applied: ${(error as Error)?.message ?? String(error)}. Some files may have changed: read them again before retrying, and tell the user if they differ from what you expect.`);
	}
	await recordVersions(ctx.state, changes);
	ctx.note({ filesTouched: changes.map(change => change.movedTo?.displayPath ?? change.displayPath) });

	if (ctx.host.showDiffs && (ctx.settings.showDiffs === 'always' || (ctx.settings.showDiffs === 'onConfirm' && confirmed))) {
		await ctx.host.showDiffs(changes).catch(() => undefined);
	}
	const diagnostics = diagnosticsBefore ? await newDiagnostics(ctx, changes, diagnosticsBefore) : undefined;
	const diffs = changes.map(change => unifiedDiff(change));
	return {
		changes,
		diff: diffs.join('\n'),
		stats: changes.map((change, index) => ({ path: change.movedTo?.displayPath ?? change.displayPath, ...statOfDiff(diffs[index]) })),
		backups: copies,
		...(diagnostics ? { diagnostics } : {}),
	};
}

/**
 * Display paths among the changes (sources and destinations) that match `protectedPaths`. The
 * boundary decides, real paths included: a symlink (or a symlinked folder, for a new file) onto
 * `.git/` is `.git/`.
 */
async function protectedPathsOf(ctx: ToolContext, changes: readonly FileChange[]): Promise<string[]> {
	const found = new Set<string>();
	const check = async (absolute: string, display: string) => {
		if ((await ctx.boundary.resolve(absolute, 'write')).isProtected) found.add(display);
	};
	for (const change of changes) {
		await check(change.path, change.displayPath);
		if (change.movedTo) await check(change.movedTo.path, change.movedTo.displayPath);
	}
	return [...found];
}

type Seen = Map<string, FileVersion | null>;

/**
 * Refuses a change to a file that changed on disk since this tool host last read or wrote it
 * (the model's picture of it is out of date), or that no longer matches what the change was
 * computed from. Returns what each file looked like now, for the re-check after approval.
 */
async function checkNotStale(ctx: ToolContext, changes: readonly FileChange[]): Promise<Seen> {
	const seen: Seen = new Map();
	for (const change of changes) {
		const stat = await statOrNull(change.path);
		seen.set(change.path, stat);
		if (change.before === null) {
			if (stat) throw new ToolError('already_exists', `${change.displayPath} was created by someone else while this change was prepared. Nothing was written. Read it, then decide whether to overwrite it.`);
			await assertWritable(await nearestExisting(path.dirname(change.path)), `the folder for ${change.displayPath}`);
			continue;
		}
		if (!stat) throw new ToolError('stale_write', `${change.displayPath} was deleted or moved on disk since it was read. Nothing was written. Check with list_dir or find_files, then read it again.`);
		assertNotStale(ctx, change.path, change.displayPath, stat);
		await assertStillHolds(ctx, change, stat, 'while the change was being prepared');
		await assertWritable(change.path, change.displayPath);
		if (change.movedTo && await statOrNull(change.movedTo.path)) {
			throw new ToolError('already_exists', `${change.movedTo.displayPath} already exists, so ${change.displayPath} cannot be moved there. Nothing was written.`);
		}
	}
	return seen;
}

async function checkStillAsSeen(ctx: ToolContext, changes: readonly FileChange[], seen: Seen): Promise<void> {
	for (const change of changes) {
		const before = seen.get(change.path) ?? null;
		const now = await statOrNull(change.path);
		if (before === null && now === null) continue;
		if (before === null) throw new ToolError('already_exists', `${change.displayPath} was created by someone else while waiting for confirmation. Nothing was written. Read it, then decide whether to overwrite it.`);
		if (now === null || !sameVersion(now, before)) {
			throw staleError(change.displayPath, before, now, 'while waiting for confirmation');
		}
		await assertStillHolds(ctx, change, now, 'while waiting for confirmation');
	}
}

/**
 * The disk must still hold the very bytes the change was computed from (unless they came from an
 * editor's unsaved text): a rewrite with as many bytes can keep size and time stamp alike.
 */
async function assertStillHolds(ctx: ToolContext, change: FileChange, now: FileVersion, when: string): Promise<void> {
	if (change.before === null || ctx.host.dirtyText(change.path) !== undefined) return;
	const known = { mtimeMs: now.mtimeMs, size: change.before.byteLength };
	if (now.size !== known.size) throw staleError(change.displayPath, known, now, when);
	const bytes = await fs.promises.readFile(change.path).catch(() => null);
	if (bytes === null || !bytes.equals(change.before)) throw staleError(change.displayPath, known, now, when);
}

/** Refused before anyone is asked to approve: a read-only file (or folder) would fail the write anyway. */
async function assertWritable(absolute: string, what: string): Promise<void> {
	try {
		await fs.promises.access(absolute, fs.constants.W_OK);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return;
		throw new ToolError('io', `Permission denied: ${what} is read-only for this user${code === 'EROFS' ? ' (read-only file system)' : ''}. Nothing was written. Ask the user to make it writable.`);
	}
}

async function nearestExisting(folder: string): Promise<string> {
	for (let current = folder; ; current = path.dirname(current)) {
		if (await statOrNull(current) || path.dirname(current) === current) return current;
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

async function statOrNull(absolute: string): Promise<FileVersion | null> {
	try {
		const stat = await fs.promises.stat(absolute);
		return { mtimeMs: stat.mtimeMs, size: stat.size };
	} catch {
		return null;
	}
}

/** What this tool host wrote is what it knows: the next change to these files is not stale. */
async function recordVersions(state: SharedState, changes: readonly FileChange[]): Promise<void> {
	for (const change of changes) {
		const target = change.movedTo?.path ?? change.path;
		if (change.movedTo) state.fileVersions.delete(change.path);
		if (change.after === null) {
			state.fileVersions.delete(target);
			continue;
		}
		const version = await statOrNull(target);
		if (version) state.fileVersions.set(target, withDigest(version, change.after));
		else state.fileVersions.delete(target);
	}
}

/**
 * Serializes work on files through one tool host: each call waits for the calls before it on any
 * of the same paths, then holds them until `work` settles. Locks are taken for all paths at once
 * (never one after another), so two calls on overlapping sets cannot deadlock.
 */
export async function withFileLocks<T>(state: SharedState, paths: readonly string[], work: () => Promise<T>): Promise<T> {
	const keys = [...new Set(paths.map(lockKey))];
	const previous = keys.map(key => state.fileLocks.get(key));
	let release!: () => void;
	const mine = new Promise<void>(resolve => { release = resolve; });
	for (const key of keys) state.fileLocks.set(key, mine);
	try {
		await Promise.all(previous);
		return await work();
	} finally {
		release();
		for (const key of keys) if (state.fileLocks.get(key) === mine) state.fileLocks.delete(key);
	}
}

function lockKey(absolute: string): string {
	const resolved = path.resolve(absolute);
	return process.platform === 'win32' || process.platform === 'darwin' ? resolved.toLowerCase() : resolved;
}

/** Diagnostics of the changed files before the change, when the host has any to offer. */
async function snapshotDiagnostics(ctx: ToolContext, changes: readonly FileChange[]): Promise<Diagnostic[] | undefined> {
	if (!ctx.host.diagnostics) return undefined;
	const paths = changedTextPaths(changes);
	if (paths.length === 0) return undefined;
	return ctx.host.diagnostics(paths).catch(() => undefined);
}

function changedTextPaths(changes: readonly FileChange[]): string[] {
	return changes.filter(change => change.after !== null).map(change => change.movedTo?.path ?? change.path);
}

/**
 * Errors and warnings that appeared after the change. Language servers react asynchronously, so
 * this polls until the set differs from before (then lets it settle briefly), or the wait ends.
 */
async function newDiagnostics(ctx: ToolContext, changes: readonly FileChange[], before: Diagnostic[]): Promise<string | undefined> {
	const paths = changedTextPaths(changes);
	const keyOf = (d: Diagnostic) => `${d.path}\u0000${d.severity}\u0000${d.message}\u0000${d.source ?? ''}\u0000${d.code ?? ''}`;
	const baseline = signature(before.map(keyOf));
	const deadline = Date.now() + DIAGNOSTICS_WAIT_MS;
	let after = before;
	while (Date.now() < deadline && !ctx.signal.aborted) {
		await delay(DIAGNOSTICS_POLL_MS);
		after = await ctx.host.diagnostics!(paths).catch(() => after);
		if (signature(after.map(keyOf)) !== baseline) {
			await delay(DIAGNOSTICS_SETTLE_MS);
			after = await ctx.host.diagnostics!(paths).catch(() => after);
			break;
		}
	}
	if (ctx.signal.aborted) throw new CancelledError('Waiting for diagnostics');
	const remaining = new Map<string, number>();
	for (const key of before.map(keyOf)) remaining.set(key, (remaining.get(key) ?? 0) + 1);
	const fresh = after.filter(d => {
		if (d.severity !== 'error' && d.severity !== 'warning') return false;
		const key = keyOf(d);
		const count = remaining.get(key) ?? 0;
		if (count > 0) {
			remaining.set(key, count - 1);
			return false;
		}
		return true;
	});
	if (fresh.length === 0) return undefined;
	fresh.sort((a, b) => (a.severity === b.severity ? a.path.localeCompare(b.path) || a.line - b.line : a.severity === 'error' ? -1 : 1));
	const lines = fresh.slice(0, MAX_NEW_DIAGNOSTICS).map(d => formatDiagnostic(d, ctx.boundary.display(d.path)));
	const more = fresh.length - MAX_NEW_DIAGNOSTICS;
	if (more > 0) lines.push(`… and ${formatCount(more)} more (see get_diagnostics)`);
	return lines.join('\n');
}

function signature(keys: string[]): string {
	return [...keys].sort().join('\u0001');
}

export function formatDiagnostic(d: Diagnostic, displayPath: string): string {
	const code = d.code !== undefined ? ` ${d.code}` : '';
	const source = d.source ? ` (${d.source})` : '';
	return `${displayPath}:${d.line}:${d.column} ${d.severity}${code}: ${d.message.replace(/\s*\n\s*/g, ' ')}${source}`;
}

function delay(ms: number): Promise<void> {
	return new Promise(resolve => setTimeout(resolve, ms));
}

/** A file as a change starts from: the open editor's unsaved text when there is one, else the disk. */
export interface CurrentFile {
	readonly exists: boolean;
	/** Null when the file does not exist. */
	readonly bytes: Uint8Array | null;
	/** The bytes are an editor's unsaved text (re-encoded with the file's BOM). */
	readonly fromEditor: boolean;
}

/**
 * Reads what a change is made on. Refuses folders and special files, and a file that changed on
 * disk since this tool host last read it (so an edit is never computed from text the model has
 * not seen).
 */
export async function readCurrent(ctx: ToolContext, absolute: string, displayPath: string): Promise<CurrentFile> {
	let stat: fs.Stats;
	try {
		stat = await fs.promises.stat(absolute);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		// ENOTDIR: a part of the path is a file; the tool says which when it checks the folders.
		if (code === 'ENOENT' || code === 'ENOTDIR') return { exists: false, bytes: null, fromEditor: false };
		throw fromNodeError(error, displayPath);
	}
	if (stat.isDirectory()) throw new ToolError('is_directory', `${displayPath} is a directory, not a file. Use list_dir to see what it holds, and give the path of a file.`);
	if (!stat.isFile()) throw new ToolError('io', `${displayPath} is not a regular file (a device, socket or pipe) and cannot be changed by this tool. Give the path of a regular file.`);
	assertNotStale(ctx, absolute, displayPath, { mtimeMs: stat.mtimeMs, size: stat.size });
	const dirty = ctx.host.dirtyText(absolute);
	let bytes: Buffer;
	try {
		if (dirty !== undefined) {
			const bom = hasBom(await readHead(absolute, 3));
			return { exists: true, bytes: encodeText(dirty.startsWith('\ufeff') ? dirty.slice(1) : dirty, { bom }), fromEditor: true };
		}
		bytes = await fs.promises.readFile(absolute);
	} catch (error) {
		throw fromNodeError(error, displayPath);
	}
	const known = ctx.state.fileVersions.get(absolute);
	if (known?.sha256 !== undefined && known.sha256 !== digest(bytes)) {
		throw staleError(displayPath, known, { mtimeMs: stat.mtimeMs, size: stat.size }, 'since you last read it');
	}
	return { exists: true, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), fromEditor: false };
}

/** Files up to this size get a digest in their recorded version (reading them whole is cheap). */
export const DIGEST_MAX_BYTES = 1024 * 1024;

/** The version of a file as it is now: its stat, and a digest of its content when it is small. */
export async function currentVersion(absolute: string): Promise<FileVersion> {
	const stat = await fs.promises.stat(absolute);
	const version = { mtimeMs: stat.mtimeMs, size: stat.size };
	return stat.size <= DIGEST_MAX_BYTES ? withDigest(version, await fs.promises.readFile(absolute).catch(() => null)) : version;
}

function withDigest(version: FileVersion, bytes: Uint8Array | null): FileVersion {
	return bytes !== null && bytes.byteLength === version.size && bytes.byteLength <= DIGEST_MAX_BYTES ? { ...version, sha256: digest(bytes) } : version;
}

function digest(bytes: Uint8Array): string {
	return createHash('sha256').update(bytes).digest('hex');
}

/** The stale-write rule on its own, for tools that want to fail before computing anything. */
export function assertNotStale(ctx: ToolContext, absolute: string, displayPath: string, now: FileVersion): void {
	const known = ctx.state.fileVersions.get(absolute);
	if (known && !sameVersion(known, now)) throw staleError(displayPath, known, now, 'since you last read it');
}

function sameVersion(a: FileVersion, b: FileVersion): boolean {
	return a.mtimeMs === b.mtimeMs && a.size === b.size;
}
