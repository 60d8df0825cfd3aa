import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import {
	LineWindow, LINE_COUNT_LIMIT, readHead, readRange, readWhole, readWindowBackward, readWindowForward, sniff, splitLines,
	windowOfLines, windowOfText,
} from '../core/files/files';
import type { LineIndex } from '../core/files/lineIndex';
import { indentationBlock } from '../core/text/indentation';
import { withFileLocks } from '../core/changes/locks';
import { currentVersion } from '../core/changes/stale';
import { textResult, ToolResult } from '../core/results/result';
import { cutLine, formatBytes, formatCount, omittedMarker } from '../core/results/truncate';
import { stringEnum } from '../core/schema/stringEnum';
import { ReadHandle, withFileForReading } from '../core/files/verifiedOpen';
import { defineTool, PATH_DESCRIPTION } from './tool';
import { readVirtualFile } from './virtual/readFile';

type Handle = ReadHandle;

const schema = Type.Object({
	path: Type.String({ description: PATH_DESCRIPTION }),
	offset: Type.Optional(Type.Integer({ description: 'First line, 1-based (default 1); negative counts from the end, cheaply even in a huge file: -100 = the last 100 lines. With base64, the first byte.' })),
	limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Lines to read (≥ 1, default 2000).' })),
	mode: Type.Optional(stringEnum(['slice', 'indentation'], { description: 'indentation: the whole block (function, class) around line offset. Default slice.' })),
	encoding: Type.Optional(stringEnum(['utf8', 'base64'], { description: 'base64: the raw bytes of a binary file. Default utf8.' })),
}, { additionalProperties: false });

/** Whole-file operations (indentation mode) are refused above this size. */
const WHOLE_FILE_LIMIT = LINE_COUNT_LIMIT;

export const readFileTool = defineTool({
	name: 'read_file',
	referenceName: 'tbRead',
	displayName: 'Read File',
	group: 'read',
	mutating: false,
	icon: 'file',
	tags: ['files', 'read'],
	userDescription: 'Read a file of the workspace: a range of lines, the block around a line, the last lines, an image, or raw bytes as base64.',
	modelDescription: [
		'Read a text file with line numbers (`N<TAB>text`, not part of the file): at most 2000 lines and 32 KB per call, lines cut at 2000 characters; the header says `lines a–b of N` and how to go on.',
		'Shows unsaved editor changes. Images (png, jpeg, gif, webp) come back as images; other binary files need encoding base64.',
	].join(' '),
	schema,
	describe: input => `Reading ${input.path}${input.offset ? ` from line ${input.offset}` : ''}`,
	run,
});

export type Input = typeof schema.static;

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	if (!ctx.boundary.fileSystem.local) return readVirtualFile(input, ctx);
	const target = await ctx.boundary.resolve(input.path, 'read');
	const display = target.display;
	// One descriptor for the whole read, checked before its first byte (a swapped folder leads nowhere).
	return withFileForReading(target.absolute, display, ctx.boundary, 'read', async ({ handle, stat }) => {
		if (input.encoding === 'base64') return readBase64(handle, display, stat.size, input, ctx);

		const dirty = ctx.host.dirtyText(target.absolute);
		if (dirty === undefined) {
			const kind = sniff(await readHead(handle));
			if (kind.kind === 'image') return readImage(handle, display, stat.size, kind.mimeType, kind.format, ctx);
			if (kind.kind === 'binary') {
				throw new ToolError('binary_file', `${display} is a binary file (${formatBytes(stat.size)}); its text would be meaningless. Read it with encoding: "base64" if you need the bytes.`);
			}
			await recordVersion(ctx, target.absolute, handle);
		}

		const limit = Math.min(input.limit ?? ctx.settings.limits.readLines, ctx.settings.limits.readLines * 10);
		const index = dirty === undefined ? ctx.state.lineIndexes.forFile(target.absolute, stat) : undefined;
		const window = await readWindow(handle, stat.size, dirty, input, limit, ctx, index);
		ctx.note({ target: display });
		return render(display, window, input, limit, ctx, dirty !== undefined);
	});
}

/**
 * Remembers the version the model now knows, for stale-write detection. Taken under the file's
 * lock so a read racing a write of this tool host records the version the write left.
 */
async function recordVersion(ctx: ToolContext, absolute: string, handle: Handle): Promise<void> {
	await withFileLocks(ctx.state, [absolute], async () => {
		ctx.state.fileVersions.set(absolute, await currentVersion(handle));
	});
}

/** `dirty` is the whole text when it is known (unsaved editor text, a virtual file read whole): `handle` is then not used. */
export async function readWindow(handle: Handle | undefined, size: number, dirty: string | undefined, input: Input, limit: number, ctx: ToolContext, index?: LineIndex): Promise<LineWindow> {
	const offset = input.offset ?? 1;
	// Each shown line carries a number and a tab; the byte cap covers them too.
	const lineOverhead = String(Math.abs(offset) + limit).length + 1;
	const budget = { maxBytes: ctx.settings.limits.readBytes, maxLineBytes: ctx.settings.limits.lineChars * 4 + 4, lineOverhead, signal: ctx.signal };
	if (input.mode === 'indentation') {
		if (offset < 1) throw new ToolError('invalid_input', 'mode "indentation" needs a positive offset: the line whose block you want.');
		if (dirty === undefined && size > WHOLE_FILE_LIMIT) {
			throw new ToolError('too_large', `mode "indentation" reads the whole file, and this one is ${formatBytes(size)}. Use mode "slice" with offset and limit.`);
		}
		const lines = splitLines(dirty ?? (await readWhole(handle!, size)).toString('utf8'));
		if (offset > lines.length) throw beyondEnd(offset, lines.length);
		const block = indentationBlock(lines, offset - 1);
		const window = windowOfLines(lines.slice(0, block.end + 1), { ...budget, start: block.start + 1, maxLines: limit });
		return { ...window, totalLines: lines.length, more: window.more || block.end + 1 < lines.length };
	}
	if (offset === 0) throw new ToolError('invalid_input', 'offset is 1-based: use 1 for the first line, or a negative number to count from the end.');
	if (offset < 0) {
		const count = Math.min(-offset, limit);
		if (dirty !== undefined) {
			const lines = splitLines(dirty);
			const start = Math.max(1, lines.length - count + 1);
			return { ...windowOfLines(lines, { ...budget, start, maxLines: count }), more: start > 1 };
		}
		return readWindowBackward(handle!, size, count, budget);
	}
	const window = dirty !== undefined
		? windowOfText(dirty, { ...budget, start: offset, maxLines: limit })
		: await readWindowForward(handle!, size, { ...budget, start: offset, maxLines: limit }, index);
	if (window.lines.length === 0 && window.totalLines !== undefined && offset > Math.max(1, window.totalLines)) {
		throw beyondEnd(offset, window.totalLines);
	}
	return window;
}

function beyondEnd(offset: number, total: number): ToolError {
	return new ToolError('invalid_input', `offset ${offset} is past the end of the file, which has ${formatCount(total)} line${total === 1 ? '' : 's'}. Use an offset from 1 to ${Math.max(1, total)}, or a negative offset to read the end.`);
}

export function render(display: string, window: LineWindow, input: Input, limit: number, ctx: ToolContext, dirty: boolean): ToolResult {
	const { lines, firstLine, totalLines } = window;
	const numbered = firstLine !== undefined;
	const width = String((firstLine ?? 1) + lines.length).length;
	let cutLines = 0;
	const body = lines.map((line, i) => {
		const cut = cutLine(line, ctx.settings.limits.lineChars);
		if (cut.cut) cutLines++;
		return numbered ? `${String(firstLine + i).padStart(width)}\t${cut.text}` : cut.text;
	});
	const last = firstLine !== undefined ? firstLine + lines.length - 1 : undefined;
	const header = headerOf(display, window, last, dirty);
	const parts = [header, ...body];
	let linesOmitted = 0;
	const offset = input.offset ?? 1;
	if (window.more) {
		if (offset < 0 && input.mode !== 'indentation') {
			linesOmitted = firstLine !== undefined ? firstLine - 1 : 0;
			const hint = firstLine !== undefined && firstLine > 1
				? `use offset=${Math.max(1, firstLine - limit)} with limit=${Math.min(limit, firstLine - 1)} for the lines before`
				: 'earlier lines are not shown';
			parts.splice(1, 0, omittedMarker({ lines: linesOmitted || undefined, hint }));
		} else if (last !== undefined) {
			linesOmitted = totalLines !== undefined ? totalLines - last : 0;
			parts.push(omittedMarker({ lines: linesOmitted || undefined, hint: `use offset=${last + 1} to continue` }));
		}
	}
	if (window.partialLine) parts.push('[a line was too long to read whole; only part of it is shown]');
	if (lines.length === 0) parts.push(totalLines === 0 ? '(the file is empty)' : '(no lines in this range)');
	return textResult(parts.join('\n'), {
		truncated: window.more || cutLines > 0 || window.partialLine,
		linesOmitted,
		path: display,
		firstLine,
		lastLine: last,
		totalLines,
		cutLines,
		...(dirty ? { unsavedChanges: true } : {}),
	});
}

function headerOf(display: string, window: LineWindow, last: number | undefined, dirty: boolean): string {
	const { firstLine, totalLines, lines } = window;
	const source = dirty ? ' (unsaved editor text)' : '';
	if (lines.length === 0) return `${display}${source}`;
	if (firstLine === undefined) {
		return `${display}${source}: the last ${formatCount(lines.length)} lines (line numbers are not counted for files over ${formatBytes(LINE_COUNT_LIMIT)})`;
	}
	const of = totalLines !== undefined ? ` of ${formatCount(totalLines)}` : ' (total not counted: file over ' + formatBytes(LINE_COUNT_LIMIT) + ')';
	return `${display}${source}: lines ${formatCount(firstLine)}–${formatCount(last!)}${of}`;
}

async function readImage(handle: Handle, display: string, size: number, mimeType: string, format: string, ctx: ToolContext): Promise<ToolResult> {
	if (size > ctx.settings.limits.imageBytes) {
		throw new ToolError('too_large', `${display} is a ${format} image of ${formatBytes(size)}, over the ${formatBytes(ctx.settings.limits.imageBytes)} image cap. Describe what you need from it to the user, or read its bytes with encoding: "base64" in ranges.`);
	}
	const data = await readWhole(handle, size);
	ctx.note({ target: display });
	return {
		content: [
			{ kind: 'text', text: `${display}: ${format} image, ${formatBytes(size)}` },
			{ kind: 'image', mimeType, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) },
		],
		metadata: { truncated: false, path: display, mimeType, bytes: size },
	};
}

async function readBase64(handle: Handle, display: string, size: number, input: Input, ctx: ToolContext): Promise<ToolResult> {
	const chunk = Math.floor((ctx.settings.limits.readBytes * 3) / 4);
	const offset = input.offset ?? 1;
	const start = offset < 0 ? Math.max(0, size + offset) : offset - 1;
	if (offset === 0) throw new ToolError('invalid_input', 'offset is 1-based: use 1 for the first byte, or a negative number to count from the end.');
	if (size === 0) return textResult(`${display}\n(the file is empty)`, { truncated: false, path: display, totalBytes: 0 });
	if (start >= size) {
		throw new ToolError('invalid_input', `offset ${offset} is past the end of ${display}, which has ${formatCount(size)} bytes. Use an offset from 1 to ${formatCount(size)}, or a negative one to read from the end.`);
	}
	const bytes = await readRange(handle, start, Math.min(chunk, size - start));
	const end = start + bytes.length;
	const more = end < size;
	const header = `${display}: bytes ${formatCount(start + 1)}–${formatCount(end)} of ${formatCount(size)}, base64`;
	const tail = more ? `\n${omittedMarker({ bytes: size - end, hint: `use offset=${end + 1} to continue` })}` : '';
	ctx.note({ target: display });
	return textResult(`${header}\n${bytes.toString('base64')}${tail}`, {
		truncated: more,
		bytesOmitted: size - bytes.length,
		path: display,
		firstByte: start + 1,
		lastByte: end,
		totalBytes: size,
	});
}
