import * as fs from 'node:fs/promises';
import type { FileChange } from '../context';
import type { Boundary } from '../policy/boundary';
import { BoundaryError } from '../results/errors';
import { wholeBytes } from '../files/splicedBytes';

/**
 * Checks around a write Toolbelt does not do itself (VS Code applying a WorkspaceEdit): VS Code
 * opens the paths as they are when it writes, so a folder swapped for a link meanwhile would take
 * the write outside. Right before, every path is resolved again (real path inside the boundary);
 * right after, every written file is found by its real path, and what landed outside is removed.
 */

/** Each path the change set writes, moves or deletes, resolved again now: throws BoundaryError for one that leads out. */
export async function checkTargetsBeforeWrite(changes: readonly FileChange[], boundary: Boundary): Promise<void> {
	for (const change of changes) {
		await boundary.resolve(change.path, 'write');
		if (change.movedTo) await boundary.resolve(change.movedTo.path, 'write');
	}
}

export interface LandedOutside {
	readonly displayPath: string;
	/** Where the file really is. */
	readonly real: string;
	/** It held exactly what was written and was removed. */
	readonly removed: boolean;
}

/**
 * The written files (created, changed or moved) whose real path is outside the boundary now. Each
 * is removed when it holds exactly the bytes written (so nothing of anyone else's is lost; an
 * open editor may still show it).
 */
export async function removeLandedOutside(changes: readonly FileChange[], boundary: Boundary): Promise<LandedOutside[]> {
	const outside: LandedOutside[] = [];
	for (const change of changes) {
		if (change.after === null) continue;
		const target = change.movedTo ?? change;
		const real = await fs.realpath(target.path).catch(() => undefined);
		if (real === undefined || reachable(boundary, real, target.displayPath)) continue;
		const now = await fs.readFile(real).catch(() => undefined);
		const ours = now !== undefined && Buffer.compare(now, wholeBytes(change.after)) === 0;
		const removed = ours && await fs.unlink(real).then(() => true, () => false);
		outside.push({ displayPath: target.displayPath, real, removed });
	}
	return outside;
}

/** The error for a change set some of whose files landed outside (see removeLandedOutside). */
export function landedOutsideError(outside: readonly LandedOutside[], changes: readonly FileChange[]): BoundaryError {
	const named = outside.map(file => `${file.displayPath} (at ${file.real}${file.removed ? ', removed' : ', NOT removed: it changed since'})`).join(', ');
	const others = changes.length - outside.length;
	const rest = others > 0 ? ` The other ${others} file${others === 1 ? ' was' : 's were'} changed as planned; the originals are in Toolbelt's backups (Restore Backup…).` : '';
	return new BoundaryError('swapped_during_call', outside[0].displayPath, `A folder on the way to ${named} was swapped for a link out of the workspace while VS Code wrote it (rule: swapped_during_call), so the file landed outside.${rest} Tell the user; check the folders with list_dir before trying again.`);
}

function reachable(boundary: Boundary, real: string, display: string): boolean {
	try {
		boundary.assertReachable(real, 'write', display);
		return true;
	} catch {
		return false;
	}
}
