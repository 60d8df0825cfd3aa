import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ToolDefinition } from '../tools/tool';
import { RESULT_SCHEME, toolOfResult } from './documents';

/** Lines checked for paths per result document: results are capped anyway. */
const MAX_LINES = 2000;
/** `src/a.ts:12: text` (grep match), `src/a.ts-12- text` (grep context), `src/a.ts:3:5 error …` (problems). */
const LOCATION = /^(?<file>[^\s:*[\]…(+\-@][^:\t\n]*?)(?::(?<line>\d+)(?::\d+)?:?|-(?<context>\d+)-)(?=\s|$)/;
/** A path alone on its line (find_files). */
const BARE_PATH = /^(?<file>[^\s:*[\]…(][^:\t\n]*?)\s*$/;
/**
 * What a change reports: `Wrote a.md (created): …`, `Edited a.ts: …`, `Saved outputs/r.md: …`,
 * apply_patch's `M a.ts (+1 −1)` and `R old.ts → new.ts (+0 −0)`.
 */
const CHANGED = /^(?:[AMDR]|Wrote|Edited|Saved) (?<file>[^:\t\n]+?)(?::\s|\s+\(|\.?$)/;
const RENAMED = ' → ';

/** A path a line names; `length` covers the clickable text when it is more than the path (`a.ts:12`). */
type LineRule = (text: string) => { file: string; line?: number; length?: number } | undefined;

const location: LineRule = text => {
	const match = LOCATION.exec(text);
	const groups = match?.groups;
	if (!match || !groups) return undefined;
	const line = groups.line ?? groups.context;
	// The whole `path:12` (or `path-12`) is the link, without the separator after it.
	return { file: groups.file, line: line ? Number(line) : undefined, length: match[0].replace(/[:-]$/, '').length };
};
const barePath: LineRule = text => {
	const file = BARE_PATH.exec(text)?.groups?.file;
	return file ? { file } : undefined;
};
const changed: LineRule = text => {
	const file = CHANGED.exec(text)?.groups?.file;
	return file ? { file: file.includes(RENAMED) ? file.slice(file.lastIndexOf(RENAMED) + RENAMED.length) : file } : undefined;
};

/**
 * The rules for a tool's result, or none: only results that are lists of paths (grep, find_files,
 * the `code` group's places) or report changed files (the `edit` group, whose results end with the
 * problems the change caused) are scanned, so a command result costs no file system lookups.
 * read_file's result is one file: see readFileLinks.
 */
function rulesFor(tool: ToolDefinition<any> | undefined): LineRule[] {
	if (tool?.name === 'grep') return [location];
	if (tool?.name === 'find_files') return [barePath];
	if (tool?.group === 'edit' || tool?.group === 'code') return [changed, location];
	return [];
}

/** Text that becomes a link once its file is known to exist. */
interface Candidate {
	readonly range: vscode.Range;
	readonly uri: vscode.Uri;
	readonly line?: number;
}

/**
 * Makes the workspace paths in result documents clickable (grep and find_files results, the
 * paths a write reports, `path:line` as a whole), opening the file at the line; in a read_file
 * result each line number opens that line. Only paths that exist become links.
 */
export function registerResultLinks(tools: readonly ToolDefinition<any>[]): vscode.Disposable {
	return vscode.languages.registerDocumentLinkProvider({ scheme: RESULT_SCHEME }, {
		provideDocumentLinks: async (document, token) => {
			const name = toolOfResult(document.uri);
			const candidates = name === 'read_file' ? readFileLinks(document) : lineLinks(document, rulesFor(tools.find(tool => tool.name === name)));
			// grep lists many lines of one file: one lookup per file.
			const isFile = new Map<string, Promise<boolean>>();
			const checkFile = (uri: vscode.Uri) => {
				const key = uri.toString();
				if (!isFile.has(key)) {
					isFile.set(key, Promise.resolve(vscode.workspace.fs.stat(uri)).then(stat => stat.type !== vscode.FileType.Directory, () => false));
				}
				return isFile.get(key)!;
			};
			const links: vscode.DocumentLink[] = [];
			await Promise.all(candidates.map(async candidate => {
				if (token.isCancellationRequested || !await checkFile(candidate.uri)) return;
				const target = candidate.line ? candidate.uri.with({ fragment: `L${candidate.line}` }) : candidate.uri;
				links.push(new vscode.DocumentLink(candidate.range, target));
			}));
			return links;
		},
	});
}

function lineLinks(document: vscode.TextDocument, rules: readonly LineRule[]): Candidate[] {
	if (!rules.length) return [];
	const candidates: Candidate[] = [];
	for (let index = 0; index < Math.min(document.lineCount, MAX_LINES); index++) {
		const text = document.lineAt(index).text;
		const found = firstMatch(rules, text);
		const file = found?.file.trim();
		if (!file || file.length > 500) continue;
		const uri = resolveWorkspacePath(file);
		if (!uri) continue;
		const start = text.indexOf(file);
		candidates.push({ range: new vscode.Range(index, start, index, start + Math.max(file.length, found?.length ?? 0)), uri, line: found?.line });
	}
	return candidates;
}

/** read_file's header names the file (`src/a.ts: lines 1–40 of 90`), near the top of the document. */
const READ_HEADER = /^(?<file>\S[^:\t]*): lines \d/;
const HEADER_SEARCH_LINES = 8;
/** A read line: `12<TAB>text`. */
const NUMBERED = /^\d+(?=\t)/;

function readFileLinks(document: vscode.TextDocument): Candidate[] {
	const lines = Math.min(document.lineCount, MAX_LINES);
	for (let header = 0; header < Math.min(lines, HEADER_SEARCH_LINES); header++) {
		const file = READ_HEADER.exec(document.lineAt(header).text)?.groups?.file;
		const uri = file ? resolveWorkspacePath(file) : undefined;
		if (!file || !uri) continue;
		const candidates: Candidate[] = [{ range: new vscode.Range(header, 0, header, file.length), uri }];
		for (let index = header + 1; index < lines; index++) {
			const number = NUMBERED.exec(document.lineAt(index).text)?.[0];
			if (number) candidates.push({ range: new vscode.Range(index, 0, index, number.length), uri, line: Number(number) });
		}
		return candidates;
	}
	return [];
}

function firstMatch(rules: readonly LineRule[], text: string): ReturnType<LineRule> {
	for (const rule of rules) {
		const found = rule(text);
		if (found) return found;
	}
	return undefined;
}

/** A path as tools display them: relative to the (only) folder, or `folderName/rest` with several. */
export function resolveWorkspacePath(display: string): vscode.Uri | undefined {
	const folders = vscode.workspace.workspaceFolders ?? [];
	if (!folders.length) return undefined;
	if (path.isAbsolute(display)) return vscode.Uri.file(display);
	if (folders.length > 1) {
		const [first, ...rest] = display.split('/');
		const folder = folders.find(candidate => candidate.name === first);
		if (folder) return vscode.Uri.joinPath(folder.uri, ...rest);
	}
	return vscode.Uri.joinPath(folders[0].uri, display);
}
