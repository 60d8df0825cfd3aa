import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActivityRecord } from '../ui/activityStore';
import { pruneBackups } from '../core/changes/backupPruning';
import { BackupEntry, BackupSet, listBackups, restoreChanges } from '../core/changes/backups';
import type { Boundary } from '../core/policy/boundary';
import type { ChangeContext, FileChange, ToolEnvironment } from '../core/context';
import { wholeBytes } from '../core/files/splicedBytes';
import { commitPlan, planChange } from '../core/changes/pipeline';
import { toAbortSignal } from './cancellation';
import type { ChangeDiffs } from './changeDiffs';
import { refuseUntrusted } from './trust';

const PRUNE_DELAY_MS = 5_000;
const MB = 1024 * 1024;

/**
 * Restore Backup…: the copies taken before every change (src/core/changes/backups.ts), listed per file
 * with time and tool; a restore shows the diff, asks, and then goes through the same pipeline as
 * a tool's change (WorkspaceEdit, so Undo works; and a backup of what it replaces). Also keeps
 * the backup folder within `toolbelt.backups.maxAgeDays` / `maxTotalMB`.
 */
export class BackupsUi implements vscode.Disposable {
	private pruneTimer: ReturnType<typeof setTimeout> | undefined;

	// No prune at activation (which does no I/O): the first change, or a change of the limits, starts one.
	constructor(private readonly env: ToolEnvironment, private readonly diffs: ChangeDiffs, private readonly log: vscode.LogOutputChannel) {}

	/** Prunes a little after the last change (mutations come in bursts), off the hot path. */
	schedulePrune(): void {
		if (this.pruneTimer) clearTimeout(this.pruneTimer);
		this.pruneTimer = setTimeout(() => void this.prune(), PRUNE_DELAY_MS);
	}

	async prune(): Promise<void> {
		this.pruneTimer = undefined;
		const limits = this.env.settings().backups;
		try {
			const report = await pruneBackups(this.env.host.storageDir, { maxAgeDays: limits.maxAgeDays, maxTotalBytes: limits.maxTotalMB * MB });
			if (report.removed) this.log.info(`Pruned ${report.removed} backup set(s), ${Math.round(report.freedBytes / 1024)} KB; ${report.kept} kept.`);
		} catch (error) {
			this.log.warn(`Pruning backups failed: ${(error as Error).message}`);
		}
	}

	async restoreCommand(): Promise<boolean> {
		if (refuseUntrusted('Restore Backup')) return false;
		const sets = await listBackups(this.env.host.storageDir);
		if (!sets.length) {
			void vscode.window.showInformationMessage('Toolbelt: no backups yet. A copy of each file is kept before a tool changes it; restore it here afterwards.');
			return false;
		}
		type Item = vscode.QuickPickItem & { set: BackupSet; entry: BackupEntry };
		const items: Item[] = sets.flatMap(set => set.files.map(entry => {
			const tool = set.tool;
			return {
				label: `$(history) ${entry.displayPath}`,
				description: [timeAgo(set.createdAt), tool].filter(Boolean).join(' · '),
				detail: `${new Date(set.createdAt).toLocaleString()} — before "${set.title}"${entry.existed ? '' : ' (the change created this file: restoring deletes it)'}`,
				set,
				entry,
			};
		}));
		const choice = await vscode.window.showQuickPick(items, { title: 'Toolbelt: Restore Backup', placeHolder: 'Pick the file to put back as it was before the change', matchOnDescription: true, matchOnDetail: true });
		return choice ? this.restore(choice.set, choice.entry) : false;
	}

	/** Restores one file of a set after showing the diff and asking. True when it was restored. */
	async restore(set: BackupSet, entry: BackupEntry, confirm: (question: string, detail: string) => Thenable<boolean> = modalConfirm): Promise<boolean> {
		const boundary = await this.env.boundary();
		try {
			await boundary.resolve(entry.path, 'write');
			if (entry.movedTo) await boundary.resolve(entry.movedTo, 'write');
		} catch (error) {
			void vscode.window.showErrorMessage(`Toolbelt: cannot restore ${entry.displayPath}: ${(error as Error).message}`);
			return false;
		}
		const changes = await restoreChanges({ ...set, files: [entry] }, absolute => boundary.display(absolute), boundary.fileSystem);
		if (changes.every(sameContent)) {
			void vscode.window.showInformationMessage(`Toolbelt: ${entry.displayPath} is already as in this backup; nothing to restore.`);
			return false;
		}
		await showRestoreDiffs(this.diffs, changes, set);
		const question = `Restore ${entry.displayPath} as it was before "${set.title}"?`;
		const detail = `${new Date(set.createdAt).toLocaleString()}. ${describeRestore(changes)} The current content is backed up first, and Undo in the editor reverts the restore.`;
		if (!await confirm(question, detail)) return false;
		return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Toolbelt: restoring ${entry.displayPath}`, cancellable: true }, async (_progress, token) => {
			try {
				const ctx = this.restoreContext(boundary, toAbortSignal(token));
				// The person confirmed the restore after seeing its diff.
				await commitPlan(ctx, await planChange(ctx, `Restore ${entry.displayPath} from the backup of ${new Date(set.createdAt).toLocaleString()}`, changes), true);
				void vscode.window.showInformationMessage(`Toolbelt: restored ${entry.displayPath}.`);
				return true;
			} catch (error) {
				void vscode.window.showErrorMessage(`Toolbelt: could not restore ${entry.displayPath}: ${(error as Error).message}`);
				return false;
			}
		});
	}

	/**
	 * The restore runs the change pipeline as the person, who has just seen the diff and agreed: no
	 * second diff, and a fresh view of file versions (what the model read earlier does not make the
	 * person's own restore "stale"). The files' locks and the backup clock are the tools' own.
	 */
	private restoreContext(boundary: Boundary, signal: AbortSignal): ChangeContext {
		return {
			tool: 'restore_backup',
			boundary,
			host: this.env.host,
			state: { ...this.env.state, fileVersions: new Map() },
			signal,
			settings: { showDiffs: 'never' },
			note: () => undefined,
		};
	}

	/** Opens the diff of what a call changed: its backups (before) against the files now. */
	async openDiffFor(record: ActivityRecord): Promise<boolean> {
		if (!record.filesTouched?.length) return false;
		const [sets, boundary] = await Promise.all([listBackups(this.env.host.storageDir), this.env.boundary()]);
		const end = record.startedAt + (record.durationMs ?? 0) + 1000;
		const touched = new Set(record.filesTouched);
		// The call's own set when the record names it; records from older versions go by time.
		const ofCall = (set: BackupSet) => (record.backupSet ? set.id === record.backupSet : set.createdAt >= record.startedAt - 1000 && set.createdAt <= end);
		const entries = sets
			.filter(ofCall)
			.flatMap(set => set.files.filter(entry => touched.has(entry.displayPath) || (entry.movedTo !== undefined && touched.has(boundary.display(entry.movedTo)))).map(entry => ({ set, entry })));
		if (!entries.length) return false;
		for (const { set, entry } of entries.slice(0, 10)) {
			const before = entry.existed && entry.copy ? await fs.promises.readFile(path.join(set.dir, entry.copy)).catch(() => null) : null;
			const left = this.diffs.originalUri({ path: entry.path, displayPath: entry.displayPath, before: before ?? new Uint8Array(), after: null });
			const right = vscode.Uri.file(entry.movedTo ?? entry.path);
			await vscode.commands.executeCommand('vscode.diff', left, right, `${path.basename(right.fsPath)} (before ${record.tool} ↔ now)`, { preview: true });
		}
		return true;
	}

	dispose(): void {
		if (this.pruneTimer) clearTimeout(this.pruneTimer);
	}
}

async function modalConfirm(question: string, detail: string): Promise<boolean> {
	return await vscode.window.showWarningMessage(question, { modal: true, detail }, 'Restore') === 'Restore';
}

function sameContent(change: FileChange): boolean {
	if (change.movedTo) return false;
	if (change.before === null || change.after === null) return change.before === change.after;
	return Buffer.from(wholeBytes(change.before)).equals(Buffer.from(wholeBytes(change.after)));
}

/** Now (left) ↔ after the restore (right), one editor per file. */
async function showRestoreDiffs(diffs: ChangeDiffs, changes: readonly FileChange[], set: BackupSet): Promise<void> {
	for (const change of changes.slice(0, 10)) {
		const now = diffs.originalUri({ ...change, before: change.before ?? new Uint8Array() });
		const restored = diffs.originalUri({ ...change, before: change.after === null ? new Uint8Array() : wholeBytes(change.after) });
		const name = path.basename(change.movedTo?.path ?? change.path);
		await vscode.commands.executeCommand('vscode.diff', now, restored, `${name} (now ↔ backup of ${new Date(set.createdAt).toLocaleTimeString()})`, { preview: true });
	}
}

function describeRestore(changes: readonly FileChange[]): string {
	return changes.map(change => {
		if (change.after === null) return `${change.displayPath} will be deleted (the change had created it).`;
		if (change.movedTo) return `${change.displayPath} moves back to ${change.movedTo.displayPath}.`;
		if (change.before === null) return `${change.displayPath} will be recreated.`;
		return `${change.displayPath} gets its earlier content back.`;
	}).join(' ');
}

export function timeAgo(time: number, now = Date.now()): string {
	const seconds = Math.round((now - time) / 1000);
	if (seconds < 60) return 'just now';
	const minutes = Math.round(seconds / 60);
	if (minutes < 60) return `${minutes} min ago`;
	const hours = Math.round(minutes / 60);
	if (hours < 48) return `${hours} h ago`;
	return `${Math.round(hours / 24)} days ago`;
}
