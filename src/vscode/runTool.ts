import * as vscode from 'vscode';
import { checkJsonInput, initialJsonText, InputProblem } from '../ui/jsonInput';
import type { ToolResult } from '../core/results/result';
import { grepMatcher } from '../ui/resultHighlight';
import type { Settings } from '../core/policy/settings';
import { fieldPrompt, FieldValue, FormField, formFields, needsEditor, parseFieldInput, showValue, skeletonInput, stripMarkdown } from '../ui/schemaForm';
import type { ToolRegistry } from '../tools/registry';
import { isSwitchedOff, safeDescribe, ToolDefinition } from '../tools/tool';
import { toAbortSignal } from './cancellation';
import type { ToolDocuments } from './documents';
import { refuseUntrusted, showUntrustedRefusal } from './trust';

/** What the command palette flows share. */
export interface RunToolUi {
	readonly registry: ToolRegistry;
	readonly tools: readonly ToolDefinition<any>[];
	/** The settings the registry applies (switched-off tools). */
	readonly settings: () => Settings;
	readonly documents: ToolDocuments;
	/** Problems of JSON input documents, shown in their editors. */
	readonly inputProblems: vscode.DiagnosticCollection;
}

const GROUP_LABELS: Record<string, string> = { read: 'Read and find', edit: 'Change files', commands: 'Run commands', plan: 'Plan' };

/** `Toolbelt: Run Tool…`: pick a tool, give its input (prompts or JSON), see the result. */
export async function runToolCommand(ui: RunToolUi, toolName?: string): Promise<void> {
	const tool = toolName ? ui.registry.get(toolName) : await pickTool(ui);
	if (!tool || refuseSwitchedOff(ui, tool)) return;
	if (tool.mutating && refuseUntrusted(`Run ${tool.name}`)) return;
	const method = await pickMethod(tool);
	if (method === 'json') return openJsonInput(ui, tool);
	if (method !== 'prompts') return;
	const answers = await promptForInput(tool);
	if (!answers) return;
	if (answers.editorFor) return openJsonInput(ui, tool, answers);
	const result = await runWithProgress(ui.registry, tool, answers.values);
	if (result.error?.code !== 'invalid_input') return presentResult(ui, tool, answers.values, result);
	// Refused as a whole (a regex ripgrep cannot read, a glob): the answers stay, in the editor.
	await openJsonInput(ui, tool, answers, firstLine(result.error.message));
}

export type ToolPickItem = vscode.QuickPickItem & { tool?: ToolDefinition<any> };

/** Run Tool…'s list, by group; a switched-off tool stays listed (so it can be found) and says so. */
export function toolPickItems(tools: readonly ToolDefinition<any>[], settings: Settings): ToolPickItem[] {
	const items: ToolPickItem[] = [];
	for (const group of Object.keys(GROUP_LABELS)) {
		const members = tools.filter(tool => tool.group === group);
		if (!members.length) continue;
		items.push({ label: GROUP_LABELS[group], kind: vscode.QuickPickItemKind.Separator });
		for (const tool of members) {
			const off = isSwitchedOff(tool, settings);
			items.push({
				label: `$(${off ? 'circle-slash' : tool.icon}) ${tool.name}`,
				description: off ? `${tool.displayName} (switched off)` : tool.displayName,
				detail: tool.userDescription,
				tool,
			});
		}
	}
	return items;
}

async function pickTool(ui: RunToolUi): Promise<ToolDefinition<any> | undefined> {
	const items = toolPickItems(ui.tools, ui.settings());
	const choice = await vscode.window.showQuickPick(items, { title: 'Toolbelt: Run Tool', placeHolder: 'Pick a tool', matchOnDescription: true, matchOnDetail: true });
	return choice?.tool;
}

/** Shows why a switched-off tool does not run, with the way to the setting. True when the caller must stop. */
export function refuseSwitchedOff(ui: Pick<RunToolUi, 'settings'>, tool: ToolDefinition<any>): boolean {
	if (!isSwitchedOff(tool, ui.settings())) return false;
	showSwitchedOff(tool);
	return true;
}

const OPEN_SETTINGS = 'Open Settings';

function showSwitchedOff(tool: ToolDefinition<any>): void {
	void vscode.window.showWarningMessage(
		`Toolbelt: ${tool.name} is switched off in this workspace's settings (toolbelt.disabledTools or toolbelt.disabledGroups), so nothing was run. Take it out of those settings to use it.`,
		OPEN_SETTINGS,
	).then(choice => {
		if (choice === OPEN_SETTINGS) void vscode.commands.executeCommand('workbench.action.openSettings', 'toolbelt.disabled');
	});
}

async function pickMethod(tool: ToolDefinition<any>): Promise<'prompts' | 'json' | undefined> {
	const fields = formFields(tool.schema);
	if (!fields.length) return 'prompts';
	const items: (vscode.QuickPickItem & { method: 'prompts' | 'json' })[] = [
		{ label: '$(list-selection) Fill in prompts', detail: 'One question per field: required fields first, then any optional ones you choose. Lists and text of several lines open in the JSON editor.', method: 'prompts' },
		{ label: '$(json) Edit as JSON', detail: 'An editor with an example, completion and checks from the tool\'s schema; best for multi-line text and lists.', method: 'json' },
	];
	// A required list or multi-line text ends up in the editor anyway: offer it first.
	if (fields.some(field => field.required && needsEditor(field))) items.reverse();
	const choice = await vscode.window.showQuickPick(items, { title: `Toolbelt: ${tool.name} — how to give the input` });
	return choice?.method;
}

/** What the prompts gathered; `editorFor` when they stopped at a field the JSON editor must take. */
export interface PromptAnswers {
	readonly values: Record<string, unknown>;
	readonly editorFor?: FormField;
}

/**
 * Asks for every required field, then offers the optional ones until the person picks Run. A field
 * an input box cannot hold (a list, an object, text of several lines) hands over to the JSON
 * editor with what was answered so far.
 */
export async function promptForInput(tool: ToolDefinition<any>): Promise<PromptAnswers | undefined> {
	const fields = formFields(tool.schema);
	const values: Record<string, unknown> = {};
	for (const field of fields.filter(candidate => candidate.required)) {
		if (needsEditor(field)) return { values, editorFor: field };
		const answer = await askField(tool, field, undefined);
		if (!answer) return undefined;
		if ('value' in answer) values[field.name] = answer.value;
	}
	const optional = fields.filter(field => !field.required);
	for (;;) {
		if (!optional.length) return { values };
		const field = await pickOptionalField(tool, optional, values);
		if (field === 'run') return { values };
		if (!field) return undefined;
		if (needsEditor(field)) return { values, editorFor: field };
		const answer = await askField(tool, field, values[field.name]);
		if (!answer) continue;
		if ('value' in answer) values[field.name] = answer.value;
		else delete values[field.name];
	}
}

async function pickOptionalField(tool: ToolDefinition<any>, optional: FormField[], values: Record<string, unknown>): Promise<FormField | 'run' | undefined> {
	type Item = vscode.QuickPickItem & { field?: FormField };
	const items: Item[] = [
		{ label: `$(play) Run ${tool.name}`, description: Object.keys(values).length ? showValue(values) : '' },
		{ label: 'Optional fields', kind: vscode.QuickPickItemKind.Separator },
		...optional.map(field => ({
			label: field.name,
			description: field.name in values ? `= ${showValue(values[field.name])}` : field.defaultValue !== undefined ? `default ${showValue(field.defaultValue)}` : 'default',
			detail: stripMarkdown(field.description),
			field,
		})),
	];
	const choice = await vscode.window.showQuickPick(items, { title: `Toolbelt: ${tool.name} — run, or set an optional field`, ignoreFocusOut: true, matchOnDetail: true });
	if (!choice) return undefined;
	return choice.field ?? 'run';
}

/** One prompt. Undefined when the person pressed Escape. */
async function askField(tool: ToolDefinition<any>, field: FormField, current: unknown): Promise<FieldValue | undefined> {
	const { title, prompt, placeHolder } = fieldPrompt(field);
	const fullTitle = `Toolbelt: ${tool.name} — ${title}`;
	if (field.kind === 'enum' || field.kind === 'boolean') {
		const options: { label: string; value: unknown }[] = field.kind === 'boolean'
			? [{ label: 'Yes', value: true }, { label: 'No', value: false }]
			: (field.options ?? []).map(option => ({ label: String(option), value: option }));
		const items: (vscode.QuickPickItem & { value?: unknown; skip?: boolean })[] = options.map(option => ({
			...option, description: option.value === field.defaultValue ? 'default' : option.value === current ? 'current' : undefined,
		}));
		if (!field.required) items.push({ label: '(leave unset: the tool\'s default)', skip: true });
		const choice = await vscode.window.showQuickPick(items, { title: fullTitle, placeHolder: prompt, ignoreFocusOut: true });
		if (!choice) return undefined;
		return choice.skip ? { skip: true } : { value: choice.value };
	}
	const text = await vscode.window.showInputBox({
		title: fullTitle,
		prompt,
		placeHolder,
		value: current === undefined ? '' : typeof current === 'string' ? current : JSON.stringify(current),
		ignoreFocusOut: true,
		validateInput: value => {
			const parsed = parseFieldInput(field, value);
			return 'error' in parsed ? parsed.error : undefined;
		},
	});
	return text === undefined ? undefined : parseFieldInput(field, text);
}

/**
 * Opens the tool's JSON input document, tied to its schema. Alone, it reopens what was typed last
 * (or an example of every required field); after prompts, it starts from their answers and an
 * example of the field they stopped at, with the cursor in it, or with why the tool refused them.
 */
export async function openJsonInput(ui: RunToolUi, tool: ToolDefinition<any>, answers?: PromptAnswers, refusal?: string): Promise<void> {
	const field = answers?.editorFor;
	const text = () => initialJsonText(ui.documents.schemaUri(tool).toString(), skeletonInput(tool.schema, answers?.values, field ? [field.name] : []));
	const editor = await ui.documents.openInput(tool, text, answers !== undefined);
	const at = field ? editor.document.getText().indexOf(`"${field.name}": `) : -1;
	if (field && at >= 0) {
		// At the value: inside the quotes of a text, before the example of a list or object.
		const position = editor.document.positionAt(at + `"${field.name}": `.length + (field.kind === 'json' ? 0 : 1));
		editor.selection = new vscode.Selection(position, position);
		editor.revealRange(new vscode.Range(position, position));
	}
	const then = 'then press ▶ (Run Tool with This Input) in the editor\'s title bar.';
	if (refusal) {
		void vscode.window.showErrorMessage(`Toolbelt: ${tool.name} refused the input: ${refusal} Your answers are in the editor: fix them, ${then}`);
		return;
	}
	const what = field ? `Fill in ${field.name} (${field.kind === 'json' ? 'JSON' : 'text; \\n starts a new line'}) in the editor` : `Edit the input of ${tool.name}`;
	void vscode.window.showInformationMessage(`${what}, ${then}`);
}

/** Runs the input document in the active editor (or the one given), or shows why not. */
export async function runInputDocument(ui: RunToolUi, uri?: vscode.Uri): Promise<ToolResult | undefined> {
	const document = uri
		? await vscode.workspace.openTextDocument(uri)
		: vscode.window.activeTextEditor?.document;
	const tool = document && ui.documents.toolOfInput(document.uri);
	if (!document || !tool) {
		void vscode.window.showWarningMessage('Toolbelt: open a tool input first (Toolbelt: Run Tool… → Edit as JSON).');
		return undefined;
	}
	if (tool.mutating && refuseUntrusted(`Run ${tool.name}`)) return undefined;
	const checked = checkJsonInput(document.getText(), tool.schema);
	if ('problems' in checked) {
		ui.inputProblems.set(document.uri, checked.problems.map(problem => toDiagnostic(document, problem)));
		const count = checked.problems.length;
		void vscode.window.showErrorMessage(`Toolbelt: the input of ${tool.name} has ${count} problem${count === 1 ? '' : 's'} (underlined in the editor); nothing was run.`);
		return undefined;
	}
	ui.inputProblems.delete(document.uri);
	// Kept in memory for next time; saved, closing the editor does not ask about it.
	if (document.isDirty) await Promise.resolve(document.save()).catch(() => false);
	return runAndShow(ui, tool, checked.input);
}

function toDiagnostic(document: vscode.TextDocument, problem: InputProblem): vscode.Diagnostic {
	const range = new vscode.Range(document.positionAt(problem.offset), document.positionAt(problem.offset + problem.length));
	const diagnostic = new vscode.Diagnostic(range, problem.message, vscode.DiagnosticSeverity.Error);
	diagnostic.source = 'Toolbelt';
	return diagnostic;
}

/** Runs a tool with a cancellable progress notification; the person's Cancel aborts the call. */
export function runWithProgress(registry: ToolRegistry, tool: ToolDefinition<any>, input: unknown): Thenable<ToolResult> {
	return vscode.window.withProgress(
		{ location: vscode.ProgressLocation.Notification, title: `Toolbelt: ${safeDescribe(tool, input)}`, cancellable: true },
		(_progress, token) => registry.invoke(tool.name, input, { signal: toAbortSignal(token), approval: 'ask' }),
	);
}

export async function runAndShow(ui: RunToolUi, tool: ToolDefinition<any>, input: unknown): Promise<ToolResult> {
	const result = await runWithProgress(ui.registry, tool, input);
	await presentResult(ui, tool, input, result);
	return result;
}

/** Declines, cancels, trust refusals and switched-off tools are a notification; anything else opens the result. */
export async function presentResult(ui: RunToolUi, tool: ToolDefinition<any>, input: unknown, result: ToolResult): Promise<void> {
	switch (result.error?.code) {
		case 'declined':
			void vscode.window.showInformationMessage(`Toolbelt: ${tool.name} was declined; nothing was changed.`);
			return;
		case 'cancelled':
			void vscode.window.showInformationMessage(`Toolbelt: ${tool.name} was cancelled.`);
			return;
		case 'untrusted':
			showUntrustedRefusal(result.error.message);
			return;
		case 'disabled':
			showSwitchedOff(tool);
			return;
	}
	const inputLine = JSON.stringify(input);
	const header = `${tool.displayName} — ${safeDescribe(tool, input)}\nInput: ${inputLine.length > 400 ? `${inputLine.slice(0, 400)}…` : inputLine}`;
	// A change shows its diff (toolbelt.showDiffs); its result then opens beside it, not over it.
	const beside = tool.mutating && !result.error ? { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true } : {};
	await ui.documents.showResult(tool, header, result, beside, tool.name === 'grep' ? grepMatcher(input) : undefined);
	if (result.error) void vscode.window.showErrorMessage(`Toolbelt: ${tool.name} failed: ${firstLine(result.error.message)}`);
}

/** A message's first line, cut for a notification. */
export function firstLine(text: string): string {
	const line = text.split('\n')[0];
	return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
