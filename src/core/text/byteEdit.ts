import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { looksBinary } from '../files/files';
import { SplicedBytes } from '../files/splicedBytes';
import { DiskBytes, DiskSplice, Excerpt, FileShrank, readChunks, STREAM_CHUNK } from '../files/diskBytes';
import { countNewlines } from '../files/newlines';
import type { ReadHandle } from '../files/verifiedOpen';
import { DEFAULT_FORMAT, fitToFormat, hasBom } from './text';

/**
 * Exact replacements done on a file's bytes, for the common case of edit_file: valid UTF-8 with LF
 * line endings, each oldText found exactly (once, or every time with replaceAll). A 50 MB file is
 * then searched with memmem and not copied: the result is the old bytes cut into pieces around
 * the new text (see SplicedBytes; joined only past MAX_PIECES), never decoded to a string and encoded back.
 *
 * UTF-8 is self-synchronising, so the byte occurrences of a needle are exactly its character
 * occurrences in the decoded text, and the bytes out are those the text path would encode.
 * Anything else (CR bytes, invalid UTF-8, a binary file, no exact match, an ambiguous one)
 * returns undefined: the text path then does the work and says what went wrong.
 */

export interface ByteEdit {
	readonly oldText: string;
	readonly newText: string;
	readonly replaceAll?: boolean;
}

export interface ByteEdited {
	/** Pieces of the old bytes while the edits are few, else one new buffer (see MAX_PIECES). */
	readonly after: Uint8Array | SplicedBytes;
	/** Occurrences replaced, per edit. */
	readonly counts: number[];
}

const CR = 0x0d;
const NEWLINE = 0x0a;

/**
 * Past this many pieces the bytes are joined into one buffer: pieces pay off for a few edits in a
 * big file, but every search and write walks them all, so a replaceAll with thousands of matches
 * would be quadratic (and written one small piece at a time).
 */
const MAX_PIECES = 256;

export function replaceExactBytes(before: Uint8Array, edits: readonly ByteEdit[]): ByteEdited | undefined {
	let bytes = SplicedBytes.of(before);
	const original = bytes.base;
	// CRLF files have their line endings fitted into the model's text: the text path handles them.
	if (original.includes(CR) || looksBinary(original) || !isUtf8(original)) return undefined;
	// The BOM is never part of a match: the model's text has it taken off, as the text path does.
	const start = hasBom(original) ? 3 : 0;
	const counts: number[] = [];
	for (const edit of edits) {
		const needle = Buffer.from(fitToFormat(edit.oldText, DEFAULT_FORMAT), 'utf8');
		const replacement = Buffer.from(fitToFormat(edit.newText, DEFAULT_FORMAT), 'utf8');
		if (needle.length === 0) return undefined;
		const found: number[] = [];
		for (let at = bytes.indexOf(needle, start); at !== -1; at = bytes.indexOf(needle, at + needle.length)) {
			found.push(at);
			if (found.length > 1 && !edit.replaceAll) return undefined;
		}
		if (found.length === 0) return undefined;
		bytes = bytes.pieces.length + 2 * found.length <= MAX_PIECES
			? bytes.replaced(found, needle.length, replacement)
			: SplicedBytes.of(spliced(bytes.whole(), found, needle.length, replacement));
		counts.push(found.length);
	}
	// Pieces of a joined buffer are not pieces of the old bytes: callers get the buffer itself.
	return { after: bytes.base === original ? bytes : bytes.whole(), counts };
}

/** `bytes` with `length` bytes at each offset replaced, in one allocation. */
function spliced(bytes: Buffer, offsets: readonly number[], length: number, replacement: Buffer): Buffer {
	const out = Buffer.allocUnsafe(bytes.length + offsets.length * (replacement.length - length));
	let from = 0;
	let to = 0;
	for (const offset of offsets) {
		to += bytes.copy(out, to, from, offset);
		to += replacement.copy(out, to);
		from = offset + length;
	}
	bytes.copy(out, to, from);
	return out;
}

/** Lines kept around an edit of a file left on disk, for its diff (the diff needs its context and a margin). */
const EXCERPT_LINES = 32;
/** An excerpt past this size (very long lines) is not kept: the edit is made in memory instead. */
const EXCERPT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * replaceExactBytes for one edit of a big file, without holding the file: its bytes are read once,
 * through small buffers, checked as replaceExactBytes checks them (no CR, not binary, valid
 * UTF-8), searched for the oldText, and digested. The result leaves the file on disk (DiskBytes)
 * and the new bytes as that file with one range replaced (DiskSplice). Undefined wherever
 * replaceExactBytes would not apply, or the text occurs more than once: the caller then makes the
 * edit in memory, which also says what went wrong.
 */
export async function scanExactEdit(
	file: { readonly handle: ReadHandle; readonly path: string; readonly display: string; readonly size: number },
	edit: ByteEdit,
	signal?: AbortSignal,
): Promise<{ before: DiskBytes; after: DiskSplice } | undefined> {
	const needle = Buffer.from(fitToFormat(edit.oldText, DEFAULT_FORMAT), 'utf8');
	const replacement = Buffer.from(fitToFormat(edit.newText, DEFAULT_FORMAT), 'utf8');
	// An edit that changes nothing is reported as such by the path in memory.
	if (needle.length === 0 || needle.length > STREAM_CHUNK / 2 || needle.equals(replacement)) return undefined;
	const scan = new ExactScan(needle);
	try {
		await readChunks(file.handle, file.size, signal, (chunk, offset) => scan.take(chunk, offset, offset + chunk.length === file.size));
	} catch (error) {
		// A file that shrank while it was read is read again in memory (which sees what it is now).
		if (error instanceof NotForBytes || error instanceof FileShrank) return undefined;
		throw error;
	}
	if (scan.found === undefined) return undefined;
	const excerpt = await excerptAround(file.handle, file.size, scan.found, needle.length);
	if (!excerpt) return undefined;
	const before = new DiskBytes(file.path, file.display, file.size, scan.digest(), { ...excerpt, lines: excerpt.lines + await newlinesBefore(file.handle, scan, excerpt.start) });
	return { before, after: new DiskSplice(before, scan.found, needle.length, replacement) };
}

/** Thrown inside a scan to stop it: the bytes are not for the byte path. */
class NotForBytes extends Error {}

/**
 * The running state of scanExactEdit. Chunks arrive in order and are searched where they are (no
 * copy); a match that starts in one chunk and ends in the next is looked for in a seam of a few
 * bytes (the needle's length less one from each side), and a UTF-8 character cut by the chunk's end
 * is checked with the next chunk's first bytes.
 */
class ExactScan {
	found: number | undefined;
	/** Line endings counted before each chunk, up to the one holding the match. */
	readonly marks: { offset: number; newlines: number }[] = [];
	private readonly hash = createHash('sha256');
	/** The last bytes before the chunk: the needle's length less one. */
	private tail = Buffer.alloc(0);
	/** A character the chunk before ended in the middle of. */
	private cutCharacter = Buffer.alloc(0);
	/** File offset from which a match may start (after a BOM; after the match found; past what was searched). */
	private searchFrom = 0;
	private newlines = 0;

	constructor(private readonly needle: Buffer) {}

	take(chunk: Buffer, offset: number, last: boolean): void {
		this.hash.update(chunk);
		if (chunk.includes(CR)) throw new NotForBytes();
		if (offset === 0) {
			if (looksBinary(chunk)) throw new NotForBytes();
			if (hasBom(chunk)) this.searchFrom = 3;
		}
		if (this.found === undefined) {
			this.marks.push({ offset, newlines: this.newlines });
			this.newlines += countNewlines(chunk, 0, chunk.length);
		}
		this.checkUtf8(chunk, last);
		this.search(chunk, offset);
		const keep = this.needle.length - 1;
		const joined = chunk.length >= keep ? chunk : Buffer.concat([this.tail, chunk]);
		this.tail = Buffer.from(joined.subarray(joined.length - keep));
	}

	digest(): string {
		return this.hash.digest('hex');
	}

	private checkUtf8(chunk: Buffer, last: boolean): void {
		let from = 0;
		if (this.cutCharacter.length > 0) {
			while (from < Math.min(3, chunk.length) && (chunk[from] & 0xc0) === 0x80) from++;
			if (!isUtf8(Buffer.concat([this.cutCharacter, chunk.subarray(0, from)]))) throw new NotForBytes();
		}
		const whole = last ? chunk.length : Math.max(from, wholeCharacters(chunk));
		if (!isUtf8(chunk.subarray(from, whole))) throw new NotForBytes();
		this.cutCharacter = Buffer.from(chunk.subarray(whole));
	}

	private search(chunk: Buffer, offset: number): void {
		const length = this.needle.length;
		if (this.tail.length > 0) {
			// Matches that start in the tail of the chunk before and end in this one.
			const seam = Buffer.concat([this.tail, chunk.subarray(0, length - 1)]);
			const seamStart = offset - this.tail.length;
			for (let at = seam.indexOf(this.needle, Math.max(0, this.searchFrom - seamStart)); at !== -1 && at < this.tail.length; at = seam.indexOf(this.needle, at + length)) {
				this.record(seamStart + at);
			}
		}
		for (let at = chunk.indexOf(this.needle, Math.max(0, this.searchFrom - offset)); at !== -1; at = chunk.indexOf(this.needle, at + length)) this.record(offset + at);
		// Every start up to here was looked at; one nearer the end may run on into the next chunk.
		this.searchFrom = Math.max(this.searchFrom, offset + chunk.length - length + 1);
	}

	private record(at: number): void {
		// A second occurrence: replaceExactBytes cuts many, or the text path says it is ambiguous.
		if (this.found !== undefined) throw new NotForBytes();
		this.found = at;
		this.searchFrom = at + this.needle.length;
	}
}

/** How many bytes at the start of `bytes` are whole UTF-8 characters (a character cut at the end is left out). */
function wholeCharacters(bytes: Buffer): number {
	for (let back = 1; back <= Math.min(4, bytes.length); back++) {
		const byte = bytes[bytes.length - back];
		if (byte < 0x80) return bytes.length - back + 1;
		if (byte >= 0xc0) {
			const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
			return back < length ? bytes.length - back : bytes.length;
		}
	}
	return bytes.length;
}

/**
 * The lines around bytes [at, at + length) of an open file: EXCERPT_LINES whole lines before the
 * line it starts in and after the line it ends in, or up to the file's ends. `lines` counts only
 * the line endings inside what was read here (newlinesBefore adds those before it).
 */
async function excerptAround(handle: ReadHandle, size: number, at: number, length: number): Promise<(Omit<Excerpt, 'lines'> & { lines: 0 }) | undefined> {
	for (let reach = 64 * 1024; reach <= EXCERPT_MAX_BYTES; reach *= 4) {
		const from = Math.max(0, at - reach);
		const to = Math.min(size, at + length + reach);
		const bytes = Buffer.allocUnsafe(to - from);
		for (let filled = 0; filled < bytes.length;) {
			const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, from + filled);
			if (bytesRead === 0) return undefined;
			filled += bytesRead;
		}
		// Back from the edit: the line ending before its line, then EXCERPT_LINES more.
		let start = at - from;
		let back = 0;
		while (back <= EXCERPT_LINES && start > 0) {
			const newline = bytes.lastIndexOf(NEWLINE, start - 1);
			if (newline === -1) break;
			start = newline;
			back++;
		}
		const startReached = back > EXCERPT_LINES ? start + 1 : from === 0 ? 0 : -1;
		// On from the edit's end: the line ending that ends its line, then EXCERPT_LINES more.
		let end = at + length - from;
		let ahead = 0;
		while (ahead <= EXCERPT_LINES && end < bytes.length) {
			const newline = bytes.indexOf(NEWLINE, end);
			if (newline === -1) break;
			end = newline + 1;
			ahead++;
		}
		const endReached = ahead > EXCERPT_LINES ? end : to === size ? bytes.length : -1;
		if (startReached === -1 || endReached === -1) continue;
		return { start: from + startReached, bytes: Buffer.from(bytes.subarray(startReached, endReached)), lines: 0, linesAround: EXCERPT_LINES };
	}
	return undefined;
}

/** Line endings in the file before `offset` (within the part the scan counted, read again from its last mark). */
async function newlinesBefore(handle: ReadHandle, scan: ExactScan, offset: number): Promise<number> {
	let mark = scan.marks[0];
	for (const candidate of scan.marks) if (candidate.offset <= offset) mark = candidate;
	const bytes = Buffer.allocUnsafe(offset - mark.offset);
	for (let filled = 0; filled < bytes.length;) {
		const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, mark.offset + filled);
		if (bytesRead === 0) break;
		filled += bytesRead;
	}
	return mark.newlines + countNewlines(bytes, 0, bytes.length);
}
