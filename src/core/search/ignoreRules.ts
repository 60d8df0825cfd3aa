import * as fs from 'node:fs';
import * as path from 'node:path';
import ignore, { Ignore } from 'ignore';
import picomatch from 'picomatch';
import { contains, relativeTo, toPosix } from '../files/paths';
import { ALWAYS_SKIPPED } from './ripgrep';

/**
 * What list_dir hides as "ignored", matching what find_files and grep skip through ripgrep:
 * .gitignore / .ignore / .rgignore files (each relative to its folder, deeper ones winning, `!`
 * re-including), `.git/info/exclude`, the editor's files.exclude / search.exclude globs, and
 * `.git` / `node_modules` always.
 */

const IGNORE_FILES = ['.gitignore', '.ignore', '.rgignore'];
/** Levels looked up for the repository root above a folder. */
const MAX_PARENT_LEVELS = 32;

export class IgnoreRules {
	private readonly rules = new Map<string, Ignore | null>();
	private readonly excludes: ((relative: string) => boolean)[];

	private constructor(private readonly top: string, private readonly workspaceRoot: string, searchExcludes: readonly string[]) {
		this.excludes = searchExcludes.map(glob => picomatch(glob, { dot: true }));
	}

	/**
	 * Rules for a walk starting at `start`: the ignore files of every folder from the repository
	 * root (or the workspace folder when there is no repository) down to `start` are read now;
	 * folders below are read as the walk enters them.
	 */
	static async forWalk(workspaceRoot: string, start: string, searchExcludes: readonly string[]): Promise<IgnoreRules> {
		const top = (await repositoryRoot(start)) ?? workspaceRoot;
		const rules = new IgnoreRules(top, workspaceRoot, searchExcludes);
		const chain: string[] = [];
		for (let folder = start; ; folder = path.dirname(folder)) {
			chain.unshift(folder);
			if (folder === top || path.dirname(folder) === folder || !contains(top, folder)) break;
		}
		for (const folder of chain) await rules.enter(folder);
		// A folder asked for by name is listed even when ignored (as rg searches a path it is given):
		// then the rules above it, which ignore it and so everything in it, do not apply.
		if (chain.length > 1 && rules.isIgnoredByRules(start, true)) {
			for (const folder of chain.slice(0, -1)) rules.rules.set(folder, null);
		}
		return rules;
	}

	/** Reads a folder's ignore files (once). */
	async enter(folder: string): Promise<void> {
		if (this.rules.has(folder)) return;
		const texts: string[] = [];
		if (folder === this.top) {
			const exclude = await fs.promises.readFile(path.join(folder, '.git', 'info', 'exclude'), 'utf8').catch(() => undefined);
			if (exclude) texts.push(exclude);
		}
		for (const name of IGNORE_FILES) {
			const text = await fs.promises.readFile(path.join(folder, name), 'utf8').catch(() => undefined);
			if (text) texts.push(text);
		}
		this.rules.set(folder, texts.length ? ignore().add(texts.join('\n')) : null);
	}

	/** Whether an entry is ignored. Its folder's rules must have been entered. */
	isIgnored(absolute: string, isDirectory: boolean): boolean {
		const name = path.basename(absolute);
		if (ALWAYS_SKIPPED.includes(name)) return true;
		const inWorkspace = relativeTo(this.workspaceRoot, absolute);
		if (inWorkspace && this.excludes.some(matches => matches(toPosix(inWorkspace)))) return true;
		return this.isIgnoredByRules(absolute, isDirectory);
	}

	/** The verdict of the ignore files alone: the deepest folder with an opinion decides. */
	private isIgnoredByRules(absolute: string, isDirectory: boolean): boolean {
		for (let folder = path.dirname(absolute); ; folder = path.dirname(folder)) {
			const rules = this.rules.get(folder);
			if (rules) {
				const relative = toPosix(path.relative(folder, absolute)) + (isDirectory ? '/' : '');
				const verdict = rules.test(relative);
				if (verdict.ignored) return true;
				if (verdict.unignored) return false;
			}
			if (folder === this.top || path.dirname(folder) === folder) return false;
		}
	}
}

async function repositoryRoot(start: string): Promise<string | undefined> {
	let folder = start;
	for (let i = 0; i < MAX_PARENT_LEVELS; i++) {
		if (await fs.promises.stat(path.join(folder, '.git')).then(() => true, () => false)) return folder;
		const parent = path.dirname(folder);
		if (parent === folder) return undefined;
		folder = parent;
	}
	return undefined;
}
