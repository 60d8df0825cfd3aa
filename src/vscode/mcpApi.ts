import * as vscode from 'vscode';

/** The slice of VS Code's MCP API (1.101+) Toolbelt uses; @types/vscode is older than the engine. */
export interface McpApi {
	registerMcpServerDefinitionProvider(id: string, provider: McpServerDefinitionProvider): vscode.Disposable;
}

export interface McpServerDefinitionProvider {
	readonly onDidChangeMcpServerDefinitions: vscode.Event<void>;
	provideMcpServerDefinitions(): Promise<object[]>;
}

/** The id in package.json's `contributes.mcpServerDefinitionProviders`. */
export const MCP_PROVIDER_ID = 'toolbelt.customTools';

/** The MCP API, where this VS Code has it. */
export function mcpApi(): McpApi | undefined {
	const lm = vscode.lm as typeof vscode.lm & Partial<McpApi>;
	return lm.registerMcpServerDefinitionProvider ? lm as McpApi : undefined;
}
