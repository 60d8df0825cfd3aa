import { ToolError } from '../results/errors';

/**
 * The one model both patch formats parse into: a list of file operations, each update holding
 * hunks of context / removed / added lines. The applier never sees which format it came from.
 */

export type PatchFormat = 'unified' | 'codex';

export interface HunkLine {
	readonly kind: 'context' | 'remove' | 'add';
	/** The line without its prefix and without a line ending. */
	readonly text: string;
}

export interface Hunk {
	/** 1-based position of the hunk in its file section (what errors call "hunk 2"). */
	readonly number: number;
	/** 1-based line of the patch where the hunk starts (its `@@` line, or its first line). */
	readonly patchLine: number;
	readonly lines: readonly HunkLine[];
	/** Where the old lines start (1-based) according to the `@@ -a,b` header; a hint only. */
	readonly oldStart?: number;
	/**
	 * Codex `@@ text` lines: each must be found, in order, before the hunk's own lines, which
	 * then start after the last of them.
	 */
	readonly anchors: readonly string[];
	/** `*** End of File`: the old lines end where the file ends. */
	readonly endOfFile: boolean;
	/** `\ No newline at end of file` after the last old line: the old side has no final newline. */
	readonly oldNoNewline: boolean;
	/** The same after the last new line: the new side has no final newline. */
	readonly newNoNewline: boolean;
}

export interface AddOperation {
	readonly kind: 'add';
	readonly path: string;
	readonly patchLine: number;
	/** The new file's lines, without line endings. */
	readonly lines: readonly string[];
	/** False when the patch says the new file ends without a newline. */
	readonly finalNewline: boolean;
}

export interface DeleteOperation {
	readonly kind: 'delete';
	readonly path: string;
	readonly patchLine: number;
	/** A unified diff spells out the removed content; when present it must match the file. */
	readonly hunks: readonly Hunk[];
}

export interface UpdateOperation {
	readonly kind: 'update';
	readonly path: string;
	readonly patchLine: number;
	readonly moveTo?: string;
	readonly hunks: readonly Hunk[];
	/**
	 * A plain (non-git) diff whose `---` and `+++` names differ (`a.c.orig` vs `a.c`) updates the
	 * file in place; this is the other name, used when `path` does not exist.
	 */
	readonly fallbackPath?: string;
}

export type FileOperation = AddOperation | DeleteOperation | UpdateOperation;

export interface ParsedPatch {
	readonly format: PatchFormat;
	readonly operations: readonly FileOperation[];
	/** Things the patch asked for that are not done, worded for the result (mode changes). */
	readonly notes: readonly string[];
}

/** One line of the patch text with its 1-based number in what the caller sent. */
export interface PatchTextLine {
	readonly number: number;
	readonly text: string;
}

/** The patch text does not follow its format. Names the line and what was expected there. */
export class PatchParseError extends ToolError {
	constructor(readonly line: number | undefined, message: string) {
		super('patch_parse', line === undefined ? message : `Line ${line} of the patch: ${message}`, line === undefined ? undefined : { line });
		this.name = 'PatchParseError';
	}
}

/** The patch is well formed but does not fit the files. Nothing was changed. */
export class PatchApplyError extends ToolError {
	constructor(message: string, details?: Record<string, unknown>) {
		super('patch_apply', message, details);
		this.name = 'PatchApplyError';
	}
}

/** A line of patch or file text as it can be shown inside an error message. */
export function showLine(text: string, max = 120): string {
	const cut = text.length > max ? `${text.slice(0, max)}…` : text;
	return JSON.stringify(cut);
}
