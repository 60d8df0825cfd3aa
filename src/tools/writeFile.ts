import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { looksBinary } from '../core/files/files';
import type { FileSystem } from '../core/files/fileSystem';
import { planWithFileLocks } from '../core/changes/locks';
import { pendingChange } from '../core/changes/pipeline';
import { readCurrent } from '../core/changes/stale';
import { textResult, ToolResult } from '../core/results/result';
import { decodeChangeableText, decodeText, DEFAULT_FORMAT, encodeText, ensureFinalNewline, fitToFormat, TextFormat } from '../core/text/text';
import { formatBytes } from '../core/results/truncate';
import { boundedDiff, diagnosticsSection, statSummary } from './changeReport';
import { stringEnum } from '../core/schema/stringEnum';
import { defineTool, PATH_DESCRIPTION } from './tool';

const schema = Type.Object({
	path: Type.String({ description: PATH_DESCRIPTION }),
	content: Type.String({ description: 'The text, or with encoding base64 the bytes as base64.' }),
	encoding: Type.Optional(stringEnum(['utf8', 'base64'], { description: 'Default utf8.' })),
	mode: Type.Optional(stringEnum(['overwrite', 'create', 'append'], { description: 'overwrite (default; creates a missing file), create (fails if it exists) or append.' })),
	createDirs: Type.Optional(Type.Boolean({ description: 'Create missing parent folders (default true).' })),
	ensureFinalNewline: Type.Optional(Type.Boolean({ description: 'End the file with a line ending (default false).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;
type Mode = NonNullable<Input['mode']>;

export const writeFileTool = defineTool({
	name: 'write_file',
	referenceName: 'tbWrite',
	displayName: 'Write File',
	group: 'edit',
	mutating: true,
	icon: 'new-file',
	tags: ['files', 'edit', 'write'],
	userDescription: 'Create a file, replace its content, or append to it: atomic, with a backup and a diff.',
	modelDescription: [
		'Create a file, replace its whole content, or append to it (mode). Replacing keeps the file\'s line endings, BOM and final newline: write "\\n".',
		'To change part of a file, prefer edit_file. Atomic and backed up; a file changed on disk since you read it is refused (read it again).',
		'Returns the bytes written and a diff summary.',
	].join(' '),
	schema,
	describe: input => `${input.mode === 'append' ? 'Appending to' : input.mode === 'create' ? 'Creating' : 'Writing'} ${input.path}`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	const target = await ctx.boundary.resolve(input.path, 'write');
	const display = target.display;
	const mode: Mode = input.mode ?? 'overwrite';
	const content = input.encoding === 'base64' ? decodeBase64(input.content) : undefined;
	return planWithFileLocks(ctx.state, [target.absolute], async () => {
		const current = await readCurrent(ctx, target.absolute, display);
		if (current.exists && mode === 'create') {
			throw new ToolError('already_exists', `${display} already exists (${formatBytes(current.bytes!.byteLength)}). Nothing was written. Use mode "overwrite" to replace it, mode "append" to add to it, or edit_file to change part of it.`);
		}
		if (!current.exists) await checkParent(ctx.boundary.fileSystem, target.absolute, display, input.createDirs ?? true);
		const { bytes, notes } = content
			? bytesOfBase64(content, current.bytes, mode)
			: bytesOfText(input.content, current.bytes, mode, display, input.ensureFinalNewline ?? false);
		if (current.exists && equalBytes(current.bytes!, bytes)) {
			return textResult(`No change: ${display} already holds exactly this content. Nothing was written.`, { path: display, bytesWritten: 0 });
		}
		const verb = !current.exists ? 'Create' : mode === 'append' ? 'Append to' : 'Overwrite';
		return pendingChange(ctx, `${verb} ${display}`, [{ path: target.absolute, displayPath: display, before: current.bytes, after: bytes }], commit => {
			const written = mode === 'append' && current.exists ? bytes.byteLength - current.bytes!.byteLength : bytes.byteLength;
			const what = !current.exists ? 'created' : mode === 'append' ? 'appended' : 'overwritten';
			const lines = [`Wrote ${display} (${what}): ${formatBytes(written)}${mode === 'append' && current.exists ? ` appended, ${formatBytes(bytes.byteLength)} in all` : ''}, ${statSummary(commit)} lines.`, ...notes];
			let truncated = false;
			if (current.exists && !content) {
				const diff = boundedDiff(commit.diff, `read ${display} with read_file to check the result`);
				truncated = diff.truncated;
				lines.push('', diff.text);
			}
			lines.push(...diagnosticsSection(commit));
			return textResult(lines.join('\n'), {
				truncated,
				path: display,
				bytesWritten: written,
				totalBytes: bytes.byteLength,
				created: !current.exists,
				added: commit.stats[0]?.added ?? 0,
				removed: commit.stats[0]?.removed ?? 0,
				filesTouched: [display],
			});
		});
	});
}

/** Strict base64: a typo must not silently drop bytes. */
function decodeBase64(text: string): Uint8Array {
	const compact = text.replace(/\s+/g, '');
	if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
		throw new ToolError('invalid_input', 'content is not valid base64 (only A–Z, a–z, 0–9, "+", "/" and "=" padding are allowed). Nothing was written. Fix the content, or use encoding "utf8" for text.');
	}
	return new Uint8Array(Buffer.from(compact, 'base64'));
}

/**
 * A new file must have a folder to go in: created when allowed, else a precise error. A part of
 * the path that is a file is always an error.
 */
async function checkParent(fileSystem: FileSystem, absolute: string, display: string, createDirs: boolean): Promise<void> {
	let folder = path.dirname(absolute);
	const missing: string[] = [];
	for (;;) {
		const stat = await fileSystem.stat(folder).catch(() => undefined);
		if (stat?.isDirectory()) break;
		if (stat) {
			throw new ToolError('not_directory', `${display} cannot be created: ${path.basename(folder)} in its path is a file, not a folder. Nothing was written. Choose another path.`);
		}
		missing.unshift(path.basename(folder));
		const parent = path.dirname(folder);
		if (parent === folder) break;
		folder = parent;
	}
	if (missing.length > 0 && !createDirs) {
		throw new ToolError('not_found', `The folder for ${display} does not exist (missing: ${missing.join('/')}) and createDirs is false. Nothing was written. Set createDirs to true, or choose an existing folder.`);
	}
}

function bytesOfBase64(content: Uint8Array, existing: Uint8Array | null, mode: Mode): { bytes: Uint8Array; notes: string[] } {
	if (mode === 'append' && existing) return { bytes: concat(existing, content), notes: [] };
	return { bytes: content, notes: [] };
}

/**
 * Text in the existing file's shape: its line endings and BOM, and its final newline when it had
 * one. A new file gets the text as written.
 */
function bytesOfText(content: string, existing: Uint8Array | null, mode: Mode, display: string, wantFinalNewline: boolean): { bytes: Uint8Array; notes: string[] } {
	const notes: string[] = [];
	// An empty file has no shape to keep: the text goes in as written, like a new file.
	if (existing === null || (existing.byteLength === 0 && mode !== 'append')) {
		const bom = content.startsWith('\ufeff');
		const body = bom ? content.slice(1) : content;
		const text = wantFinalNewline ? ensureFinalNewline(body, eolOf(body)) : body;
		return { bytes: encodeText(text, { bom }), notes };
	}
	if (mode === 'append' && existing.byteLength > 0) decodeChangeableText(existing, display, 'appended to as text', 'Use encoding "base64" to append bytes.');
	const decoded = existing.byteLength === 0 ? { text: '', format: { ...DEFAULT_FORMAT, eol: eolOf(content) } } : decodeText(existing);
	const binary = decoded === undefined || looksBinary(existing);
	if (binary || decoded === undefined) {
		// Replacing a binary file: there is no text shape to keep.
		return { bytes: encodeText(wantFinalNewline ? ensureFinalNewline(content, '\n') : content, { bom: false }), notes };
	}
	const format = decoded.format;
	const keep = describeKept(format, content);
	if (keep) notes.push(keep);
	if (mode === 'append') {
		let text = decoded.text + fitToFormat(content, format);
		if (wantFinalNewline) text = ensureFinalNewline(text, format.eol);
		return { bytes: encodeText(text, format), notes };
	}
	let text = fitToFormat(content, format);
	if ((format.finalNewline || wantFinalNewline) && text !== '') text = ensureFinalNewline(text, format.eol);
	return { bytes: encodeText(text, { bom: format.bom || content.startsWith('\ufeff') }), notes };
}

function eolOf(text: string): '\n' | '\r\n' {
	return text.includes('\r\n') ? '\r\n' : '\n';
}

function describeKept(format: TextFormat, content: string): string | undefined {
	const kept: string[] = [];
	if (format.eol === '\r\n' && /(^|[^\r])\n/.test(content)) kept.push('CRLF line endings');
	if (format.bom && !content.startsWith('\ufeff')) kept.push('UTF-8 BOM');
	return kept.length ? `Kept the file's ${kept.join(' and ')}.` : undefined;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
	const out = new Uint8Array(a.byteLength + b.byteLength);
	out.set(a, 0);
	out.set(b, a.byteLength);
	return out;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
	return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}
