import * as vscode from 'vscode';
import type { SharedState } from '../core/context';
import type { ToolDefinition } from '../tools/tool';
import type { ActivityView } from './activityView';
import type { BackupsUi } from './backupsUi';
import type { PlanView } from './planView';
import { firstLine, presentResult, refuseSwitchedOff, runAndShow, runInputDocument, RunToolUi, runToolCommand, runWithProgress } from './runTool';
import { refuseUntrusted } from './trust';

export interface CommandsUi extends RunToolUi {
	readonly activity: ActivityView;
	readonly plan: PlanView;
	readonly backups: BackupsUi;
	readonly state: SharedState;
}

/** A command's handler, as `vscode.commands.registerCommand` takes it. */
export type CommandHandler = (...args: any[]) => unknown;

/**
 * Every `toolbelt.*` command's handler, by id. Titles, categories and `when` clauses are in
 * package.json; activation registers its ids (entryPoints.ts) and forwards to these.
 */
export function commandHandlers(ui: CommandsUi): Map<string, CommandHandler> {
	const command = (id: string, run: CommandHandler): [string, CommandHandler] => [id, run];
	return new Map([
		command('toolbelt.runTool', (toolName?: string) => runToolCommand(ui, typeof toolName === 'string' ? toolName : undefined)),
		command('toolbelt.runInputDocument', (uri?: vscode.Uri) => runInputDocument(ui, uri instanceof vscode.Uri ? uri : undefined)),
		command('toolbelt.searchWorkspace', () => searchWorkspace(ui)),
		command('toolbelt.findFiles', () => findFiles(ui)),
		command('toolbelt.applyPatchFromEditor', () => applyPatchFromEditor(ui)),
		command('toolbelt.applyPatchFromClipboard', () => applyPatchFromClipboard(ui)),
		command('toolbelt.showActivity', () => vscode.commands.executeCommand('toolbelt.activity.focus')),
		command('toolbelt.clearActivity', () => ui.activity.clear()),
		command('toolbelt.activity.open', (id: string) => ui.activity.open(id)),
		command('toolbelt.activity.showDetails', (record: { id: string } | string) => ui.activity.showDetails(typeof record === 'string' ? record : record.id)),
		command('toolbelt.activity.showDiff', (record: { id: string } | string) => ui.activity.open(typeof record === 'string' ? record : record.id)),
		command('toolbelt.restoreBackup', () => ui.backups.restoreCommand()),
		command('toolbelt.stopAllSessions', () => stopAllSessions(ui.state)),
		command('toolbelt.openPlan', () => openPlan(ui)),
		command('toolbelt.refreshPlan', () => ui.plan.refresh()),
		command('toolbelt.plan.complete', (item: { number: number; task: never }) => ui.plan.setCompleted(item, true)),
		command('toolbelt.plan.reopen', (item: { number: number; task: never }) => ui.plan.setCompleted(item, false)),
	]);
}

/** The tool a command runs, unless the settings switch it off (the person is told, with the way to the setting). */
function toolOrSay(ui: RunToolUi, name: string): ToolDefinition<any> | undefined {
	const tool = ui.registry.get(name);
	return tool && !refuseSwitchedOff(ui, tool) ? tool : undefined;
}

/** The selected text (one line) is the likely thing to search for. */
function selectedText(): string {
	const editor = vscode.window.activeTextEditor;
	const text = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
	return text.includes('\n') ? '' : text;
}

async function searchWorkspace(ui: RunToolUi): Promise<void> {
	const tool = toolOrSay(ui, 'grep');
	if (!tool) return;
	await askAndRun(ui, tool, {
		title: 'Toolbelt: Search Workspace (grep)',
		prompt: 'A regular expression (ripgrep syntax). Results open in an editor; click a path to go there.',
		value: selectedText().replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
		placeHolder: 'e.g. TODO|FIXME',
		ignoreFocusOut: true,
		validateInput: value => (value ? undefined : 'Type what to search for: a regular expression such as TODO|FIXME.'),
	}, pattern => ({ pattern }), message => `Not a regular expression ripgrep accepts: ${/^error: (.+)$/m.exec(message)?.[1] ?? firstLine(message)}. Fix it, or put \\ before special characters such as ( and [.`);
}

async function findFiles(ui: RunToolUi): Promise<void> {
	const tool = toolOrSay(ui, 'find_files');
	if (!tool) return;
	await askAndRun(ui, tool, {
		title: 'Toolbelt: Find Files',
		prompt: 'A glob, matched against workspace-relative paths (.gitignore is honoured).',
		value: '**/*',
		valueSelection: [3, 4],
		ignoreFocusOut: true,
		validateInput: value => (value ? undefined : 'Type a glob, for example **/*.ts'),
	}, pattern => ({ pattern }), message => `Not a glob: ${firstLine(message).replace(/^The pattern ".*" is not a valid glob: /, '')}. For example **/*.ts or src/*.{js,ts}.`);
}

/**
 * One input box, then the tool. Input the tool refuses as invalid (a regex or glob it cannot
 * read) brings the box back with what was typed and why it was refused, instead of a result
 * document worded for a model.
 */
async function askAndRun(ui: RunToolUi, tool: ToolDefinition<any>, box: vscode.InputBoxOptions, toInput: (text: string) => object, explain: (message: string) => string): Promise<void> {
	let refused: { text: string; problem: string } | undefined;
	for (;;) {
		const text = await vscode.window.showInputBox({
			...box,
			// The reason goes in the prompt: VS Code validates only what is typed next.
			...(refused ? { value: refused.text, valueSelection: undefined, prompt: `${refused.problem} ${box.prompt ?? ''}`.trim() } : {}),
			validateInput: value => (refused && value === refused.text ? refused.problem : box.validateInput?.(value)),
		});
		if (!text) return;
		const input = toInput(text);
		const result = await runWithProgress(ui.registry, tool, input);
		if (result.error?.code !== 'invalid_input') return presentResult(ui, tool, input, result);
		refused = { text, problem: explain(result.error.message) };
	}
}

async function applyPatchFromEditor(ui: RunToolUi): Promise<void> {
	const tool = toolOrSay(ui, 'apply_patch');
	const editor = vscode.window.activeTextEditor;
	if (!tool || refuseUntrusted('Apply Patch from Editor')) return;
	if (!editor) {
		void vscode.window.showWarningMessage('Toolbelt: open the patch (a unified diff or a *** Begin Patch envelope) in an editor first.');
		return;
	}
	const patch = editor.selection.isEmpty ? editor.document.getText() : editor.document.getText(editor.selection);
	if (!patch.trim()) {
		void vscode.window.showWarningMessage('Toolbelt: the editor (or its selection) is empty; there is no patch to apply.');
		return;
	}
	await runAndShow(ui, tool, { patch });
}

async function applyPatchFromClipboard(ui: RunToolUi): Promise<void> {
	const tool = toolOrSay(ui, 'apply_patch');
	if (!tool || refuseUntrusted('Apply Patch from Clipboard')) return;
	const patch = await vscode.env.clipboard.readText();
	if (!patch.trim()) {
		void vscode.window.showWarningMessage('Toolbelt: the clipboard is empty; copy a patch (a unified diff or a *** Begin Patch envelope) first.');
		return;
	}
	await runAndShow(ui, tool, { patch });
}

async function stopAllSessions(state: SharedState): Promise<number> {
	const sessions = state.sessions;
	const live = sessions.live().length;
	if (!live) {
		void vscode.window.showInformationMessage('Toolbelt: no sessions are running.');
		return 0;
	}
	const stopped = await sessions.killAll('killed');
	void vscode.window.showInformationMessage(`Toolbelt: stopped ${stopped} session${stopped === 1 ? '' : 's'}.`);
	return stopped;
}

async function openPlan(ui: CommandsUi): Promise<void> {
	await vscode.commands.executeCommand('toolbelt.plan.focus');
	const state = await ui.plan.locate();
	if (state?.exists) await vscode.window.showTextDocument(vscode.Uri.file(state.absolute), { preview: false });
	else if (state) void vscode.window.showInformationMessage(`Toolbelt: there is no plan yet (${state.display}). It appears when a model calls update_plan, or run update_plan from Toolbelt: Run Tool….`);
}
