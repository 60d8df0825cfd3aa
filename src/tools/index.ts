import { applyPatchTool } from './applyPatch';
import { execCommandTool } from './execCommand';
import { killSessionTool } from './killSession';
import { listSessionsTool } from './listSessions';
import { editFileTool } from './editFile';
import { readFileTool } from './readFile';
import { runCommandTool } from './runCommand';
import { writeStdinTool } from './writeStdin';
import type { ToolDefinition } from './tool';
import { writeFileTool } from './writeFile';
import { writeOutputTool } from './writeOutput';

/** Every tool Toolbelt offers, in the order people see them. */
export const ALL_TOOLS: readonly ToolDefinition<any>[] = [
	readFileTool,
	writeFileTool,
	editFileTool,
	applyPatchTool,
	writeOutputTool,
	runCommandTool,
	execCommandTool,
	writeStdinTool,
	listSessionsTool,
	killSessionTool,
];

export { ToolRegistry } from './registry';
export type { InvokeOptions, ToolEnvironment, ToolDescription, ApprovalPhase } from './registry';
