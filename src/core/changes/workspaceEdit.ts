import type { ChangeContext, FileChange } from '../context';
import { ToolError } from '../results/errors';
import type { EditOperation, SourcePosition, TextEditData } from '../languages';
import { readCurrent } from './stale';
import { decodeChangeableText, encodeText, withEol } from '../text/text';
import { sameBytes } from '../files/bytes';

/**
 * A language server's WorkspaceEdit (a rename, a quick fix) as the change set every other change
 * is: the files' bytes before and after, computed in memory from what the editor holds (unsaved
 * text included), so the person approves the diff and the pipeline backs up, commits all or
 * nothing and leaves one Undo. Nothing is written here.
 */

interface FileState {
	/** The path the file had when the edit started (its FileChange's path). */
	readonly origin: string;
	/** Where it is now (a rename moves it). */
	at: string;
	readonly before: Uint8Array | null;
	current: Uint8Array | null;
}

export async function changesOfEdit(ctx: ChangeContext, operations: readonly EditOperation[]): Promise<FileChange[]> {
	const unsupported = operations.find(operation => operation.kind === 'unsupported');
	if (unsupported) {
		throw new ToolError('unavailable', `The language server's change includes ${unsupported.what}, which cannot be shown as a diff before it is applied, so Toolbelt does not apply it. Nothing was changed. Make the change with edit_file or apply_patch instead.`);
	}
	const display = (absolute: string) => ctx.boundary.display(absolute);
	/** Current path → the file there; a file moved away leaves an empty place behind. */
	const places = new Map<string, FileState>();
	const states: FileState[] = [];
	const stateAt = async (absolute: string): Promise<FileState> => {
		const known = places.get(absolute);
		if (known) return known;
		await checkWritable(ctx, absolute);
		const current = await readCurrent(ctx, absolute, display(absolute));
		const state: FileState = { origin: absolute, at: absolute, before: current.bytes, current: current.bytes };
		places.set(absolute, state);
		states.push(state);
		return state;
	};
	for (const operation of operations) {
		switch (operation.kind) {
			case 'text': {
				const state = await stateAt(operation.path);
				if (state.current === null) throw missing(display(operation.path), 'edit');
				state.current = applyTextEdits(state.current, operation.edits, display(operation.path));
				break;
			}
			case 'create': {
				const state = await stateAt(operation.path);
				if (state.current !== null && !operation.overwrite) {
					if (operation.ignoreIfExists) break;
					throw new ToolError('already_exists', `The language server's change creates ${display(operation.path)}, which already exists. Nothing was changed.`);
				}
				state.current = operation.contents ?? new Uint8Array(0);
				break;
			}
			case 'rename': {
				const source = await stateAt(operation.from);
				if (source.current === null) throw missing(display(operation.from), 'move');
				const target = await stateAt(operation.to);
				if (target.current !== null) {
					if (operation.ignoreIfExists) break;
					throw new ToolError('already_exists', `The language server's change moves ${display(operation.from)} onto ${display(operation.to)}, which already exists. Nothing was changed.`);
				}
				// The target was only looked at: the moved file takes its place.
				if (target.before === null) states.splice(states.indexOf(target), 1);
				const left: FileState = { origin: operation.from, at: operation.from, before: null, current: null };
				places.set(operation.from, left);
				states.push(left);
				places.set(operation.to, source);
				source.at = operation.to;
				break;
			}
			case 'delete': {
				const state = await stateAt(operation.path);
				if (state.current === null && !operation.ignoreIfNotExists) throw missing(display(operation.path), 'delete');
				state.current = null;
				break;
			}
		}
	}
	return states.flatMap(state => {
		const moved = state.current !== null && state.at !== state.origin;
		if (!moved && sameBytes(state.before, state.current)) return [];
		return [{
			path: state.origin,
			displayPath: display(state.origin),
			before: state.before,
			after: state.current,
			...(moved ? { movedTo: { path: state.at, displayPath: display(state.at) } } : {}),
		}];
	});
}

async function checkWritable(ctx: ChangeContext, absolute: string): Promise<void> {
	try {
		await ctx.boundary.resolve(absolute, 'write');
	} catch (error) {
		if (!(error instanceof ToolError)) throw error;
		throw new ToolError(error.code, `The language server's change reaches ${ctx.boundary.display(absolute)}, which Toolbelt may not change: ${error.message} Nothing was changed.`, error.details);
	}
}

function missing(display: string, verb: string): ToolError {
	return new ToolError('not_found', `The language server's change would ${verb} ${display}, which does not exist (any more). Nothing was changed. Ask again: the server's picture of the files is out of date.`);
}

/**
 * Text edits as VS Code applies them: every range refers to the text before any of them, positions
 * past a line's end are clamped to it, and inserted line breaks take the file's line ending.
 */
export function applyTextEdits(bytes: Uint8Array, edits: readonly TextEditData[], display: string): Uint8Array {
	const decoded = decodeChangeableText(bytes, display, 'edited as text', 'Make the change another way, or ask the user.');
	const starts = lineStarts(decoded.text);
	const offsetOf = (position: SourcePosition) => offsetIn(decoded.text, starts, position);
	const placed = edits
		.map(edit => ({ start: offsetOf(edit.range.start), end: offsetOf(edit.range.end), text: withEol(edit.newText, decoded.format.eol) }))
		.sort((a, b) => a.start - b.start || a.end - b.end);
	for (let i = 1; i < placed.length; i++) {
		if (placed[i].start < placed[i - 1].end) {
			throw new ToolError('io', `The language server's change to ${display} has overlapping edits, so it cannot be applied. Nothing was changed. Try again; if it repeats, make the change with edit_file.`);
		}
	}
	let text = decoded.text;
	for (const edit of [...placed].reverse()) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
	return encodeText(text, decoded.format);
}

/** Line starts as VS Code splits lines: at `\r\n`, `\n` and a lone `\r`. */
function lineStarts(text: string): number[] {
	const starts = [0];
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (code === 13 && text.charCodeAt(i + 1) === 10) i++;
		if (code === 13 || code === 10) starts.push(i + 1);
	}
	return starts;
}

function offsetIn(text: string, starts: readonly number[], position: SourcePosition): number {
	if (position.line >= starts.length) return text.length;
	const line = Math.max(0, position.line);
	const start = starts[line];
	const next = line + 1 < starts.length ? starts[line + 1] : text.length;
	let end = next;
	if (end > start && text.charCodeAt(end - 1) === 10) end--;
	if (end > start && text.charCodeAt(end - 1) === 13) end--;
	return Math.min(start + Math.max(0, position.character), end);
}
