import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Toolbelt's own storage (backups, command logs, the activity history): private to the user and
 * one folder per workspace, so one workspace's logs and backups are out of another's reach.
 *
 * VS Code gives each workspace its own folder (context.storageUri, under the user's profile). The
 * CLI makes its own: `<tmp>/toolbelt-<uid>/<first folder's name>-<hash of the real folder paths>`.
 * The temp folder is shared by every user of the machine, and the name is predictable, so a folder
 * found there is used only when it is a real folder (not a link), owned by this user and closed to
 * everyone else; otherwise the call stops and says what to do.
 */

export const PRIVATE_FOLDER_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** The folder under the temp folder holding the CLI's per-workspace folders (by default). */
export function cliStorageBase(uid = currentUid()): string {
	return path.join(os.tmpdir(), `toolbelt-${uid ?? os.userInfo().username}`);
}

/** The CLI's folder for one set of workspace folders: the same set (in any order) gets the same folder. */
export function cliStorageDir(roots: readonly string[], base = cliStorageBase()): string {
	const reals = roots.map(root => realOrSelf(path.resolve(root))).sort();
	const hash = createHash('sha256').update(reals.join('\0')).digest('hex').slice(0, 16);
	const name = reals.length ? path.basename(reals[0]).replace(/[^\w.-]+/g, '_').slice(0, 40) : 'none';
	return path.join(base, `${name}-${hash}`);
}

export interface PrivateFolderOptions {
	/** The user the folder must belong to (default: this process's); tests stand in for another user. */
	readonly uid?: number;
	/**
	 * Take away group and other permissions from a folder of this user that has them (VS Code's own
	 * storage folder, made by older versions), instead of refusing it. A folder others may write to
	 * is refused all the same: they may have put something there.
	 */
	readonly tighten?: boolean;
}

export class StorageError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'StorageError';
	}
}

/**
 * Makes `folder` (and missing parents) private to the user, or checks that an existing one is:
 * a real folder (not a symlink), owned by the user, with no permissions for group or others.
 * Throws StorageError saying what is wrong and what to do. On Windows, where modes and owners do
 * not apply this way, only the folder is made.
 */
export function ensurePrivateFolder(folder: string, options: PrivateFolderOptions = {}): void {
	const uid = options.uid ?? currentUid();
	const existing = fs.lstatSync(folder, { throwIfNoEntry: false });
	if (!existing) {
		const parent = path.dirname(folder);
		if (parent !== folder && !fs.existsSync(parent)) fs.mkdirSync(parent, { recursive: true, mode: PRIVATE_FOLDER_MODE });
		try {
			fs.mkdirSync(folder, { mode: PRIVATE_FOLDER_MODE });
		} catch (error) {
			// Someone made it in between: it is checked like any folder found.
			if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
		}
		return checkPrivate(folder, fs.lstatSync(folder), uid, options);
	}
	checkPrivate(folder, existing, uid, options);
}

function checkPrivate(folder: string, stat: fs.Stats, uid: number | undefined, options: PrivateFolderOptions): void {
	const fix = `Remove it (or choose another folder with --storage) and try again`;
	if (stat.isSymbolicLink()) throw new StorageError(`The storage folder ${folder} is a symlink; Toolbelt keeps backups and command logs only in a real folder of its own. ${fix}.`);
	if (!stat.isDirectory()) throw new StorageError(`The storage folder ${folder} is not a folder. ${fix}.`);
	if (uid === undefined) return;
	if (stat.uid !== uid) {
		throw new StorageError(`The storage folder ${folder} belongs to another user (uid ${stat.uid}, not ${uid}): they could read or plant backups and command logs there. ${fix}; ask an administrator if you cannot remove it.`);
	}
	const open = stat.mode & 0o077;
	if (open === 0) return;
	if (options.tighten && (open & 0o022) === 0) {
		fs.chmodSync(folder, PRIVATE_FOLDER_MODE);
		return;
	}
	const mode = (stat.mode & 0o777).toString(8).padStart(3, '0');
	throw new StorageError(`The storage folder ${folder} is open to other users (mode ${mode}): backups and command logs must be private. Run \`chmod 700 ${folder}\` if nothing foreign is in it, or ${fix[0].toLowerCase()}${fix.slice(1)}.`);
}

function currentUid(): number | undefined {
	return process.platform === 'win32' || typeof process.getuid !== 'function' ? undefined : process.getuid();
}

function realOrSelf(folder: string): string {
	try {
		return fs.realpathSync(folder);
	} catch {
		return folder;
	}
}
