import { isUtf8 } from 'node:buffer';
import { looksBinary } from '../files/files';
import { SplicedBytes } from '../files/splicedBytes';
import { DEFAULT_FORMAT, fitToFormat, hasBom } from './text';

/**
 * Exact replacements done on a file's bytes, for the common case of edit_file: valid UTF-8 with LF
 * line endings, each oldText found exactly (once, or every time with replaceAll). A 50 MB file is
 * then searched with memmem and never copied: the result is the old bytes cut into pieces around
 * the new text (see SplicedBytes), never decoded to a string and encoded back.
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
	readonly after: SplicedBytes;
	/** Occurrences replaced, per edit. */
	readonly counts: number[];
}

const CR = 0x0d;

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
		bytes = bytes.replaced(found, needle.length, replacement);
		counts.push(found.length);
	}
	return { after: bytes, counts };
}
