import * as path from 'node:path';
import * as vscode from 'vscode';
import { RESULT_SCHEME } from './documents';

/** Lines checked for paths per result document: results are capped anyway. */
const MAX_LINES = 2000;
/** `src/a.ts:12: text` (grep), `src/a.ts:12-` (context), or a bare `src/a.ts` (find_files). */
const LINE_PATTERN = /^\s*(?<file>[^\s:*[\]…][^:\n]*?)(?::(?<line>\d+)(?::(?<column>\d+))?[:-]|\s*$|\s+\()/;

/**
 * Makes the workspace paths in result documents clickable (grep and find_files results, the
 * paths a write reports), opening the file at the line. Only paths that exist become links.
 */
export function registerResultLinks(): vscode.Disposable {
	return vscode.languages.registerDocumentLinkProvider({ scheme: RESULT_SCHEME }, {
		provideDocumentLinks: async (document, token) => {
			const candidates: { range: vscode.Range; uri: vscode.Uri; line?: number }[] = [];
			for (let index = 0; index < Math.min(document.lineCount, MAX_LINES); index++) {
				const text = document.lineAt(index).text;
				const match = LINE_PATTERN.exec(text);
				const file = match?.groups?.file?.trim();
				if (!file || file.length > 500) continue;
				const uri = resolveWorkspacePath(file);
				if (!uri) continue;
				const start = text.indexOf(file);
				candidates.push({ range: new vscode.Range(index, start, index, start + file.length), uri, line: match?.groups?.line ? Number(match.groups.line) : undefined });
			}
			const links: vscode.DocumentLink[] = [];
			await Promise.all(candidates.map(async candidate => {
				if (token.isCancellationRequested) return;
				const stat = await Promise.resolve(vscode.workspace.fs.stat(candidate.uri)).catch(() => undefined);
				if (!stat || stat.type === vscode.FileType.Directory) return;
				const target = candidate.line ? candidate.uri.with({ fragment: `L${candidate.line}` }) : candidate.uri;
				links.push(new vscode.DocumentLink(candidate.range, target));
			}));
			return links;
		},
	});
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
