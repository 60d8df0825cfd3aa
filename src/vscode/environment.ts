import * as vscode from 'vscode';
import { Boundary, WorkspaceRoot } from '../core/boundary';
import { createSharedState, Host } from '../core/context';
import { commandLogDir } from '../core/process';
import type { ToolEnvironment } from '../tools/registry';
import { readSettings, SECTION } from './settings';

/**
 * The registry's view of the window: folders, settings and the boundary built from them. The
 * boundary is rebuilt lazily after a folder or setting changes, never on the hot path.
 */
export function createVscodeEnvironment(host: Host, subscriptions: vscode.Disposable[]): ToolEnvironment {
	let boundary: Promise<Boundary> | undefined;
	const reset = () => { boundary = undefined; };
	subscriptions.push(
		vscode.workspace.onDidChangeWorkspaceFolders(reset),
		vscode.workspace.onDidChangeConfiguration(event => { if (event.affectsConfiguration(SECTION)) reset(); }),
	);
	return {
		host,
		state: createSharedState(),
		settings: () => readSettings(),
		boundary: () => (boundary ??= buildBoundary(host)),
	};
}

function workspaceRoots(): WorkspaceRoot[] {
	return (vscode.workspace.workspaceFolders ?? [])
		.filter(folder => folder.uri.scheme === 'file')
		.map(folder => ({ name: folder.name, path: folder.uri.fsPath }));
}

function buildBoundary(host: Host): Promise<Boundary> {
	const settings = readSettings();
	return Boundary.create({
		roots: workspaceRoots(),
		fileAccess: settings.fileAccess,
		// Command logs live in the extension's storage; read_file pages them.
		additionalReadPaths: [...settings.additionalReadPaths, commandLogDir(host.storageDir)],
		protectedPaths: settings.protectedPaths,
	});
}
