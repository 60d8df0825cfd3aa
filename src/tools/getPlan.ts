import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { countTasks, describeProblem, readPlanFile, renderPlan } from '../core/plan/planDocument';
import { textResult, ToolResult } from '../core/results/result';
import { planText } from './planShared';
import { defineTool } from './tool';

const schema = Type.Object({
	abridged: Type.Optional(Type.Boolean({ description: 'One line per task, no details (default false).' })),
}, { additionalProperties: false });

export const getPlanTool = defineTool({
	name: 'get_plan',
	referenceName: 'tbGetPlan',
	displayName: 'Get Plan',
	group: 'plan',
	mutating: false,
	icon: 'checklist',
	tags: ['plan', 'todo'],
	userDescription: 'Show the current plan: its numbered tasks with their status and details.',
	modelDescription: [
		'Read the plan kept in the workspace (the task list the user sees in the Plan view; they may tick tasks themselves).',
		'Returns numbered tasks marked [x] completed, [~] in progress, [ ] pending, with their details.',
		'Call it before resuming multi-step work, and after the user says they changed the plan. Change it with update_plan or complete_task.',
	].join(' '),
	schema,
	describe: () => 'Reading the plan',
	run,
});

async function run(input: typeof schema.static, ctx: ToolContext): Promise<ToolResult> {
	const state = await readPlanFile(ctx.boundary, ctx.settings.planFile);
	ctx.note({ target: state.display });
	const rendered = planText(renderPlan(state.plan, { abridged: input.abridged, display: state.display }), ctx);
	const text = state.problem ? `${describeProblem(state)}\n\n${rendered.text}` : rendered.text;
	return textResult(text, {
		...rendered.metadata,
		path: state.display,
		exists: state.exists,
		...countTasks(state.plan),
		...(state.problem ? { problem: state.problem } : {}),
	});
}
