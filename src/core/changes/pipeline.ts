import { backupOriginals, LinkSource, sealBackups } from './backups';
import type { ApprovalRequest, ChangeContext, FileChange, FileVersion, PendingCall, WrittenVersions } from '../context';
import type { ResolvedPath } from '../policy/boundary';
import { newDiagnostics, snapshotDiagnostics } from './diagnostics';
import { LineCounts, lineCounts, unifiedDiffs } from './diff';
import { everyInOrder } from '../files/inParallel';
import { withFileLocks } from './locks';
import { applyThroughFileSystem } from './virtualCommit';
import { checkNotStale, checkStillAsShown, FileIdentity, recordVersions } from './stale';
import { BoundaryError, throwIfAborted, ToolError } from '../results/errors';
import type { ToolResult } from '../results/result';

/**
 * The one way files change (write_file, edit_file, write_output, apply_patch, the plan tools, the
 * code tools, restoring a backup). A change is planned, then committed:
 *
 *   plan:   (under the files' locks, see planWithFileLocks) stale-write check → protected paths →
 *           the approval request, each file's `before` bytes kept with it
 *   commit: locks taken (again, when a person was asked) → every file still byte for byte its
 *           `before`, and every path still leading where it did (checked side by side) → backup
 *           (hard links to the originals where the host replaces files, sealed once it wrote)
 *           → host.applyChanges, given the bytes and real paths just checked (all or nothing; in
 *           a virtual workspace, the file-system port, see virtualCommit.ts) → new versions
 *           recorded (as the host saw them when it wrote) → diff shown (per toolbelt.showDiffs)
 *           → new diagnostics collected
 *
 * Nothing is written when a plan is made, and no lock is held while the person decides; what is
 * committed is the plan the person was shown, or nothing.
 */

export interface CommitResult {
	readonly changes: readonly FileChange[];
	/** Unified diff of every change (git-style a/ b/ headers), written out when first read. */
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
	/** Whether the commit waits for the language servers' new problems in the changed files. */
	readonly diagnostics: boolean;
	/** Line counts the planning already had (see ChangeOptions.lineCounts). */
	readonly lineCounts?: readonly (LineCounts | undefined)[];
}

export interface ChangeOptions {
	/** Default true; the plan tools say false: the plan file is not code, and a tick must feel instant. */
	readonly diagnostics?: boolean;
	/**
	 * The display paths among the changes (sources and destinations) that are protected, when the
	 * caller has just resolved every one of them for writing (apply_patch's staging, under the same
	 * locks): they are not resolved again for the request. The commit resolves them all again.
	 */
	readonly protectedPaths?: readonly string[];
	/**
	 * One per change: its line counts when the caller had both sides' lines at hand, counted as
	 * lineCounts counts them (apply_patch's staging, see countLineEdits); the others are counted at
	 * the commit.
	 */
	readonly lineCounts?: readonly (LineCounts | undefined)[];
}

/** Checks a computed change set and builds its approval request; writes nothing. */
export async function planChange(ctx: ChangeContext, title: string, changes: readonly FileChange[], options: ChangeOptions = {}): Promise<ChangePlan> {
	throwIfAborted(ctx.signal, 'The change');
	const disk = await checkNotStale(ctx, changes);
	const request = { kind: 'files' as const, title, changes, protectedPaths: options.protectedPaths ? [...options.protectedPaths] : await protectedPathsOf(ctx, changes) };
	return { title, changes, disk, request, diagnostics: options.diagnostics ?? true, lineCounts: options.lineCounts };
}

/**
 * A tool's change as a pending call: the registry asks about it, then commits it and `finish`
 * turns what was committed into the tool's result.
 */
export async function pendingChange(
	ctx: ChangeContext,
	title: string,
	changes: readonly FileChange[],
	finish: (commit: CommitResult) => ToolResult,
	options: ChangeOptions = {},
): Promise<PendingCall> {
	const plan = await planChange(ctx, title, changes, options);
	return { pending: true, request: plan.request, settlesOnCancel: true, commit: async (commitCtx, confirmed) => finish(await commitPlan(commitCtx, plan, confirmed)) };
}

/**
 * Commits a plan: its files are locked again and must still be byte for byte what the change was
 * made from (the person may have taken a while, and the model or someone else may have written
 * meanwhile), and their paths must still lead where they did.
 */
export async function commitPlan(ctx: ChangeContext, plan: ChangePlan, confirmed: boolean): Promise<CommitResult> {
	const { changes, title } = plan;
	const paths = changes.flatMap(change => (change.movedTo ? [change.path, change.movedTo.path] : [change.path]));
	return withFileLocks(ctx.state, paths, async () => {
		throwIfAborted(ctx.signal, 'The change');
		// Both only look, so they run side by side; a stale file is reported first, as if in turn.
		const [shown, approved] = await Promise.allSettled([checkStillAsShown(ctx, changes, plan.disk), checkStillApproved(ctx, changes, plan.request.protectedPaths)]);
		const { onDisk, realPaths: checked, identities } = settledValue(shown);
		const realPaths = settledValue(approved);
		assertSameFiles(changes, checked, realPaths);

		const diagnosticsBefore = plan.diagnostics ? await snapshotDiagnostics(ctx, changes) : undefined;
		const fileSystem = ctx.boundary.fileSystem;
		const replaced = fileSystem.local && ctx.host.replacesFiles ? linkSources(checked, identities) : undefined;
		const { set, copies, linked } = await backupOriginals(ctx.host.storageDir, title, changes, { tool: ctx.tool, reach: ctx.boundary, createdAt: ctx.state.backupClock.next(), onDisk, fromPlan: !fileSystem.local, replaced }).catch(error => {
			if (error instanceof BoundaryError) throw error;
			throw new ToolError('io', `Could not back up the original files before changing them (${(error as Error).message}). Nothing was changed.`);
		});
		let written: WrittenVersions | undefined;
		try {
			written = await (fileSystem.local ? ctx.host.applyChanges(changes, ctx.signal, ctx.boundary, { onDisk, realPaths }) : applyThroughFileSystem(fileSystem, changes, ctx.signal)) ?? undefined;
		} catch (error) {
			if (error instanceof ToolError) throw error;
			// Hosts report what they know as ToolErrors; for anything else, claim no revert that may not have happened.
			throw new ToolError('io', `The change could not be applied: ${(error as Error)?.message ?? String(error)}. Some files may have changed: read them again before retrying, and tell the user if they differ from what you expect.`);
		} finally {
			await sealBackups(linked);
		}
		await recordVersions(ctx.state, changes, fileSystem, written);
		ctx.note({ filesTouched: changes.map(change => change.movedTo?.displayPath ?? change.displayPath), backupSet: set.id });

		// The editor's diff views open files by disk path: a virtual file would show as missing.
		if (fileSystem.local && ctx.host.showDiffs && (ctx.settings.showDiffs === 'always' || (ctx.settings.showDiffs === 'onConfirm' && confirmed))) {
			await ctx.host.showDiffs(changes).catch(() => undefined);
		}
		const diagnostics = diagnosticsBefore ? await newDiagnostics(ctx, changes, diagnosticsBefore) : undefined;
		return {
			changes,
			// Made only when read: apply_patch shows line counts, which need no diff text.
			get diff() {
				return unifiedDiffs(changes);
			},
			stats: changes.map((change, index) => ({ path: change.movedTo?.displayPath ?? change.displayPath, ...(plan.lineCounts?.[index] ?? lineCounts(change)) })),
			backups: copies,
			...(diagnostics ? { diagnostics } : {}),
		};
	}, ctx.heldLocks);
}

/**
 * The bytes checked and the place written must be the same file: each path was followed twice, side
 * by side, and a folder or symlink on the way swapped in between would have the change computed on
 * one file written over another (whose bytes no check and no backup saw).
 */
function assertSameFiles(changes: readonly FileChange[], checked: ReadonlyMap<string, string>, resolved: ReadonlyMap<string, string>): void {
	for (const change of changes) {
		const read = checked.get(change.path);
		if (read === undefined || read === resolved.get(change.path)) continue;
		throw new ToolError('stale_write', `${change.displayPath} led to another file while the change was being checked (a folder or symlink on its path changed). Nothing was written. Check the path with list_dir, read the file again, then make the change again.`, { path: change.displayPath });
	}
}

/** Where each file checked on disk is and which file its bytes came from: what a backup may link. */
function linkSources(realPaths: ReadonlyMap<string, string>, identities: ReadonlyMap<string, FileIdentity>): Map<string, LinkSource> {
	return new Map([...identities].flatMap(([file, identity]) => {
		const real = realPaths.get(file);
		return real === undefined ? [] : [[file, { real, identity }] as const];
	}));
}

function settledValue<T>(result: PromiseSettledResult<T>): T {
	if (result.status === 'rejected') throw result.reason;
	return result.value;
}

/**
 * Display paths among the changes (sources and destinations) that match `protectedPaths`. The
 * boundary decides, real paths included: a symlink (or a symlinked folder, for a new file) onto
 * `.git/` is `.git/`.
 */
async function protectedPathsOf(ctx: ChangeContext, changes: readonly FileChange[]): Promise<string[]> {
	return protectedOf(await resolvePlaces(ctx, changes));
}

/** Every place a change set writes or removes (sources and destinations), resolved for writing. */
async function resolvePlaces(ctx: ChangeContext, changes: readonly FileChange[]): Promise<{ place: Place; resolved: ResolvedPath }[]> {
	const places = changes.flatMap(change => (change.movedTo ? [change, change.movedTo] : [change]));
	const resolved = await everyInOrder(places, place => ctx.boundary.resolve(place.path, 'write'));
	return places.map((place, index) => ({ place, resolved: resolved[index] }));
}

type Place = { readonly path: string; readonly displayPath: string };

function protectedOf(places: readonly { place: Place; resolved: ResolvedPath }[]): string[] {
	return [...new Set(places.filter(({ resolved }) => resolved.isProtected).map(({ place }) => place.displayPath))];
}

/**
 * Resolves every path again after approval: one that now leads outside is refused by the boundary,
 * and one that became protected meanwhile (a folder swapped for a link into `.git`) was not what the
 * person approved. Returns the real paths found, where the writes go (atomic.ts checks each folder
 * again when it opens it, and each write where it landed).
 */
async function checkStillApproved(ctx: ChangeContext, changes: readonly FileChange[], approvedProtected: readonly string[]): Promise<Map<string, string>> {
	const places = await resolvePlaces(ctx, changes);
	const added = protectedOf(places).filter(display => !approvedProtected.includes(display));
	if (added.length) {
		throw new ToolError('stale_write', `${added.join(', ')} became a protected path while waiting for confirmation (a folder or symlink on the way changed). Nothing was written. Check the path with list_dir, then make the change again.`);
	}
	return new Map(places.map(({ place, resolved }) => [place.path, resolved.real]));
}
