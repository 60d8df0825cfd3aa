import type { ToolContext } from '../../core/context';
import { withFileLocks } from '../../core/changes/locks';
import { withDigest } from '../../core/changes/stale';
import { readBounded, statOrExplain } from '../../core/files/fileSystem';
import { sniff } from '../../core/files/files';
import { ToolError } from '../../core/results/errors';
import { textResult, ToolResult } from '../../core/results/result';
import { formatBytes, formatCount, omittedMarker } from '../../core/results/truncate';
import { Input, readWindow, render } from '../readFile';

/**
 * read_file in a virtual workspace: the provider has no ranged reads, so the file is read whole
 * (refused above VIRTUAL_READ_LIMIT with its size, unread) and windowed in memory like an editor's
 * unsaved text. Same output as on disk.
 */
export async function readVirtualFile(input: Input, ctx: ToolContext): Promise<ToolResult> {
	const fileSystem = ctx.boundary.fileSystem;
	const target = await ctx.boundary.resolve(input.path, 'read');
	const display = target.display;
	const stat = await statOrExplain(fileSystem, target.absolute, display);
	const limit = Math.min(input.limit ?? ctx.settings.limits.readLines, ctx.settings.limits.readLines * 10);
	const dirty = input.encoding === 'base64' ? undefined : ctx.host.dirtyText(target.absolute);
	if (dirty !== undefined) {
		ctx.note({ target: display });
		return render(display, await readWindow(undefined, stat.size, dirty, input, limit, ctx), input, limit, ctx, true);
	}
	const bytes = await readBounded(fileSystem, target.absolute, display);
	const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	if (input.encoding === 'base64') return base64Window(buffer, display, input, ctx);
	const kind = sniff(buffer.subarray(0, 8192));
	if (kind.kind === 'image') {
		if (bytes.byteLength > ctx.settings.limits.imageBytes) {
			throw new ToolError('too_large', `${display} is a ${kind.format} image of ${formatBytes(bytes.byteLength)}, over the ${formatBytes(ctx.settings.limits.imageBytes)} image cap. Describe what you need from it to the user.`);
		}
		ctx.note({ target: display });
		return {
			content: [{ kind: 'text', text: `${display}: ${kind.format} image, ${formatBytes(bytes.byteLength)}` }, { kind: 'image', mimeType: kind.mimeType, data: bytes }],
			metadata: { truncated: false, path: display, mimeType: kind.mimeType, bytes: bytes.byteLength },
		};
	}
	if (kind.kind === 'binary') {
		throw new ToolError('binary_file', `${display} is a binary file (${formatBytes(bytes.byteLength)}); its text would be meaningless. Read it with encoding: "base64" if you need the bytes.`);
	}
	// What the model now knows, for the stale-write rules (see stale.ts).
	await withFileLocks(ctx.state, [target.absolute], async () => {
		ctx.state.fileVersions.set(target.absolute, withDigest({ mtimeMs: stat.mtimeMs, size: bytes.byteLength }, bytes));
	});
	const window = await readWindow(undefined, bytes.byteLength, buffer.toString('utf8'), input, limit, ctx);
	ctx.note({ target: display });
	return render(display, window, input, limit, ctx, false);
}

function base64Window(bytes: Buffer, display: string, input: Input, ctx: ToolContext): ToolResult {
	const size = bytes.byteLength;
	const offset = input.offset ?? 1;
	if (offset === 0) throw new ToolError('invalid_input', 'offset is 1-based: use 1 for the first byte, or a negative number to count from the end.');
	if (size === 0) return textResult(`${display}\n(the file is empty)`, { truncated: false, path: display, totalBytes: 0 });
	const start = offset < 0 ? Math.max(0, size + offset) : offset - 1;
	if (start >= size) {
		throw new ToolError('invalid_input', `offset ${offset} is past the end of ${display}, which has ${formatCount(size)} bytes. Use an offset from 1 to ${formatCount(size)}, or a negative one to read from the end.`);
	}
	const end = Math.min(size, start + Math.floor((ctx.settings.limits.readBytes * 3) / 4));
	const more = end < size;
	const tail = more ? `\n${omittedMarker({ bytes: size - end, hint: `use offset=${end + 1} to continue` })}` : '';
	ctx.note({ target: display });
	return textResult(`${display}: bytes ${formatCount(start + 1)}–${formatCount(end)} of ${formatCount(size)}, base64\n${bytes.subarray(start, end).toString('base64')}${tail}`, {
		truncated: more,
		bytesOmitted: size - (end - start),
		path: display,
		firstByte: start + 1,
		lastByte: end,
		totalBytes: size,
	});
}
