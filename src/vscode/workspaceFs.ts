import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DirectoryEntry, FileStat, FileSystem } from '../core/files/fileSystem';
import { ToolError } from '../core/results/errors';

/**
 * The file-system port on `vscode.workspace.fs`, for workspace folders that are not on disk
 * (`vscode-vfs:`, `memfs:`, …). The core's paths are the URI paths of the folders; a path goes back
 * to the URI of the folder holding it (the first folder when none does).
 */
export function createWorkspaceFileSystem(folders: readonly vscode.WorkspaceFolder[]): FileSystem {
	const scheme = (folders.find(folder => folder.uri.scheme !== 'file') ?? folders[0])?.uri.scheme ?? 'file';
	const uriOf = (absolute: string): vscode.Uri => {
		checkServed(scheme);
		const holder = folders
			.filter(folder => absolute === folder.uri.path || absolute.startsWith(folder.uri.path.endsWith('/') ? folder.uri.path : `${folder.uri.path}/`))
			.sort((a, b) => b.uri.path.length - a.uri.path.length)[0] ?? folders[0];
		return holder.uri.with({ path: absolute });
	};
	const files = vscode.workspace.fs;
	return {
		local: false,
		scheme,
		stat: absolute => translate(() => files.stat(uriOf(absolute)).then(statOf)),
		readFile: absolute => translate(() => files.readFile(uriOf(absolute))),
		readDirectory: absolute => translate(() => files.readDirectory(uriOf(absolute)).then(entries => entries.map(entryOf))),
		writeFile: (absolute, bytes) => translate(async () => {
			const uri = uriOf(absolute);
			await files.createDirectory(uri.with({ path: path.posix.dirname(uri.path) }));
			await files.writeFile(uri, bytes);
		}),
		delete: absolute => translate(() => files.delete(uriOf(absolute), { recursive: true, useTrash: false })),
		rename: (from, to) => translate(() => files.rename(uriOf(from), uriOf(to), { overwrite: false })),
	};
}

/**
 * A scheme no provider in this window serves (the extension providing it is gone, or never was):
 * one sentence naming it and what works instead.
 */
export function checkServed(scheme: string): void {
	if (vscode.workspace.fs.isWritableFileSystem(scheme) !== undefined) return;
	throw new ToolError('unavailable', `No file system in this window serves the ${scheme}: scheme of this workspace, so Toolbelt cannot reach its files; open a folder on disk (file:), or ask the user to enable the extension that provides ${scheme}:.`);
}

function statOf(stat: vscode.FileStat): FileStat {
	return {
		size: stat.size,
		mtimeMs: stat.mtime,
		isFile: () => (stat.type & vscode.FileType.File) !== 0,
		isDirectory: () => (stat.type & vscode.FileType.Directory) !== 0,
		isSymbolicLink: () => (stat.type & vscode.FileType.SymbolicLink) !== 0,
	};
}

function entryOf([name, type]: [string, vscode.FileType]): DirectoryEntry {
	const kind = (type & vscode.FileType.Directory) !== 0 ? 'directory' : (type & vscode.FileType.File) !== 0 ? 'file' : 'other';
	return { name, kind, symlink: (type & vscode.FileType.SymbolicLink) !== 0 };
}

/** Always a rejection, never a throw; a missing file reads as Node's ENOENT, which the core already words. */
async function translate<T>(work: () => Thenable<T>): Promise<T> {
	try {
		return await work();
	} catch (error) {
		if (error instanceof vscode.FileSystemError && error.code === 'FileNotFound') throw Object.assign(new Error(error.message), { code: 'ENOENT' });
		throw error;
	}
}
