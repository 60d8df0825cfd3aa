import { isUtf8 } from 'node:buffer';
import { ToolError } from '../results/errors';
import { looksBinary } from '../files/files';
import { formatBytes } from '../results/truncate';

/**
 * The shape of a text file that a change must keep: BOM, line endings and whether the last line
 * ends in a newline. Tools decode a file with `decodeText`, work on the text, and encode the result
 * with `encodeText`; the bytes they did not mean to change stay as they were.
 */

export type Eol = '\n' | '\r\n';

export interface TextFormat {
	/** The file starts with a UTF-8 byte order mark. */
	readonly bom: boolean;
	/** The dominant line ending (LF when the file has none). New lines are written with it. */
	readonly eol: Eol;
	/** Both LF and CRLF occur. */
	readonly mixedEol: boolean;
	/** The text ends with a line ending (false for an empty text). */
	readonly finalNewline: boolean;
}

export const DEFAULT_FORMAT: TextFormat = { bom: false, eol: '\n', mixedEol: false, finalNewline: false };

const BOM = '\ufeff';
const BOM_BYTES = [0xef, 0xbb, 0xbf];

/** Line endings of a text (BOM or not): the dominant one, ties going to LF. */
export function detectFormat(text: string): TextFormat {
	const bom = text.startsWith(BOM);
	let crlf = 0;
	let lf = 0;
	for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
		if (at > 0 && text.charCodeAt(at - 1) === 13) crlf++;
		else lf++;
	}
	return {
		bom,
		eol: crlf > lf ? '\r\n' : '\n',
		mixedEol: crlf > 0 && lf > 0,
		finalNewline: text.endsWith('\n'),
	};
}


export function hasBom(bytes: Uint8Array): boolean {
	return bytes.length >= 3 && BOM_BYTES.every((byte, i) => bytes[i] === byte);
}

export interface DecodedText {
	/** The text without its BOM, line endings as in the file. */
	readonly text: string;
	readonly format: TextFormat;
}

/**
 * Decodes UTF-8 strictly: undefined when the bytes are not valid UTF-8, since editing such a
 * file as text would replace the invalid bytes everywhere, not only where the edit is.
 */
export function decodeText(bytes: Uint8Array): DecodedText | undefined {
	const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	// isUtf8 validates with SIMD where Node has it; a fatal TextDecoder is several times slower.
	if (!isUtf8(buffer)) return undefined;
	const text = buffer.toString('utf8');
	const format = detectFormat(text);
	return { text: format.bom ? text.slice(1) : text, format };
}

/**
 * The text of a file a tool is about to change as text, or the reason it cannot be: binary, or not
 * UTF-8 (both would be corrupted). `doing` names the change ("edited as text"), `instead` the way out.
 */
export function decodeChangeableText(bytes: Uint8Array, display: string, doing: string, instead: string): DecodedText {
	const decoded = looksBinary(bytes) ? undefined : decodeText(bytes);
	if (decoded) return decoded;
	const what = looksBinary(bytes) ? `a binary file (${formatBytes(bytes.byteLength)})` : 'not valid UTF-8 text (another encoding?)';
	throw new ToolError('binary_file', `${display} is ${what}: it cannot be ${doing} without corrupting it. Nothing was written. ${instead}`);
}

/** Text (without BOM) to bytes, with the BOM when the format has one. */
export function encodeText(text: string, format: Pick<TextFormat, 'bom'>): Uint8Array {
	const body = Buffer.from(text, 'utf8');
	if (!format.bom) return body;
	const out = Buffer.allocUnsafe(body.length + 3);
	out.set(BOM_BYTES, 0);
	out.set(body, 3);
	return out;
}

/** Every line ending (LF, CRLF, lone CR is left alone) as `eol`. */
export function withEol(text: string, eol: Eol): string {
	return eol === '\n' ? text.replace(/\r\n/g, '\n') : text.replace(/\r?\n/g, '\r\n');
}

/** Text a model wrote, made to fit a file's format: its line endings, and its BOM is the file's business. */
export function fitToFormat(text: string, format: TextFormat): string {
	const body = text.startsWith(BOM) ? text.slice(1) : text;
	return withEol(body, format.eol);
}

/** Adds the format's line ending at the end when the text does not end with one. */
export function ensureFinalNewline(text: string, eol: Eol): string {
	return text === '' || text.endsWith('\n') ? text : text + eol;
}

/** 1-based line number of a character offset in a text. */
export function lineAt(text: string, offset: number): number {
	let line = 1;
	for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) line++;
	return line;
}

/** 1-based line numbers of several sorted offsets, in one pass. */
export function linesAt(text: string, offsets: readonly number[]): number[] {
	const result: number[] = [];
	let line = 1;
	let at = text.indexOf('\n');
	for (const offset of offsets) {
		while (at !== -1 && at < offset) {
			line++;
			at = text.indexOf('\n', at + 1);
		}
		result.push(line);
	}
	return result;
}

/**
 * A text's lines with where each starts and where its content ends (before `\r\n` or `\n`), so a
 * located block of lines maps back to exact character offsets.
 */
export interface LineTable {
	readonly lines: string[];
	/** Offset of each line's first character. */
	readonly starts: number[];
	/** Offset just after each line's content (its line ending excluded). */
	readonly ends: number[];
}

export function lineTable(text: string): LineTable {
	const lines: string[] = [];
	const starts: number[] = [];
	const ends: number[] = [];
	let start = 0;
	for (;;) {
		const newline = text.indexOf('\n', start);
		const stop = newline === -1 ? text.length : newline;
		const end = stop > start && text.charCodeAt(stop - 1) === 13 ? stop - 1 : stop;
		if (newline === -1 && start === text.length && lines.length > 0) break;
		lines.push(text.slice(start, end));
		starts.push(start);
		ends.push(end);
		if (newline === -1) break;
		start = newline + 1;
	}
	return { lines, starts, ends };
}
