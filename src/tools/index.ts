import { readFileTool } from './readFile';
import type { ToolDefinition } from './tool';

/** Every tool Toolbelt offers, in the order people see them. */
export const ALL_TOOLS: readonly ToolDefinition<any>[] = [
	readFileTool,
];

export { ToolRegistry } from './registry';
export type { InvokeOptions, ToolEnvironment, ToolDescription, ApprovalPhase } from './registry';
