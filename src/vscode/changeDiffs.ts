import * as path from 'node:path';
import * as vscode from 'vscode';
import type { FileChange } from '../core/context';
import { looksBinary } from '../core/files/files';
import { formatBytes } from '../core/results/truncate';

/**
 * Diff editors of a change: before it happens (original ↔ proposed, both read-only virtual
 * documents) and after (original ↔ the file). A change keeps the same virtual documents for its
 * whole life, so clicking Show Diff twice focuses the tab already open, and Apply replaces the
 * proposed tab with the real one instead of adding a second.
 */
export const ORIGINAL_SCHEME = 'toolbelt-original';
export const PROPOSED_SCHEME = 'toolbelt-proposed';

/** At most this many files of one change get a diff editor. */
const MAX_DIFFS = 10;
/** Texts kept for the virtual documents; the oldest go first. */
const MAX_TEXTS = 100;
const texts = new Map<string, string>();
const keys = new WeakMap<FileChange, number>();
let nextKey = 1;

export function registerChangeDocuments(): vscode.Disposable {
	const provider = { provideTextDocumentContent: (uri: vscode.Uri) => snapshotText(uri) ?? '(this text is no longer kept)' };
	return vscode.Disposable.from(
		vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, provider),
		vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, provider),
	);
}

/** The text of an original or proposed document, while it is kept. */
export function snapshotText(uri: vscode.Uri): string | undefined {
	return texts.get(textKey(uri.scheme, uri.query));
}

function textKey(scheme: string, query: string): string {
	return `${scheme}:${query}`;
}

function keyOf(change: FileChange): string {
	let key = keys.get(change);
	if (key === undefined) keys.set(change, key = nextKey++);
	return String(key);
}

/** A read-only document holding `bytes` as text, named after `file` (so it gets that file's language). */
function snapshotUri(scheme: string, file: string, key: string, bytes: Uint8Array | null): vscode.Uri {
	const id = textKey(scheme, key);
	texts.delete(id);
	texts.set(id, asText(bytes));
	for (const old of texts.keys()) {
		if (texts.size <= MAX_TEXTS) break;
		texts.delete(old);
	}
	return vscode.Uri.from({ scheme, path: file, query: key });
}

function asText(bytes: Uint8Array | null): string {
	if (!bytes) return '';
	if (looksBinary(bytes.subarray(0, 8192))) return `(binary content, ${formatBytes(bytes.byteLength)})\n`;
	return new TextDecoder('utf-8').decode(bytes);
}

/** The file as it was before the change (empty for a file the change creates). */
export function originalUri(change: FileChange): vscode.Uri {
	return snapshotUri(ORIGINAL_SCHEME, change.path, keyOf(change), change.before);
}

/** The file as the change would leave it (empty for a deletion), at its new path for a move. */
function proposedUri(change: FileChange): vscode.Uri {
	return snapshotUri(PROPOSED_SCHEME, change.movedTo?.path ?? change.path, keyOf(change), change.after);
}

function nameOf(change: FileChange): string {
	const from = path.basename(change.path);
	return change.movedTo ? `${from} → ${path.basename(change.movedTo.path)}` : from;
}

/** What the change does to the file, for a tab title. */
function kindOf(change: FileChange): string {
	if (change.before === null) return 'new file';
	if (change.after === null) return 'deleted';
	return change.movedTo ? 'moved' : 'changed';
}

/**
 * Before anything is applied (the confirmation's Show Diff): one diff per file of the original
 * against the proposed content. New files show against empty, deleted ones against empty.
 */
export async function previewDiffs(changes: readonly FileChange[]): Promise<void> {
	for (const change of changes.slice(0, MAX_DIFFS)) {
		const title = `${nameOf(change)} (Toolbelt: proposed, ${kindOf(change)})`;
		await vscode.commands.executeCommand('vscode.diff', originalUri(change), proposedUri(change), title, { preview: false });
	}
}

/** Closes the proposed-change tabs of these changes: the question they illustrated has been answered. */
export async function closePreviewDiffs(changes: readonly FileChange[]): Promise<void> {
	const proposed = new Set(changes.map(change => keys.get(change)).filter(key => key !== undefined).map(String));
	if (!proposed.size) return;
	const tabs = vscode.window.tabGroups.all.flatMap(group => group.tabs).filter(tab =>
		tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === PROPOSED_SCHEME && proposed.has(tab.input.modified.query));
	if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
}

/**
 * After the change: one diff per file of the original against the file now (editable, live), or
 * against empty for a deletion, without taking focus, in place of any proposed diff of the same
 * change. One file opens as a preview tab; several stay open in tabs (a preview tab would replace
 * the one before).
 */
export async function showDiffs(changes: readonly FileChange[]): Promise<void> {
	await closePreviewDiffs(changes);
	const shown = changes.slice(0, MAX_DIFFS);
	for (const change of shown) {
		const deleted = change.after === null;
		const right = deleted ? proposedUri(change) : vscode.Uri.file(change.movedTo?.path ?? change.path);
		const title = `${nameOf(change)} (Toolbelt: ${deleted ? 'deleted' : 'before ↔ after'})`;
		await vscode.commands.executeCommand('vscode.diff', originalUri(change), right, title, { preserveFocus: true, preview: shown.length === 1 });
	}
}
