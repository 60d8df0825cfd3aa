import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { throwIfAborted, ToolError } from '../results/errors';
import type { ReadHandle } from './verifiedOpen';

/**
 * A big file's bytes left on disk instead of held in memory. An exact edit of one line in a 50 MB
 * file reads the file through small buffers (STREAM_CHUNK), and keeps only what it learned: the
 * size and SHA-256 of the bytes it read, where the edit goes, and the lines around it for the diff.
 * The commit then checks the file against that digest and writes the new file by copying the old
 * one around the edit, a chunk at a time. Fresh memory is what a whole-file buffer costs most: a
 * new 50 MB buffer is paged in by the kernel on first touch, once when the file is read into it
 * and again when it is first searched, which took longer than `sed -i` takes for the whole edit.
 */


/** Bytes read at a time, into buffers used again for every chunk. */
export const STREAM_CHUNK = 1024 * 1024;

/** The lines around an edit, kept for the diff (the rest of the file is not read again for it). */
export interface Excerpt {
	/** Offset of its first byte in the file (a line start). */
	readonly start: number;
	readonly bytes: Buffer;
	/** Line endings before `start`: the excerpt's first line is line `lines + 1`. */
	readonly lines: number;
	/** Whole lines it holds before the edit's line and after the edit's last line (or the file's ends). */
	readonly linesAround: number;
}

/**
 * What a change was computed from, when that is a file left on disk: its bytes are those of `path`
 * whose SHA-256 is `sha256`. Anything that needs them whole reads them again (whole()), and gets
 * them only if they still have that digest.
 */
export class DiskBytes {
	constructor(
		readonly path: string,
		readonly display: string,
		readonly byteLength: number,
		readonly sha256: string,
		readonly excerpt: Excerpt,
	) {}

	/** The bytes, read again now and checked against the digest (for the few consumers that need one buffer). */
	whole(): Buffer {
		const bytes = fs.readFileSync(this.path);
		if (bytes.length !== this.byteLength || sha256Of(bytes) !== this.sha256) throw changedOnDisk(this.display);
		return bytes;
	}
}

/** New bytes that are a DiskBytes with `length` bytes at `at` replaced by `replacement`. */
export class DiskSplice {
	readonly byteLength: number;

	constructor(
		readonly source: DiskBytes,
		readonly at: number,
		readonly length: number,
		readonly replacement: Buffer,
	) {
		this.byteLength = source.byteLength - length + replacement.length;
	}

	/** The new bytes as one buffer (the source read again, see DiskBytes.whole). */
	whole(): Buffer {
		const old = this.source.whole();
		return Buffer.concat([old.subarray(0, this.at), this.replacement, old.subarray(this.at + this.length)]);
	}

	/** The source's excerpt with the edit made in it: the new side of the diff. */
	excerptAfter(): Buffer {
		const { start, bytes } = this.source.excerpt;
		const at = this.at - start;
		return Buffer.concat([bytes.subarray(0, at), this.replacement, bytes.subarray(at + this.length)]);
	}

	/**
	 * Writes the new bytes through `write` (in order): the source, read from `from` (opened and
	 * checked by the caller), copied around the edit a chunk at a time. Every byte read is hashed:
	 * a source that no longer has the digest the change was made on fails the write.
	 */
	async copyTo(write: (bytes: Buffer) => Promise<void>, from: ReadHandle, display: string, signal?: AbortSignal): Promise<void> {
		const end = this.at + this.length;
		const hash = createHash('sha256');
		await readChunks(from, this.source.byteLength, signal, async (chunk, offset) => {
			hash.update(chunk);
			const chunkEnd = offset + chunk.length;
			// The old bytes before the edit, the new text where the edit starts, the old bytes after it.
			if (offset < this.at) await write(chunk.subarray(0, Math.min(chunk.length, this.at - offset)));
			if (offset <= this.at && this.at < chunkEnd) await write(this.replacement);
			if (chunkEnd > end) await write(chunk.subarray(Math.max(0, end - offset)));
		}).catch(error => {
			throw error instanceof FileShrank ? changedOnDisk(display) : error;
		});
		if (hash.digest('hex') !== this.source.sha256) throw changedOnDisk(display);
	}
}

/**
 * Reads `size` bytes of an open file in order, a chunk at a time through two reused buffers,
 * handing each chunk to `visit` (it is overwritten after the visit). A file shorter than `size`
 * fails: it changed. (Reading with readSync instead measured the same here, so the event loop is
 * never held.)
 */
export async function readChunks(handle: ReadHandle, size: number, signal: AbortSignal | undefined, visit: (chunk: Buffer, offset: number) => void | Promise<void>): Promise<void> {
	// Two buffers in turn: the next chunk is read while this one is visited (hashed, searched, written).
	const length = Math.min(STREAM_CHUNK, Math.max(size, 1));
	const buffers = [Buffer.allocUnsafeSlow(length), Buffer.allocUnsafeSlow(length)];
	const readAt = (offset: number, buffer: Buffer) => handle.read(buffer, 0, Math.min(length, size - offset), offset);
	let reading = size > 0 ? readAt(0, buffers[0]) : undefined;
	for (let offset = 0, turn = 0; reading; turn ^= 1) {
		const { bytesRead, buffer } = await reading;
		if (bytesRead === 0) throw new FileShrank();
		const next = offset + bytesRead;
		reading = next < size ? readAt(next, buffers[turn ^ 1]) : undefined;
		// A failed visit leaves no read behind it.
		try {
			throwIfAborted(signal, 'Reading the file');
			await visit(buffer.subarray(0, bytesRead), offset);
		} catch (error) {
			await reading?.catch(() => undefined);
			throw error;
		}
		offset = next;
	}
}

/** readChunks' error for a file that ended before its size: it changed while it was read. */
export class FileShrank extends Error {
	constructor() {
		super('The file became shorter while it was read.');
	}
}

export function sha256Of(bytes: Uint8Array): string {
	return createHash('sha256').update(bytes).digest('hex');
}

function changedOnDisk(display: string): ToolError {
	return new ToolError(
		'stale_write',
		`${display} changed on disk since you were shown the change, so the change shown no longer fits it. Nothing was written. Read it again with read_file, then redo your change on its current content.`,
		{ path: display },
	);
}
