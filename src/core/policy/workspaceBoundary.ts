import * as fs from 'node:fs';
import { commandLogDir } from '../commands/process';
import { Boundary, WorkspaceRoot } from './boundary';
import type { Settings } from './settings';
import type { FileSystem } from '../files/fileSystem';

export interface WorkspaceBoundarySources {
	readonly roots: readonly WorkspaceRoot[];
	readonly settings: Pick<Settings, 'fileAccess' | 'additionalReadPaths' | 'protectedPaths'>;
	/** The host's storage folder: this workspace's backups and command logs. */
	readonly storageDir: string;
	/**
	 * The folder kept out of the tools' reach; default `storageDir`. The command line hides the base
	 * folder that holds every workspace's storage.
	 */
	readonly privateDir?: string;
	/** Where the folders' files are when they are not on disk (a virtual workspace); default the disk. */
	readonly fileSystem?: FileSystem;
}

/**
 * The boundary of one workspace: its folders, the settings that widen or guard them, and the
 * storage the tools must not reach except for this workspace's command logs, which read_file pages.
 * The one place the extension, the command line, the MCP server and the tests build it.
 */
export function workspaceBoundary(sources: WorkspaceBoundarySources): Promise<Boundary> {
	const { roots, settings, fileSystem } = sources;
	if (fileSystem && !fileSystem.local) {
		// The folders are URI paths: extra read paths and the storage are disk paths, which a path of
		// this workspace never reaches (it goes to fileSystem), so there is nothing to add or hide.
		return Boundary.create({ roots: [...roots], fileAccess: settings.fileAccess, additionalReadPaths: [], protectedPaths: settings.protectedPaths, fileSystem });
	}
	const logs = commandLogDir(sources.storageDir);
	// Made before the boundary resolves its read-only roots (once, here): a folder that exists then is
	// recognised by its real path too (macOS's /tmp is a symlink).
	try {
		fs.mkdirSync(logs, { recursive: true, mode: 0o700 });
	} catch {
		// Read-only storage: commands still run, without logs the model could page.
	}
	return Boundary.create({
		roots: [...sources.roots],
		fileAccess: sources.settings.fileAccess,
		additionalReadPaths: [...sources.settings.additionalReadPaths, logs],
		protectedPaths: sources.settings.protectedPaths,
		privatePaths: [sources.privateDir ?? sources.storageDir],
	});
}
