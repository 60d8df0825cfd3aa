import { applyCodeActionTool } from './applyCodeAction';
import { applyPatchTool } from './applyPatch';
import { callHierarchyTool } from './callHierarchy';
import { codeActionsTool } from './codeActions';
import { execCommandTool } from './execCommand';
import { killSessionTool } from './killSession';
import { listSessionsTool } from './listSessions';
import { editFileTool } from './editFile';
import { findFilesTool } from './findFiles';
import { findReferencesTool } from './findReferences';
import { findSymbolsTool } from './findSymbols';
import { getDiagnosticsTool } from './getDiagnostics';
import { goToDefinitionTool } from './goToDefinition';
import { grepTool } from './grep';
import { hoverTool } from './hover';
import { listDirTool } from './listDir';
import { completeTaskTool } from './completeTask';
import { getPlanTool } from './getPlan';
import { readFileTool } from './readFile';
import { renameSymbolTool } from './renameSymbol';
import { runCommandTool } from './runCommand';
import { writeStdinTool } from './writeStdin';
import type { ToolDefinition } from './tool';
import { updatePlanTool } from './updatePlan';
import { writeFileTool } from './writeFile';
import { writeOutputTool } from './writeOutput';

/** Every tool Toolbelt offers, in the order people see them. */
export const ALL_TOOLS: readonly ToolDefinition<any>[] = [
	readFileTool,
	listDirTool,
	findFilesTool,
	grepTool,
	getDiagnosticsTool,
	findSymbolsTool,
	goToDefinitionTool,
	findReferencesTool,
	hoverTool,
	callHierarchyTool,
	renameSymbolTool,
	codeActionsTool,
	applyCodeActionTool,
	writeFileTool,
	editFileTool,
	applyPatchTool,
	writeOutputTool,
	runCommandTool,
	execCommandTool,
	writeStdinTool,
	listSessionsTool,
	killSessionTool,
	getPlanTool,
	updatePlanTool,
	completeTaskTool,
];

export { ToolRegistry } from './registry';
export type { InvokeOptions, ApprovalPhase } from './registry';
export type { ToolDescription } from './description';
