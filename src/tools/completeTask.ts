import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { countTasks, describeProblem, nextTask, PlanFileState, renderPlan, summarize, withStatus } from '../core/plan/planDocument';
import { textResult, ToolResult } from '../core/results/result';
import { ABRIDGED_RESULT, planText, pendingPlan, withPlanForChange } from './planShared';
import { defineTool } from './tool';

const schema = Type.Object({
	taskNumber: Type.Integer({ minimum: 1, description: 'Its number in get_plan (≥ 1).' }),
	abridged: Type.Optional(Type.Boolean({ description: ABRIDGED_RESULT })),
}, { additionalProperties: false });

export const completeTaskTool = defineTool({
	name: 'complete_task',
	referenceName: 'tbCompleteTask',
	displayName: 'Complete Task',
	group: 'plan',
	mutating: true,
	asksByDefault: false,
	icon: 'pass',
	tags: ['plan', 'todo'],
	userDescription: 'Mark one task of the plan as completed.',
	modelDescription: [
		'Mark task `taskNumber` (1-based, as numbered by get_plan) of the plan as completed, leaving the others as they are.',
		'Returns the plan and the next task to work on. To add, remove, reorder or reword tasks use update_plan.',
	].join(' '),
	schema,
	describe: input => `Completing task ${input.taskNumber}`,
	run,
});

async function run(input: typeof schema.static, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	return withPlanForChange(ctx, state => complete(input, state, ctx));
}

async function complete(input: typeof schema.static, state: PlanFileState, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	if (state.problem) throw new ToolError('not_found', `${describeProblem(state)} Call update_plan with the full task list to write a new plan.`);
	const { tasks } = state.plan;
	if (!tasks.length) throw new ToolError('not_found', `The plan (${state.display}) has no tasks. Create one with update_plan.`);
	if (input.taskNumber > tasks.length) {
		throw new ToolError('not_found', `There is no task ${input.taskNumber}: the plan has ${tasks.length} task${tasks.length === 1 ? '' : 's'} (numbers 1–${tasks.length}). Call get_plan to see them.`);
	}
	const task = tasks[input.taskNumber - 1];
	const already = task.status === 'completed';
	const plan = already ? state.plan : withStatus(state.plan, input.taskNumber, 'completed');
	const result = (): ToolResult => {
		const next = nextTask(plan);
		const lines = [
			already ? `Task ${input.taskNumber} was already completed; nothing changed: ${task.title}` : `Task ${input.taskNumber} completed: ${task.title}`,
			next ? `Next: ${next.number}. ${next.task.title} (${next.task.status.replace('_', ' ')}). Plan: ${summarize(plan)}.` : `All ${tasks.length} tasks are completed.`,
		];
		const rendered = planText(renderPlan(plan, { abridged: input.abridged }), ctx);
		return textResult(`${lines.join('\n')}\n\n${rendered.text}`, {
			...rendered.metadata, path: state.display, ...countTasks(plan), ...(already ? {} : { filesTouched: [state.display] }),
		});
	};
	if (!already) return pendingPlan(ctx, state, plan, `Complete task ${input.taskNumber} of the plan (${state.display})`, result);
	ctx.note({ target: state.display });
	return result();
}
