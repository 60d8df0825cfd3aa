import type * as vscode from 'vscode';
import type { ToolEvent } from '../core/context';
import type { ToolResult } from '../core/results/result';

/** What `activate()` returns to other extensions. */
export interface ToolbeltApi {
	/** Fires at the start and end of every tool call, from any caller, and while it waits for a person. */
	readonly onDidInvokeTool: vscode.Event<ToolEvent>;
	/** Runs a tool (model-facing or contributed name). Changes are put to the person per `toolbelt.approval`. */
	invoke(name: string, input: unknown, token?: vscode.CancellationToken): Promise<ToolResult>;
}
