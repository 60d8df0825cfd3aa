import type { FileChange, PendingCall, ToolContext } from '../core/context';
import type { EditOperation } from '../core/languages';
import { planWithFileLocks } from '../core/changes/locks';
import { CommitResult, pendingChange } from '../core/changes/pipeline';
import { textResult, ToolResult } from '../core/results/result';
import { formatCount, plural } from '../core/results/truncate';
import { changesOfEdit } from '../core/changes/workspaceEdit';
import { diagnosticsSection, statSummary } from './changeReport';

/** Files listed one per line in a result; the rest are counted. */
const MAX_LISTED_FILES = 50;

interface EditWording {
	/** The approval's title, given "3 files: a.ts, b.ts, c.ts". */
	title(files: string): string;
	/** The result's first line, given the files and `+3 −3`. */
	done(files: string, stat: string): string;
	readonly notes?: readonly string[];
	readonly metadata?: Record<string, unknown>;
}

/**
 * A language server's edit (a rename, a code action) as a change through the pipeline: the files
 * are locked while the edit is computed on what the editor holds; then the person approves the
 * multi-file diff, backups are taken, and VS Code applies it as one WorkspaceEdit (one Undo).
 */
export async function planEdit(ctx: ToolContext, operations: readonly EditOperation[], wording: EditWording): Promise<ToolResult | PendingCall> {
	return planWithFileLocks(ctx.state, pathsOf(operations), async () => {
		// Files in path order, as people scan a list; each change stands alone, so order does not matter to the commit.
		const changes = (await changesOfEdit(ctx, operations)).sort((a, b) => (a.displayPath < b.displayPath ? -1 : a.displayPath > b.displayPath ? 1 : 0));
		if (changes.length === 0) return textResult('The change leaves every file as it is. Nothing was written.', { filesTouched: [], ...wording.metadata });
		const files = fileList(changes);
		return pendingChange(ctx, wording.title(files), changes, commit => {
			const listed = commit.changes.slice(0, MAX_LISTED_FILES).map((change, index) => fileLine(change, commit.stats[index]));
			const unlisted = commit.changes.length - listed.length;
			const lines = [
				wording.done(plural(changes.length, 'file'), statSummary(commit)),
				...listed,
				...(unlisted > 0 ? [`… and ${plural(unlisted, 'more file')}`] : []),
				...(wording.notes ?? []),
				...diagnosticsSection(commit),
			];
			return textResult(lines.join('\n'), {
				truncated: unlisted > 0,
				filesTouched: commit.stats.map(stat => stat.path),
				...(commit.backups.length ? { backups: commit.backups } : {}),
				...wording.metadata,
			});
		});
	});
}

function pathsOf(operations: readonly EditOperation[]): string[] {
	return operations.flatMap(operation => {
		switch (operation.kind) {
			case 'rename': return [operation.from, operation.to];
			case 'unsupported': return [];
			default: return [operation.path];
		}
	});
}

/** `3 files: a.ts, b.ts, c.ts` (the first three named). */
function fileList(changes: readonly FileChange[]): string {
	const names = changes.slice(0, 3).map(change => change.movedTo ? `${change.displayPath} → ${change.movedTo.displayPath}` : change.displayPath);
	const more = changes.length > 3 ? ` and ${formatCount(changes.length - 3)} more` : '';
	return `${plural(changes.length, 'file')}: ${names.join(', ')}${more}`;
}

function fileLine(change: FileChange, stat: CommitResult['stats'][number]): string {
	const letter = change.before === null ? 'A' : change.after === null ? 'D' : change.movedTo ? 'R' : 'M';
	const name = change.movedTo ? `${change.displayPath} → ${change.movedTo.displayPath}` : change.displayPath;
	return `${letter} ${name} (+${formatCount(stat.added)} −${formatCount(stat.removed)})`;
}
