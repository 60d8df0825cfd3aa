import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { planWithFileLocks } from '../core/changes/locks';
import { pendingChange } from '../core/changes/pipeline';
import { PatchFileSummary, preparePatch } from '../core/patch/apply';
import { parsePatch } from '../core/patch/parse';
import { textResult, ToolResult } from '../core/results/result';
import { formatCount, omittedMarker, plural } from '../core/results/truncate';
import { diagnosticsSection, statSummary } from './changeReport';
import { defineTool } from './tool';

const schema = Type.Object({
	patch: Type.String({ description: 'The patch text (a heredoc or Markdown fence around it is tolerated).' }),
}, { additionalProperties: false });

/** Tolerance notes shown in a result; the rest are counted. */
const MAX_NOTES = 20;
/** Files listed one per line in a result; the rest are counted (metadata.files has them all). */
const MAX_LISTED_FILES = 200;

export const applyPatchTool = defineTool({
	name: 'apply_patch',
	referenceName: 'tbPatch',
	displayName: 'Apply Patch',
	group: 'edit',
	mutating: true,
	icon: 'diff',
	tags: ['files', 'edit', 'patch', 'diff'],
	userDescription: 'Apply a unified diff or a Codex-style patch to the workspace: several files at once, all or nothing.',
	modelDescription: [
		'Add, delete, move or change files with one patch, all or nothing. Formats:',
		'(1) a unified diff, plain or git-style (`--- a/f`, `+++ b/f`, `@@ -l,n +l,n @@`; /dev/null for new or deleted files);',
		'(2) the Codex envelope: `*** Begin Patch`, then per file `*** Add File: f` (lines "+text"), `*** Delete File: f` or `*** Update File: f` (optionally `*** Move to: g`) with hunks:',
		'`@@` or `@@ <line of the enclosing function or class>`, lines " context", "-old", "+new", `*** End of File` for a hunk at the end; last `*** End Patch`.',
		'Hunks are placed by their context (give about 3 unchanged lines around each change; line numbers only break ties), matched exactly, else ignoring whitespace and Unicode punctuation.',
		'If a hunk does not fit, nothing changes and the error shows the nearest place: read the file again.',
		'Binary patches and files over 32 MB are refused. Returns +/− line counts per file.',
	].join(' '),
	schema,
	describe: input => `Applying a patch${summarizeTargets(input.patch)}`,
	run,
});

type Input = typeof schema.static;

async function run(input: Input, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	const patch = parsePatch(input.patch);
	const prepared = await preparePatch(patch, ctx);
	return planWithFileLocks(ctx.state, prepared.paths, async () => {
		const staged = await prepared.stage();
		const notes = [...staged.notes, ...staged.unchanged.map(path => `${path}: the patch leaves its content as it was.`)];
		if (staged.changes.length === 0) {
			return textResult(['The patch changes nothing: every file it names would stay as it is. Nothing was written.', ...formatNotes(notes)].join('\n'), {
				format: patch.format, files: [], filesTouched: [],
			});
		}
		return pendingChange(ctx, titleOf(staged.files), staged.changes, commit => {
			// commit.stats has one entry per change, in the order of staged.files.
			const files: ChangedFile[] = staged.files.map((file, index) => ({ ...file, added: commit.stats[index].added, removed: commit.stats[index].removed }));
			const touched = files.flatMap(file => (file.movedTo ? [file.path, file.movedTo] : [file.path]));
			const unlisted = Math.max(0, files.length - MAX_LISTED_FILES);
			const lines = [
				`Applied the patch: ${plural(files.length, 'file')} changed, ${statSummary(commit)}.`,
				...files.slice(0, MAX_LISTED_FILES).map(formatFile),
				...(unlisted ? [omittedMarker({ hint: `${plural(unlisted, 'more file')} changed; the result's metadata.files lists every file` })] : []),
				...(staged.protectedPaths.length ? [`Protected paths changed (confirmed by the user): ${staged.protectedPaths.join(', ')}`] : []),
				...formatNotes(notes),
				...diagnosticsSection(commit),
			];
			return textResult(lines.join('\n'), {
				truncated: unlisted > 0,
				format: patch.format,
				files,
				filesTouched: touched,
				...(commit.backups.length ? { backups: commit.backups } : {}),
			});
		}, { protectedPaths: staged.protectedPaths, lineCounts: staged.lineCounts });
	});
}

/** A file of the result: what staging found, with the line counts of the committed diff. */
type ChangedFile = PatchFileSummary & { readonly added: number; readonly removed: number };

const STATUS_LETTER: Record<PatchFileSummary['status'], string> = { added: 'A', deleted: 'D', modified: 'M', moved: 'R' };

function formatFile(file: ChangedFile): string {
	const name = file.movedTo ? `${file.path} → ${file.movedTo}` : file.path;
	return `${STATUS_LETTER[file.status]} ${name} (+${formatCount(file.added)} −${formatCount(file.removed)})`;
}

function formatNotes(notes: readonly string[]): string[] {
	if (notes.length === 0) return [];
	const shown = notes.slice(0, MAX_NOTES).map(note => `- ${note}`);
	if (notes.length > MAX_NOTES) shown.push(`- … and ${formatCount(notes.length - MAX_NOTES)} more`);
	return ['Notes:', ...shown];
}

function titleOf(files: readonly PatchFileSummary[]): string {
	const names = files.slice(0, 3).map(file => (file.movedTo ? `${file.path} → ${file.movedTo}` : file.path));
	const more = files.length > 3 ? ` and ${formatCount(files.length - 3)} more` : '';
	return `Apply patch to ${plural(files.length, 'file')}: ${names.join(', ')}${more}`;
}

/** ` to src/a.ts` / ` to 3 files` for the progress line, from a cheap look at the headers. */
function summarizeTargets(patch: string): string {
	const names = new Set<string>();
	for (const match of patch.matchAll(/^(?:\*\*\* (?:Add|Update|Delete) File: (.+)|\+\+\+ (?:b\/)?(.+))$/gm)) {
		const name = (match[1] ?? match[2]).split('\t')[0].trim();
		if (name !== '/dev/null') names.add(name);
	}
	if (names.size === 0) return '';
	return names.size === 1 ? ` to ${[...names][0]}` : ` to ${names.size} files`;
}
