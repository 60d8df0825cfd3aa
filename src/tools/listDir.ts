import * as fs from 'node:fs';
import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import { isAtomicTemp } from '../core/files/atomic';
import type { ToolContext } from '../core/context';
import { CancelledError, fromNodeError, ToolError } from '../core/results/errors';
import { listedName } from '../core/results/listedName';
import { statOrExplain } from '../core/files/files';
import { IgnoreRules } from '../core/search/ignoreRules';
import { textResult, ToolResult } from '../core/results/result';
import { formatBytes, formatCount } from '../core/results/truncate';
import { inPinnedFolder } from '../core/files/verifiedOpen';
import { defineTool } from './tool';
import { listVirtualDir } from './virtual/listDir';

const schema = Type.Object({
	path: Type.Optional(Type.String({ description: 'Folder (default ".": the workspace folder, or every folder of a multi-root workspace).' })),
	depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'Levels to descend (1–10, default 2).' })),
	offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Entries to skip, for paging (≥ 0, default 0).' })),
	limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Most entries (1–10000, default 500).' })),
	includeHidden: Type.Optional(Type.Boolean({ description: 'Show dot-files (default false).' })),
	includeIgnored: Type.Optional(Type.Boolean({ description: 'Show ignored entries, .git and node_modules (default false).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

/** Entries counted before the walk gives up on an exact total. */
const MAX_WALK_ENTRIES = 100_000;
/**
 * Entries counted past the page before the walk stops: a small tree is counted whole, a big one
 * costs about what its page costs (the rest is said to be "at least" so many).
 */
const COUNTED_AHEAD = 1000;
/** Folders read at once: enough to keep the I/O threads busy, few enough to stop soon after the page. */
const PARALLEL_READS = 16;
/** Ignored entries named in the footer (the rest are only counted). */
const NAMED_IGNORED = 8;

type Kind = 'dir' | 'file' | 'symlink' | 'other';

interface Entry {
	readonly absolute: string;
	/** Relative to the listed folder, POSIX. */
	readonly relative: string;
	readonly name: string;
	readonly depth: number;
	readonly kind: Kind;
	/** Sibling positions from the top: sorts the entries into tree order. */
	readonly key: readonly number[];
}

export const listDirTool = defineTool({
	name: 'list_dir',
	referenceName: 'tbList',
	displayName: 'List Folder',
	group: 'read',
	mutating: false,
	icon: 'list-tree',
	tags: ['files', 'read'],
	userDescription: 'List a folder as an indented tree: folders first, sizes, symlinks and executables marked.',
	modelDescription: [
		'List a folder as a tree, level by level, folders first, sorted by name; one entry per line, indented by depth: `name/` folder, `name@` symlink, `name*` executable, files with their size; a name holding a line break or control character is shown as a JSON string.',
		'The footer says how many were left out and how to page. Hides dot-files, .git, node_modules and what .gitignore or the editor\'s excludes ignore. find_files finds files by name.',
	].join(' '),
	schema,
	describe: input => `Listing ${input.path ?? '.'}`,
	run,
});

interface Walk {
	readonly entries: Entry[];
	hidden: number;
	ignored: string[];
	complete: boolean;
	unreadable: string[];
	/** Entries after which the walk may stop (the page and a margin counted past it). */
	readonly enough: number;
}

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	if (!ctx.boundary.fileSystem.local) return listVirtualDir(input, ctx);
	const depth = input.depth ?? 2;
	const limit = input.limit ?? ctx.settings.limits.listEntries;
	const offset = input.offset ?? 0;
	const roots = ctx.boundary.roots;
	const listAll = (input.path === undefined || input.path === '' || input.path === '.') && roots.length > 1;
	const walk: Walk = { entries: [], hidden: 0, ignored: [], complete: true, unreadable: [], enough: offset + limit + COUNTED_AHEAD };
	let title: string;
	if (listAll) {
		title = `The ${roots.length} workspace folders`;
		for (const [index, root] of roots.entries()) {
			walk.entries.push({ absolute: root.path, relative: root.name, name: root.name, depth: 1, kind: 'dir', key: [index] });
		}
		await walkFolders(walk, walk.entries.map(entry => ({ entry, workspaceRoot: entry.absolute })), depth, input, ctx);
	} else {
		const target = await ctx.boundary.resolve(input.path || '.', 'read');
		const stat = await statOrExplain(target.absolute, target.display);
		if (!stat.isDirectory()) {
			throw new ToolError('not_directory', `${target.display} is a file, not a folder. Read it with read_file, or list its folder${path.dirname(target.display) !== '.' ? ` (${path.posix.dirname(target.display)})` : ''}.`);
		}
		title = target.display === '.' ? 'The workspace folder' : `${target.display}/`;
		const top: Entry = { absolute: target.absolute, relative: '', name: '', depth: 0, kind: 'dir', key: [] };
		await walkFolders(walk, [{ entry: top, workspaceRoot: target.root?.path ?? target.absolute }], depth, input, ctx);
	}
	const page = walk.entries.slice(offset, offset + limit);
	const body = await renderTree(page, listAll);
	const total = walk.entries.length;
	const more = total - offset - page.length;
	const lines = [`${title} (${depth} level${depth === 1 ? '' : 's'}): ${walk.complete ? formatCount(total) : `at least ${formatCount(total)}`} entr${total === 1 ? 'y' : 'ies'}${page.length < total ? `, showing ${formatCount(offset + 1)}–${formatCount(offset + page.length)}` : ''}`, ...body];
	if (total === 0) lines.push('(empty)');
	else if (page.length === 0) lines.push(`(offset ${offset} is past the end; use an offset below ${total})`);
	if (more > 0 || !walk.complete) {
		const counted = more > 0 ? `${walk.complete ? '' : 'at least '}${formatCount(more)} more entr${more === 1 ? 'y' : 'ies'}` : 'more entries';
		lines.push(`[… ${counted} omitted${walk.complete ? '' : ' (not all counted)'}; use offset=${offset + page.length} to continue, or list a subfolder …]`);
	}
	lines.push(...footer(walk));
	ctx.note({ target: title });
	return textResult(lines.join('\n'), {
		truncated: more > 0 || !walk.complete,
		total: walk.complete ? total : undefined,
		returned: page.length,
		offset,
		hiddenEntries: walk.hidden,
		ignoredEntries: walk.ignored.length,
		...(more > 0 ? { nextOffset: offset + page.length } : {}),
	});
}

interface Folder {
	readonly entry: Entry;
	readonly workspaceRoot: string;
	readonly rules: IgnoreRules | undefined;
}

/** What one folder adds to the walk, kept apart until it is merged in folder order. */
interface FolderRead {
	readonly kept: fs.Dirent[];
	readonly hidden: number;
	readonly ignored: string[];
	readonly unreadable: boolean;
}

/**
 * Breadth-first, so a limit keeps the upper levels whole and cuts the deepest first. The folders of
 * a level are read PARALLEL_READS at a time and merged in order, so the entries come out as one
 * after another would give them; the walk stops once it holds `walk.enough` entries.
 */
async function walkFolders(walk: Walk, starts: { entry: Entry; workspaceRoot: string }[], maxDepth: number, input: Input, ctx: ToolContext): Promise<void> {
	const includeIgnored = input.includeIgnored ?? false;
	let level: Folder[] = [];
	for (const start of starts) {
		level.push({ ...start, rules: includeIgnored ? undefined : await IgnoreRules.forWalk(start.workspaceRoot, start.entry.absolute, ctx.settings.searchExcludes) });
	}
	const isStart = (folder: Entry) => starts.some(start => start.entry === folder);
	while (level.length > 0) {
		const next: Folder[] = [];
		const toRead = level.filter(folder => folder.entry.depth < maxDepth);
		for (let first = 0; first < toRead.length; first += PARALLEL_READS) {
			if (ctx.signal.aborted) throw new CancelledError('Listing');
			const batch = toRead.slice(first, first + PARALLEL_READS);
			const reads = await Promise.all(batch.map(folder => readAndFilter(folder, isStart(folder.entry), input, ctx)));
			for (const [index, read] of reads.entries()) {
				if (!merge(walk, batch[index], read, next)) return;
			}
			const unread = first + PARALLEL_READS < toRead.length || next.some(folder => folder.entry.depth < maxDepth);
			if (walk.entries.length >= walk.enough && unread) {
				walk.complete = false;
				return;
			}
		}
		level = next;
	}
}

/** A folder's entries, sorted, without atomic-write temps, hidden and ignored ones counted apart. */
async function readAndFilter({ entry: folder, rules }: Folder, isStart: boolean, input: Input, ctx: ToolContext): Promise<FolderRead> {
	let dirents: fs.Dirent[];
	try {
		dirents = await readFolder(folder, isStart, ctx);
	} catch (error) {
		if (folder.depth === 0) throw fromNodeError(error, folder.relative || '.');
		return { kept: [], hidden: 0, ignored: [], unreadable: true };
	}
	// Only the ignore files the listing shows to be there are opened.
	await rules?.enter(folder.absolute, new Set(dirents.map(dirent => dirent.name)));
	let hidden = 0;
	const ignored: string[] = [];
	const kept = dirents
		.sort(byKindThenName)
		.filter(dirent => !isAtomicTemp(dirent.name))
		.filter(dirent => {
			if (!(input.includeHidden ?? false) && dirent.name.startsWith('.')) {
				hidden++;
				return false;
			}
			if (rules?.isIgnored(path.join(folder.absolute, dirent.name), dirent.isDirectory())) {
				ignored.push(join(folder.relative, dirent.name) + (dirent.isDirectory() ? '/' : ''));
				return false;
			}
			return true;
		});
	return { kept, hidden, ignored, unreadable: false };
}

/** Adds a folder's entries to the walk and its sub-folders to `next`; false once the walk is full. */
function merge(walk: Walk, { entry: folder, workspaceRoot, rules }: Folder, read: FolderRead, next: Folder[]): boolean {
	if (read.unreadable) walk.unreadable.push(folder.relative);
	walk.hidden += read.hidden;
	walk.ignored.push(...read.ignored);
	for (const [index, dirent] of read.kept.entries()) {
		if (walk.entries.length >= MAX_WALK_ENTRIES) {
			walk.complete = false;
			return false;
		}
		const entry: Entry = {
			absolute: path.join(folder.absolute, dirent.name),
			relative: join(folder.relative, dirent.name),
			name: dirent.name,
			depth: folder.depth + 1,
			kind: kindOf(dirent),
			key: [...folder.key, index],
		};
		walk.entries.push(entry);
		// Symlinked folders are shown, not followed: they may lead anywhere.
		if (entry.kind === 'dir') next.push({ entry, workspaceRoot, rules });
	}
	return true;
}

/**
 * A folder's entries, read through a descriptor checked against the boundary: a folder swapped for
 * a symlink to an outside one is refused, not listed. Below the folders the walk starts from, a
 * symlink in a listed folder's place is refused too (the walk shows links, it does not follow them).
 */
async function readFolder(folder: Entry, isStart: boolean, ctx: ToolContext): Promise<fs.Dirent[]> {
	const display = folder.relative || '.';
	return inPinnedFolder(display, { at: folder.absolute, reach: ctx.boundary, access: 'read', noFollow: !isStart }, pinned =>
		fs.promises.readdir(pinned.self, { withFileTypes: true }));
}

function join(parent: string, name: string): string {
	return parent ? `${parent}/${name}` : name;
}

function kindOf(dirent: fs.Dirent): Kind {
	if (dirent.isSymbolicLink()) return 'symlink';
	if (dirent.isDirectory()) return 'dir';
	if (dirent.isFile()) return 'file';
	return 'other';
}

/** Folders first, then by name (case-insensitive, ties by code unit) as in the editor's explorer. */
function byKindThenName(a: fs.Dirent, b: fs.Dirent): number {
	const folderFirst = Number(b.isDirectory()) - Number(a.isDirectory());
	if (folderFirst !== 0) return folderFirst;
	const x = a.name.toLowerCase();
	const y = b.name.toLowerCase();
	if (x !== y) return x < y ? -1 : 1;
	return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
	for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
	return a.length - b.length;
}

/** The page in tree order; an entry whose folder is on another page shows its whole relative path. */
async function renderTree(page: readonly Entry[], listAll: boolean): Promise<string[]> {
	const onPage = new Set(page.map(entry => entry.relative));
	const sorted = [...page].sort((a, b) => compareKeys(a.key, b.key));
	return Promise.all(sorted.map(async entry => {
		const parent = entry.relative.includes('/') ? entry.relative.slice(0, entry.relative.lastIndexOf('/')) : '';
		const orphan = parent !== '' && !onPage.has(parent);
		const indent = '  '.repeat(Math.max(0, entry.depth - 1));
		const name = orphan ? entry.relative : entry.name;
		return `${indent}${listedName(name)}${await suffixOf(entry, listAll)}`;
	}));
}

async function suffixOf(entry: Entry, listAll: boolean): Promise<string> {
	switch (entry.kind) {
		case 'dir':
			return listAll && entry.depth === 1 ? `/  (${entry.absolute})` : '/';
		case 'symlink': {
			const target = await fs.promises.readlink(entry.absolute).catch(() => undefined);
			return target !== undefined ? `@ → ${listedName(target)}` : '@';
		}
		case 'file': {
			const stat = await fs.promises.stat(entry.absolute).catch(() => undefined);
			if (!stat) return '';
			const executable = process.platform !== 'win32' && (stat.mode & 0o111) !== 0 ? '*' : '';
			return `${executable}  ${formatBytes(stat.size)}`;
		}
		default:
			return '  (special file)';
	}
}

function footer(walk: Walk): string[] {
	const notes: string[] = [];
	// A walk stopped early counted only what it saw.
	const atLeast = walk.complete ? '' : 'at least ';
	if (walk.hidden > 0) notes.push(`${atLeast}${formatCount(walk.hidden)} hidden entr${walk.hidden === 1 ? 'y' : 'ies'} not shown (includeHidden: true shows them)`);
	if (walk.ignored.length > 0) {
		const named = walk.ignored.slice(0, NAMED_IGNORED).map(listedName).join(', ');
		const rest = walk.ignored.length > NAMED_IGNORED ? `, and ${formatCount(walk.ignored.length - NAMED_IGNORED)} more` : '';
		notes.push(`${atLeast}${formatCount(walk.ignored.length)} ignored entr${walk.ignored.length === 1 ? 'y' : 'ies'} not shown: ${named}${rest} (includeIgnored: true shows them)`);
	}
	if (walk.unreadable.length > 0) notes.push(`could not read: ${walk.unreadable.slice(0, NAMED_IGNORED).map(listedName).join(', ')}`);
	return notes.length ? ['', ...notes.map(note => `(${note})`)] : [];
}
