import * as fs from 'node:fs';
import { fromNodeError, throwIfAborted } from '../results/errors';
import { LineIndex } from './lineIndex';
import { newlineScanBuffer } from './newlines';
import type { ReadHandle } from './verifiedOpen';

/** Files above this size are never scanned whole just to count their lines. */
export const LINE_COUNT_LIMIT = 64 * 1024 * 1024;
const CHUNK = 256 * 1024;
/** Lines before a window are skipped in chunks this big, on raw bytes. */
const SKIP_CHUNK = 1024 * 1024;
const SNIFF_BYTES = 8192;

export type Sniffed = { kind: 'text' } | { kind: 'binary' } | { kind: 'image'; mimeType: string; format: string };

/** Images by their magic bytes, then binary by NUL bytes or more than 10% control characters. */
export function sniff(head: Uint8Array): Sniffed {
	const image = imageFormat(head);
	if (image) return { kind: 'image', ...image };
	return looksBinary(head) ? { kind: 'binary' } : { kind: 'text' };
}

function imageFormat(b: Uint8Array): { mimeType: string; format: string } | undefined {
	const starts = (bytes: number[], at = 0) => bytes.every((byte, i) => b[at + i] === byte);
	if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { mimeType: 'image/png', format: 'png' };
	if (starts([0xff, 0xd8, 0xff])) return { mimeType: 'image/jpeg', format: 'jpeg' };
	if (starts([0x47, 0x49, 0x46, 0x38])) return { mimeType: 'image/gif', format: 'gif' };
	if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return { mimeType: 'image/webp', format: 'webp' };
	return undefined;
}

export function looksBinary(head: Uint8Array): boolean {
	const sample = head.subarray(0, SNIFF_BYTES);
	if (sample.length === 0) return false;
	// A native search for NUL, then an indexed loop: an iterator over every byte of every file a
	// patch touches showed up in its profile.
	if (sample.indexOf(0) !== -1) return true;
	let control = 0;
	for (let index = 0; index < sample.length; index++) {
		const byte = sample[index];
		// Tab, line feed, form feed, carriage return and escape are ordinary in text files.
		if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0c && byte !== 0x0d && byte !== 0x1b) control++;
	}
	return control / sample.length > 0.1;
}

/** A path's stat, or the model-facing error for why there is none (missing, permission, …). */
export async function statOrExplain(absolute: string, display: string): Promise<fs.Stats> {
	try {
		return await fs.promises.stat(absolute);
	} catch (error) {
		throw fromNodeError(error, display);
	}
}

/** A sortable, file-name-safe UTC time: `20261121-093001`, or with `ms`, `20261121-093001-123`. */
export function compactStamp(time: number | Date, ms = false): string {
	const iso = new Date(time).toISOString().replace(/[-:]/g, '').replace('T', '-');
	return ms ? iso.replace('.', '-').replace('Z', '') : iso.slice(0, 15);
}

/*
 * The reads below take a file opened and checked by openForReading (verifiedOpen.ts), never a path:
 * what they read is what the boundary saw.
 */
type Handle = ReadHandle;

/** The first bytes of a file (enough to sniff it). */
export function readHead(handle: Handle, bytes = SNIFF_BYTES): Promise<Buffer> {
	return readRange(handle, 0, bytes);
}

export async function readRange(handle: Handle, start: number, length: number): Promise<Buffer> {
	const buffer = Buffer.alloc(length);
	const { bytesRead } = await handle.read(buffer, 0, length, start);
	return buffer.subarray(0, bytesRead);
}

/**
 * Reads up to this size are made from this thread: a file this small comes from the page cache
 * (or one disk read) in microseconds, less than a round trip through the I/O threads, which a
 * change set of many files would make for each. Bigger reads go there, keeping the event loop free.
 */
export const SYNC_READ_BYTES = 256 * 1024;

/** Reads into `buffer` at `offset` from the file's `position`: in place when `inPlace` (see SYNC_READ_BYTES). */
export async function readAt(handle: Handle, buffer: Buffer, offset: number, length: number, position: number, inPlace: boolean): Promise<number> {
	return inPlace ? fs.readSync(handle.fd, buffer, offset, length, position) : (await handle.read(buffer, offset, length, position)).bytesRead;
}

/** The whole file (callers bound its size first). */
export async function readWhole(handle: Handle, size: number): Promise<Buffer> {
	// Not zero-filled first (a 50 MB file would be written twice), and never a slice of the shared
	// pool: its memory holds the file and nothing else (the tail is cleared if the file shrank).
	const buffer = Buffer.allocUnsafeSlow(size);
	const inPlace = size <= SYNC_READ_BYTES;
	let filled = 0;
	while (filled < size) {
		const bytesRead = await readAt(handle, buffer, filled, size - filled, filled, inPlace);
		if (bytesRead === 0) break;
		filled += bytesRead;
	}
	buffer.fill(0, filled);
	return buffer.subarray(0, filled);
}

/** Lines of text, 1-based, as a read window returns them. */
export interface LineWindow {
	/** Line number of lines[0]; undefined when unknown (tail of a file too large to count). */
	readonly firstLine: number | undefined;
	readonly lines: string[];
	/** Total lines in the file, when counted. */
	readonly totalLines: number | undefined;
	/** True when lines follow the window (forward reads) or precede it (tail reads). */
	readonly more: boolean;
	/** Set when the byte budget (not the line limit) ended the window. */
	readonly stoppedByBytes: boolean;
	/** Set when a line was too long to hold whole and only its start (or end) was kept. */
	readonly partialLine: boolean;
}

export interface WindowOptions {
	/** 1-based first line. */
	readonly start: number;
	readonly maxLines: number;
	/** Budget for the text of the kept lines (UTF-8 bytes). */
	readonly maxBytes: number;
	/** A single line longer than this many bytes is kept only in part. */
	readonly maxLineBytes: number;
	/** Bytes each kept line costs on top of its text (a line-number prefix), counted in maxBytes. */
	readonly lineOverhead?: number;
	readonly signal?: AbortSignal;
}

export function splitLines(text: string): string[] {
	if (text.length === 0) return [];
	const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	const lines = body.split('\n');
	if (lines[lines.length - 1] === '') lines.pop();
	return lines.map(stripCR);
}

function stripCR(line: string): string {
	return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** A window of an in-memory text (an editor's unsaved buffer, or a small file). */
export function windowOfText(text: string, options: WindowOptions): LineWindow {
	return windowOfLines(splitLines(text), options);
}

export function windowOfLines(all: string[], options: WindowOptions): LineWindow {
	const lines: string[] = [];
	let bytes = 0;
	let stoppedByBytes = false;
	let index = options.start - 1;
	for (; index < all.length && lines.length < options.maxLines; index++) {
		const size = Buffer.byteLength(all[index]) + 1 + (options.lineOverhead ?? 0);
		if (lines.length > 0 && bytes + size > options.maxBytes) {
			stoppedByBytes = true;
			break;
		}
		lines.push(all[index]);
		bytes += size;
	}
	return { firstLine: options.start, lines, totalLines: all.length, more: index < all.length, stoppedByBytes, partialLine: false };
}

/**
 * Reads lines [start, start+maxLines) from a file without loading it: the lines before the window
 * are skipped on raw bytes (from the nearest checkpoint of `index`, when the file was read before),
 * then chunks are decoded as they come and reading stops once the window is full. The total is
 * counted (by a newline scan) only when the file is small enough for that to be cheap.
 */
export async function readWindowForward(handle: Handle, size: number, options: WindowOptions, index?: LineIndex): Promise<LineWindow> {
	const skipped = await skipToLine(handle, size, options.start, options.signal, index);
	const decoder = new TextDecoder('utf-8');
	const buffer = Buffer.alloc(CHUNK);
	const lines: string[] = [];
	let keptBytes = 0;
	let lineNumber = skipped.line;
	let current = '';
	let currentBytes = 0;
	let lineHasChars = false;
	let partialLine = false;
	let stoppedByBytes = false;
	let full = false;
	let more = false;
	let position = skipped.byte;

	/** Ends the line being assembled; false when the window has no room for it. */
	const completeLine = (): boolean => {
		if (lineNumber >= options.start) {
			const line = stripCR(current);
			const lineBytes = Buffer.byteLength(line) + 1 + (options.lineOverhead ?? 0);
			if (lines.length > 0 && keptBytes + lineBytes > options.maxBytes) {
				stoppedByBytes = true;
				return false;
			}
			lines.push(line);
			keptBytes += lineBytes;
		}
		lineNumber++;
		current = '';
		currentBytes = 0;
		lineHasChars = false;
		return lines.length < options.maxLines;
	};

	reading: while (position < size) {
		throwIfAborted(options.signal, 'The read');
		const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
		if (bytesRead === 0) break;
		let text = decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
		if (position === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
		position += bytesRead;
		let from = 0;
		for (;;) {
			const newline = text.indexOf('\n', from);
			const piece = newline === -1 ? text.slice(from) : text.slice(from, newline);
			if (piece.length) lineHasChars = true;
			if (lineNumber >= options.start) {
				// Hold at most maxLineBytes of one line: a 1 GB line must not be held whole.
				if (currentBytes < options.maxLineBytes) {
					current += piece;
					currentBytes += Buffer.byteLength(piece);
				} else if (piece.length) {
					partialLine = true;
				}
			}
			if (newline === -1) break;
			if (!completeLine()) {
				full = true;
				more = stoppedByBytes || newline + 1 < text.length || position < size;
				break reading;
			}
			from = newline + 1;
		}
	}
	if (!full && lineHasChars) completeLine();
	let totalLines: number | undefined;
	if (!full) totalLines = lineNumber - 1;
	else if (size <= LINE_COUNT_LIMIT) totalLines = index?.totalLines ?? await countAllLines(handle, size, options.signal);
	if (index && totalLines !== undefined) index.totalLines = totalLines;
	return { firstLine: options.start, lines, totalLines, more, stoppedByBytes, partialLine };
}

/**
 * Where line `start` begins, found by counting newlines a megabyte at a time without decoding; or,
 * in a file with fewer lines, its end (with the line after its end as `line`). Each chunk passed leaves a checkpoint in
 * `index` (the start of the first line after the chunk's last newline).
 */
async function skipToLine(handle: Handle, size: number, start: number, signal: AbortSignal | undefined, index?: LineIndex): Promise<{ byte: number; line: number }> {
	const from = index?.before(start) ?? { byte: 0, newlines: 0 };
	const wanted = start - 1;
	let newlines = from.newlines;
	let lineStart = from.byte;
	if (newlines >= wanted) return { byte: lineStart, line: newlines + 1 };
	// The chunks are read where their newlines are counted (see newlines.ts).
	const scan = newlineScanBuffer(Math.min(SKIP_CHUNK, Math.max(size - lineStart, 4)));
	const buffer = scan.bytes;
	for (let position = lineStart; newlines < wanted && position < size;) {
		throwIfAborted(signal, 'The read');
		const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
		if (bytesRead === 0) break;
		const inChunk = scan.count(0, bytesRead);
		if (newlines + inChunk < wanted) {
			if (inChunk > 0) {
				newlines += inChunk;
				lineStart = position + buffer.lastIndexOf(0x0a, bytesRead - 1) + 1;
				index?.record(lineStart, newlines);
			}
			position += bytesRead;
			continue;
		}
		let at = 0;
		for (; newlines < wanted; newlines++) at = buffer.indexOf(0x0a, at) + 1;
		lineStart = position + at;
		index?.record(lineStart, newlines);
	}
	// Past the end: the lines are counted. What follows the last newline is one more line (no BOM
	// can be there), so a last line of a gigabyte is not read a second time.
	if (newlines < wanted && lineStart > 0) return { byte: size, line: newlines + 1 + (lineStart < size ? 1 : 0) };
	return { byte: lineStart, line: newlines + 1 };
}

/**
 * The last `count` lines of a file, read backwards from the end in chunks, so the cost follows
 * the lines asked for, not the file. Line numbers are given only when the file is small enough to
 * count its lines cheaply.
 */
export async function readWindowBackward(
	handle: Handle,
	size: number,
	count: number,
	options: Omit<WindowOptions, 'start' | 'maxLines'>,
): Promise<LineWindow> {
	if (size === 0) return { firstLine: 1, lines: [], totalLines: 0, more: false, stoppedByBytes: false, partialLine: false };
	const chunks: Buffer[] = [];
	let held = 0;
	let position = size;
	let newlines = 0;
	// One more newline than lines wanted marks where the first wanted line starts; a final
	// newline at the end of the file ends the last line and is not counted.
	let trailingNewline = false;
	const budget = options.maxBytes + options.maxLineBytes;
	while (position > 0 && newlines <= count && held < budget) {
		throwIfAborted(options.signal, 'The read');
		const length = Math.min(CHUNK, position);
		position -= length;
		const chunk = Buffer.alloc(length);
		await handle.read(chunk, 0, length, position);
		if (position + length === size && chunk[length - 1] === 0x0a) trailingNewline = true;
		for (let i = 0; i < length; i++) if (chunk[i] === 0x0a) newlines++;
		if (trailingNewline && position + length === size) newlines--;
		chunks.unshift(chunk);
		held += length;
	}
	const reachedStart = position === 0;
	let text = decodeFromBoundary(Buffer.concat(chunks), !reachedStart);
	if (reachedStart && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
	if (trailingNewline) text = text.slice(0, -1);
	let all = text.split('\n').map(stripCR);
	// When the scan stopped inside a line, the first piece is a line's end, not a whole line.
	const startsMidLine = !reachedStart;
	if (startsMidLine) all = all.slice(1);
	let partialLine = false;
	if (all.length === 0 && startsMidLine) {
		// A single line longer than the budget: keep its end.
		all = [text];
		partialLine = true;
	}
	let lines = all.slice(-count);
	let stoppedByBytes = false;
	const cost = (line: string) => Buffer.byteLength(line) + 1 + (options.lineOverhead ?? 0);
	let bytes = lines.reduce((sum, line) => sum + cost(line), 0);
	while (lines.length > 1 && bytes > options.maxBytes) {
		bytes -= cost(lines[0]);
		lines = lines.slice(1);
		stoppedByBytes = true;
	}
	const precedingInBuffer = all.length - lines.length;
	const more = precedingInBuffer > 0 || !reachedStart;
	let totalLines: number | undefined;
	let firstLine: number | undefined;
	if (reachedStart) {
		totalLines = all.length;
		firstLine = totalLines - lines.length + 1;
	} else if (size <= LINE_COUNT_LIMIT) {
		totalLines = await countAllLines(handle, size, options.signal);
		firstLine = totalLines - lines.length + 1;
	}
	return { firstLine, lines, totalLines, more, stoppedByBytes, partialLine };
}

/** Decodes bytes that may start inside a UTF-8 sequence: the stray continuation bytes are skipped. */
function decodeFromBoundary(bytes: Buffer, mayStartMidChar: boolean): string {
	let start = 0;
	if (mayStartMidChar) while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
	return new TextDecoder('utf-8').decode(bytes.subarray(start));
}

export async function countAllLines(handle: Handle, size: number, signal?: AbortSignal): Promise<number> {
	if (size === 0) return 0;
	const scan = newlineScanBuffer(CHUNK);
	const buffer = scan.bytes;
	let newlines = 0;
	let position = 0;
	let last = 0x0a;
	while (position < size) {
		throwIfAborted(signal, 'The read');
		const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
		if (bytesRead === 0) break;
		position += bytesRead;
		newlines += scan.count(0, bytesRead);
		last = buffer[bytesRead - 1];
	}
	return newlines + (last === 0x0a ? 0 : 1);
}
