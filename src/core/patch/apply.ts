import * as path from 'node:path';
import type { ResolvedPath } from '../policy/boundary';
import type { FileChange, ToolContext } from '../context';
import { BoundaryError, throwIfAborted, ToolError } from '../results/errors';
import { readCurrent } from '../changes/stale';
import { concurrencyGate } from '../files/inParallel';
import { formatBytes } from '../results/truncate';
import { countLineEdits, LineCounts } from '../changes/diff';
import { decodeFileLines, encodeFileLines, lineKeys, newFileLines } from './fileLines';
import { applyHunks } from './hunks';
import {
	AddOperation, DeleteOperation, FileOperation, ParsedPatch, PatchApplyError, UpdateOperation,
} from './model';
import { sameBytes } from '../files/bytes';

/**
 * Stages a parsed patch: every file is read, patched and encoded in memory, and the whole set
 * becomes FileChange[] only when every operation succeeded. Nothing here writes; the caller
 * commits the changes in one go (pendingChange, then commitPlan), so a failing hunk in the tenth
 * file leaves the first nine untouched.
 */

export type FileStatus = 'added' | 'deleted' | 'modified' | 'moved';

export interface PatchFileSummary {
	readonly status: FileStatus;
	/** Display path (the source, for a move). */
	readonly path: string;
	readonly movedTo?: string;
}

export interface StagedPatch {
	readonly changes: FileChange[];
	/** One per change, in the same order. */
	readonly files: PatchFileSummary[];
	/** Tolerances used and requests not carried out, for the result. */
	readonly notes: string[];
	/** Display paths among the changes that match toolbelt.protectedPaths. */
	readonly protectedPaths: string[];
	/** Files the patch names whose content it leaves as it was. */
	readonly unchanged: string[];
	/** One per change: its line counts when staging had both sides' lines at hand (see Slot.counted). */
	readonly lineCounts: (LineCounts | undefined)[];
}

/** Files above this size are not patched (they would be held in memory several times). */
export const MAX_PATCH_FILE_BYTES = 32 * 1024 * 1024;

interface Slot {
	/** Real path: two spellings of one file share a slot. */
	readonly key: string;
	/** The path as the model named it (absolute); writes go through a symlink, deletes remove the link. */
	readonly path: string;
	readonly display: string;
	/** Bytes when staging began; null when there was no file. */
	readonly before: Uint8Array | null;
	readonly isDirectory: boolean;
	readonly isProtected: boolean;
	current: Uint8Array | null;
	/** The file it was moved from in this patch, when it was. */
	movedFrom?: Slot;
	/** Patch line of the operation that deleted or moved it away. */
	goneAt?: { line: number; how: 'deleted' | 'moved' };
	/**
	 * The line counts from `before` to `after`, taken from the lines staging split and patched
	 * anyway (the commit would decode and split both again): good while `current` is `after`.
	 */
	counted?: { after: Uint8Array; counts: LineCounts };
}

export async function stagePatch(patch: ParsedPatch, ctx: ToolContext): Promise<StagedPatch> {
	return (await preparePatch(patch, ctx)).stage();
}

/** A patch whose paths went through the boundary; staging reads and patches the files. */
export interface PreparedPatch {
	/** Absolute paths the patch touches (for the per-file locks), the ones the boundary refused left out. */
	readonly paths: string[];
	stage(): Promise<StagedPatch>;
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Resolves every path of the patch at once (they are independent); a refused path is reported
 * when staging reaches its operation, so errors come in patch order.
 */
export async function preparePatch(patch: ParsedPatch, ctx: ToolContext): Promise<PreparedPatch> {
	const names = [...new Set(patch.operations.flatMap(operation => [
		operation.path,
		...(operation.kind === 'update' && operation.moveTo !== undefined ? [operation.moveTo] : []),
		...(operation.kind === 'update' && operation.fallbackPath !== undefined ? [operation.fallbackPath] : []),
	]))];
	const settled = await Promise.all(names.map(name => settle(ctx.boundary.resolve(name, 'write'))));
	const resolutions = new Map(names.map((name, index) => [name, settled[index]]));
	const paths = settled.flatMap(result => (result.ok ? [result.value.absolute] : []));
	return {
		paths,
		stage: async () => {
			const stager = new Stager(ctx, resolutions);
			try {
				for (const operation of patch.operations) {
					throwIfAborted(ctx.signal, 'Applying the patch');
					await stager.apply(operation);
				}
				return stager.finish(patch.notes);
			} finally {
				stager.stopReading();
			}
		},
	};
}

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
	return promise.then(value => ({ ok: true as const, value }), error => ({ ok: false as const, error }));
}

type ReadResult = { before: Uint8Array | null; isDirectory: boolean };

class Stager {
	private readonly slots = new Map<string, Slot>();
	private readonly notes: string[] = [];
	/**
	 * Every existing file of the patch is read up front, a few at a time (a patch of thousands of
	 * files must not hold a descriptor for each); operations then take their turn.
	 */
	private readonly reads = new Map<string, Promise<Settled<ReadResult>>>();
	/** Set once staging is over (done, failed or cancelled): reads still waiting their turn are skipped. */
	private stopped = false;

	constructor(private readonly ctx: ToolContext, private readonly resolutions: ReadonlyMap<string, Settled<ResolvedPath>>) {
		const gate = concurrencyGate();
		for (const resolution of resolutions.values()) {
			if (resolution.ok && !this.reads.has(resolution.value.real)) this.reads.set(resolution.value.real, settle(gate(() => this.readInTurn(resolution.value))));
		}
	}

	stopReading(): void {
		this.stopped = true;
	}

	private readInTurn(target: ResolvedPath): Promise<ReadResult> {
		if (this.stopped) return Promise.reject(new Error('Staging is over'));
		throwIfAborted(this.ctx.signal, 'Applying the patch');
		return this.read(target);
	}

	async apply(operation: FileOperation): Promise<void> {
		switch (operation.kind) {
			case 'add':
				return this.add(operation);
			case 'delete':
				return this.delete(operation);
			case 'update':
				return this.update(operation);
		}
	}

	private async add(operation: AddOperation): Promise<void> {
		const slot = await this.slot(operation.path, operation.patchLine);
		if (slot.isDirectory) throw new PatchApplyError(`${slot.display} (patch line ${operation.patchLine}) is a directory; a file cannot be added in its place. Nothing was changed.`, { path: slot.display });
		if (slot.current !== null) {
			throw new PatchApplyError(`${slot.display} (patch line ${operation.patchLine}) already exists, so it cannot be added. To change it, send an update of it (a '--- a/${slot.display}' diff or '*** Update File: ${slot.display}'); to replace it whole, delete it first in the same patch. Nothing was changed.`, { path: slot.display });
		}
		if (slot.before === null) await this.checkParents(slot, operation.patchLine);
		const file = newFileLines(operation.lines, operation.finalNewline);
		slot.current = encodeFileLines(file);
		slot.goneAt = undefined;
	}

	private async delete(operation: DeleteOperation): Promise<void> {
		const slot = await this.slot(operation.path, operation.patchLine);
		const current = this.existing(slot, operation.patchLine, 'delete');
		if (operation.hunks.length > 0) {
			// A unified diff spells out what it deletes: it must be what the file holds.
			const rest = applyHunks(decodeFileLines(current, slot.display), operation.hunks, slot.display);
			if (rest.file.lines.some(line => line !== '')) {
				const left = rest.file.lines.findIndex(line => line !== '');
				throw new PatchApplyError(`${slot.display}: the patch deletes this file (patch line ${operation.patchLine}) but its removed lines are not the whole file: line ${left + 1} of what would remain is ${JSON.stringify(rest.file.lines[left])}. Read the file again and send its current content as the removed lines, or use '*** Delete File: ${slot.display}'. Nothing was changed.`, { path: slot.display });
			}
		}
		// Any file may be deleted, binary ones too: it is not decoded.
		slot.current = null;
		slot.goneAt = { line: operation.patchLine, how: 'deleted' };
	}

	private async update(operation: UpdateOperation): Promise<void> {
		let slot = await this.slot(operation.path, operation.patchLine);
		if (slot.current === null && !slot.isDirectory && !slot.goneAt && operation.fallbackPath) {
			slot = await this.slot(operation.fallbackPath, operation.patchLine);
		}
		const current = this.existing(slot, operation.patchLine, 'update');
		// A pure move takes the bytes as they are, so binary files can be moved too.
		const lines = operation.hunks.length > 0 ? decodeFileLines(current, slot.display) : undefined;
		const patched = lines ? applyHunks(lines, operation.hunks, slot.display) : undefined;
		this.notes.push(...patched?.notes ?? []);
		const after = patched ? encodeFileLines(patched.file) : current;
		const target = operation.moveTo === undefined ? slot : await this.slot(operation.moveTo, operation.patchLine);
		if (target === slot) {
			// A file's first change in the patch: its lines before are the file's own.
			if (lines && patched && current === slot.before) slot.counted = { after, counts: countLineEdits(lineKeys(lines), lineKeys(patched.file)) };
			slot.current = after;
			return;
		}
		if (target.isDirectory || target.current !== null) {
			throw new PatchApplyError(`${slot.display} cannot be moved to ${target.display} (patch line ${operation.patchLine}): ${target.display} ${target.isDirectory ? 'is a directory' : 'already exists'}. Choose another name, or delete ${target.display} first in the same patch. Nothing was changed.`, { path: slot.display, movedTo: target.display });
		}
		if (target.before === null) await this.checkParents(target, operation.patchLine);
		target.current = after;
		target.movedFrom = slot.movedFrom && slot.before === null ? slot.movedFrom : slot;
		target.goneAt = undefined;
		slot.current = null;
		slot.goneAt = { line: operation.patchLine, how: 'moved' };
	}

	/** The staged content of a file that must exist, or a precise refusal. */
	private existing(slot: Slot, patchLine: number, verb: 'update' | 'delete'): Uint8Array {
		if (slot.isDirectory) {
			throw new PatchApplyError(`${slot.display} (patch line ${patchLine}) is a directory, not a file; apply_patch can only ${verb} files. Nothing was changed.`, { path: slot.display });
		}
		if (slot.current !== null) return slot.current;
		if (slot.goneAt) {
			throw new PatchApplyError(`${slot.display} (patch line ${patchLine}) was already ${slot.goneAt.how} by this patch at line ${slot.goneAt.line}, so it cannot ${verb === 'update' ? 'be updated' : 'be deleted'} afterwards. Nothing was changed.`, { path: slot.display });
		}
		const create = verb === 'update' ? ` To create it, send it as a new file ('*** Add File: ${slot.display}' or a diff from '--- /dev/null').` : '';
		throw new PatchApplyError(`${slot.display} (patch line ${patchLine}) does not exist, so it cannot be ${verb === 'update' ? 'updated' : 'deleted'}. Check the path with find_files or list_dir.${create} Nothing was changed.`, { path: slot.display });
	}

	/** A new file's parent folders may be missing (they are created), but none may be a file. */
	private async checkParents(slot: Slot, patchLine: number): Promise<void> {
		for (let dir = path.dirname(slot.key); ; dir = path.dirname(dir)) {
			const staged = this.slots.get(dir);
			if (staged && staged.current !== null) {
				throw new PatchApplyError(`${slot.display} (patch line ${patchLine}) cannot be created: ${staged.display} is a file in this patch, not a folder. Nothing was changed.`, { path: slot.display });
			}
			const stat = await this.ctx.boundary.fileSystem.stat(dir).catch(() => undefined);
			if (stat) {
				if (!stat.isDirectory()) {
					throw new PatchApplyError(`${slot.display} (patch line ${patchLine}) cannot be created: ${this.ctx.boundary.display(dir)} is a file, not a folder. Nothing was changed.`, { path: slot.display });
				}
				return;
			}
			if (path.dirname(dir) === dir) return;
		}
	}

	private async slot(input: string, patchLine: number): Promise<Slot> {
		const resolution = this.resolutions.get(input) ?? await settle(this.ctx.boundary.resolve(input, 'write'));
		if (!resolution.ok) {
			const error = resolution.error;
			if (error instanceof BoundaryError) throw new BoundaryError(error.rule, error.input, `${error.message} (path at patch line ${patchLine}; nothing was changed)`);
			throw error;
		}
		const resolved = resolution.value;
		const known = this.slots.get(resolved.real);
		if (known) return known;
		const read = await (this.reads.get(resolved.real) ?? settle(this.read(resolved)));
		if (!read.ok) throw read.error;
		const slot: Slot = {
			key: resolved.real, path: resolved.absolute, display: resolved.display, isProtected: resolved.isProtected,
			before: read.value.before, current: read.value.before, isDirectory: read.value.isDirectory,
		};
		this.slots.set(slot.key, slot);
		return slot;
	}

	/**
	 * What the patch is applied to: readCurrent gives the editor's unsaved text when there is one
	 * and refuses a file changed since it was read. A folder becomes a slot that refuses every
	 * operation with a patch-specific message, and big files are refused before they are read
	 * (one open per file: the opened file's own size is checked).
	 */
	private async read(resolved: ResolvedPath): Promise<ReadResult> {
		try {
			const current = await readCurrent(this.ctx, resolved.absolute, resolved.display, version => {
				if (version.size > MAX_PATCH_FILE_BYTES) {
					throw new ToolError('too_large', `${resolved.display} is ${formatBytes(version.size)}, over the ${formatBytes(MAX_PATCH_FILE_BYTES)} apply_patch handles. Nothing was changed; edit it with edit_file or a command instead.`);
				}
			});
			return { before: current.bytes, isDirectory: false };
		} catch (error) {
			if (error instanceof ToolError && error.code === 'is_directory') return { before: null, isDirectory: true };
			throw error;
		}
	}

	finish(parseNotes: readonly string[]): StagedPatch {
		const changes: FileChange[] = [];
		const files: PatchFileSummary[] = [];
		const unchanged: string[] = [];
		const lineCounts: (LineCounts | undefined)[] = [];
		const protectedPaths = new Set<string>();
		// A move is one change when its source existed and its target did not; otherwise a delete and an add.
		const moves = new Map<Slot, Slot>();
		for (const slot of this.slots.values()) {
			const source = slot.movedFrom;
			if (source && slot.current !== null && slot.before === null && source.current === null && source.before !== null) moves.set(source, slot);
		}
		const moved = new Set(moves.values());
		for (const slot of this.slots.values()) {
			if (moved.has(slot)) continue;
			const target = moves.get(slot);
			if (target) {
				changes.push({ path: slot.path, displayPath: slot.display, before: slot.before, after: target.current, movedTo: { path: target.path, displayPath: target.display } });
				lineCounts.push(undefined);
				files.push({ status: 'moved', path: slot.display, movedTo: target.display });
				if (slot.isProtected) protectedPaths.add(slot.display);
				if (target.isProtected) protectedPaths.add(target.display);
				continue;
			}
			if (sameBytes(slot.before, slot.current)) {
				if (slot.before !== null) unchanged.push(slot.display);
				continue;
			}
			changes.push({ path: slot.path, displayPath: slot.display, before: slot.before, after: slot.current });
			lineCounts.push(slot.counted && slot.counted.after === slot.current ? slot.counted.counts : undefined);
			const status: FileStatus = slot.before === null ? 'added' : slot.current === null ? 'deleted' : 'modified';
			files.push({ status, path: slot.display });
			if (slot.isProtected) protectedPaths.add(slot.display);
		}
		return { changes, files, notes: [...parseNotes, ...this.notes], protectedPaths: [...protectedPaths], unchanged, lineCounts };
	}
}
