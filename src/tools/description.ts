import { contributedName, ToolDefinition } from './tool';

/** A tool as `toolbelt list` and the MCP server describe it: what a client needs to call it. */
export interface ToolDescription {
	readonly name: string;
	readonly contributedName: string;
	readonly description: string;
	readonly inputSchema: object;
	readonly mutating: boolean;
	readonly group: string;
	/** Works only inside VS Code (it asks the editor's language services). */
	readonly needsVscode: boolean;
	/** Defined by the workspace in `.toolbelt/tools/` (see tools/custom). */
	readonly custom?: true;
}

export function describeTool(tool: ToolDefinition<any>, custom = false): ToolDescription {
	return {
		name: tool.name,
		contributedName: contributedName(tool),
		description: tool.modelDescription,
		inputSchema: tool.inputSchema ?? tool.schema,
		mutating: tool.mutating,
		group: tool.group,
		needsVscode: tool.needsVscode ?? false,
		...(custom ? { custom: true as const } : {}),
	};
}
