import * as vscode from 'vscode';
import type { Boundary, WorkspaceRoot } from '../core/policy/boundary';
import { workspaceBoundary } from '../core/policy/workspaceBoundary';
import { createSharedState, Host, ToolEnvironment } from '../core/context';
import type { Settings } from '../core/policy/settings';
import { ensurePrivateFolder } from '../core/files/storage';
import { readSettings, SECTION } from './settings';

/** Settings sections the core's Settings are read from (see settings.ts). */
const SETTINGS_SECTIONS = [SECTION, 'files.exclude', 'search.exclude'];

/**
 * The registry's view of the window: folders, settings and the boundary built from them. Both
 * are kept until a folder or one of their settings changes (a chat call asks for the settings
 * several times: registry check, preview, invoke), and rebuilt lazily, never on the hot path.
 */
export function createVscodeEnvironment(host: Host, subscriptions: vscode.Disposable[], warn?: (message: string) => void): ToolEnvironment {
	let settings: Settings | undefined;
	let boundary: Promise<Boundary> | undefined;
	const currentSettings = () => (settings ??= readSettings(warn));
	subscriptions.push(
		vscode.workspace.onDidChangeWorkspaceFolders(() => {
			settings = undefined;
			boundary = undefined;
		}),
		vscode.workspace.onDidChangeConfiguration(event => {
			if (SETTINGS_SECTIONS.some(section => event.affectsConfiguration(section))) settings = undefined;
			// The boundary depends on toolbelt.* only (file access, protected and extra read paths).
			if (event.affectsConfiguration(SECTION)) boundary = undefined;
		}),
	);
	return {
		host,
		state: createSharedState(host.storageDir),
		settings: currentSettings,
		boundary: () => (boundary ??= buildBoundary(host, currentSettings())),
	};
}

function workspaceRoots(): WorkspaceRoot[] {
	return (vscode.workspace.workspaceFolders ?? [])
		.filter(folder => folder.uri.scheme === 'file')
		.map(folder => ({ name: folder.name, path: folder.uri.fsPath }));
}

function buildBoundary(host: Host, settings: Settings): Promise<Boundary> {
	// VS Code's storage folder is this workspace's own; made private before the first log or backup
	// lands in it (a StorageError here is not cached: the next call tries again).
	ensurePrivateFolder(host.storageDir, { tighten: true });
	return workspaceBoundary({ roots: workspaceRoots(), settings, storageDir: host.storageDir });
}
