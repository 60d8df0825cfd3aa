import * as vscode from 'vscode';

const MANAGE = 'Manage Workspace Trust';

/**
 * Commands that change files or run commands refuse in an untrusted workspace, as the tools do,
 * and say why and how to get out of it. Returns true when the caller must stop.
 */
export function refuseUntrusted(action: string): boolean {
	if (vscode.workspace.isTrusted) return false;
	void vscode.window.showWarningMessage(
		`Toolbelt: "${action}" changes files or runs commands, and this workspace is not trusted (Restricted Mode), so it was not run. Read-only tools still work. To use it, trust this workspace.`,
		MANAGE,
	).then(choice => {
		if (choice === MANAGE) void vscode.commands.executeCommand('workbench.trust.manage');
	});
	return true;
}

/** Shows a tool's own refusal (code `untrusted`) with the same way out. */
export function showUntrustedRefusal(message: string): void {
	void vscode.window.showWarningMessage(`Toolbelt: ${message}`, MANAGE).then(choice => {
		if (choice === MANAGE) void vscode.commands.executeCommand('workbench.trust.manage');
	});
}
