import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import type { ToolResult } from '../core/results/result';
import { ACTION_FIELDS, actionsAt } from './codeActions';
import { planEdit } from './codeEdits';
import { defineTool } from './tool';

const schema = Type.Object({
	...ACTION_FIELDS,
	title: Type.String({ minLength: 1, description: 'The action\'s title (non-empty), exactly as code_actions listed it.' }),
}, { additionalProperties: false });

type Input = typeof schema.static;

export const applyCodeActionTool = defineTool({
	name: 'apply_code_action',
	referenceName: 'tbApplyFix',
	displayName: 'Apply Code Action',
	group: 'code',
	needsVscode: true,
	mutating: true,
	icon: 'lightbulb-autofix',
	tags: ['code', 'quickfix', 'refactor', 'edit'],
	userDescription: 'Apply one of the quick fixes or refactorings the editor offers for a line, as one change shown as a diff first.',
	modelDescription: [
		'Apply a quick fix or refactoring code_actions listed: give the same path, line, symbol and kind, and its title.',
		'Its edit is shown to the user as a diff to approve, then applied all or nothing (one Undo). Actions that only run an editor command cannot be previewed and are refused.',
	].join(' '),
	schema,
	describe: input => `Applying "${input.title}" at ${input.path}:${input.line}`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	const { file, actions } = await actionsAt(ctx, input);
	const wanted = input.title.trim();
	const action = actions.find(candidate => candidate.title === wanted)
		?? onlyOne(actions.filter(candidate => candidate.title.toLowerCase() === wanted.toLowerCase()));
	const where = `${file.display}:${input.line}`;
	if (!action) {
		const offered = actions.length ? `Offered there: ${actions.map(candidate => JSON.stringify(candidate.title)).join(', ')}.` : 'None are offered there now (the problem may be fixed already).';
		throw new ToolError('no_match', `No code action titled ${JSON.stringify(input.title)} at ${where}${input.kind ? ` (kind ${input.kind})` : ''}. ${offered} Nothing was changed. Copy a title exactly, with the same path, line, symbol and kind you listed them with.`);
	}
	if (!action.edit) {
		const why = action.command
			? `runs the editor command ${action.command} instead of making an edit, so what it does cannot be shown as a diff first and Toolbelt does not run it`
			: 'makes no change';
		throw new ToolError('unavailable', `"${action.title}" ${why}. Nothing was changed. Ask the user to apply it from the editor's light bulb, or make the change with edit_file.`);
	}
	const notes = action.command ? [`The action also runs the editor command ${action.command} after its edit; Toolbelt applied only the edit you can see in the diff and did not run the command.`] : [];
	return planEdit(ctx, action.edit, {
		title: files => `${action.title} (${files})`,
		done: (files, stat) => `Applied "${action.title}" at ${where}: ${files} changed, ${stat}.`,
		notes,
		metadata: { action: action.title },
	});
}

function onlyOne<T>(items: readonly T[]): T | undefined {
	return items.length === 1 ? items[0] : undefined;
}
