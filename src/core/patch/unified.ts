import {
	FileOperation, Hunk, HunkLine, PatchParseError, PatchTextLine, showLine,
} from './model';

/**
 * Unified diffs: plain (`--- a` / `+++ b` / `@@ -l,s +l,s @@`) and git-style (`diff --git` with
 * its extended headers: new/deleted file mode, rename from/to, index, mode changes). Several
 * files per patch; text between file sections (a commit message, `Index:` lines) is ignored as
 * git does.
 *
 * Models miscount hunk lengths, so the counts in `@@` are read leniently: a hunk ends at the
 * next header even if lines are missing, continues over `+`/`-`/` ` lines that follow it when the
 * count was too small, and an empty line inside a hunk is an empty context line. Inside a hunk
 * whose counts are not met, a `---`/`+++` pair is a file header only when a `@@` line follows it;
 * otherwise it is a removed `-- …` and an added `++ …` line, as git reads it.
 */

export function looksUnified(lines: readonly PatchTextLine[]): boolean {
	return lines.some((line, index) => line.text.startsWith('diff --git ')
		|| (line.text.startsWith('--- ') && lines[index + 1]?.text.startsWith('+++ '))
		|| /^@@ -\d/.test(line.text)
		|| isBinaryMarker(line.text));
}

export interface UnifiedParse {
	operations: FileOperation[];
	notes: string[];
}

export function parseUnified(lines: readonly PatchTextLine[]): UnifiedParse {
	return new UnifiedParser(lines).parse();
}

interface SectionNames {
	/** Undefined when the side is /dev/null. */
	oldName?: string;
	newName?: string;
	git: boolean;
	newFile: boolean;
	deletedFile: boolean;
	renamed: boolean;
	modeChange?: string;
	headerLine: number;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))?(?: @@.*|\s*)$/;

class UnifiedParser {
	private index = 0;
	private readonly operations: FileOperation[] = [];
	private readonly notes: string[] = [];

	constructor(private readonly lines: readonly PatchTextLine[]) {}

	parse(): UnifiedParse {
		while (this.index < this.lines.length) {
			const line = this.lines[this.index];
			if (line.text.startsWith('diff --git ')) this.gitSection();
			else if (this.atFileHeader()) this.plainSection();
			else if (isBinaryMarker(line.text)) throw binaryRefusal(line, undefined);
			else if (line.text.startsWith('@@')) {
				throw new PatchParseError(line.number, `found a hunk header ${showLine(line.text)} before any file header. Put '--- a/<path>' and '+++ b/<path>' lines before the first '@@' of each file.`);
			} else this.index++;
		}
		if (this.operations.length === 0 && this.notes.length === 0) {
			throw new PatchParseError(undefined, 'The diff holds no file changes: no hunks, new, deleted or renamed files were found. Write each file as \'--- a/<path>\', \'+++ b/<path>\' and \'@@ -<line>,<count> +<line>,<count> @@\' hunks.');
		}
		return { operations: this.operations, notes: this.notes };
	}

	private atFileHeader(at = this.index): boolean {
		return this.lines[at]?.text.startsWith('--- ') === true && this.lines[at + 1]?.text.startsWith('+++ ') === true;
	}

	private gitSection(): void {
		const header = this.lines[this.index++];
		const fromHeader = splitGitHeader(header.text.slice('diff --git '.length));
		const names: SectionNames = {
			oldName: fromHeader?.[0], newName: fromHeader?.[1], git: true,
			newFile: false, deletedFile: false, renamed: false, headerLine: header.number,
		};
		let oldMode: string | undefined;
		let newMode: string | undefined;
		while (this.index < this.lines.length) {
			const line = this.lines[this.index];
			const text = line.text;
			if (text.startsWith('diff --git ') || text.startsWith('--- ') || text.startsWith('@@')) break;
			if (isBinaryMarker(text)) throw binaryRefusal(line, names.newName ?? names.oldName);
			const field = /^(old mode|new mode|deleted file mode|new file mode|rename from|rename to|copy from|copy to|similarity index|dissimilarity index|index) ?(.*)$/.exec(text);
			if (!field) break;
			const [, key, value] = field;
			if (key === 'new file mode') names.newFile = true;
			else if (key === 'deleted file mode') names.deletedFile = true;
			else if (key === 'rename from') { names.oldName = unquote(value); names.renamed = true; }
			else if (key === 'rename to') { names.newName = unquote(value); names.renamed = true; }
			else if (key === 'old mode') oldMode = value;
			else if (key === 'new mode') newMode = value;
			else if (key === 'copy from' || key === 'copy to') {
				throw new PatchParseError(line.number, `copies ('${key}') are not supported. Write the copy as a new file instead ('--- /dev/null', '+++ b/<path>' and its whole content as '+' lines).`);
			}
			this.index++;
		}
		if (oldMode && newMode && oldMode !== newMode) names.modeChange = `${oldMode} → ${newMode}`;
		this.fileHeaders(names, true);
		this.finishSection(names, this.hunks());
	}

	private plainSection(): void {
		const names: SectionNames = { git: false, newFile: false, deletedFile: false, renamed: false, headerLine: this.lines[this.index].number };
		this.fileHeaders(names, false);
		this.finishSection(names, this.hunks());
	}

	/** `--- old` and `+++ new`, when present; they win over the `diff --git` line's names. */
	private fileHeaders(names: SectionNames, git: boolean): void {
		if (!this.atFileHeader()) return;
		const oldLine = this.lines[this.index++];
		const newLine = this.lines[this.index++];
		let oldName = headerName(oldLine.text.slice(4));
		let newName = headerName(newLine.text.slice(4));
		const prefixed = (oldName === undefined || oldName.startsWith('a/')) && (newName === undefined || newName.startsWith('b/'));
		if (git || prefixed) {
			if (oldName?.startsWith('a/')) oldName = oldName.slice(2);
			if (newName?.startsWith('b/')) newName = newName.slice(2);
		}
		if (oldName === undefined) names.newFile = true;
		if (newName === undefined) names.deletedFile = true;
		if (oldName === undefined && newName === undefined) {
			throw new PatchParseError(oldLine.number, 'both sides of this file are /dev/null. One of \'---\' and \'+++\' must name a file.');
		}
		if (!names.renamed) {
			names.oldName = oldName ?? names.oldName;
			names.newName = newName ?? names.newName;
		}
	}

	private hunks(): Hunk[] {
		const hunks: Hunk[] = [];
		for (;;) {
			// Blank lines between hunks are tolerated; anything else ends the file's section.
			let at = this.index;
			while (this.lines[at]?.text.trim() === '') at++;
			if (!this.lines[at]?.text.startsWith('@@')) break;
			this.index = at;
			hunks.push(this.hunk(hunks.length + 1));
		}
		return hunks;
	}

	private hunk(number: number): Hunk {
		const header = this.lines[this.index++];
		const counts = HUNK_HEADER.exec(header.text);
		let oldStart: number | undefined;
		let oldCount: number | undefined;
		let newCount: number | undefined;
		const anchors: string[] = [];
		if (counts) {
			oldStart = Number(counts[1]);
			oldCount = counts[2] === undefined ? 1 : Number(counts[2]);
			newCount = counts[4] === undefined ? 1 : Number(counts[4]);
		} else {
			const text = header.text.replace(/^@@/, '').replace(/@@\s*$/, '').trim();
			if (/^-\d/.test(text) || /^-\S*\s+\+\S*$/.test(text)) {
				throw new PatchParseError(header.number, `expected a hunk header like '@@ -12,5 +12,6 @@', found ${showLine(header.text)}.`);
			}
			// A bare '@@' (no line numbers) is placed by its lines alone; '@@ text' names a line above it.
			if (text !== '') anchors.push(text);
		}
		const counted = oldCount !== undefined && newCount !== undefined;
		const lines: HunkLine[] = [];
		let oldSeen = 0;
		let newSeen = 0;
		let blankTail = 0;
		let oldNoNewline = false;
		let newNoNewline = false;
		let last: HunkLine['kind'] | undefined;
		while (this.index < this.lines.length) {
			const line = this.lines[this.index];
			const text = line.text;
			const satisfied = counted && oldSeen >= oldCount! && newSeen >= newCount!;
			if (text.startsWith('\\')) {
				// `\ No newline at end of file` speaks about the line before it.
				if (last === 'context' || last === 'remove') oldNoNewline = true;
				if (last === 'context' || last === 'add') newNoNewline = true;
				this.index++;
				continue;
			}
			if (text.startsWith('@@') || text.startsWith('diff --git ')) break;
			// While the counts ask for more lines, `--- x` / `+++ y` is a removed `-- x` and an added `++ y`
			// (SQL or Lua comments), unless a hunk header follows: then it is the next file of a miscounted hunk.
			if (this.atFileHeader() && (satisfied || this.lines[this.index + 2]?.text.startsWith('@@'))) break;
			if (text === '') {
				// An empty line is an empty context line whose space an editor trimmed, unless the hunk is complete.
				if (satisfied) break;
				lines.push({ kind: 'context', text: '' });
				oldSeen++;
				newSeen++;
				blankTail++;
				last = 'context';
				this.index++;
				continue;
			}
			const kind = text[0] === ' ' ? 'context' : text[0] === '-' ? 'remove' : text[0] === '+' ? 'add' : undefined;
			if (!kind || (satisfied && text === '-- ')) {
				if (satisfied || !counted) break;
				throw new PatchParseError(line.number, `expected a hunk line starting with ' ' (context), '-' (removed) or '+' (added), found ${showLine(text)}. The hunk at line ${header.number} declares ${oldCount} old and ${newCount} new lines; ${oldCount! - oldSeen > 0 ? `${oldCount! - oldSeen} old` : `${newCount! - newSeen} new`} line(s) are still missing. A context line needs its leading space.`);
			}
			lines.push({ kind, text: text.slice(1) });
			if (kind !== 'add') oldSeen++;
			if (kind !== 'remove') newSeen++;
			blankTail = 0;
			last = kind;
			this.index++;
		}
		// Blank lines after the hunk's declared length (or of a hunk without counts) separate, not belong.
		while (blankTail > 0 && (!counted || oldSeen > oldCount!)) {
			lines.pop();
			oldSeen--;
			newSeen--;
			blankTail--;
		}
		if (lines.length === 0 && (oldCount ?? 1) + (newCount ?? 1) > 0) {
			throw new PatchParseError(header.number, `hunk ${number} has no lines. After its '@@' line give the lines, each starting with ' ', '-' or '+'.`);
		}
		return { number, patchLine: header.number, lines, oldStart, anchors, endOfFile: false, oldNoNewline, newNoNewline };
	}

	private finishSection(names: SectionNames, hunks: Hunk[]): void {
		const line = names.headerLine;
		if (names.newFile && names.deletedFile) {
			throw new PatchParseError(line, 'this file section is marked both new and deleted. Check its \'---\' and \'+++\' lines.');
		}
		if (names.newFile) {
			const path = names.newName ?? names.oldName;
			if (!path) throw new PatchParseError(line, 'the new file has no name. Give it in the \'+++ b/<path>\' line.');
			const content: string[] = [];
			let finalNewline = true;
			for (const hunk of hunks) {
				const stray = hunk.lines.find(hunkLine => hunkLine.kind !== 'add');
				if (stray) {
					throw new PatchParseError(hunk.patchLine, `${path} is a new file, so its hunks may only add lines ('+'), but hunk ${hunk.number} has a ${stray.kind === 'remove' ? 'removed' : 'context'} line ${showLine(stray.text)}. To change an existing file, name it in '--- a/${path}'.`);
				}
				content.push(...hunk.lines.map(hunkLine => hunkLine.text));
				finalNewline = !hunk.newNoNewline;
			}
			this.operations.push({ kind: 'add', path, patchLine: line, lines: content, finalNewline });
			return;
		}
		const oldName = names.oldName ?? names.newName;
		if (!oldName) throw new PatchParseError(line, 'cannot tell which file this section changes. Give \'--- a/<path>\' and \'+++ b/<path>\' lines.');
		if (names.deletedFile) {
			this.operations.push({ kind: 'delete', path: oldName, patchLine: line, hunks });
			return;
		}
		const newName = names.newName ?? oldName;
		const moves = newName !== oldName && (names.git || names.renamed);
		if (hunks.length === 0 && !moves) {
			if (names.modeChange) this.notes.push(`The mode change of ${newName} (${names.modeChange}) was not applied: apply_patch changes content only. Use run_command with chmod if it matters.`);
			return;
		}
		if (names.modeChange) this.notes.push(`The mode change of ${newName} (${names.modeChange}) was not applied: apply_patch changes content only.`);
		if (moves) {
			this.operations.push({ kind: 'update', path: oldName, patchLine: line, moveTo: newName, hunks });
		} else {
			this.operations.push({
				kind: 'update', path: newName, patchLine: line, hunks,
				...(oldName !== newName ? { fallbackPath: oldName } : {}),
			});
		}
	}
}

function isBinaryMarker(text: string): boolean {
	return text === 'GIT binary patch' || (text.startsWith('Binary files ') && text.endsWith(' differ'));
}

function binaryRefusal(line: PatchTextLine, name: string | undefined): PatchParseError {
	const which = name ? ` (${name})` : '';
	return new PatchParseError(line.number, `binary patches are not supported${which}: ${showLine(line.text)}. apply_patch changes text files only; write a binary file with write_file and encoding "base64", and send the text changes as their own patch.`);
}

/** The name on a `---`/`+++` line: unquoted, without a timestamp; undefined for /dev/null. */
function headerName(raw: string): string | undefined {
	let name = raw;
	if (!name.startsWith('"')) {
		const tab = name.indexOf('\t');
		if (tab !== -1) name = name.slice(0, tab);
		name = name.replace(/\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: [+-]\d{4})?$/, '');
	}
	name = unquote(name.trim());
	return name === '/dev/null' ? undefined : name;
}

/** Git quotes names holding unusual bytes: "a/t\303\244st.txt" with C escapes. */
function unquote(name: string): string {
	const match = /^"(.*)"(\s.*)?$/.exec(name);
	if (!match) return name;
	const bytes: number[] = [];
	const body = match[1];
	const escapes: Record<string, number> = { n: 10, t: 9, r: 13, b: 8, f: 12, v: 11, a: 7, '"': 34, '\\': 92 };
	for (let i = 0; i < body.length; i++) {
		const char = body[i];
		if (char !== '\\') {
			bytes.push(...Buffer.from(char, 'utf8'));
			continue;
		}
		const next = body[i + 1];
		if (/[0-7]/.test(next ?? '')) {
			const octal = /^[0-7]{1,3}/.exec(body.slice(i + 1))![0];
			bytes.push(parseInt(octal, 8));
			i += octal.length;
		} else {
			bytes.push(escapes[next] ?? next.charCodeAt(0));
			i++;
		}
	}
	return Buffer.from(bytes).toString('utf8');
}

/** The two names of `diff --git a/x b/y`, used when no `---`/`+++`/rename lines say better. */
function splitGitHeader(rest: string): [string, string] | undefined {
	const quoted = /^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/.exec(rest);
	const strip = (name: string, prefix: string) => (name.startsWith(prefix) ? name.slice(prefix.length) : name);
	if (quoted) return [strip(unquote(quoted[1]), 'a/'), strip(unquote(quoted[2]), 'b/')];
	// Names with spaces: the usual case is the same name twice, `a/x y b/x y`.
	if ((rest.length - 1) % 2 === 0) {
		const half = (rest.length - 1) / 2;
		const left = rest.slice(0, half);
		const right = rest.slice(half + 1);
		if (strip(left, 'a/') === strip(right, 'b/')) return [strip(left, 'a/'), strip(right, 'b/')];
	}
	const split = rest.indexOf(' b/');
	return split === -1 ? undefined : [strip(rest.slice(0, split), 'a/'), rest.slice(split + 3)];
}
