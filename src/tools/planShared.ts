import type { ToolContext } from '../core/context';
import { commitChanges, withFileLocks } from '../core/mutation';
import { Plan, PlanFileState, planChanges, readPlanFile } from '../core/plan';
import { metadataOf, truncateText } from '../core/truncate';

/** The `abridged` field of the tools that change the plan. */
export const ABRIDGED_RESULT = 'The result shows one line per task (default false).';

/** A rendered plan within the read caps (100 tasks with long details can exceed them). */
export function planText(rendered: string, ctx: ToolContext) {
	const { text, info } = truncateText(rendered, {
		maxBytes: ctx.limits.readBytes,
		maxLines: ctx.limits.readLines,
		keep: 'head',
		hint: () => 'use abridged: true for one line per task',
	});
	return { text, metadata: metadataOf(info) };
}

/**
 * The plan is the model's own notebook, like Copilot's todo list: under the default policy
 * (`mutating`) updating it does not ask each time. Policy `always`, and a plan file inside
 * `protectedPaths`, still ask. The request keeps its place in the pipeline (preview, backup,
 * stale check); only the question it puts changes kind. Nor does a plan update wait for
 * language diagnostics: the plan is not code, and a tick in the Plan view must feel instant.
 */
export function planContext(ctx: ToolContext): ToolContext {
	return {
		...ctx,
		host: { ...ctx.host, diagnostics: undefined },
		// A quiet update asks no one, so the pipeline opens no diff for it (unless showDiffs is `always`).
		approve: request => {
			const quiet = request.kind === 'files' && ctx.settings.approval !== 'always' && request.protectedPaths.length === 0;
			return ctx.approve(quiet
				? { kind: 'call', title: request.title, detail: request.changes.map(change => change.displayPath).join('\n') }
				: request);
		},
	};
}

/**
 * Writes a new plan through the mutation pipeline (approval, backup, WorkspaceEdit or atomic
 * write). Returns a note for the result when a broken file was kept aside.
 */
export async function savePlan(ctx: ToolContext, state: PlanFileState, plan: Plan, title: string): Promise<string | undefined> {
	if (state.version) ctx.state.fileVersions.set(state.absolute, state.version);
	const changes = planChanges(state, plan, absolute => ctx.boundary.display(absolute));
	await commitChanges(planContext(ctx), title, changes);
	ctx.note({ target: state.display, filesTouched: changes.map(change => change.displayPath) });
	return changes.length > 1 ? `The broken plan file was kept as ${changes[0].displayPath}.` : undefined;
}

/**
 * Reads the plan file for a change and runs `work` while holding its lock, so two changes (the
 * model's and a tick in the Plan view) never interleave their read and write.
 */
export async function withPlanForChange<T>(ctx: ToolContext, work: (state: PlanFileState) => Promise<T>): Promise<T> {
	const target = await ctx.boundary.resolve(ctx.settings.planFile, 'write');
	return withFileLocks(ctx.state, [target.absolute], async () => work(await readPlanFile(ctx.boundary, target, 'write')));
}
