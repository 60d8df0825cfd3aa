import * as fs from 'node:fs';
import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { planWithFileLocks } from '../core/changes/locks';
import { pendingChange } from '../core/changes/pipeline';
import { textResult, ToolResult } from '../core/results/result';
import { ensureFinalNewline } from '../core/text/text';
import { formatBytes } from '../core/results/truncate';
import { defineTool } from './tool';

const schema = Type.Object({
	name: Type.String({ minLength: 1, maxLength: 120, description: 'File name without `.md` and folders, e.g. "api-review" (1–120 characters).' }),
	content: Type.String({ description: 'The Markdown to write.' }),
}, { additionalProperties: false });

type Input = typeof schema.static;

/** `name (1).md` … `name (MAX).md` are tried before giving up. */
const MAX_SUFFIX = 999;

export const writeOutputTool = defineTool({
	name: 'write_output',
	referenceName: 'tbOutput',
	displayName: 'Write Output',
	group: 'edit',
	mutating: true,
	icon: 'output',
	tags: ['files', 'edit', 'report'],
	userDescription: 'Save a Markdown report, plan or summary into the outputs folder, never overwriting an earlier one.',
	modelDescription: [
		'Save a Markdown document (a report, review, plan or summary for the user) as `<outputs>/<name>.md`, where outputs is the `toolbelt.outputsDirectory` folder (default `outputs/` in the first workspace folder).',
		'Never overwrites: a taken name becomes `name (1).md`, `name (2).md`, …. Returns the final path.',
		'Use write_file for source files.',
	].join(' '),
	schema,
	describe: input => `Saving output ${input.name}.md`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	const name = checkName(input.name);
	const root = ctx.boundary.roots[0];
	if (!root) throw new ToolError('outside_boundary', 'No workspace folder is open, so there is no outputs folder. Ask the user to open a folder.');
	const folderInput = path.isAbsolute(ctx.settings.outputsDirectory) ? ctx.settings.outputsDirectory : path.join(root.path, ctx.settings.outputsDirectory || 'outputs');
	const folder = await ctx.boundary.resolve(folderInput, 'write');
	const stat = await ctx.boundary.fileSystem.stat(folder.absolute).catch(() => undefined);
	if (stat && !stat.isDirectory()) {
		throw new ToolError('not_directory', `The outputs folder ${folder.display} is a file, not a folder. Nothing was written. Ask the user to fix the toolbelt.outputsDirectory setting.`);
	}
	// One lock on the folder while a free name is picked. Should another output take that name before
	// this one is committed (both waiting for confirmation), the commit refuses rather than overwrite.
	return planWithFileLocks(ctx.state, [folder.absolute], async () => {
		const target = await freeName(ctx, folder.absolute, name);
		const bytes = Buffer.from(ensureFinalNewline(input.content, '\n'), 'utf8');
		const renamed = path.basename(target.absolute) !== `${name}.md` ? ` (${name}.md was taken)` : '';
		return pendingChange(ctx, `Save output ${target.display}`, [{ path: target.absolute, displayPath: target.display, before: null, after: bytes }], () => textResult(`Saved ${target.display}${renamed}: ${formatBytes(bytes.byteLength)}.`, {
			path: target.display,
			bytesWritten: bytes.byteLength,
			filesTouched: [target.display],
		}));
	});
}

/** A bare file name: the outputs folder is the only place this tool writes. */
function checkName(raw: string): string {
	const name = raw.trim().replace(/\.md$/i, '');
	if (name === '' || name === '.' || name === '..' || /[/\\:*?"<>|\u0000-\u001f]/.test(name) || name.startsWith('.')) {
		throw new ToolError('invalid_input', `name ${JSON.stringify(raw)} is not a plain file name. Nothing was written. Use letters, digits, spaces, "-" and "_" (no folders, no leading dot), e.g. "api-review".`);
	}
	return name;
}

/** A dangling symlink takes the name too (on disk; a virtual workspace has no symlinks). */
function lstatExists(ctx: ToolContext, absolute: string): Promise<boolean> {
	return ctx.boundary.fileSystem.local ? fs.promises.lstat(absolute).then(() => true, () => false) : Promise.resolve(false);
}

async function freeName(ctx: ToolContext, folder: string, name: string) {
	for (let n = 0; n <= MAX_SUFFIX; n++) {
		const file = path.join(folder, n === 0 ? `${name}.md` : `${name} (${n}).md`);
		const resolved = await ctx.boundary.resolve(file, 'write');
		if (!resolved.exists && !(await lstatExists(ctx, resolved.absolute))) return resolved;
	}
	throw new ToolError('already_exists', `${name}.md and ${MAX_SUFFIX} numbered variants already exist in the outputs folder. Nothing was written. Choose another name.`);
}
