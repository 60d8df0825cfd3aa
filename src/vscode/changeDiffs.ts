import * as path from 'node:path';
import * as vscode from 'vscode';
import type { FileChange } from '../core/context';
import { looksBinary } from '../core/files/files';
import { wholeBytes } from '../core/files/splicedBytes';
import { formatBytes } from '../core/results/truncate';

export const ORIGINAL_SCHEME = 'toolbelt-original';
export const PROPOSED_SCHEME = 'toolbelt-proposed';

/** At most this many files of one change get a diff editor. */
const MAX_DIFFS = 10;
/** Texts kept for the virtual documents; the oldest go first. */
const MAX_TEXTS = 100;

/**
 * Diff editors of a change: before it happens (original ↔ proposed, both read-only virtual
 * documents) and after (original ↔ the file). A change keeps the same virtual documents for its
 * whole life, so clicking Show Diff twice focuses the tab already open, and Apply replaces the
 * proposed tab with the real one instead of adding a second. One per window: made in activate,
 * its texts let go with the extension's subscriptions.
 */
export class ChangeDiffs implements vscode.Disposable {
	private readonly texts = new Map<string, string>();
	private readonly keys = new WeakMap<FileChange, number>();
	private nextKey = 1;

	/** Serves the original and proposed documents (tests keep their own instance and leave this to the extension). */
	registerDocuments(): vscode.Disposable {
		const provider = { provideTextDocumentContent: (uri: vscode.Uri) => this.snapshotText(uri) ?? '(this text is no longer kept)' };
		return vscode.Disposable.from(
			vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, provider),
			vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, provider),
		);
	}

	/** The text of an original or proposed document, while it is kept. */
	snapshotText(uri: vscode.Uri): string | undefined {
		return this.texts.get(textKey(uri.scheme, uri.query));
	}

	/** The file as it was before the change (empty for a file the change creates). */
	originalUri(change: FileChange): vscode.Uri {
		return this.snapshotUri(ORIGINAL_SCHEME, change.path, this.keyOf(change), change.before === null ? null : wholeBytes(change.before));
	}

	/**
	 * Before anything is applied (the confirmation's Show Diff): one diff per file of the original
	 * against the proposed content. New files show against empty, deleted ones against empty.
	 */
	async preview(changes: readonly FileChange[]): Promise<void> {
		for (const change of changes.slice(0, MAX_DIFFS)) {
			const title = `${nameOf(change)} (Toolbelt: proposed, ${kindOf(change)})`;
			await vscode.commands.executeCommand('vscode.diff', this.originalUri(change), this.proposedUri(change), title, { preview: false });
		}
	}

	/** Closes the proposed-change tabs of these changes: the question they illustrated has been answered. */
	async closePreviews(changes: readonly FileChange[]): Promise<void> {
		const proposed = new Set(changes.map(change => this.keys.get(change)).filter(key => key !== undefined).map(String));
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
	async show(changes: readonly FileChange[]): Promise<void> {
		await this.closePreviews(changes);
		const shown = changes.slice(0, MAX_DIFFS);
		for (const change of shown) {
			const deleted = change.after === null;
			const right = deleted ? this.proposedUri(change) : vscode.Uri.file(change.movedTo?.path ?? change.path);
			const title = `${nameOf(change)} (Toolbelt: ${deleted ? 'deleted' : 'before ↔ after'})`;
			await vscode.commands.executeCommand('vscode.diff', this.originalUri(change), right, title, { preserveFocus: true, preview: shown.length === 1 });
		}
	}

	dispose(): void {
		this.texts.clear();
	}

	/** The file as the change would leave it (empty for a deletion), at its new path for a move. */
	private proposedUri(change: FileChange): vscode.Uri {
		return this.snapshotUri(PROPOSED_SCHEME, change.movedTo?.path ?? change.path, this.keyOf(change), change.after === null ? null : wholeBytes(change.after));
	}

	private keyOf(change: FileChange): string {
		let key = this.keys.get(change);
		if (key === undefined) this.keys.set(change, key = this.nextKey++);
		return String(key);
	}

	/** A read-only document holding `bytes` as text, named after `file` (so it gets that file's language). */
	private snapshotUri(scheme: string, file: string, key: string, bytes: Uint8Array | null): vscode.Uri {
		const id = textKey(scheme, key);
		this.texts.delete(id);
		this.texts.set(id, asText(bytes));
		for (const old of this.texts.keys()) {
			if (this.texts.size <= MAX_TEXTS) break;
			this.texts.delete(old);
		}
		return vscode.Uri.from({ scheme, path: file, query: key });
	}
}

function textKey(scheme: string, query: string): string {
	return `${scheme}:${query}`;
}

function asText(bytes: Uint8Array | null): string {
	if (!bytes) return '';
	if (looksBinary(bytes.subarray(0, 8192))) return `(binary content, ${formatBytes(bytes.byteLength)})\n`;
	return new TextDecoder('utf-8').decode(bytes);
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
