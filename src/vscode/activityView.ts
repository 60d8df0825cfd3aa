import * as path from 'node:path';
import * as vscode from 'vscode';
import { ActivityRecord, ActivityStore } from '../ui/activityStore';
import { detailsText, detailsTitle, rowDescription, statusLabel, statusLine, StatusTone } from '../ui/activityText';
import type { ToolEvent, ToolStatus } from '../core/context';
import type { ToolRegistry } from '../tools/registry';
import type { ToolDocuments } from './documents';

export const ACTIVITY_VIEW = 'toolbelt.activity';
const FILE_NAME = 'activity.json';

/** Opens the diff of what a mutating call changed; false when there is nothing to show. */
export type DiffOpener = (record: ActivityRecord) => Promise<boolean>;

/**
 * The Activity view: every tool call from any caller (chat, command palette, other extensions),
 * newest first, kept across reloads in the workspace's storage. The store loads in the
 * background on first use (the view shown, a tool called), so activation does no I/O; events
 * that come first wait for it.
 */
export class ActivityView implements vscode.TreeDataProvider<ActivityRecord>, vscode.Disposable {
	private store: ActivityStore | undefined;
	private readonly early: ToolEvent[] = [];
	private readonly changed = new vscode.EventEmitter<ActivityRecord | undefined>();
	readonly onDidChangeTreeData = this.changed.event;
	private readonly disposables: vscode.Disposable[] = [];
	private disposed = false;
	private loading: Promise<void> | undefined;
	openDiff: DiffOpener = async () => false;

	constructor(
		private readonly registry: ToolRegistry,
		private readonly documents: ToolDocuments,
		private readonly storageDir: string,
		private readonly log: vscode.LogOutputChannel,
	) {
		this.disposables.push(this.changed, registry.onEvent(event => this.onEvent(event)));
		const view = vscode.window.createTreeView(ACTIVITY_VIEW, { treeDataProvider: this, showCollapseAll: false });
		this.disposables.push(view);
	}

	private loadOnce(): void {
		this.loading ??= this.load(path.join(this.storageDir, FILE_NAME));
	}

	private async load(file: string): Promise<void> {
		let loaded: Awaited<ReturnType<typeof ActivityStore.load>>;
		try {
			loaded = await ActivityStore.load(file);
		} catch (error) {
			// The history is a convenience: whatever went wrong, the view starts empty and tools run on.
			loaded = { store: ActivityStore.inMemory(), problem: `The activity history could not be loaded (${(error as Error).message}); this window keeps it in memory only.` };
		}
		// The window may have closed while the history loaded: then nothing is to be registered.
		if (this.disposed) return;
		const { store, problem } = loaded;
		if (problem) {
			this.log.warn(problem);
			void vscode.window.showWarningMessage(`Toolbelt: ${problem}`);
		}
		this.store = store;
		this.disposables.push(store.onDidChange(() => this.changed.fire(undefined)), { dispose: () => store.flushSync() });
		for (const event of this.early.splice(0)) this.apply(event);
		this.changed.fire(undefined);
	}

	private onEvent(event: ToolEvent): void {
		if (this.store) return this.apply(event);
		this.early.push(event);
		this.loadOnce();
	}

	private apply(event: ToolEvent): void {
		this.store?.record(event, this.registry.get(event.tool)?.mutating ?? false);
	}

	records(): readonly ActivityRecord[] {
		return this.store?.records() ?? [];
	}

	clear(): void {
		if (this.store) this.store.clear();
		else {
			// Cleared before it was ever shown: the history on disk goes once it has loaded.
			this.loadOnce();
			void this.loading?.then(() => this.store?.clear());
		}
	}

	getChildren(element?: ActivityRecord): ActivityRecord[] {
		// The view asks when it is shown: the history arrives with a change event once loaded.
		this.loadOnce();
		return element ? [] : [...this.records()];
	}

	getTreeItem(record: ActivityRecord): vscode.TreeItem {
		const item = new vscode.TreeItem(record.tool, vscode.TreeItemCollapsibleState.None);
		item.id = record.id;
		const status = statusLabel(record);
		item.description = rowDescription(record);
		item.iconPath = TONE_ICONS[status.tone](record.status);
		item.tooltip = tooltip(record);
		item.contextValue = record.mutating && record.status === 'done' ? 'mutating' : 'call';
		item.command = { command: 'toolbelt.activity.open', title: 'Open', arguments: [record.id] };
		item.accessibilityInformation = { label: `${record.tool} ${record.target ?? ''}: ${statusLine(record)}` };
		return item;
	}

	/** A mutating call that went through shows its diff; any other shows its input and result. */
	async open(id: string): Promise<void> {
		const record = this.store?.get(id);
		if (!record) return;
		if (record.mutating && record.status === 'done' && await this.openDiff(record)) return;
		await this.showDetails(id);
	}

	async showDetails(id: string): Promise<void> {
		const record = this.store?.get(id);
		if (!record) return;
		await this.documents.showText(detailsTitle(record), detailsText(record));
	}

	dispose(): void {
		this.disposed = true;
		for (const disposable of this.disposables.splice(0)) disposable.dispose();
	}
}

const TONE_ICONS: Record<StatusTone, (status: ToolStatus) => vscode.ThemeIcon> = {
	busy: () => new vscode.ThemeIcon('loading~spin'),
	waiting: () => new vscode.ThemeIcon('bell-dot', new vscode.ThemeColor('notificationsInfoIcon.foreground')),
	ok: () => new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
	warning: () => new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground')),
	error: () => new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
	muted: status => new vscode.ThemeIcon(status === 'declined' ? 'circle-slash' : 'debug-stop', new vscode.ThemeColor('testing.iconSkipped')),
};

function tooltip(record: ActivityRecord): vscode.MarkdownString {
	const lines = [
		`**${record.tool}** — ${statusLine(record)}`,
		record.target ? `\n${escape(record.target)}` : '',
		`\nStarted ${new Date(record.startedAt).toLocaleString()}`,
		record.truncated ? '\nThe result was truncated (see its marker for how to get the rest).' : '',
		record.filesTouched?.length ? `\nFiles: ${record.filesTouched.map(escape).join(', ')}` : '',
		record.error ? `\n${escape(record.error.message.split('\n')[0])}` : '',
	];
	return new vscode.MarkdownString(lines.filter(Boolean).join('\n'));
}

function escape(text: string): string {
	return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}
