import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { backupOriginals } from './backups';
import { isPending } from './context';
import type { ApprovalRequest, Diagnostic, FileChange, FileVersion, PendingCall, SharedState, ToolContext } from './context';
import { statOfDiff, unifiedDiff } from './diff';
import { BoundaryError, CancelledError, fromNodeError, throwIfAborted, ToolError } from './errors';
import { readHead, readWhole } from './files';
import type { ToolResult } from './result';
import { encodeText, hasBom } from './text';
import { formatCount } from './truncate';
import { OpenedFile, openForReading } from './verifiedOpen';

/**
 * The one way files change (write_file, edit_file, write_output, apply_patch, the plan tools, the
 * code tools, restoring a backup). A change is planned, then committed:
 *
 *   plan:   (under the files' locks, see planWithFileLocks) stale-write check → protected paths →
 *           the approval request, each file's `before` bytes kept with it
 *   commit: locks taken (again, when a person was asked) → every file still byte for byte its
 *           `before` → backup → host.applyChanges (all or nothing) → new versions recorded →
 *           diff shown (per toolbelt.showDiffs) → new diagnostics collected
 *
 * Nothing is written when a plan is made, and no lock is held while the person decides; what is
 * committed is the plan the person was shown, or nothing.
 */

export interface CommitResult {
	readonly changes: readonly FileChange[];
	/** Unified diff of every change (git-style a/ b/ headers). */
	readonly diff: string;
	readonly stats: { path: string; added: number; removed: number }[];
	/** Paths of the backup copies of the originals (files that existed). */
	readonly backups: string[];
	/** New errors and warnings VS Code reported for the changed files after a short wait. */
	readonly diagnostics?: string;
}

/** A change set ready to commit: what the person is asked about, and what the files must still hold. */
export interface ChangePlan {
	readonly title: string;
	readonly changes: readonly FileChange[];
	readonly request: Extract<ApprovalRequest, { kind: 'files' }>;
	/** Each file's version on disk when the change was planned (null: it did not exist). */
	readonly disk: ReadonlyMap<string, FileVersion | null>;
}

/** How long to wait for language servers to react to a change, and how many new problems to report. */
export const DIAGNOSTICS_WAIT_MS = 1000;
const DIAGNOSTICS_POLL_MS = 100;
const DIAGNOSTICS_SETTLE_MS = 250;
export const MAX_NEW_DIAGNOSTICS = 10;

/** Checks a computed change set and builds its approval request; writes nothing. */
export async function planChange(ctx: ToolContext, title: string, changes: readonly FileChange[]): Promise<ChangePlan> {
	throwIfAborted(ctx.signal, 'The change');
	const disk = await checkNotStale(ctx, changes);
	return { title, changes, disk, request: { kind: 'files', title, changes, protectedPaths: await protectedPathsOf(ctx, changes) } };
}

/**
 * A tool's change as a pending call: the registry asks about it, then commits it and `finish`
 * turns what was committed into the tool's result.
 */
export async function pendingChange(
	ctx: ToolContext,
	title: string,
	changes: readonly FileChange[],
	finish: (commit: CommitResult) => ToolResult,
): Promise<PendingCall> {
	const plan = await planChange(ctx, title, changes);
	return { pending: true, request: plan.request, commit: async (commitCtx, confirmed) => finish(await commitPlan(commitCtx, plan, confirmed)) };
}

/**
 * Commits a plan: its files are locked again and must still be byte for byte what the change was
 * made from (the person may have taken a while, and the model or someone else may have written
 * meanwhile), and their paths must still lead where they did.
 */
export async function commitPlan(ctx: ToolContext, plan: ChangePlan, confirmed: boolean): Promise<CommitResult> {
	const { changes, title } = plan;
	return withFileLocks(ctx.state, changes.flatMap(change => (change.movedTo ? [change.path, change.movedTo.path] : [change.path])), async () => {
		throwIfAborted(ctx.signal, 'The change');
		await checkStillAsShown(ctx, changes, plan.disk);
		await checkStillApproved(ctx, changes, plan.request.protectedPaths);

		const diagnosticsBefore = await snapshotDiagnostics(ctx, changes);
		const { copies } = await backupOriginals(ctx.host.storageDir, title, changes, ctx.tool, ctx.boundary).catch(error => {
			if (error instanceof BoundaryError) throw error;
			throw new ToolError('io', `Could not back up the original files before changing them (${(error as Error).message}). Nothing was changed.`);
		});
		try {
			await ctx.host.applyChanges(changes, ctx.signal, ctx.boundary);
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
	});
}

/**
 * Each file must hold exactly the bytes its change was computed from (the editor's unsaved text
 * when there is some, as when it was planned): compared in full, so a same-size edit in the same
 * second is caught too.
 */
async function checkStillAsShown(ctx: ToolContext, changes: readonly FileChange[], disk: ReadonlyMap<string, FileVersion | null>): Promise<void> {
	for (const change of changes) {
		const now = await readFileAsChanged(ctx, change.path, change.displayPath);
		// The editor's unsaved text may be unchanged while the file under it was rewritten: saving
		// the change would overwrite that.
		const planned = disk.get(change.path);
		const onDisk = await statOrNull(change.path);
		if (now.fromEditor && planned && (onDisk === null || !sameVersion(onDisk, planned))) {
			throw staleError(change.displayPath, planned, onDisk, 'while waiting for confirmation');
		}
		if (change.before === null) {
			if (now.exists) throw new ToolError('already_exists', `${change.displayPath} was created by someone else since you were shown the change. Nothing was written. Read it, then decide whether to overwrite it.`);
			continue;
		}
		if (!now.exists || !sameBytes(now.bytes!, change.before)) {
			const what = now.exists ? 'changed' : 'was deleted or moved';
			throw new ToolError(
				'stale_write',
				`${change.displayPath} ${what} since you were shown the change, so the change shown no longer fits it. Nothing was written. Read it again with read_file, then redo your change on its current content.`,
				{ path: change.displayPath },
			);
		}
	}
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
	return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
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

/**
 * Resolves every path again after approval: one that now leads outside is refused by the boundary,
 * and one that became protected meanwhile (a folder swapped for a link into `.git`) was not what the
 * person approved. The host's writes check again at the moment they happen (see atomic.ts).
 */
async function checkStillApproved(ctx: ToolContext, changes: readonly FileChange[], approvedProtected: readonly string[]): Promise<void> {
	const now = await protectedPathsOf(ctx, changes);
	const added = now.filter(display => !approvedProtected.includes(display));
	if (added.length) {
		throw new ToolError('stale_write', `${added.join(', ')} became a protected path while waiting for confirmation (a folder or symlink on the way changed). Nothing was written. Check the path with list_dir, then make the change again.`);
	}
}

/**
 * Refuses a change to a file that changed on disk since this tool host last read or wrote it
 * (the model's picture of it is out of date), or that no longer matches what the change was
 * computed from.
 */
async function checkNotStale(ctx: ToolContext, changes: readonly FileChange[]): Promise<Map<string, FileVersion | null>> {
	const disk = new Map<string, FileVersion | null>();
	for (const change of changes) {
		const stat = await statOrNull(change.path);
		disk.set(change.path, stat);
		if (change.before === null) {
			if (stat) throw new ToolError('already_exists', `${change.displayPath} was created by someone else while this change was prepared. Nothing was written. Read it, then decide whether to overwrite it.`);
			await assertWritable(await nearestExisting(path.dirname(change.path)), `the folder for ${change.displayPath}`);
			continue;
		}
		if (!stat) throw new ToolError('stale_write', `${change.displayPath} was deleted or moved on disk since it was read. Nothing was written. Check with list_dir or find_files, then read it again.`);
		assertNotStale(ctx, change.path, change.displayPath, stat);
		const fromEditor = ctx.host.dirtyText(change.path) !== undefined;
		if (!fromEditor && stat.size !== change.before.byteLength) {
			throw staleError(change.displayPath, { mtimeMs: stat.mtimeMs, size: change.before.byteLength }, stat, 'while the change was being prepared');
		}
		await assertWritable(change.path, change.displayPath);
		if (change.movedTo && await statOrNull(change.movedTo.path)) {
			throw new ToolError('already_exists', `${change.movedTo.displayPath} already exists, so ${change.displayPath} cannot be moved there. Nothing was written.`);
		}
	}
	return disk;
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
	const lock = await lockFiles(state, paths);
	try {
		return await work();
	} finally {
		lock.unlock();
	}
}

/**
 * withFileLocks for a tool's planning. When the plan is a pending call, the locks stay held until
 * it is committed or released: a call no one is asked about reads, computes and writes as one
 * step (twenty edits at once all land), while the registry releases them before a person is asked
 * (the commit then takes them again and checks the bytes).
 */
export async function planWithFileLocks(state: SharedState, paths: readonly string[], work: () => Promise<ToolResult | PendingCall>): Promise<ToolResult | PendingCall> {
	const lock = await lockFiles(state, paths);
	let outcome: ToolResult | PendingCall;
	try {
		outcome = await work();
	} catch (error) {
		lock.unlock();
		throw error;
	}
	if (!isPending(outcome)) {
		lock.unlock();
		return outcome;
	}
	const planned = outcome;
	let held = true;
	const release = () => {
		held = false;
		lock.unlock();
		planned.release?.();
	};
	return {
		pending: true,
		request: planned.request,
		release,
		commit: (ctx, confirmed) => {
			if (!held) return planned.commit(ctx, confirmed);
			// The commit's own locks on these paths are the ones this call already holds.
			const inherited = new Set([...(heldLocks.getStore() ?? []), ...lock.keys]);
			return heldLocks.run(inherited, () => planned.commit(ctx, confirmed)).finally(release);
		},
	};
}

/** Lock keys the current async flow holds through planWithFileLocks: taking them again would wait on itself. */
const heldLocks = new AsyncLocalStorage<ReadonlySet<string>>();

async function lockFiles(state: SharedState, paths: readonly string[]): Promise<{ keys: string[]; unlock: () => void }> {
	const held = heldLocks.getStore();
	const keys = [...new Set(paths.map(lockKey))].filter(key => !held?.has(key));
	const previous = keys.map(key => state.fileLocks.get(key));
	let release!: () => void;
	const mine = new Promise<void>(resolve => { release = resolve; });
	for (const key of keys) state.fileLocks.set(key, mine);
	let unlocked = false;
	const unlock = () => {
		if (unlocked) return;
		unlocked = true;
		release();
		for (const key of keys) if (state.fileLocks.get(key) === mine) state.fileLocks.delete(key);
	};
	await Promise.all(previous);
	return { keys, unlock };
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
	const current = await readFileAsChanged(ctx, absolute, displayPath, stat => assertNotStale(ctx, absolute, displayPath, stat));
	// Same size and time stamp is not the same file: a rewrite within one tick of a coarse clock keeps both.
	const known = ctx.state.fileVersions.get(absolute);
	if (current.bytes && !current.fromEditor && known?.sha256 !== undefined && known.sha256 !== digest(current.bytes)) {
		throw staleError(displayPath, known, { mtimeMs: known.mtimeMs, size: current.bytes.byteLength }, 'since you last read it');
	}
	return current;
}

/** Files up to this size get a digest in their recorded version (reading them whole is cheap). */
export const DIGEST_MAX_BYTES = 1024 * 1024;

/** The version of an open file as it is now: its stat, and a digest of its content when it is small. */
export async function currentVersion(handle: fs.promises.FileHandle): Promise<FileVersion> {
	const stat = await handle.stat();
	const version = { mtimeMs: stat.mtimeMs, size: stat.size };
	if (stat.size > DIGEST_MAX_BYTES) return version;
	const bytes = await readWhole(handle, stat.size).catch(() => null);
	return withDigest(version, bytes);
}

function withDigest(version: FileVersion, bytes: Uint8Array | null): FileVersion {
	return bytes !== null && bytes.byteLength === version.size && bytes.byteLength <= DIGEST_MAX_BYTES ? { ...version, sha256: digest(bytes) } : version;
}

function digest(bytes: Uint8Array): string {
	return createHash('sha256').update(bytes).digest('hex');
}

/** A file as a change sees it (the editor's unsaved text first), after `check` has seen its version. */
async function readFileAsChanged(ctx: ToolContext, absolute: string, displayPath: string, check?: (version: FileVersion) => void): Promise<CurrentFile> {
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
			return { exists: true, bytes: encodeText(dirty.startsWith('\ufeff') ? dirty.slice(1) : dirty, { bom }), fromEditor: true };
		}
		const bytes = await readWhole(handle, stat.size);
		return { exists: true, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), fromEditor: false };
	} catch (error) {
		throw fromNodeError(error, displayPath);
	} finally {
		await handle.close().catch(() => undefined);
	}
}

/** The stale-write rule on its own, for tools that want to fail before computing anything. */
export function assertNotStale(ctx: ToolContext, absolute: string, displayPath: string, now: FileVersion): void {
	const known = ctx.state.fileVersions.get(absolute);
	if (known && !sameVersion(known, now)) throw staleError(displayPath, known, now, 'since you last read it');
}

function sameVersion(a: FileVersion, b: FileVersion): boolean {
	return a.mtimeMs === b.mtimeMs && a.size === b.size;
}
