import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { countTasks, MAX_TASKS, renderPlan, summarize, taskSchema } from '../core/plan/planDocument';
import { textResult, ToolResult } from '../core/results/result';
import { ABRIDGED_RESULT, planText, pendingPlan, withPlanForChange } from './planShared';
import { defineTool } from './tool';

const schema = Type.Object({
	tasks: Type.Array(taskSchema, { maxItems: MAX_TASKS, description: `The whole plan in order, at most ${MAX_TASKS} tasks; [] clears it.` }),
	abridged: Type.Optional(Type.Boolean({ description: ABRIDGED_RESULT })),
}, { additionalProperties: false });

export const updatePlanTool = defineTool({
	name: 'update_plan',
	referenceName: 'tbUpdatePlan',
	displayName: 'Update Plan',
	group: 'plan',
	mutating: true,
	asksByDefault: false,
	icon: 'checklist',
	tags: ['plan', 'todo'],
	userDescription: 'Replace the plan with a new list of tasks (title, status, details).',
	modelDescription: [
		'Write the plan for multi-step work: the full ordered task list, replacing the previous one (send every task, not only changed ones).',
		'Keep exactly one task in_progress while working; mark each completed as soon as it is done (complete_task is shorter for that).',
		'The user sees the plan in the Plan view and may tick tasks: call get_plan first if it may have changed. Returns the plan as saved.',
	].join(' '),
	schema,
	describe: input => `Updating the plan (${input.tasks.length} task${input.tasks.length === 1 ? '' : 's'})`,
	run,
});

async function run(input: typeof schema.static, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	const plan = { tasks: input.tasks };
	return withPlanForChange(ctx, state => pendingPlan(ctx, state, plan, `Update the plan (${state.display})`, kept => {
		const notes = [`Plan saved to ${state.display}: ${summarize(plan)}.`];
		const counts = countTasks(plan);
		if (counts.inProgress > 1) notes.push(`Note: ${counts.inProgress} tasks are in progress; keep one in progress at a time.`);
		if (kept) notes.push(kept);
		const rendered = planText(renderPlan(plan, { abridged: input.abridged }), ctx);
		return textResult(`${notes.join('\n')}\n\n${rendered.text}`, { ...rendered.metadata, path: state.display, ...counts, filesTouched: [state.display] });
	}));
}
