import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../results/errors';
import { formatBytes } from '../results/truncate';

/**
 * What the file tools need from a workspace's files, whatever holds them. Paths are absolute and
 * have passed the boundary: on disk, the platform's paths; in a virtual workspace, the POSIX path
 * part of the folder's URI (`memfs:/ws/a.txt` is `/ws/a.txt`), which the adapter turns back into a
 * URI.
 *
 * `local` means a real disk path: the tools then keep their fast paths (verified opens, ranged
 * reads, ripgrep, atomic writes, commands, the sandbox) and use this port only where it says so.
 * Elsewhere (vscode.workspace.fs on any other scheme) everything goes through it.
 */
export interface FileSystem {
	readonly local: boolean;
	/** The URI scheme served (`file` for the Node adapter): messages name it. */
	readonly scheme: string;
	/** Rejects (any error) when nothing is there. Node's fs.Stats fits this shape as it is. */
	stat(absolute: string): Promise<FileStat>;
	/** The whole file; callers go through readBounded, which refuses a file over its limit unread. */
	readFile(absolute: string): Promise<Uint8Array>;
	readDirectory(absolute: string): Promise<DirectoryEntry[]>;
	/** Creates or replaces the file, and the folders above it. */
	writeFile(absolute: string, bytes: Uint8Array): Promise<void>;
	delete(absolute: string): Promise<void>;
	/** Fails when `to` exists. */
	rename(from: string, to: string): Promise<void>;
}

export interface FileStat {
	readonly size: number;
	readonly mtimeMs: number;
	isFile(): boolean;
	isDirectory(): boolean;
	isSymbolicLink(): boolean;
}

export interface DirectoryEntry {
	readonly name: string;
	readonly kind: 'file' | 'directory' | 'other';
	readonly symlink: boolean;
}

/** The Node adapter, for `file:` workspaces; most tools do not call it there (see `local`). */
export const nodeFileSystem: FileSystem = {
	local: true,
	scheme: 'file',
	stat: absolute => fs.promises.stat(absolute),
	readFile: absolute => fs.promises.readFile(absolute),
	readDirectory: async absolute => (await fs.promises.readdir(absolute, { withFileTypes: true })).map(entry => ({
		name: entry.name,
		kind: entry.isDirectory() ? 'directory' : entry.isFile() ? 'file' : 'other',
		symlink: entry.isSymbolicLink(),
	})),
	writeFile: async (absolute, bytes) => {
		await fs.promises.mkdir(path.dirname(absolute), { recursive: true });
		await fs.promises.writeFile(absolute, bytes);
	},
	delete: absolute => fs.promises.rm(absolute, { recursive: true }),
	rename: async (from, to) => {
		if (await fs.promises.lstat(to).then(() => true, () => false)) throw new Error(`${to} already exists`);
		await fs.promises.mkdir(path.dirname(to), { recursive: true });
		await fs.promises.rename(from, to);
	},
};

/** Whole-file reads in a virtual workspace stop here: the provider has no ranged reads. */
export const VIRTUAL_READ_LIMIT = 16 * 1024 * 1024;

/**
 * Reads a whole file only when its size is within `maxBytes`: a larger one is refused with its
 * size, from a stat, never loaded. A provider that returns more than it said is refused too.
 */
export async function readBounded(fileSystem: FileSystem, absolute: string, display: string, maxBytes = VIRTUAL_READ_LIMIT): Promise<Uint8Array> {
	const stat = await statOrExplain(fileSystem, absolute, display);
	if (stat.isDirectory()) throw new ToolError('is_directory', `${display} is a folder, not a file. List it with list_dir.`);
	if (stat.size > maxBytes) throw tooLarge(display, stat.size, maxBytes);
	const bytes = await fileSystem.readFile(absolute).catch(error => {
		throw explain(error, display, fileSystem);
	});
	if (bytes.byteLength > maxBytes) throw tooLarge(display, bytes.byteLength, maxBytes);
	return bytes;
}

function tooLarge(display: string, size: number, maxBytes: number): ToolError {
	return new ToolError('too_large', `${display} is ${formatBytes(size)}, over the ${formatBytes(maxBytes)} that can be read whole in this workspace (its files are not on disk, so they cannot be read in ranges). Ask the user for the part you need, or to open the folder from disk.`, { size });
}

/** The stat of a path, or a ToolError a model can act on (not_found names the path). */
export async function statOrExplain(fileSystem: FileSystem, absolute: string, display: string): Promise<FileStat> {
	try {
		return await fileSystem.stat(absolute);
	} catch (error) {
		throw explain(error, display, fileSystem);
	}
}

/** Adapters throw ToolErrors when they know what went wrong; anything else is reported as it is. */
function explain(error: unknown, display: string, fileSystem: FileSystem): ToolError {
	if (error instanceof ToolError) return error;
	if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return notFound(display);
	return new ToolError('io', `${display} could not be read from this ${fileSystem.scheme}: workspace (${(error as Error)?.message ?? String(error)}). Try again, or ask the user whether the folder is still reachable.`);
}

function notFound(display: string): ToolError {
	return new ToolError('not_found', `${display} does not exist. Check the path with list_dir or find_files.`);
}

/** The one sentence for tools that need a folder on disk (commands, sessions, the code tools). */
export function needsDisk(tool: string, scheme: string): ToolError {
	return new ToolError('unavailable', `${tool} needs a folder on disk (file:), this workspace is ${scheme}:. Use the file tools (read_file, list_dir, find_files, grep, write_file, edit_file, apply_patch) here instead.`);
}
