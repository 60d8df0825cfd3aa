import * as path from 'node:path';
import * as vscode from 'vscode';
import { ALL_TOOLS, ToolRegistry } from './tools';
import { createApi, ToolbeltApi } from './vscode/api';
import { toAbortSignal } from './vscode/cancellation';
import { ChangeDiffs } from './vscode/changeDiffs';
import { registerCustomTools } from './vscode/customTools';
import { createVscodeEnvironment } from './vscode/environment';
import { createVscodeHost } from './vscode/host';
import { registerLanguageModelTools } from './vscode/lmTools';
import { createLogSink } from './vscode/log';
import { applyWithWorkspaceEdit } from './vscode/mutation';
import { registerSessionTerminals, SessionTerminals } from './vscode/terminals';
import { registerWorkbenchUi } from './vscode/ui';

/**
 * The one thing `deactivate` needs from `activate`: VS Code waits for the promise it returns, and
 * disposal cannot be awaited. Everything else lives in objects `activate` makes and the
 * subscriptions own.
 */
let sessionTerminals: SessionTerminals | undefined;

export function activate(context: vscode.ExtensionContext): ToolbeltApi & { readonly activationMs: number } {
	const started = performance.now();
	const storage = context.storageUri ?? context.globalStorageUri;
	const log = vscode.window.createOutputChannel('Toolbelt', { log: true });
	const warn = (message: string) => log.warn(message);
	// <user data>/User/globalStorage/<extension>: the User folder holds every workspace's storage.
	const sandbox = { storageRoot: path.dirname(path.dirname(context.globalStorageUri.fsPath)), warn };
	const diffs = new ChangeDiffs();
	const host = createVscodeHost({
		storageDir: storage.fsPath,
		applyChanges: applyWithWorkspaceEdit,
		previewDiffs: { show: changes => diffs.preview(changes), close: changes => diffs.closePreviews(changes) },
		showDiffs: changes => diffs.show(changes),
		sandbox,
	});
	const env = createVscodeEnvironment(host, context.subscriptions, warn);
	const registry = new ToolRegistry(ALL_TOOLS, env);
	context.subscriptions.push(log, diffs, diffs.registerDocuments(), registry.onEvent(createLogSink(log)), ...registerLanguageModelTools(registry, ALL_TOOLS));
	registerWorkbenchUi(context.subscriptions, { registry, env, tools: ALL_TOOLS, log, diffs });
	sessionTerminals = registerSessionTerminals(context, env.state);
	context.subscriptions.push(sessionTerminals);
	context.subscriptions.push(...registerCustomTools({ boundary: env.boundary, settings: env.settings, cliPath: context.asAbsolutePath('dist/cli.js'), log }));
	// Measured for `npm run bench` and for anyone wondering in the log; activation does no I/O.
	const activationMs = performance.now() - started;
	log.info(`Activated in ${activationMs.toFixed(1)} ms.`);
	return { ...createApi(registry, context.subscriptions, toAbortSignal), activationMs };
}

export function deactivate(): Promise<void> | undefined {
	// Everything else is owned by context.subscriptions; VS Code waits for the sessions to stop.
	const stopping = sessionTerminals?.stopAll();
	sessionTerminals = undefined;
	return stopping;
}
