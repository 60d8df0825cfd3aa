import * as fs from 'node:fs';
import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { listedName } from '../core/results/listedName';
import { textResult, ToolResult } from '../core/results/result';
import { cleanRelative, filterArgs, inputErrorOf, isHiddenBelow, pathSortKey, runRg, warningsOf } from '../core/search/ripgrep';
import { formatCount } from '../core/results/truncate';
import { searchConfinement, searchScopes } from './searchScope';
import { defineTool } from './tool';
import { findVirtualFiles } from './virtual/search';

const schema = Type.Object({
	pattern: Type.String({ minLength: 1, description: 'Glob (non-empty), e.g. "**/*.ts", "src/**/test_*.py"; without a slash it matches names at any depth, with one paths from the workspace folder.' }),
	path: Type.Optional(Type.String({ description: 'Folder to search (default: every workspace folder).' })),
	limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Most paths (1–10000, default 500).' })),
	offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Paths to skip, for paging (≥ 0, default 0).' })),
	includeHidden: Type.Optional(Type.Boolean({ description: 'Include dot-files (default false).' })),
	includeIgnored: Type.Optional(Type.Boolean({ description: 'Include ignored files, .git and node_modules (default false).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

interface Found {
	readonly order: number;
	readonly relative: string;
	readonly cwd: string;
	/** pathSortKey of relative. */
	readonly key: string;
}

export const findFilesTool = defineTool({
	name: 'find_files',
	referenceName: 'tbFind',
	displayName: 'Find Files',
	group: 'read',
	mutating: false,
	icon: 'go-to-file',
	tags: ['files', 'search', 'read'],
	userDescription: 'Find files by glob pattern, honouring .gitignore and the editor\'s excludes.',
	modelDescription: [
		'Find files by glob with ripgrep\'s file walk: workspace-relative paths, sorted, with the total count (a path holding a line break or control character is shown as a JSON string).',
		'Skips dot-files, .git, node_modules and what .gitignore or the editor\'s excludes ignore, unless asked.',
		'grep searches contents; list_dir shows a folder\'s layout.',
	].join(' '),
	schema,
	describe: input => `Finding files matching ${input.pattern}${input.path ? ` in ${input.path}` : ''}`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	if (!ctx.boundary.fileSystem.local) return findVirtualFiles(input, ctx);
	const scopes = await searchScopes(ctx, input.path, 'directory', 'find_files');
	const limit = input.limit ?? ctx.settings.limits.listEntries;
	const offset = input.offset ?? 0;
	const keep = new TopK<Found>(offset + limit, (a, b) => a.order - b.order || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
	const includeHidden = input.includeHidden ?? false;
	const args = filterArgs({
		includeHidden,
		includeIgnored: input.includeIgnored ?? false,
		include: [input.pattern],
		searchExcludes: ctx.settings.searchExcludes,
	});
	const warnings: string[] = [];
	for (const scope of scopes) {
		// NUL after each path: a file name may hold a newline.
		const result = await runRg([...args, '--files', '--null', '--', scope.arg], {
			cwd: scope.cwd,
			signal: ctx.signal,
			confine: searchConfinement(ctx),
			separator: '\0',
			text: line => {
				if (line.length === 0) return;
				const relative = cleanRelative(line);
				if (!includeHidden && isHiddenBelow(relative, scope.arg)) return;
				keep.push({ order: scope.order, relative, cwd: scope.cwd, key: pathSortKey(relative) });
			},
		});
		if (result.code === 2) {
			const bad = inputErrorOf(result.stderr);
			if (bad) throw new ToolError('invalid_input', `The pattern ${JSON.stringify(input.pattern)} is not a valid glob: ${bad}\nFix the glob and try again (e.g. "**/*.ts", "src/*.{js,ts}").`);
			warnings.push(...warningsOf(result.stderr));
		}
	}
	const total = keep.count;
	const page = keep.sorted().slice(offset, offset + limit);
	const where = input.path ? ` in ${input.path}` : '';
	const lines = page.map(found => listedName(ctx.boundary.display(path.join(found.cwd, found.relative))));
	let header: string;
	if (total === 0) {
		header = `No files match ${JSON.stringify(input.pattern)}${where}.${await folderHint(input.pattern, scopes)}${input.includeIgnored ? '' : ' Ignored files (.gitignore, editor excludes, .git, node_modules) were skipped: set includeIgnored to include them.'}${includeHidden ? '' : ' Hidden (dot) files were skipped: set includeHidden to include them.'}`;
	} else if (page.length === 0) {
		header = `${formatCount(total)} files match ${JSON.stringify(input.pattern)}${where}, so offset ${offset} is past the end. Use an offset below ${total}.`;
	} else {
		header = `${formatCount(total)} file${total === 1 ? '' : 's'} match ${JSON.stringify(input.pattern)}${where} (showing ${formatCount(offset + 1)}–${formatCount(offset + page.length)}, sorted by path):`;
	}
	const more = total - offset - page.length;
	if (more > 0) lines.push(`[… ${formatCount(more)} more file${more === 1 ? '' : 's'} omitted; use offset=${offset + page.length} to continue, or narrow pattern or path …]`);
	if (warnings.length) lines.push(`(some folders could not be read: ${warnings.join('; ')})`);
	ctx.note({ target: input.pattern });
	return textResult([header, ...lines].join('\n'), {
		truncated: more > 0,
		total,
		returned: page.length,
		offset,
		...(more > 0 ? { nextOffset: offset + page.length } : {}),
	});
}

/**
 * A pattern without glob characters that names a folder matches no file: models often pass a
 * folder name where they mean "the files in it". Say how to ask for that.
 */
async function folderHint(pattern: string, scopes: readonly { cwd: string; arg: string }[]): Promise<string> {
	if (/[*?[\]{}]/.test(pattern)) return '';
	for (const scope of scopes) {
		const stat = await fs.promises.stat(path.join(scope.cwd, scope.arg, pattern)).catch(() => undefined);
		if (stat?.isDirectory()) return ` ${pattern} is a folder: to find the files in it use the pattern "${pattern.replace(/\/+$/, '')}/**", or list it with list_dir.`;
	}
	return '';
}

/**
 * The first `k` items of a stream in sorted order, holding about 2k at a time: a walk of a million
 * files costs memory for a page, not for the million.
 */
export class TopK<T> {
	private items: T[] = [];
	/** The last of the first k at the latest shrink: what does not come before it is out for good. */
	private cutoff: T | undefined;
	count = 0;

	constructor(private readonly k: number, private readonly compare: (a: T, b: T) => number) {}

	push(item: T): void {
		this.count++;
		// One comparison instead of a place in the next sort (ties go to the earlier item, as in the sort).
		if (this.cutoff !== undefined && this.compare(item, this.cutoff) >= 0) return;
		this.items.push(item);
		if (this.items.length >= 2 * this.k + 1024) this.shrink();
	}

	sorted(): T[] {
		this.shrink();
		return this.items;
	}

	private shrink(): void {
		this.items.sort(this.compare);
		if (this.items.length < this.k) return;
		this.items.length = this.k;
		this.cutoff = this.items[this.k - 1];
	}
}
