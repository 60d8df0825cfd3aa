import type { ApprovalRequest, PendingCall, ToolContext } from '../core/context';
import { planWithFileLocks } from '../core/changes/locks';
import { pendingChange } from '../core/changes/pipeline';
import { Plan, PlanFileState, planChanges, readPlanFile } from '../core/plan/planDocument';
import type { ToolResult } from '../core/results/result';
import type { Settings } from '../core/policy/settings';
import { metadataOf, truncateText } from '../core/results/truncate';

/** The `abridged` field of the tools that change the plan. */
export const ABRIDGED_RESULT = 'The result shows one line per task (default false).';

/** A rendered plan within the read caps (100 tasks with long details can exceed them). */
export function planText(rendered: string, ctx: ToolContext) {
	const { text, info } = truncateText(rendered, {
		maxBytes: ctx.settings.limits.readBytes,
		maxLines: ctx.settings.limits.readLines,
		keep: 'head',
		hint: () => 'use abridged: true for one line per task',
	});
	return { text, metadata: metadataOf(info) };
}

/**
 * The plan is the model's own notebook, like Copilot's todo list: under the default policy
 * (`mutating`) updating it does not ask each time. Policy `always`, and a plan file inside
 * `protectedPaths`, still ask. The change keeps its place in the pipeline (preview, backup,
 * stale check); only the question it puts changes kind. Nor does a plan update wait for
 * language diagnostics: the plan is not code, and a tick in the Plan view must feel instant.
 *
 * Returns the new plan as a pending change; `finish` gets a note for the result when a broken
 * file was kept aside.
 */
export async function pendingPlan(
	ctx: ToolContext,
	state: PlanFileState,
	plan: Plan,
	title: string,
	finish: (kept: string | undefined) => ToolResult,
): Promise<PendingCall> {
	if (state.version) ctx.state.fileVersions.set(state.absolute, state.version);
	const changes = planChanges(state, plan, absolute => ctx.boundary.display(absolute));
	const kept = changes.length > 1 ? `The broken plan file was kept as ${changes[0].displayPath}.` : undefined;
	const change = await pendingChange(ctx, title, changes, () => finish(kept), { diagnostics: false });
	return {
		pending: true,
		request: quietRequest(change.request, ctx.settings),
		settlesOnCancel: change.settlesOnCancel,
		commit: async (commitCtx, confirmed) => {
			const result = await change.commit(commitCtx, confirmed);
			commitCtx.note({ target: state.display });
			return result;
		},
	};
}

/** A quiet update asks no one, so the pipeline opens no diff for it either (unless showDiffs is `always`). */
function quietRequest(request: ApprovalRequest, settings: Settings): ApprovalRequest {
	if (request.kind !== 'files' || settings.approval === 'always' || request.protectedPaths.length > 0) return request;
	return { kind: 'call', title: request.title, detail: request.changes.map(change => change.displayPath).join('\n') };
}

/**
 * Reads the plan file for a change and runs `work` while holding its lock, so two changes (the
 * model's and a tick in the Plan view) never interleave their read and write.
 */
export async function withPlanForChange(ctx: ToolContext, work: (state: PlanFileState) => Promise<ToolResult | PendingCall>): Promise<ToolResult | PendingCall> {
	const target = await ctx.boundary.resolve(ctx.settings.planFile, 'write');
	return planWithFileLocks(ctx.state, [target.absolute], async () => work(await readPlanFile(ctx.boundary, target, 'write')));
}
