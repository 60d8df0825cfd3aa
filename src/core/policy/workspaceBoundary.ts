import * as fs from 'node:fs';
import { commandLogDir } from '../commands/process';
import { Boundary, WorkspaceRoot } from './boundary';
import type { Settings } from './settings';

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
}

/**
 * The boundary of one workspace: its folders, the settings that widen or guard them, and the
 * storage the tools must not reach except for this workspace's command logs, which read_file pages.
 * The one place the extension, the command line, the MCP server and the tests build it.
 */
export function workspaceBoundary(sources: WorkspaceBoundarySources): Promise<Boundary> {
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
