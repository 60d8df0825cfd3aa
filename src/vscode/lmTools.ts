import * as vscode from 'vscode';
import { confirmationDiff, confirmationTitle, describeRequest, mustReachPerson } from '../core/policy/approval';
import type { ToolResult } from '../core/results/result';
import type { ToolRegistry } from '../tools/registry';
import { contributedName, safeDescribe, ToolDefinition } from '../tools/tool';
import { toAbortSignal } from './cancellation';

/** Diffs longer than this are shown in part in the confirmation; the diff editor shows all. */
const CONFIRMATION_DIFF_BYTES = 12_000;

/**
 * Every tool as VS Code calls it, by contributed name. Activation registers the names with
 * `vscode.lm.registerTool` (entryPoints.ts) and forwards the calls here once the workbench is up.
 */
export function languageModelTools(registry: ToolRegistry, tools: readonly ToolDefinition<any>[]): Map<string, vscode.LanguageModelTool<object>> {
	return new Map(tools.map(tool => [contributedName(tool), {
		prepareInvocation: (options, token) => prepare(registry, tool, options.input, token),
		invoke: async (options, token) => toLanguageModelResult(await registry.invoke(tool.name, options.input, {
			signal: toAbortSignal(token),
			// In chat, VS Code has already shown our confirmationMessages and the person agreed: the
			// registry commits the call prepare planned (and shown), or plans it now if prepare was skipped.
			approval: 'preconfirmed',
		})),
	}]));
}

export async function prepare(
	registry: ToolRegistry,
	tool: ToolDefinition,
	input: object,
	token?: vscode.CancellationToken,
): Promise<vscode.PreparedToolInvocation> {
	const invocationMessage = safeDescribe(tool, input);
	const request = await registry.preview(tool.name, input, { signal: toAbortSignal(token) });
	// A protected path or a command outside the sandbox is asked by Toolbelt itself at invocation
	// (see mustReachPerson): a chat confirmation here would ask twice, and chat may skip it.
	if (!request || mustReachPerson(request)) return { invocationMessage };
	return {
		invocationMessage,
		confirmationMessages: {
			title: confirmationTitle(request),
			message: new vscode.MarkdownString(describeRequest(request, 'markdown', confirmationDiff(request, CONFIRMATION_DIFF_BYTES))),
		},
	};
}

/** Images become data parts where this VS Code has them (1.106+), else a note the model can act on. */
export function toLanguageModelResult(result: ToolResult): vscode.LanguageModelToolResult {
	const DataPart = (vscode as any).LanguageModelDataPart;
	const parts = result.content.map(part => {
		if (part.kind === 'text') return new vscode.LanguageModelTextPart(part.text);
		if (DataPart?.image) return DataPart.image(part.data, part.mimeType);
		return new vscode.LanguageModelTextPart(`[An image (${part.mimeType}, ${part.data.byteLength} bytes) cannot be shown in this version of VS Code; read it with encoding: "base64" if its bytes help.]`);
	});
	return new vscode.LanguageModelToolResult(parts);
}
