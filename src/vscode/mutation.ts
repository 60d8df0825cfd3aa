import * as vscode from 'vscode';
import { checkTargetsBeforeWrite, landedOutsideError, removeLandedOutside } from '../core/changes/landed';
import type { FileChange } from '../core/context';
import type { Boundary } from '../core/policy/boundary';
import { CancelledError, ToolError } from '../core/results/errors';
import { looksBinary } from '../core/files/files';
import { wholeBytes } from '../core/files/splicedBytes';

/**
 * Text files larger than this that no editor has open are replaced whole (a file operation in the
 * same WorkspaceEdit) instead of being loaded as a document: VS Code does not hand documents over
 * 50 MB to extensions, and a smallest-range edit needs the document.
 */
const DOCUMENT_EDIT_LIMIT = 20 * 1024 * 1024;

/**
 * Applies a change set as one WorkspaceEdit, so open editors follow, a dirty buffer is edited in
 * place (not overwritten from disk), and one Undo in the editor reverts the tool's change. Text
 * changes become the smallest single replacement; binary content and creations go through file
 * operations. Touched documents are saved afterwards.
 *
 * With a boundary, as race-free as VS Code allows (it writes by path): the paths are resolved
 * again right before the edit is applied, and right after it is saved every written file is found
 * by its real path; one that landed outside (a folder swapped for a link meanwhile) is removed and
 * the call fails saying so.
 */
export async function applyWithWorkspaceEdit(changes: readonly FileChange[], signal: AbortSignal, boundary?: Boundary): Promise<void> {
	const edit = new vscode.WorkspaceEdit();
	const toSave: { uri: vscode.Uri; displayPath: string }[] = [];
	for (const change of changes) {
		const uri = vscode.Uri.file(change.path);
		if (change.after === null) {
			edit.deleteFile(uri, { ignoreIfNotExists: true });
			continue;
		}
		const target = change.movedTo ? vscode.Uri.file(change.movedTo.path) : uri;
		if (change.movedTo) edit.renameFile(uri, target, { overwrite: false });
		// VS Code takes the new content as one buffer.
		const contents = wholeBytes(change.after);
		if (change.before === null || isBinary(wholeBytes(change.before)) || isBinary(contents) || tooLargeForDocument(uri, change)) {
			edit.createFile(target, { overwrite: true, contents });
			continue;
		}
		const document = await vscode.workspace.openTextDocument(uri).then(doc => doc, (error: Error) => {
			throw new ToolError('io', `VS Code could not open ${change.displayPath} to edit it (${error.message}). Nothing was changed.`);
		});
		const before = document.getText();
		const after = decodeLike(contents, document);
		if (before !== after) {
			const { start, end, text } = smallestReplacement(before, after);
			edit.replace(target, new vscode.Range(document.positionAt(start), document.positionAt(end)), text);
		}
		toSave.push({ uri: target, displayPath: change.movedTo?.displayPath ?? change.displayPath });
	}
	if (signal.aborted) throw new CancelledError('The change');
	if (boundary) await checkTargetsBeforeWrite(changes, boundary);
	if (!(await vscode.workspace.applyEdit(edit))) {
		throw new ToolError('io', 'VS Code refused the edit (a file may be read-only, or an editor changed it meanwhile). Nothing was changed. Read the files again and retry.');
	}
	const unsaved: string[] = [];
	for (const { uri, displayPath } of toSave) {
		const document = vscode.workspace.textDocuments.find(doc => doc.uri.toString() === uri.toString());
		if (document?.isDirty && !(await Promise.resolve(document.save()).catch(() => false))) unsaved.push(displayPath);
	}
	const outside = boundary ? await removeLandedOutside(changes, boundary) : [];
	if (outside.length) throw landedOutsideError(outside, changes);
	if (unsaved.length) throw unsavedError(unsaved);
}

/**
 * The edit is in the editor but not on disk. A ToolError, so the pipeline passes it on as it is
 * (it must not say "nothing was changed"): a model that retried would apply the change twice.
 */
export function unsavedError(displayPaths: readonly string[]): ToolError {
	const files = displayPaths.join(', ');
	const one = displayPaths.length === 1;
	return new ToolError(
		'io',
		`The change WAS applied: the open editor${one ? '' : 's'} of ${files} ${one ? 'holds' : 'hold'} the new text, but VS Code could not save ${one ? 'it' : 'them'} to disk (a read-only or full file system, or a failing save participant). Do not make the change again: it would be applied twice. Ask the user to save ${files}; read_file already shows the new text.`,
		{ applied: true, unsaved: [...displayPaths] },
	);
}

/** A big text file that is not open: replaced as bytes rather than loaded as a document. */
function tooLargeForDocument(uri: vscode.Uri, change: FileChange): boolean {
	if (Math.max(change.before?.byteLength ?? 0, change.after?.byteLength ?? 0) < DOCUMENT_EDIT_LIMIT) return false;
	return !vscode.workspace.textDocuments.some(doc => doc.uri.toString() === uri.toString());
}

function isBinary(bytes: Uint8Array): boolean {
	return looksBinary(bytes.subarray(0, 8192));
}

/** The document holds text without a BOM and with its own EOL; make the new bytes match. */
function decodeLike(bytes: Uint8Array, document: vscode.TextDocument): string {
	let text = new TextDecoder('utf-8').decode(bytes);
	if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
	return document.eol === vscode.EndOfLine.CRLF ? text : text.replace(/\r\n/g, '\n');
}

function smallestReplacement(before: string, after: string): { start: number; end: number; text: string } {
	let start = 0;
	const max = Math.min(before.length, after.length);
	while (start < max && before.charCodeAt(start) === after.charCodeAt(start)) start++;
	let tail = 0;
	while (tail < max - start && before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)) tail++;
	return { start, end: before.length - tail, text: after.slice(start, after.length - tail) };
}
