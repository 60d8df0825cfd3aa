import * as vscode from 'vscode';
import { confirmationDiff, confirmationTitle, describeRequest } from '../core/policy/approval';
import type { ApprovalRequest, FileChange, Host } from '../core/context';
import type { SandboxHostOptions } from '../core/sandbox/runtime';
import { createLanguageServices } from './languages';

export interface VscodeHostParts {
	readonly storageDir: string;
	/** Writes a change set through a WorkspaceEdit (see mutation.ts), checked against the boundary. */
	applyChanges: Host['applyChanges'];
	/** Opens diffs of changes that are not applied yet (the modal's Show Diff), and closes them once answered. */
	previewDiffs?: { show(changes: readonly FileChange[]): Promise<void>; close(changes: readonly FileChange[]): Promise<void> };
	showDiffs?(changes: readonly FileChange[]): Promise<void>;
	readonly sandbox?: SandboxHostOptions;
}

/** The Host the core sees inside VS Code. */
export function createVscodeHost(parts: VscodeHostParts): Host {
	return {
		kind: 'vscode',
		storageDir: parts.storageDir,
		dirtyText,
		confirm: request => confirmWithModal(request, parts.previewDiffs),
		applyChanges: parts.applyChanges,
		showDiffs: parts.showDiffs,
		diagnostics: async paths => collectDiagnostics(paths),
		isTrusted: () => vscode.workspace.isTrusted,
		sandbox: parts.sandbox,
		languages: createLanguageServices(),
	};
}

/** An open editor's text wins over disk only when it holds unsaved changes. */
function dirtyText(absolutePath: string): string | undefined {
	const document = vscode.workspace.textDocuments.find(doc => doc.uri.scheme === 'file' && doc.uri.fsPath === absolutePath);
	return document?.isDirty ? document.getText() : undefined;
}

/** Diffs longer than this are shown in part in the modal (a dialog, not an editor); Show Diff shows all. */
const MODAL_DIFF_BYTES = 4000;

/** What the modal shows: a question, the request as plain text with its diff (cut, with a marker), and its buttons. */
export function modalContent(request: ApprovalRequest, canShowDiffs: boolean): { message: string; detail: string; approve: string; choices: string[] } {
	const approve = request.kind === 'files' ? 'Apply' : 'Run';
	const detail = describeRequest(request, 'plain', confirmationDiff(request, MODAL_DIFF_BYTES));
	return { message: confirmationTitle(request), detail, approve, choices: request.kind === 'files' && canShowDiffs ? [approve, 'Show Diff'] : [approve] };
}

/**
 * Outside chat (command palette, other extensions) the decision is a modal: Apply (Run for a
 * command or a call), Cancel, or Show Diff first — the proposed content, before anything is
 * written — and then decide. The proposed diffs close with the answer; after Apply the pipeline
 * opens the real ones (toolbelt.showDiffs).
 */
async function confirmWithModal(request: ApprovalRequest, previewDiffs?: VscodeHostParts['previewDiffs']): Promise<boolean> {
	const { message, detail, approve, choices } = modalContent(request, previewDiffs !== undefined);
	try {
		for (;;) {
			let choice: string | undefined;
			try {
				choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, ...choices);
			} catch {
				// VS Code refuses modals in some contexts (extension tests, headless hosts): with no one to
				// ask, the answer is no.
				return false;
			}
			if (choice === 'Show Diff' && request.kind === 'files' && previewDiffs) {
				await previewDiffs.show(request.changes);
				continue;
			}
			return choice === approve;
		}
	} finally {
		if (request.kind === 'files') await previewDiffs?.close(request.changes).catch(() => undefined);
	}
}

/** Asked per path (polled after every change): the whole workspace's problems only when no path is given. */
async function collectDiagnostics(absolutePaths: readonly string[]) {
	const severities = ['error', 'warning', 'info', 'hint'] as const;
	const perFile: [vscode.Uri, readonly vscode.Diagnostic[]][] = absolutePaths.length
		? [...new Set(absolutePaths)].map(file => {
			const uri = vscode.Uri.file(file);
			return [uri, vscode.languages.getDiagnostics(uri)];
		})
		: vscode.languages.getDiagnostics().filter(([uri]) => uri.scheme === 'file');
	return perFile.flatMap(([uri, diagnostics]) => diagnostics.map(d => ({
		path: uri.fsPath,
		line: d.range.start.line + 1,
		column: d.range.start.character + 1,
		severity: severities[d.severity],
		message: d.message,
		source: d.source,
		code: typeof d.code === 'object' ? String(d.code.value) : d.code === undefined ? undefined : String(d.code),
	})));
}
