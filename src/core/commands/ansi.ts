/**
 * Terminal output as a model should read it: escape sequences (colours, cursor moves, titles)
 * removed, CRLF made LF, carriage-return overwrites (progress bars) reduced to what a terminal
 * would finally show on that line, backspaces applied, other control characters dropped.
 */

// CSI (ESC [ … final), OSC (ESC ] … BEL or ST), DCS/SOS/PM/APC strings, two-byte ESC sequences,
// and the 8-bit CSI (0x9b). Ordered so the longer forms win.
const ESCAPES = new RegExp([
	'\\x1b\\[[0-?]*[ -/]*[@-~]',
	'\\x1b\\][^\\x07\\x1b]*(?:\\x07|\\x1b\\\\)?',
	'\\x1b[PX^_][^\\x1b]*(?:\\x1b\\\\)?',
	'\\x1b[ -/]*[0-~]',
	'\\x9b[0-?]*[ -/]*[@-~]',
].join('|'), 'g');

// Everything below space except tab and line feed (carriage return and backspace are handled first).
const OTHER_CONTROLS = /[\x00-\x08\x0b-\x1f\x7f]/g;

export function stripAnsi(text: string): string {
	return text.replace(ESCAPES, '');
}

/** See the module comment. Lines keep their order; nothing is reflowed. */
export function cleanTerminalText(text: string): string {
	const stripped = stripAnsi(text).replace(/\r+\n/g, '\n');
	return stripped
		.split('\n')
		.map(line => applyBackspaces(lastOverwrite(line)).replace(OTHER_CONTROLS, ''))
		.join('\n');
}

/** `50%\r100%` shows `100%`: the text after the last carriage return, over what it did not cover. */
function lastOverwrite(line: string): string {
	if (!line.includes('\r')) return line;
	const parts = line.split('\r');
	let shown = '';
	for (const part of parts) shown = part + shown.slice(part.length);
	return shown;
}

function applyBackspaces(line: string): string {
	if (!line.includes('\b')) return line;
	const out: string[] = [];
	for (const char of line) {
		if (char === '\b') out.pop();
		else out.push(char);
	}
	return out.join('');
}
