import type { ChangeContext, Diagnostic, FileChange } from '../context';
import { formatCount } from '../results/truncate';

/**
 * What a change did to the language servers' view of the files: the errors and warnings that
 * appeared after it, reported with the change's result.
 */

/** How long to wait for language servers to react to a change, and how many new problems to report. */
export const DIAGNOSTICS_WAIT_MS = 1000;
const DIAGNOSTICS_POLL_MS = 100;
const DIAGNOSTICS_SETTLE_MS = 250;
export const MAX_NEW_DIAGNOSTICS = 10;

/** Diagnostics of the changed files before the change, when the host has any to offer. */
export async function snapshotDiagnostics(ctx: ChangeContext, changes: readonly FileChange[]): Promise<Diagnostic[] | undefined> {
	if (!ctx.host.diagnostics) return undefined;
	const paths = changedTextPaths(changes);
	if (paths.length === 0) return undefined;
	return ctx.host.diagnostics(paths).catch(() => undefined);
}

function changedTextPaths(changes: readonly FileChange[]): string[] {
	return changes.filter(change => change.after !== null).map(change => change.movedTo?.path ?? change.path);
}

/**
 * Errors and warnings that appeared after the change. Language servers react asynchronously, so
 * this polls until the set differs from before (then lets it settle briefly), or the wait ends.
 */
export async function newDiagnostics(ctx: ChangeContext, changes: readonly FileChange[], before: Diagnostic[]): Promise<string | undefined> {
	const paths = changedTextPaths(changes);
	const keyOf = (d: Diagnostic) => `${d.path}\u0000${d.severity}\u0000${d.message}\u0000${d.source ?? ''}\u0000${d.code ?? ''}`;
	const baseline = signature(before.map(keyOf));
	const deadline = Date.now() + DIAGNOSTICS_WAIT_MS;
	let after = before;
	while (Date.now() < deadline && !ctx.signal.aborted) {
		await delay(DIAGNOSTICS_POLL_MS);
		after = await ctx.host.diagnostics!(paths).catch(() => after);
		if (signature(after.map(keyOf)) !== baseline) {
			await delay(DIAGNOSTICS_SETTLE_MS);
			after = await ctx.host.diagnostics!(paths).catch(() => after);
			break;
		}
	}
	// The change has landed: a cancel only cuts the wait short (a 'cancelled' result would say it had not).
	if (ctx.signal.aborted) return undefined;
	const remaining = new Map<string, number>();
	for (const key of before.map(keyOf)) remaining.set(key, (remaining.get(key) ?? 0) + 1);
	const fresh = after.filter(d => {
		if (d.severity !== 'error' && d.severity !== 'warning') return false;
		const key = keyOf(d);
		const count = remaining.get(key) ?? 0;
		if (count > 0) {
			remaining.set(key, count - 1);
			return false;
		}
		return true;
	});
	if (fresh.length === 0) return undefined;
	fresh.sort((a, b) => (a.severity === b.severity ? a.path.localeCompare(b.path) || a.line - b.line : a.severity === 'error' ? -1 : 1));
	const lines = fresh.slice(0, MAX_NEW_DIAGNOSTICS).map(d => formatDiagnostic(d, ctx.boundary.display(d.path)));
	const more = fresh.length - MAX_NEW_DIAGNOSTICS;
	if (more > 0) lines.push(`… and ${formatCount(more)} more (see get_diagnostics)`);
	return lines.join('\n');
}

function signature(keys: string[]): string {
	return [...keys].sort().join('\u0001');
}

export function formatDiagnostic(d: Diagnostic, displayPath: string): string {
	const code = d.code !== undefined ? ` ${d.code}` : '';
	const source = d.source ? ` (${d.source})` : '';
	return `${displayPath}:${d.line}:${d.column} ${d.severity}${code}: ${d.message.replace(/\s*\n\s*/g, ' ')}${source}`;
}

function delay(ms: number): Promise<void> {
	return new Promise(resolve => setTimeout(resolve, ms));
}
