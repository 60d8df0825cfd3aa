import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import type { CodeActionInfo, SourceRange } from '../core/languages';
import { formatDiagnostic } from '../core/changes/diagnostics';
import { textResult, ToolResult } from '../core/results/result';
import { checkLine, locateSymbol } from '../core/text/symbolPosition';
import { askLanguageServer, languageServices, openSource, POSITION_FIELDS, SourceFile, sleep } from './codeSupport';
import { stringEnum } from '../core/schema/stringEnum';
import { defineTool } from './tool';

const KINDS = ['quickfix', 'refactor', 'source', 'all'] as const;

/** The input code_actions and apply_code_action share: a line, or a symbol on it, and the kind of action. */
export const ACTION_FIELDS = {
	path: POSITION_FIELDS.path,
	line: Type.Integer({ minimum: 1, description: 'The line (≥ 1), e.g. of a problem get_diagnostics reported.' }),
	symbol: Type.Optional(Type.String({ minLength: 1, description: 'Narrow to this text on the line (non-empty); refactorings act on it.' })),
	occurrence: POSITION_FIELDS.occurrence,
	kind: Type.Optional(stringEnum(KINDS, { description: 'Default "quickfix"; "all": every kind.' })),
};

const schema = Type.Object(ACTION_FIELDS, { additionalProperties: false });

type ActionInput = typeof schema.static;

/**
 * Quick fixes come from problems, and a file just opened (or shown) has none reported yet: how long
 * to wait for them on a line that seems to have none.
 */
const PROBLEMS_WAIT_MS = 5_000;
const PROBLEMS_POLL_MS = 200;

export const codeActionsTool = defineTool({
	name: 'code_actions',
	referenceName: 'tbCodeActions',
	displayName: 'List Code Actions',
	group: 'code',
	needsVscode: true,
	mutating: false,
	icon: 'lightbulb',
	tags: ['code', 'quickfix', 'refactor', 'read'],
	userDescription: 'The quick fixes and refactorings the editor offers for a line (its light bulb), with the problems on that line.',
	modelDescription: [
		'The code actions the editor\'s light bulb offers for a line: quick fixes for its problems (add a missing import, implement an interface, fix a typo…), or with kind "refactor" refactorings, with "source" file-wide actions (organize imports).',
		'Lists the line\'s problems and the actions by title; apply one with apply_code_action, the same input and its title.',
	].join(' '),
	schema,
	describe: input => `Listing code actions for ${input.path}:${input.line}`,
	run,
});

async function run(input: ActionInput, ctx: ToolContext): Promise<ToolResult> {
	const { file, actions, problems } = await actionsAt(ctx, input);
	const where = `${file.display}:${input.line}${input.symbol ? ` ("${input.symbol}")` : ''}`;
	const out = [`Code actions for ${where} (${kindWords(input)}):`];
	if (problems.length) out.push('Problems on that line:', ...problems.map(problem => `  ${problem}`));
	if (actions.length === 0) {
		out.push(`None. ${input.kind === 'all' ? '' : 'Try kind "all" for refactorings and source actions. '}The language server answers for this file, so this is its answer.`);
		return textResult(out.join('\n'), { total: 0, problems: problems.length });
	}
	out.push('', ...actions.map((action, index) => `${index + 1}. ${describeAction(action)}`));
	out.push('', 'Apply one with apply_code_action: the same path and line, and its title.');
	return textResult(out.join('\n'), { total: actions.length, problems: problems.length, titles: actions.map(action => action.title) });
}

/** The actions at the input's line or symbol, once the language server answers and the file's problems are in. */
export async function actionsAt(ctx: ToolContext, input: ActionInput): Promise<{ file: SourceFile; actions: CodeActionInfo[]; problems: string[] }> {
	const services = languageServices(ctx);
	const file = await openSource(ctx, services, input.path);
	const range = rangeOf(file, input);
	const kind = input.kind ?? 'quickfix';
	const only = kind === 'all' ? undefined : kind;
	const ask = () => services.codeActions(file.absolute, range, only);
	let actions = await askLanguageServer(ctx, services, file, ask, range.start);
	let problems = await problemsOn(ctx, file, input.line);
	if (actions.length === 0 && problems.length === 0 && kind !== 'refactor' && kind !== 'source') {
		await services.open(file.absolute, { inEditor: true });
		problems = await waitForProblems(ctx, file, input.line);
		if (problems.length) actions = await ask();
	}
	return { file, actions, problems };
}

function rangeOf(file: SourceFile, input: ActionInput): SourceRange {
	if (input.symbol) return locateSymbol(file.lines, { line: input.line, symbol: input.symbol, occurrence: input.occurrence }, file.display).range;
	checkLine(file.lines, input.line, file.display);
	const line = input.line - 1;
	return { start: { line, character: 0 }, end: { line, character: file.lines[line].length } };
}

async function problemsOn(ctx: ToolContext, file: SourceFile, line: number): Promise<string[]> {
	const diagnostics = await ctx.host.diagnostics?.([file.absolute]).catch(() => []) ?? [];
	return diagnostics.filter(d => d.line === line && d.path === file.absolute).map(d => formatDiagnostic(d, file.display));
}

async function waitForProblems(ctx: ToolContext, file: SourceFile, line: number): Promise<string[]> {
	const deadline = Date.now() + PROBLEMS_WAIT_MS;
	while (Date.now() < deadline) {
		await sleep(PROBLEMS_POLL_MS, ctx.signal);
		const problems = await problemsOn(ctx, file, line);
		if (problems.length) return problems;
	}
	return [];
}

/** `Add import from "./greeting" (quickfix, preferred)`, and what stands in the way of applying it. */
function describeAction(action: CodeActionInfo): string {
	const tags = [action.kind, action.isPreferred ? 'preferred' : undefined].filter(Boolean).join(', ');
	const applies = action.edit ? '' : action.command ? ' — runs an editor command only: cannot be previewed, so Toolbelt does not apply it' : ' — changes nothing';
	return `${action.title}${tags ? ` (${tags})` : ''}${applies}`;
}

function kindWords(input: ActionInput): string {
	switch (input.kind ?? 'quickfix') {
		case 'quickfix': return 'quick fixes';
		case 'refactor': return 'refactorings';
		case 'source': return 'source actions';
		default: return 'all kinds';
	}
}
