import * as vscode from 'vscode';
import type { ToolEvent } from '../core/context';
import type { ToolResult } from '../core/results/result';
import type { ToolRegistry } from '../tools/registry';

/** What `activate()` returns to other extensions. */
export interface ToolbeltApi {
	/** Fires at the start and end of every tool call, from any caller, and while it waits for a person. */
	readonly onDidInvokeTool: vscode.Event<ToolEvent>;
	/** Runs a tool (model-facing or contributed name). Changes are put to the person per `toolbelt.approval`. */
	invoke(name: string, input: unknown, token?: vscode.CancellationToken): Promise<ToolResult>;
}

export function createApi(registry: ToolRegistry, subscriptions: vscode.Disposable[], toSignal: (token?: vscode.CancellationToken) => AbortSignal): ToolbeltApi {
	const emitter = new vscode.EventEmitter<ToolEvent>();
	subscriptions.push(emitter, registry.onEvent(event => emitter.fire(event)));
	return {
		onDidInvokeTool: emitter.event,
		invoke: (name, input, token) => registry.invoke(name, input, { signal: toSignal(token), approval: 'ask' }),
	};
}
