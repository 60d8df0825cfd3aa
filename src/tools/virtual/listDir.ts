import * as path from 'node:path';
import type { ToolContext } from '../../core/context';
import { DirectoryEntry, statOrExplain } from '../../core/files/fileSystem';
import { CancelledError, ToolError } from '../../core/results/errors';
import { textResult, ToolResult } from '../../core/results/result';
import { formatBytes, formatCount } from '../../core/results/truncate';
import { WALK_ENTRIES } from '../../core/search/walk';

interface ListInput {
	path?: string;
	depth?: number;
	offset?: number;
	limit?: number;
	includeHidden?: boolean;
	includeIgnored?: boolean;
}

interface Listed {
	readonly absolute: string;
	readonly relative: string;
	readonly depth: number;
	readonly entry: DirectoryEntry;
	/** Sibling positions from the top: sorts the page into tree order. */
	readonly key: readonly number[];
}

/**
 * list_dir in a virtual workspace: the same tree (level by level, folders first), through the
 * file-system port. .gitignore is not read here; .git and node_modules are still skipped.
 */
export async function listVirtualDir(input: ListInput, ctx: ToolContext): Promise<ToolResult> {
	const fileSystem = ctx.boundary.fileSystem;
	const depth = input.depth ?? 2;
	const limit = input.limit ?? ctx.settings.limits.listEntries;
	const offset = input.offset ?? 0;
	const roots = ctx.boundary.roots;
	const entries: Listed[] = [];
	let level: Omit<Listed, 'entry'>[];
	let title: string;
	if ((!input.path || input.path === '.') && roots.length > 1) {
		// Multi-root: every folder is a top-level entry, as on disk.
		title = `The ${roots.length} workspace folders`;
		entries.push(...roots.map((root, index) => ({ absolute: root.path, relative: root.name, depth: 1, entry: { name: root.name, kind: 'directory', symlink: false } as const, key: [index] })));
		level = [...entries];
	} else {
		const target = await ctx.boundary.resolve(input.path || '.', 'read');
		const stat = await statOrExplain(fileSystem, target.absolute, target.display);
		if (!stat.isDirectory()) throw new ToolError('not_directory', `${target.display} is a file, not a folder. Read it with read_file, or list its folder.`);
		title = target.display === '.' ? 'The workspace folder' : `${target.display}/`;
		level = [{ absolute: target.absolute, relative: '', depth: 0, key: [] }];
	}
	let hidden = 0;
	let ignored = 0;
	let complete = true;
	while (level.length > 0 && complete) {
		const next: typeof level = [];
		for (const folder of level) {
			if (ctx.signal.aborted) throw new CancelledError('Listing');
			if (folder.depth >= depth) continue;
			const children = (await fileSystem.readDirectory(folder.absolute).catch(() => [] as DirectoryEntry[])).sort(folderFirst);
			let index = 0;
			for (const entry of children) {
				if (!(input.includeHidden ?? false) && entry.name.startsWith('.')) { hidden++; continue; }
				if (!(input.includeIgnored ?? false) && (entry.name === '.git' || entry.name === 'node_modules')) { ignored++; continue; }
				if (entries.length >= WALK_ENTRIES) { complete = false; break; }
				const listed = {
					absolute: path.posix.join(folder.absolute, entry.name),
					relative: folder.relative ? `${folder.relative}/${entry.name}` : entry.name,
					depth: folder.depth + 1,
					entry,
					key: [...folder.key, index++],
				};
				entries.push(listed);
				if (entry.kind === 'directory' && !entry.symlink) next.push(listed);
			}
		}
		level = next;
	}
	const page = entries.slice(offset, offset + limit).sort((a, b) => compareKeys(a.key, b.key));
	const body = await Promise.all(page.map(async listed => `${'  '.repeat(listed.depth - 1)}${listed.entry.name}${await suffixOf(listed, ctx)}`));
	const total = entries.length;
	const more = total - offset - page.length;
	const lines = [`${title} (${depth} level${depth === 1 ? '' : 's'}): ${complete ? formatCount(total) : `more than ${formatCount(total)}`} entr${total === 1 ? 'y' : 'ies'}${page.length < total ? `, showing ${formatCount(offset + 1)}–${formatCount(offset + page.length)}` : ''}`, ...body];
	if (total === 0) lines.push('(empty)');
	if (more > 0 || !complete) lines.push(`[… more entries omitted; use offset=${offset + page.length} to continue, or list a subfolder …]`);
	if (hidden > 0) lines.push(`(${formatCount(hidden)} hidden entries not shown (includeHidden: true shows them))`);
	if (ignored > 0) lines.push(`(${formatCount(ignored)} ignored entries not shown (includeIgnored: true shows them))`);
	ctx.note({ target: title });
	return textResult(lines.join('\n'), { truncated: more > 0 || !complete, total: complete ? total : undefined, returned: page.length, offset, ...(more > 0 ? { nextOffset: offset + page.length } : {}) });
}

async function suffixOf(listed: Listed, ctx: ToolContext): Promise<string> {
	if (listed.entry.symlink) return '@';
	if (listed.entry.kind === 'directory') return '/';
	if (listed.entry.kind !== 'file') return '  (special file)';
	const stat = await ctx.boundary.fileSystem.stat(listed.absolute).catch(() => undefined);
	return stat ? `  ${formatBytes(stat.size)}` : '';
}

function folderFirst(a: DirectoryEntry, b: DirectoryEntry): number {
	const folders = Number(b.kind === 'directory') - Number(a.kind === 'directory');
	if (folders !== 0) return folders;
	const x = a.name.toLowerCase();
	const y = b.name.toLowerCase();
	return x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
	for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
	return a.length - b.length;
}
