import { looksBinary } from '../files/files';
import { decodeText, encodeText, Eol } from '../text/text';
import { PatchApplyError } from './model';

/**
 * A text file as lines, keeping what a patch must not disturb: each line's own ending (so a file
 * with mixed endings keeps them), the byte order mark and whether the last line ends with a
 * newline. Lines are compared without their endings; added lines get the file's usual ending.
 */
export interface FileLines {
	readonly bom: boolean;
	/** The ending most lines use; what added lines get. */
	readonly eol: Eol;
	readonly lines: string[];
	/** `endings[i]` follows `lines[i]`: '\n', '\r\n', or '' for a last line without a newline. */
	readonly endings: string[];
}

export function decodeFileLines(bytes: Uint8Array, display: string): FileLines {
	if (looksBinary(bytes.subarray(0, 8192))) {
		throw new PatchApplyError(`${display} is a binary file; apply_patch changes text files only. Write binary content with write_file and encoding "base64". Nothing was changed.`, { path: display });
	}
	const decoded = decodeText(bytes);
	if (!decoded) {
		throw new PatchApplyError(`${display} is not valid UTF-8 text, so patching it could not keep its other bytes intact. Nothing was changed; edit it another way or convert it to UTF-8 first.`, { path: display });
	}
	return splitFileLines(decoded.text, decoded.format.bom, decoded.format.eol);
}

/** Splits text (without BOM) into lines and their endings. */
export function splitFileLines(text: string, bom: boolean, eol: Eol): FileLines {
	const lines: string[] = [];
	const endings: string[] = [];
	let start = 0;
	while (start < text.length) {
		const newline = text.indexOf('\n', start);
		if (newline === -1) {
			lines.push(text.slice(start));
			endings.push('');
			break;
		}
		const crlf = newline > start && text.charCodeAt(newline - 1) === 13;
		lines.push(text.slice(start, crlf ? newline - 1 : newline));
		endings.push(crlf ? '\r\n' : '\n');
		start = newline + 1;
	}
	return { bom, eol, lines, endings };
}

/** True for an empty file too: lines added to it end with a newline. */
export function hasFinalNewline(file: FileLines): boolean {
	return file.endings.length === 0 || file.endings[file.endings.length - 1] !== '';
}

export function encodeFileLines(file: FileLines): Uint8Array {
	const parts: string[] = [];
	for (let i = 0; i < file.lines.length; i++) parts.push(file.lines[i], file.endings[i]);
	return encodeText(parts.join(''), file);
}

/**
 * The lines of the file's bytes as line counts compare them (diff.ts linesOf: a CRLF line keeps
 * its '\r', a last line without an ending is marked with '\n'). An empty last line without an
 * ending (a patch can leave one) is no line in the bytes, so none here either.
 */
export function lineKeys(file: FileLines): string[] {
	const keys = file.lines.map((line, index) => {
		const ending = file.endings[index];
		return ending === '\n' ? line : ending === '\r\n' ? `${line}\r` : `${line}\n`;
	});
	if (keys[keys.length - 1] === '\n') keys.pop();
	return keys;
}

/** A new file from its lines: LF endings, no BOM. */
export function newFileLines(lines: readonly string[], finalNewline: boolean): FileLines {
	const endings = lines.map(() => '\n');
	if (!finalNewline && endings.length > 0) endings[endings.length - 1] = '';
	return { bom: false, eol: '\n', lines: [...lines], endings };
}
