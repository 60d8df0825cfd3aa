import * as path from 'node:path';
import type { DirectoryEntry, FileStat, FileSystem } from '../../../src/core/files/fileSystem';

/**
 * A file system held in memory, as a virtual workspace's provider would serve it: POSIX paths, no
 * symlinks. Counts whole-file reads per path, so a test can show a file was refused unread.
 */
export class MemoryFileSystem implements FileSystem {
	readonly local = false;
	readonly files = new Map<string, { bytes: Uint8Array; mtimeMs: number }>();
	readonly folders = new Set<string>(['/']);
	/** Entries that are neither files nor folders (a device, a socket, a pipe). */
	readonly others = new Set<string>();
	readonly reads = new Map<string, number>();
	/** Writes to these paths fail (to test rollback). */
	readonly failWrites = new Set<string>();
	private clock = 1_000;

	constructor(readonly scheme = 'memfs', initial: Record<string, string | Uint8Array> = {}) {
		for (const [file, content] of Object.entries(initial)) this.put(file, content);
	}

	put(file: string, content: string | Uint8Array): void {
		this.addFolders(path.posix.dirname(file));
		this.files.set(file, { bytes: typeof content === 'string' ? new TextEncoder().encode(content) : content, mtimeMs: this.clock++ });
	}

	text(file: string): string | undefined {
		const entry = this.files.get(file);
		return entry && new TextDecoder().decode(entry.bytes);
	}

	async stat(absolute: string): Promise<FileStat> {
		const file = this.files.get(absolute);
		if (file) return statOf('file', file.bytes.byteLength, file.mtimeMs);
		if (this.folders.has(absolute)) return statOf('directory', 0, 0);
		if (this.others.has(absolute)) return statOf('other', 0, 0);
		throw notFound(absolute);
	}

	async readFile(absolute: string): Promise<Uint8Array> {
		const file = this.files.get(absolute);
		if (!file) throw notFound(absolute);
		this.reads.set(absolute, (this.reads.get(absolute) ?? 0) + 1);
		return file.bytes;
	}

	async readDirectory(absolute: string): Promise<DirectoryEntry[]> {
		if (!this.folders.has(absolute)) throw notFound(absolute);
		const entries: DirectoryEntry[] = [];
		for (const folder of this.folders) {
			if (folder !== absolute && path.posix.dirname(folder) === absolute) entries.push({ name: path.posix.basename(folder), kind: 'directory', symlink: false });
		}
		for (const file of this.files.keys()) {
			if (path.posix.dirname(file) === absolute) entries.push({ name: path.posix.basename(file), kind: 'file', symlink: false });
		}
		return entries;
	}

	async writeFile(absolute: string, bytes: Uint8Array): Promise<void> {
		if (this.failWrites.has(absolute)) throw new Error('the provider refused the write');
		this.put(absolute, bytes);
	}

	async delete(absolute: string): Promise<void> {
		if (!this.files.delete(absolute)) throw notFound(absolute);
	}

	async rename(from: string, to: string): Promise<void> {
		const file = this.files.get(from);
		if (!file) throw notFound(from);
		if (this.files.has(to)) throw new Error(`${to} exists`);
		this.files.delete(from);
		this.put(to, file.bytes);
	}

	private addFolders(folder: string): void {
		for (let current = folder; !this.folders.has(current); current = path.posix.dirname(current)) this.folders.add(current);
	}
}

function statOf(kind: 'file' | 'directory' | 'other', size: number, mtimeMs: number): FileStat {
	return { size, mtimeMs, isFile: () => kind === 'file', isDirectory: () => kind === 'directory', isSymbolicLink: () => false };
}

function notFound(absolute: string): Error {
	return Object.assign(new Error(`${absolute} not found`), { code: 'ENOENT' });
}
