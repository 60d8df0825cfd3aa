import * as path from 'node:path';
import type { ToolContext } from '../../core/context';
import { statOrExplain } from '../../core/files/fileSystem';
import { ToolError } from '../../core/results/errors';
import { textResult, ToolResult } from '../../core/results/result';
import { cutLine, formatCount } from '../../core/results/truncate';
import { globMatcher, LineMatch, searchFile, searchRegex, walkFiles, WalkedFile, WalkResult } from '../../core/search/walk';
import { globList } from '../searchScope';

/**
 * find_files and grep in a virtual workspace, where ripgrep cannot reach: a bounded walk through
 * the file-system port, and a line-by-line JS regex search (see core/search/walk.ts). The results
 * read as on disk; what differs (no .gitignore, JS regex syntax) is said in the result.
 */

interface Scope {
	readonly absolute: string;
	/** grep may be given one file: it is searched alone. */
	readonly isFile: boolean;
}

interface WalkInput {
	path?: string;
	includeHidden?: boolean;
	includeIgnored?: boolean;
}

const DIFFERENCE = '(this workspace is not on disk: .gitignore files are not read here, and grep patterns are JavaScript regular expressions)';

async function scopesOf(input: WalkInput, ctx: ToolContext, tool: string): Promise<Scope[]> {
	if (input.path === undefined || input.path === '') return ctx.boundary.roots.map(root => ({ absolute: root.path, isFile: false }));
	const target = await ctx.boundary.resolve(input.path, 'read');
	const stat = await statOrExplain(ctx.boundary.fileSystem, target.absolute, target.display);
	if (!stat.isDirectory() && tool === 'find_files') throw new ToolError('not_directory', `${target.display} is a file, not a folder. Give find_files a folder to search, or read the file with read_file.`);
	return [{ absolute: target.absolute, isFile: !stat.isDirectory() }];
}

/** Every file of the scopes, in order, until `visit` says stop; `complete` is false when a walk stopped early. */
async function walkScopes(input: WalkInput, ctx: ToolContext, tool: string, visit: (file: WalkedFile) => boolean | Promise<boolean>): Promise<WalkResult> {
	const unreadable: string[] = [];
	for (const scope of await scopesOf(input, ctx, tool)) {
		if (scope.isFile) {
			if (!await visit({ absolute: scope.absolute, relative: path.posix.basename(scope.absolute) })) return { complete: false, unreadable };
			continue;
		}
		const walked = await walkFiles(ctx.boundary.fileSystem, scope.absolute, {
			signal: ctx.signal,
			includeHidden: input.includeHidden ?? false,
			includeIgnored: input.includeIgnored ?? false,
			excludes: ctx.settings.searchExcludes,
		}, visit);
		unreadable.push(...walked.unreadable);
		if (!walked.complete) return { complete: false, unreadable };
	}
	return { complete: true, unreadable };
}

interface FindInput extends WalkInput {
	pattern: string;
	limit?: number;
	offset?: number;
}

export async function findVirtualFiles(input: FindInput, ctx: ToolContext): Promise<ToolResult> {
	const limit = input.limit ?? ctx.settings.limits.listEntries;
	const offset = input.offset ?? 0;
	const matches = globMatcher([input.pattern]);
	const page: string[] = [];
	let total = 0;
	const walked = await walkScopes(input, ctx, 'find_files', file => {
		if (!matches(ctx.boundary.display(file.absolute)) && !matches(file.relative)) return true;
		total++;
		if (total > offset && page.length < limit) page.push(ctx.boundary.display(file.absolute));
		return true;
	});
	const counted = walked.complete ? formatCount(total) : `at least ${formatCount(total)}`;
	const header = total === 0
		? `No files match ${JSON.stringify(input.pattern)}${input.path ? ` in ${input.path}` : ''}.`
		: `${counted} file${total === 1 ? '' : 's'} match ${JSON.stringify(input.pattern)} (showing ${formatCount(Math.min(total, offset + 1))}–${formatCount(offset + page.length)}, sorted by path):`;
	const more = total - offset - page.length;
	const lines = [header, ...page];
	if (more > 0) lines.push(`[… ${formatCount(more)} more files omitted; use offset=${offset + page.length} to continue, or narrow pattern or path …]`);
	lines.push(...walkNotes(walked), DIFFERENCE);
	ctx.note({ target: input.pattern });
	return textResult(lines.join('\n'), { truncated: more > 0 || !walked.complete, total: walked.complete ? total : undefined, returned: page.length, offset, ...(more > 0 ? { nextOffset: offset + page.length } : {}) });
}

interface GrepInput extends WalkInput {
	pattern: string;
	glob?: string;
	exclude?: string;
	ignoreCase?: boolean;
	fixedStrings?: boolean;
	context?: number;
	limit?: number;
	offset?: number;
}

export async function grepVirtual(input: GrepInput, ctx: ToolContext): Promise<ToolResult> {
	const limit = input.limit ?? ctx.settings.limits.grepMatches;
	const offset = input.offset ?? 0;
	const options = { pattern: input.pattern, fixedStrings: input.fixedStrings ?? false, ignoreCase: input.ignoreCase ?? false, signal: ctx.signal };
	const regex = searchRegex(options);
	const included = input.glob ? globMatcher(globList(input.glob)) : () => true;
	const excluded = input.exclude ? globMatcher(globList(input.exclude)) : () => false;
	const groups: { display: string; matches: LineMatch[] }[] = [];
	const skipped: string[] = [];
	let seen = 0;
	let shown = 0;
	// One line past the page tells whether there is more; the walk stops there (memory: one page).
	const walked = await walkScopes(input, ctx, 'grep', async file => {
		if (!included(file.relative) || excluded(file.relative)) return true;
		const found = await searchFile(ctx.boundary.fileSystem, file.absolute, regex, options, offset + limit + 1 - seen);
		const display = ctx.boundary.display(file.absolute);
		if ('skipped' in found) {
			if (found.skipped === 'too_large') skipped.push(display);
			return true;
		}
		const onPage = found.matches.slice(Math.max(0, offset - seen), Math.max(0, offset + limit - seen));
		seen += found.total;
		if (onPage.length) {
			groups.push({ display, matches: onPage });
			shown += onPage.length;
		}
		return seen <= offset + limit;
	});
	const complete = walked.complete;
	const lines = [shown === 0
		? `No matches for ${JSON.stringify(input.pattern)}${input.path ? ` in ${input.path}` : ''}.`
		: `${complete ? formatCount(seen) : `more than ${formatCount(offset + limit)}`} matching line${seen === 1 ? '' : 's'} for ${JSON.stringify(input.pattern)} (showing ${formatCount(offset + 1)}–${formatCount(offset + shown)}):`];
	for (const group of groups) {
		lines.push(`${group.display}:`);
		for (const match of group.matches) lines.push(`  ${match.line}: ${cutLine(match.text, ctx.settings.limits.lineChars).text}`);
	}
	if (!complete && shown > 0) lines.push(`[… more matches omitted; use offset=${offset + shown} to continue, or narrow pattern, glob or path …]`);
	if (skipped.length) lines.push(`(not searched, too large to read whole here: ${skipped.slice(0, 8).join(', ')})`);
	if (input.context) lines.push('(context lines are not shown in this workspace: read the lines around a match with read_file)');
	lines.push(...walkNotes(walked), DIFFERENCE);
	ctx.note({ target: input.pattern });
	return textResult(lines.join('\n'), { truncated: !complete, matches: complete ? seen : undefined, returned: shown, offset, ...(!complete ? { nextOffset: offset + shown } : {}) });
}

function walkNotes(walked: WalkResult): string[] {
	return walked.unreadable.length ? [`(could not read: ${walked.unreadable.slice(0, 8).join(', ')})`] : [];
}
