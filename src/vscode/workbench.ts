import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ToolEvent } from '../core/context';
import type { ToolResult } from '../core/results/result';
import { ALL_TOOLS, ToolRegistry } from '../tools';
import { toAbortSignal } from './cancellation';
import { ChangeDiffs } from './changeDiffs';
import type { CommandHandler } from './commands';
import { createCustomToolsProvider, CustomToolsProvider } from './customTools';
import { createVscodeEnvironment } from './environment';
import { createVscodeHost } from './host';
import { languageModelTools } from './lmTools';
import { createLogSink } from './log';
import { mcpApi } from './mcpApi';
import { applyWithWorkspaceEdit } from './mutation';
import { registerSessionTerminals } from './terminals';
import { registerWorkbenchUi } from './ui';

/**
 * Everything behind activation's entry points (entryPoints.ts): the registry with the tools, the
 * views, documents, diffs, session terminals and the custom tools' provider. Its own bundle
 * (dist/workbench.js), loaded and started the first time an entry point is used, or right after
 * activation. Its disposables belong to the extension context's subscriptions.
 */
export interface Workbench {
	/** By contributed name (`toolbelt_read_file`). */
	readonly tools: ReadonlyMap<string, vscode.LanguageModelTool<object>>;
	/** By command id, every command package.json contributes. */
	readonly commands: ReadonlyMap<string, CommandHandler>;
	/** Absent where this VS Code has no MCP API. */
	readonly customTools?: CustomToolsProvider;
	onDidInvokeTool(listener: (event: ToolEvent) => void): { dispose(): void };
	/** The API's invoke: approval as `toolbelt.approval` says. */
	invoke(name: string, input: unknown, token?: vscode.CancellationToken): Promise<ToolResult>;
	/** Stops every session; deactivation waits for it. */
	stopSessions(): Promise<void>;
}

/** `activationMs` and `loadMs` (requiring this bundle) are told in the log. */
export function startWorkbench(context: vscode.ExtensionContext, timing: { activationMs: number; loadMs: number }): Workbench {
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
	context.subscriptions.push(log, diffs, diffs.registerDocuments(), registry.onEvent(createLogSink(log)));
	const commands = registerWorkbenchUi(context.subscriptions, { registry, env, tools: ALL_TOOLS, log, diffs });
	const sessionTerminals = registerSessionTerminals(context, env.state);
	context.subscriptions.push(sessionTerminals);
	let customTools: CustomToolsProvider | undefined;
	if (mcpApi()) {
		customTools = createCustomToolsProvider({ boundary: env.boundary, settings: env.settings, cliPath: context.asAbsolutePath('dist/cli.js'), log });
		context.subscriptions.push(customTools);
	} else {
		log.info('Custom tools: this VS Code has no MCP server API (1.101+), so they are not offered to chat.');
	}
	log.info(`Activated in ${timing.activationMs.toFixed(1)} ms (no file read); the tools, views and documents loaded in ${timing.loadMs.toFixed(1)} ms and started in ${(performance.now() - started).toFixed(1)} ms.`);
	return {
		tools: languageModelTools(registry, ALL_TOOLS),
		commands,
		customTools,
		onDidInvokeTool: listener => registry.onEvent(listener),
		invoke: (name, input, token) => registry.invoke(name, input, { signal: toAbortSignal(token), approval: 'ask' }),
		stopSessions: () => sessionTerminals.stopAll(),
	};
}
