import type { FileChange } from '../context';
import type { FileSystem } from '../files/fileSystem';
import { throwIfAborted, ToolError } from '../results/errors';
import { wholeBytes } from '../files/splicedBytes';

/**
 * Writes a change set through the file-system port, for workspaces that are not on disk (no atomic
 * rename in a folder we can open). All or nothing as far as the provider lets us: when one file
 * fails, the files already changed get their `before` back, newest first, and the message says
 * whether that worked.
 */
export async function applyThroughFileSystem(fileSystem: FileSystem, changes: readonly FileChange[], signal: AbortSignal): Promise<void> {
	throwIfAborted(signal, 'The change');
	const done: FileChange[] = [];
	for (const change of changes) {
		try {
			await applyOne(fileSystem, change);
			done.push(change);
		} catch (error) {
			const undone = await undo(fileSystem, done);
			const reason = (error as Error)?.message ?? String(error);
			throw new ToolError('io', undone
				? `${change.displayPath} could not be written (${reason}). The files changed before it were put back, so nothing changed. Try again, or tell the user.`
				: `${change.displayPath} could not be written (${reason}), and putting back the files changed before it failed too. Read ${done.map(other => other.displayPath).join(', ')} again before retrying, and tell the user.`);
		}
	}
}

async function applyOne(fileSystem: FileSystem, change: FileChange): Promise<void> {
	if (change.movedTo) {
		await fileSystem.rename(change.path, change.movedTo.path);
		if (change.after !== null) await fileSystem.writeFile(change.movedTo.path, wholeBytes(change.after));
		return;
	}
	if (change.after === null) await fileSystem.delete(change.path);
	else await fileSystem.writeFile(change.path, wholeBytes(change.after));
}

/** Reverses applied changes, newest first; false when one could not be reversed. */
async function undo(fileSystem: FileSystem, done: readonly FileChange[]): Promise<boolean> {
	let complete = true;
	for (const change of [...done].reverse()) {
		try {
			const where = change.movedTo?.path ?? change.path;
			if (change.before === null) await fileSystem.delete(where);
			else await fileSystem.writeFile(where, wholeBytes(change.before));
			if (change.movedTo) await fileSystem.rename(change.movedTo.path, change.path);
		} catch {
			complete = false;
		}
	}
	return complete;
}
