import * as path from 'node:path';
import picomatch from 'picomatch';
import type { DirectoryEntry, FileSystem } from '../files/fileSystem';
import { looksBinary } from '../files/files';
import { throwIfAborted, ToolError } from '../results/errors';

/**
 * Search where ripgrep cannot reach (a virtual workspace): a bounded walk through the file-system
 * port and a line-by-line JS search. Both stop at their caps and on cancellation, and say so; the
 * search holds one file and the matches it keeps, never the whole tree.
 */

/** Entries looked at before a walk stops and calls its result incomplete. */
export const WALK_ENTRIES = 100_000;
/** Files bigger than this are skipped by the JS search (named in its result), not read. */
const SEARCH_FILE_BYTES = 4 * 1024 * 1024;
/** Characters kept of a matching line (the result cuts lines shorter still). */
const KEPT_LINE_CHARS = 4000;
/** Names skipped unless ignored entries are asked for, as ripgrep and list_dir skip them. */
const ALWAYS_IGNORED = new Set(['.git', 'node_modules']);

export interface WalkOptions {
	readonly signal: AbortSignal;
	readonly includeHidden: boolean;
	readonly includeIgnored: boolean;
	/** Globs (the editor's search excludes) for paths relative to the folder walked; skipped unless includeIgnored. */
	readonly excludes?: readonly string[];
	/** Default WALK_ENTRIES. */
	readonly maxEntries?: number;
}

export interface WalkedFile {
	readonly absolute: string;
	/** POSIX, relative to the folder walked. */
	readonly relative: string;
}

export interface WalkResult {
	/** False when the walk stopped at maxEntries (or `visit` asked it to stop). */
	readonly complete: boolean;
	/** Folders that could not be listed, relative. */
	readonly unreadable: string[];
}

/**
 * Visits the files under `folder` in sorted order, folder by folder (depth first, names sorted).
 * `visit` returns false to stop. Symlinks are not followed (a provider may report them).
 */
export async function walkFiles(fileSystem: FileSystem, folder: string, options: WalkOptions, visit: (file: WalkedFile) => boolean | Promise<boolean>): Promise<WalkResult> {
	const excluded = options.includeIgnored || !options.excludes?.length ? () => false : picomatch([...options.excludes], { dot: true });
	const maxEntries = options.maxEntries ?? WALK_ENTRIES;
	const unreadable: string[] = [];
	let seen = 0;
	const skip = (name: string, relative: string) =>
		(!options.includeHidden && name.startsWith('.'))
		|| (!options.includeIgnored && (ALWAYS_IGNORED.has(name) || excluded(relative)));
	const walk = async (absolute: string, relative: string): Promise<boolean> => {
		throwIfAborted(options.signal, 'The search');
		let entries: DirectoryEntry[];
		try {
			entries = await fileSystem.readDirectory(absolute);
		} catch {
			unreadable.push(relative || '.');
			return true;
		}
		entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
		for (const entry of entries) {
			if (++seen > maxEntries) return false;
			const childRelative = relative ? `${relative}/${entry.name}` : entry.name;
			if (skip(entry.name, childRelative) || entry.symlink) continue;
			const child = path.posix.join(absolute, entry.name);
			if (entry.kind === 'directory') {
				if (!await walk(child, childRelative)) return false;
			} else if (entry.kind === 'file' && !await visit({ absolute: child, relative: childRelative })) {
				return false;
			}
		}
		return true;
	};
	const complete = await walk(folder, '');
	return { complete, unreadable };
}

/** A glob as find_files and grep read it: without a slash it matches names at any depth. */
export function globMatcher(globs: readonly string[]): (relative: string) => boolean {
	const matchers = globs.map(glob => picomatch(glob, { dot: true, basename: !glob.includes('/') }));
	return relative => matchers.some(matches => matches(relative));
}

export interface SearchOptions {
	readonly pattern: string;
	readonly fixedStrings: boolean;
	readonly ignoreCase: boolean;
	readonly signal: AbortSignal;
	/** Default SEARCH_FILE_BYTES. */
	readonly maxFileBytes?: number;
}

export interface LineMatch {
	/** 1-based. */
	readonly line: number;
	readonly text: string;
}

/** The pattern as a JS regex; a pattern JS cannot read is the model's to fix. */
export function searchRegex(options: Pick<SearchOptions, 'pattern' | 'fixedStrings' | 'ignoreCase'>): RegExp {
	const source = options.fixedStrings ? options.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : options.pattern;
	try {
		return new RegExp(source, options.ignoreCase ? 'iu' : 'u');
	} catch (error) {
		throw new ToolError('invalid_input', `The pattern ${JSON.stringify(options.pattern)} is not a valid regular expression here (${(error as Error).message}; this workspace is searched with JavaScript regular expressions). Fix it, or set fixedStrings to search for the text as it is.`);
	}
}

/**
 * The matching lines of one file, at most `maxMatches` of them (the count goes on, so `total` is
 * exact). Undefined when the file was skipped: binary, or over maxFileBytes (`skipped` says which).
 */
export async function searchFile(fileSystem: FileSystem, absolute: string, regex: RegExp, options: SearchOptions, maxMatches: number): Promise<{ matches: LineMatch[]; total: number } | { skipped: 'binary' | 'too_large' | 'unreadable' }> {
	throwIfAborted(options.signal, 'The search');
	const stat = await fileSystem.stat(absolute).catch(() => undefined);
	if (!stat) return { skipped: 'unreadable' };
	if (stat.size > (options.maxFileBytes ?? SEARCH_FILE_BYTES)) return { skipped: 'too_large' };
	const bytes = await fileSystem.readFile(absolute).catch(() => undefined);
	if (!bytes) return { skipped: 'unreadable' };
	if (looksBinary(bytes.subarray(0, 8192))) return { skipped: 'binary' };
	const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
	const matches: LineMatch[] = [];
	let total = 0;
	let line = 0;
	for (let start = 0; start <= text.length; line++) {
		const end = text.indexOf('\n', start);
		const stop = end === -1 ? text.length : end;
		if (end === -1 && start === text.length) break;
		const content = text.slice(start, stop).replace(/\r$/, '');
		if (regex.test(content)) {
			total++;
			// Kept lines are cut here: a minified file's one line is not held whole per match.
			if (matches.length < maxMatches) matches.push({ line: line + 1, text: content.slice(0, KEPT_LINE_CHARS) });
		}
		start = stop + 1;
	}
	return { matches, total };
}
