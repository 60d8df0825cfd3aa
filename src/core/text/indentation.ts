/**
 * The block around a line by indentation, for reading one function or section without knowing
 * the language: from the nearest enclosing header (a less-indented line above) through the end
 * of its body, plus a closing line at the header's level (`}`, `end`, `)`).
 */
export function indentationBlock(lines: readonly string[], anchor: number): { start: number; end: number } {
	const indentAt = (i: number) => indentOf(lines[i]);
	let anchorLine = anchor;
	// A blank anchor takes the indentation of the next non-blank line.
	while (anchorLine < lines.length - 1 && isBlank(lines[anchorLine])) anchorLine++;
	const anchorIndent = indentAt(anchorLine);

	// If the anchor opens a block (the next non-blank line is deeper), it is the header itself.
	const next = nextNonBlank(lines, anchorLine + 1);
	let header = anchorLine;
	if (next === -1 || indentAt(next) <= anchorIndent) {
		header = -1;
		for (let i = anchorLine - 1; i >= 0; i--) {
			if (!isBlank(lines[i]) && indentAt(i) < anchorIndent) {
				header = i;
				break;
			}
		}
		if (header === -1) return { start: 0, end: lines.length - 1 };
	}
	// Decorators, attributes and doc comments directly above at the header's level belong to it.
	const headerIndent = indentAt(header);
	let start = header;
	while (start > 0 && !isBlank(lines[start - 1]) && indentAt(start - 1) === headerIndent && isPreamble(lines[start - 1])) start--;

	let end = header;
	for (let i = header + 1; i < lines.length; i++) {
		if (isBlank(lines[i])) continue;
		if (indentAt(i) <= headerIndent) {
			if (isCloser(lines[i])) end = i;
			break;
		}
		end = i;
	}
	return { start, end };
}

function indentOf(line: string): number {
	let width = 0;
	for (const ch of line) {
		if (ch === ' ') width++;
		else if (ch === '\t') width += 4 - (width % 4);
		else break;
	}
	return width;
}

function isBlank(line: string): boolean {
	return line.trim().length === 0;
}

function nextNonBlank(lines: readonly string[], from: number): number {
	for (let i = from; i < lines.length; i++) if (!isBlank(lines[i])) return i;
	return -1;
}

function isCloser(line: string): boolean {
	return /^\s*([}\])]+[;,)]*|end\b|fi\b|done\b|esac\b|#endregion)/.test(line);
}

function isPreamble(line: string): boolean {
	return /^\s*(@|#\[|\/\/\/|\/\*\*|\*|"""|\/\/)/.test(line);
}
