import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { LEVEL_DESCRIPTIONS, locateText, MatchLevel, nearestLines } from '../core/text/match';
import { planWithFileLocks } from '../core/changes/locks';
import { CommitResult, pendingChange } from '../core/changes/pipeline';
import { openLargeOnDisk, readCurrent } from '../core/changes/stale';
import { textResult, ToolResult } from '../core/results/result';
import { replaceExactBytes, scanExactEdit } from '../core/text/byteEdit';
import { DiskBytes, DiskSplice } from '../core/files/diskBytes';
import { fromNodeError, ToolError } from '../core/results/errors';
import { SplicedBytes } from '../core/files/splicedBytes';
import { decodeChangeableText, encodeText, fitToFormat, lineTable, TextFormat } from '../core/text/text';
import { cutLine, formatCount } from '../core/results/truncate';
import { boundedDiff, diagnosticsSection, statSummary } from './changeReport';
import { defineTool, PATH_DESCRIPTION } from './tool';

const editSchema = Type.Object({
	oldText: Type.String({ description: 'Exact text to find.' }),
	newText: Type.String({ description: 'Its replacement (empty deletes).' }),
	replaceAll: Type.Optional(Type.Boolean({ description: 'Replace every occurrence (default false).' })),
}, { additionalProperties: false });

const schema = Type.Object({
	path: Type.String({ description: PATH_DESCRIPTION }),
	edits: Type.Array(editSchema, { minItems: 1, description: 'Replacements (non-empty), each applied to the result of the one before.' }),
}, { additionalProperties: false });

type Input = typeof schema.static;

/** Lines of file shown around a near miss. */
const NEAR_MISS_LINES = 6;

export const editFileTool = defineTool({
	name: 'edit_file',
	referenceName: 'tbEdit',
	displayName: 'Edit File',
	group: 'edit',
	mutating: true,
	icon: 'edit',
	tags: ['files', 'edit'],
	userDescription: 'Replace exact pieces of text in a file: all edits or none, with a backup, a diff and new problems.',
	modelDescription: [
		'Change part of a text file: each edit replaces oldText with newText; all edits apply or none.',
		'Each oldText must occur exactly once (add surrounding lines) unless replaceAll.',
		'Copy it from read_file without the line-number prefix; if not found exactly, a tolerant search (whitespace, indentation, Unicode quotes and dashes) may locate it.',
		'Keeps line endings, BOM (write "\\n") and unsaved editor changes; refuses a file changed on disk since you read it. Returns a diff and new errors the editor reports.',
	].join(' '),
	schema,
	describe: input => `Editing ${input.path} (${input.edits.length} edit${input.edits.length === 1 ? '' : 's'})`,
	run,
});

interface Located {
	readonly index: number;
	readonly level: MatchLevel;
	readonly count: number;
	readonly reindented: boolean;
}

async function run(input: Input, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	const target = await ctx.boundary.resolve(input.path, 'write');
	const display = target.display;
	checkEdits(input);
	return planWithFileLocks(ctx.state, [target.absolute], async () => {
		const finish = (commit: CommitResult, fromEditor: boolean, located: readonly Located[]) => report(commit, input, display, fromEditor, located);
		const large = await editLargeOnDisk(ctx, target.absolute, display, input);
		if (large) return pendingChange(ctx, `Edit ${display}`, [{ path: target.absolute, displayPath: display, ...large }], commit => finish(commit, false, [{ index: 0, level: 'exact', count: 1, reindented: false }]));
		const current = await readCurrent(ctx, target.absolute, display);
		if (!current.exists) {
			throw new ToolError('not_found', `${display} does not exist. Nothing was written. Create it with write_file, or check the path with find_files.`);
		}
		const before = current.bytes!;
		const { after, located } = editBytes(before, input, display);
		if (unchanged(before, after)) {
			return textResult(`No change: the edits leave ${display} exactly as it was. Nothing was written.`, { path: display });
		}
		return pendingChange(ctx, `Edit ${display}`, [{ path: target.absolute, displayPath: display, before, after }], commit => finish(commit, current.fromEditor, located));
	});
}

/**
 * One exact edit of a big file, made without holding the file (see scanExactEdit); undefined
 * where it must be made in memory (several edits, or one the scan cannot do on the bytes).
 */
async function editLargeOnDisk(ctx: ToolContext, absolute: string, display: string, input: Input): Promise<{ before: DiskBytes; after: DiskSplice } | undefined> {
	if (input.edits.length !== 1) return undefined;
	const file = await openLargeOnDisk(ctx, absolute, display);
	if (!file) return undefined;
	try {
		return await scanExactEdit({ handle: file.handle, path: absolute, display, size: file.stat.size }, input.edits[0], ctx.signal);
	} catch (error) {
		throw fromNodeError(error, display);
	} finally {
		await file.handle.close().catch(() => undefined);
	}
}

function report(commit: CommitResult, input: Input, display: string, fromEditor: boolean, located: readonly Located[]): ToolResult {
	const diff = boundedDiff(commit.diff, `read ${display} with read_file to see the result`);
	const lines = [
		`Edited ${display}${fromEditor ? ' (its unsaved editor text)' : ''}: ${input.edits.length} edit${input.edits.length === 1 ? '' : 's'}, ${statSummary(commit)} lines.`,
		...located.flatMap(describeLocated),
		'',
		diff.text,
		...diagnosticsSection(commit),
	];
	return textResult(lines.join('\n'), {
		truncated: diff.truncated,
		path: display,
		edits: input.edits.length,
		replacements: located.reduce((sum, one) => sum + one.count, 0),
		added: commit.stats[0]?.added ?? 0,
		removed: commit.stats[0]?.removed ?? 0,
		tolerantMatches: located.filter(one => one.level !== 'exact').map(one => ({ edit: one.index + 1, level: one.level })),
		filesTouched: [display],
	});
}

/** The file's new bytes: replaced on the bytes when every edit is an exact match, else through the decoded text. */
function editBytes(before: Uint8Array, input: Input, display: string): { after: Uint8Array | SplicedBytes; located: Located[] } {
	const exact = replaceExactBytes(before, input.edits);
	if (exact) return { after: exact.after, located: exact.counts.map((count, index) => ({ index, level: 'exact', count, reindented: false })) };
	const decoded = decodeChangeableText(before, display, 'edited as text', 'Replace the whole file with write_file (encoding "base64" for raw bytes), or ask the user.');
	let text = decoded.text;
	const located: Located[] = [];
	for (const [index, edit] of input.edits.entries()) {
		const result = applyEdit(text, edit, index, input.edits.length, decoded.format, display);
		text = result.text;
		located.push({ index, ...result.located });
	}
	return { after: encodeText(text, decoded.format), located };
}

/** Whether the edits, together, gave back exactly the bytes they started from. */
function unchanged(before: Uint8Array, after: Uint8Array | SplicedBytes): boolean {
	if (after instanceof SplicedBytes) return after.equalsBase();
	return Buffer.from(after.buffer, after.byteOffset, after.byteLength).equals(Buffer.from(before.buffer, before.byteOffset, before.byteLength));
}

/** Input mistakes caught before the file is read. */
function checkEdits(input: Input): void {
	for (const [index, edit] of input.edits.entries()) {
		const name = editName(index, input.edits.length);
		if (edit.oldText === '') {
			throw new ToolError('invalid_input', `${name}: oldText is empty. Nothing was written. Quote the text to replace (with a line or two around it); to write a whole file use write_file.`);
		}
		if (edit.oldText === edit.newText) {
			throw new ToolError('invalid_input', `${name}: oldText and newText are the same, so it would change nothing. Nothing was written. Put the new text in newText.`);
		}
	}
}

function editName(index: number, count: number): string {
	return count === 1 ? 'The edit' : `Edit #${index + 1}`;
}

function applyEdit(
	text: string,
	edit: Input['edits'][number],
	index: number,
	count: number,
	format: TextFormat,
	display: string,
): { text: string; located: Omit<Located, 'index'> } {
	const name = editName(index, count);
	const oldText = fitToFormat(edit.oldText, format);
	const newText = fitToFormat(edit.newText, format);
	const location = locateText(text, oldText, edit.replaceAll ?? false);
	if (location.kind === 'none') throw notFound(text, oldText, name, display, index > 0);
	if (location.kind === 'ambiguous') {
		const shown = location.lines.slice(0, 20).map(formatCount).join(', ');
		const more = location.lines.length > 20 ? ` and ${location.lines.length - 20} more` : '';
		const how = location.level === 'exact' ? '' : ` (${LEVEL_DESCRIPTIONS[location.level]})`;
		throw new ToolError(
			'ambiguous_match',
			`${name}: oldText matched ${formatCount(location.lines.length)} times in ${display}${how}, at lines ${shown}${more}. Nothing was written. Add surrounding lines to oldText so it matches once, or set replaceAll: true to change every occurrence.`,
			{ edit: index + 1, lines: location.lines },
		);
	}
	let result = text;
	let reindented = false;
	// Right to left, so earlier offsets stay valid.
	for (const range of [...location.ranges].reverse()) {
		const replacement = range.reindent ? range.reindent(newText) : newText;
		if (replacement !== newText) reindented = true;
		result = result.slice(0, range.start) + replacement + result.slice(range.end);
	}
	return { text: result, located: { level: location.level, count: location.ranges.length, reindented } };
}

function notFound(text: string, oldText: string, name: string, display: string, afterEarlierEdits: boolean): ToolError {
	const table = lineTable(text);
	const quoted = oldText.split('\n').map(line => line.replace(/\r$/, ''));
	const near = nearestLines(table.lines, quoted);
	const earlier = afterEarlierEdits ? ' (after the earlier edits of this call were applied in memory)' : '';
	let hint = `Read the file again with read_file and copy the text exactly.`;
	if (near) {
		const from = near.index;
		const to = Math.min(table.lines.length, from + Math.max(quoted.length, 1) + 1, from + NEAR_MISS_LINES);
		const excerpt = table.lines.slice(from, to).map((line, i) => `${from + i + 1}\t${cutLine(line, 200).text}`).join('\n');
		hint = `The most similar text is at line ${formatCount(from + 1)}:\n${excerpt}\nCopy oldText exactly from the file (without the line numbers), or read it again with read_file offset=${Math.max(1, from - 4)}.`;
	}
	return new ToolError(
		'no_match',
		`${name}: oldText was not found in ${display}${earlier}, not even ignoring whitespace, indentation and Unicode quotes/dashes. Nothing was written. ${hint}`,
	);
}

function describeLocated(one: Located): string[] {
	if (one.level === 'exact') return one.count > 1 ? [`Edit #${one.index + 1} replaced ${formatCount(one.count)} occurrences.`] : [];
	const reindent = one.reindented ? ', and the new text was re-indented to match the file' : '';
	const times = one.count > 1 ? ` (${formatCount(one.count)} occurrences)` : '';
	return [`Edit #${one.index + 1} had no exact match; it was located ${LEVEL_DESCRIPTIONS[one.level]}${times}. Only the located text was replaced${reindent}; check the diff.`];
}
