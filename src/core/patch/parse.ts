import { isCodexPatch, parseCodex } from './codex';
import { ParsedPatch, PatchParseError, PatchTextLine, showLine } from './model';
import { looksUnified, parseUnified } from './unified';

/**
 * Reads a patch in either format into the common model. What the model sends is often wrapped:
 * in a shell heredoc (`apply_patch <<'EOF' … EOF`, as Codex tolerates), in a Markdown fence, or
 * padded with blank lines. Those wrappers are removed first; line numbers in errors still count
 * from the first line of the text as sent.
 */
export function parsePatch(text: string): ParsedPatch {
	const lines = unwrap(splitPatchLines(text));
	if (lines.length === 0) {
		throw new PatchParseError(undefined, 'The patch is empty. Send a unified diff (\'--- a/<path>\', \'+++ b/<path>\', \'@@ … @@\' hunks) or a Codex patch (\'*** Begin Patch\' … \'*** End Patch\').');
	}
	if (isCodexPatch(lines)) return { format: 'codex', operations: parseCodex(lines), notes: [] };
	const begin = lines.find(line => line.text.trim() === '*** Begin Patch');
	if (begin) {
		throw new PatchParseError(lines[0].number, `expected '*** Begin Patch' as the first line, found ${showLine(lines[0].text)}. Nothing may come before '*** Begin Patch' (line ${begin.number}) except a heredoc line such as "apply_patch <<'EOF'".`);
	}
	if (looksUnified(lines)) {
		const { operations, notes } = parseUnified(lines);
		return { format: 'unified', operations, notes };
	}
	if (lines[0].text.trim().startsWith('***')) {
		throw new PatchParseError(lines[0].number, `expected '*** Begin Patch', found ${showLine(lines[0].text)}. A Codex patch starts with '*** Begin Patch' and ends with '*** End Patch'.`);
	}
	throw new PatchParseError(lines[0].number, `this is neither a unified diff nor a Codex patch: found ${showLine(lines[0].text)}. Send a unified diff ('--- a/<path>', '+++ b/<path>', '@@ -<line>,<count> +<line>,<count> @@' hunks) or a Codex patch starting with '*** Begin Patch'.`);
}

/** Lines with their 1-based numbers; a CRLF patch reads like an LF one. */
export function splitPatchLines(text: string): PatchTextLine[] {
	const parts = text.split('\n');
	return parts.map((part, index) => ({ number: index + 1, text: part.endsWith('\r') ? part.slice(0, -1) : part }));
}

const HEREDOC_START = /^\s*(?:[\w./-]+\s+)*<<-?\s*(['"]?)([A-Za-z_][\w-]*)\1\s*$/;
const FENCE_START = /^\s*(`{3,}|~{3,})[\w+-]*\s*$/;

/** Without surrounding blank lines, a heredoc wrapper and a Markdown fence (in any nesting). */
function unwrap(all: PatchTextLine[]): PatchTextLine[] {
	let lines = trimBlank(all);
	for (;;) {
		if (lines.length < 2) return lines;
		const first = lines[0].text;
		const last = lines[lines.length - 1].text.trim();
		const heredoc = HEREDOC_START.exec(first);
		if (heredoc && (last === heredoc[2] || last.endsWith(heredoc[2]))) {
			lines = trimBlank(lines.slice(1, -1));
			continue;
		}
		const fence = FENCE_START.exec(first);
		if (fence && last.startsWith(fence[1][0].repeat(fence[1].length)) && last.replace(/[`~]/g, '') === '') {
			lines = trimBlank(lines.slice(1, -1));
			continue;
		}
		return lines;
	}
}

function trimBlank(lines: PatchTextLine[]): PatchTextLine[] {
	let start = 0;
	let end = lines.length;
	while (start < end && lines[start].text.trim() === '') start++;
	// Only empty lines go at the end: a lone ' ' there may be a diff's last context line.
	while (end > start && lines[end - 1].text === '') end--;
	return lines.slice(start, end);
}
