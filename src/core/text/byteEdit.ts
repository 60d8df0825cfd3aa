import { isUtf8 } from 'node:buffer';
import { looksBinary } from '../files/files';
import { FileBytes, SplicedBytes } from '../files/splicedBytes';
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
	readonly after: FileBytes;
	/** Occurrences replaced, per edit. */
	readonly counts: number[];
}

const CR = 0x0d;

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
