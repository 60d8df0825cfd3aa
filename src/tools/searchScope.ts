import type { SandboxHostOptions } from '../core/sandbox/runtime';
import type * as fs from 'node:fs';
import * as path from 'node:path';
import type { ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { statOrExplain } from '../core/files/files';

/**
 * Where a search runs: one rg process per workspace folder, each with the folder as its working
 * directory, so globs with a slash are relative to the folder, printed paths are folder-relative,
 * and results of several folders merge in folder order.
 */
export interface SearchScope {
	/** rg's working directory (a workspace folder, or the searched folder itself outside them). */
	readonly cwd: string;
	/** Position of the folder among the workspace folders (scopes outside them come last). */
	readonly order: number;
	/** The path argument for rg, relative to cwd ('.' for all of it). */
	readonly arg: string;
	/** The searched path is a file. */
	readonly isFile: boolean;
}

/**
 * The scopes for an optional `path`: every workspace folder when absent, else the one folder
 * holding it. `want` says what the path may be.
 */
export async function searchScopes(ctx: ToolContext, input: string | undefined, want: 'directory' | 'any', tool: string): Promise<SearchScope[]> {
	const roots = ctx.boundary.roots;
	if (input === undefined || input === '' || (input === '.' && roots.length > 1)) {
		if (roots.length === 0) throw new ToolError('outside_boundary', 'No workspace folder is open, so there is nothing to search. Ask the user to open a folder.');
		return roots.map((root, order) => ({ cwd: root.path, order, arg: '.', isFile: false }));
	}
	const target = await ctx.boundary.resolve(input, 'read');
	// stat, never open: opening a named pipe waits for a writer, forever.
	const stat = await statOrExplain(target.absolute, target.display);
	if (!stat.isDirectory() && !stat.isFile()) {
		throw new ToolError('io', `${target.display} is ${specialKind(stat)}, not a regular file or folder: ${tool} does not open such files (reading a pipe or device can block or never end). Give the path of a ${want === 'directory' ? 'folder' : 'file or folder'}.`);
	}
	const isFile = !stat.isDirectory();
	if (isFile && want === 'directory') {
		throw new ToolError('not_directory', `${target.display} is a file, not a folder; ${tool} searches folders. Give its folder as path, or read the file with read_file.`);
	}
	const root = target.root;
	if (root) {
		const relative = path.relative(root.path, target.absolute).split(path.sep).join('/');
		return [{ cwd: root.path, order: roots.indexOf(root), arg: relative === '' ? '.' : relative, isFile }];
	}
	// Outside every folder (toolbelt.additionalReadPaths, or unrestricted access).
	return [{ cwd: isFile ? path.dirname(target.absolute) : target.absolute, order: roots.length, arg: isFile ? path.basename(target.absolute) : '.', isFile }];
}

function specialKind(stat: fs.Stats): string {
	if (stat.isFIFO()) return 'a named pipe (FIFO)';
	if (stat.isSocket()) return 'a socket';
	if (stat.isCharacterDevice()) return 'a character device';
	if (stat.isBlockDevice()) return 'a block device';
	return 'a special file';
}

/**
 * Comma-separated globs as a list without blanks. A comma inside braces belongs to its glob
 * (`*.{ts,tsx}`), as in VS Code's "files to include".
 */
export function globList(value: string | undefined): string[] {
	const globs: string[] = [];
	let depth = 0;
	let current = '';
	for (const char of value ?? '') {
		if (char === ',' && depth === 0) {
			globs.push(current);
			current = '';
			continue;
		}
		if (char === '{') depth++;
		else if (char === '}' && depth > 0) depth--;
		current += char;
	}
	globs.push(current);
	return globs.map(glob => glob.trim()).filter(Boolean);
}

/**
 * How ripgrep runs for this call: confined to the searched folder (see runRg), unless the person
 * switched the sandbox off.
 */
export function searchConfinement(ctx: ToolContext): SandboxHostOptions | undefined {
	return ctx.settings.sandbox.mode === 'off' ? undefined : ctx.host.sandbox ?? {};
}
