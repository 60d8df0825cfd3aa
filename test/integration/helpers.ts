import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

/** The temp copy of the workspace fixture this run opened. */
export const workspace = (): string => process.env.TOOLBELT_TEST_WORKSPACE ?? vscode.workspace.workspaceFolders![0].uri.fsPath;

/**
 * Calls a tool the way a chat participant does (VS Code has confirmed it already) and returns
 * its text. Takes `read_file` or `toolbelt_read_file`.
 */
export async function invokeText(name: string, input: object): Promise<string> {
	const contributed = name.startsWith('toolbelt_') ? name : `toolbelt_${name}`;
	const result = await vscode.lm.invokeTool(contributed, { input, toolInvocationToken: undefined });
	return result.content.map(part => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

/** Writes files below `base`, creating folders. */
export function writeFiles(base: string, files: Record<string, string>): void {
	for (const [rel, content] of Object.entries(files)) {
		const file = path.join(base, rel);
		fs.mkdirSync(path.dirname(file), { recursive: true });
		fs.writeFileSync(file, content);
	}
}

/** Polls until `probe` gives a value (file events and editor updates arrive asynchronously). */
export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 5000): Promise<T> {
	const deadline = Date.now() + ms;
	for (;;) {
		const value = await probe();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
		await new Promise(resolve => setTimeout(resolve, 50));
	}
}

/** waitFor for a plain condition. */
export async function until(what: string, condition: () => boolean, ms = 5000): Promise<void> {
	await waitFor(what, () => condition() || undefined, ms);
}
