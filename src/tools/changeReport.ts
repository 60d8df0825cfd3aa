import type { CommitResult } from '../core/changes/pipeline';
import { formatCount, truncateText } from '../core/results/truncate';

/** Diffs in results are cut beyond this; the file itself can always be read. */
export const RESULT_DIFF_BYTES = 16 * 1024;
export const RESULT_DIFF_LINES = 400;

/** `+3 −1` for a commit's stats. */
export function statSummary(commit: Pick<CommitResult, 'stats'>): string {
	const added = commit.stats.reduce((sum, stat) => sum + stat.added, 0);
	const removed = commit.stats.reduce((sum, stat) => sum + stat.removed, 0);
	return `+${formatCount(added)} −${formatCount(removed)}`;
}

/** The diff for a result, cut to a size a model can take in. */
export function boundedDiff(diff: string, readHint: string): { text: string; truncated: boolean } {
	const cut = truncateText(diff, {
		maxBytes: RESULT_DIFF_BYTES,
		maxLines: RESULT_DIFF_LINES,
		keep: 'head',
		hint: () => `the rest of the diff is not shown; ${readHint}`,
	});
	return { text: cut.text, truncated: cut.info.truncated };
}

/** The closing part of every change result: new problems VS Code reported. */
export function diagnosticsSection(commit: Pick<CommitResult, 'diagnostics'>): string[] {
	return commit.diagnostics ? ['', 'New problems reported after the change:', commit.diagnostics] : [];
}
