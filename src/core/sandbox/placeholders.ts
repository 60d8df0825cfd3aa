import * as fs from 'node:fs';
import * as path from 'node:path';
import { contains } from '../files/paths';
import type { Mount } from './policy';

/**
 * Mount points for protected paths that do not exist yet. bwrap can only mount on something, and
 * whatever it mounts on appears on the host too, because the workspace is the host's folder. So an
 * empty file (`.env`) or folder (`.git`, `.vscode`) is made here before the command starts,
 * mounted read-only inside, and removed afterwards, but only when it is still the one made here
 * (same inode) and still empty: something the person put there meanwhile is theirs and stays.
 *
 * Placeholders are shared by the sandboxes of this process and removed when the last one using
 * them ends: removing a mount point on the host detaches the mount from every sandbox still
 * running on it, which could then create the path after all. All of it is synchronous so two
 * sandboxes starting at once cannot both make (or one remove) the same placeholder.
 */

interface Placeholder {
	readonly dev: number;
	readonly ino: number;
	readonly directory: boolean;
	users: number;
}

/**
 * Process-wide on purpose, like the mounts it tracks: every sandbox of this process (any registry,
 * any window's tools) mounts on the same files of the same folders.
 */
const made = new Map<string, Placeholder>();
let exitHookSet = false;

export interface HeldPlaceholders {
	/** The mounts to use: missing paths now exist (or are left out when nothing could be made). */
	readonly mounts: Mount[];
	/** The placeholders this sandbox made or shares, by path. */
	readonly paths: readonly string[];
	/** Lets go of them; the last user removes each one that is still empty and its own. */
	release(): void;
}

/**
 * Makes the placeholders a policy's mounts need, inside its writable folders, and takes a share
 * of those another sandbox made (a path found existing that is one of ours).
 */
export function holdPlaceholders(mounts: readonly Mount[]): HeldPlaceholders {
	const roots = mounts.filter(mount => mount.access === 'write').map(mount => mount.path);
	const held: string[] = [];
	const kept: Mount[] = [];
	for (const mount of mounts) {
		if (mount.access !== 'read') {
			kept.push(mount);
			continue;
		}
		const existing = made.get(mount.path);
		// Gone since the policy was made (another sandbox's placeholder, removed meanwhile): guarded all the same.
		const missing = mount.missing ?? (roots.some(root => contains(root, mount.path)) && !fs.existsSync(mount.path) ? 'file' : undefined);
		if (existing) {
			existing.users++;
			held.push(mount.path);
		} else if (missing) {
			const outcome = makePlaceholder(mount.path, missing === 'directory', roots);
			if (outcome === 'unusable') continue;
			if (outcome === 'made') held.push(mount.path);
		}
		kept.push({ path: mount.path, access: 'read' });
	}
	let released = false;
	return {
		mounts: kept,
		paths: held,
		release: () => {
			if (released) return;
			released = true;
			for (const target of held) letGo(target);
		},
	};
}

/**
 * `made`: ours now; `exists`: something appeared there meanwhile (mounted as it is);
 * `unusable`: nothing can be made (a read-only workspace, or the folder above was swapped for a
 * link out of the workspace, in which case what was made there is removed at once).
 */
function makePlaceholder(target: string, directory: boolean, roots: readonly string[]): 'made' | 'exists' | 'unusable' {
	try {
		if (directory) fs.mkdirSync(target);
		else fs.closeSync(fs.openSync(target, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW, 0o600));
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'exists' : 'unusable';
	}
	const stat = fs.lstatSync(target);
	const placeholder: Placeholder = { dev: stat.dev, ino: stat.ino, directory, users: 1 };
	if (!roots.some(root => contains(root, realParent(target)))) {
		removeIfUntouched(target, placeholder);
		return 'unusable';
	}
	made.set(target, placeholder);
	if (!exitHookSet) {
		exitHookSet = true;
		// A window closed while a session runs: its placeholders go with the process.
		process.once('exit', () => { for (const [target, each] of made) removeIfUntouched(target, each); });
	}
	return 'made';
}

function letGo(target: string): void {
	const placeholder = made.get(target);
	if (!placeholder || --placeholder.users > 0) return;
	made.delete(target);
	removeIfUntouched(target, placeholder);
}

/** Removes a placeholder that is still the one made and still empty; anything else stays. */
function removeIfUntouched(target: string, placeholder: Placeholder): void {
	try {
		const stat = fs.lstatSync(target);
		if (stat.dev !== placeholder.dev || stat.ino !== placeholder.ino) return;
		if (placeholder.directory) fs.rmdirSync(target);
		else if (stat.isFile() && stat.size === 0) fs.unlinkSync(target);
	} catch {
		// Gone already, or no longer empty (rmdir refuses): nothing of ours to remove.
	}
}

function realParent(target: string): string {
	try {
		return fs.realpathSync(path.dirname(target));
	} catch {
		return '';
	}
}
