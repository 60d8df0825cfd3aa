import type * as vscode from 'vscode';
import type { ToolbeltApi } from './vscode/api';
import { LazyWorkbench, registerEntryPoints } from './vscode/entryPoints';

/**
 * The one thing `deactivate` needs from `activate`: VS Code waits for the promise it returns, and
 * disposal cannot be awaited. Everything else lives in the workbench's objects (workbench.ts),
 * owned by context.subscriptions.
 */
let workbench: LazyWorkbench | undefined;

/**
 * Registers the entry points (entryPoints.ts) and nothing more: the registry, the tools and the
 * views are dist/workbench.js, loaded and started by the first entry point used, or right after
 * activation so that the views and documents are there when the person looks.
 */
export function activate(context: vscode.ExtensionContext): ToolbeltApi & { readonly activationMs: number } {
	const started = performance.now();
	const lazy = new LazyWorkbench(context.subscriptions, async () => {
		const loading = performance.now();
		const { startWorkbench } = await import('./vscode/workbench');
		return startWorkbench(context, { activationMs, loadMs: performance.now() - loading });
	});
	workbench = lazy;
	const api = registerEntryPoints(context, lazy);
	// A failure is logged and told by the workbench's loader itself.
	const soon = setTimeout(() => lazy.get().catch(() => undefined), 0);
	context.subscriptions.push({ dispose: () => clearTimeout(soon) });
	// Measured for `npm run bench` and told in the log once the workbench is up.
	const activationMs = performance.now() - started;
	return { ...api, activationMs };
}

export function deactivate(): Promise<void> | undefined {
	// Everything else is owned by context.subscriptions; VS Code waits for the sessions to stop.
	const stopping = workbench?.stopSessions();
	workbench = undefined;
	return stopping;
}
