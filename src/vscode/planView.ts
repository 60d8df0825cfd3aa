import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeProblem, PlanFileState, PlanTask, readPlanFile, summarize, withStatus } from '../core/plan/planDocument';
import type { ToolEnvironment } from '../core/context';
import type { ToolRegistry } from '../tools/registry';
import { SECTION } from './settings';
import { showUntrustedRefusal } from './trust';

export const PLAN_VIEW = 'toolbelt.plan';
const PLAN_TOOLS = new Set(['update_plan', 'complete_task']);

interface PlanItem {
	readonly number: number;
	readonly task: PlanTask;
}

/**
 * The Plan view: the plan file as a checklist. Ticking a task runs complete_task (unticking
 * sets it back to pending with update_plan) through the registry, so the change goes through the
 * same pipeline, shows in Activity, and the model's next get_plan sees it. The tick is the
 * person's decision, so it is not asked again.
 */
export class PlanView implements vscode.TreeDataProvider<PlanItem>, vscode.Disposable {
	private readonly changed = new vscode.EventEmitter<void>();
	readonly onDidChangeTreeData = this.changed.event;
	private readonly view: vscode.TreeView<PlanItem>;
	private readonly disposables: vscode.Disposable[] = [];
	private watcher: vscode.Disposable | undefined;
	/** Counts watch requests: only the latest one in flight may install its watcher. */
	private watchGeneration = 0;
	private watching = false;
	private disposed = false;
	private refreshTimer: ReturnType<typeof setTimeout> | undefined;
	private loggedProblem: string | undefined;

	constructor(private readonly registry: ToolRegistry, private readonly env: ToolEnvironment, private readonly log: vscode.LogOutputChannel) {
		this.view = vscode.window.createTreeView(PLAN_VIEW, { treeDataProvider: this, manageCheckboxStateManually: true });
		this.disposables.push(
			this.view,
			this.changed,
			this.view.onDidChangeCheckboxState(event => void this.onTicks(event.items)),
			registry.onEvent(event => {
				if (event.phase === 'end' && PLAN_TOOLS.has(event.tool)) this.refresh();
			}),
			vscode.workspace.onDidChangeConfiguration(event => {
				if (event.affectsConfiguration(`${SECTION}.planFile`) || event.affectsConfiguration(`${SECTION}.fileAccess`)) this.rewatch();
			}),
			vscode.workspace.onDidChangeWorkspaceFolders(() => this.rewatch()),
			vscode.workspace.onDidGrantWorkspaceTrust(() => this.refresh()),
		);
		// Activation does no I/O: the plan is located, read and watched once the view is first shown.
	}

	/** Re-reads the plan soon; bursts (a write seen by the watcher and by the registry) coalesce. */
	refresh(): void {
		if (this.refreshTimer) clearTimeout(this.refreshTimer);
		this.refreshTimer = setTimeout(() => {
			this.refreshTimer = undefined;
			this.changed.fire();
		}, 50);
	}

	/** The plan file may have moved (setting, folders): watch the new place (once shown) and show it. */
	private rewatch(): void {
		if (this.watching) this.watch();
		this.refresh();
	}

	private watch(): void {
		const generation = ++this.watchGeneration;
		this.watcher?.dispose();
		this.watcher = undefined;
		void this.planState().then(state => {
			// A later request (or dispose) overtook this one while the plan was being located.
			if (!state || this.disposed || generation !== this.watchGeneration) return;
			const pattern = new vscode.RelativePattern(vscode.Uri.file(path.dirname(state.absolute)), path.basename(state.absolute));
			const watcher = vscode.workspace.createFileSystemWatcher(pattern);
			watcher.onDidCreate(() => this.refresh());
			watcher.onDidChange(() => this.refresh());
			watcher.onDidDelete(() => this.refresh());
			this.watcher = watcher;
		});
	}

	/** The plan file now; undefined (with the view saying why) when it cannot be located. */
	private async planState(): Promise<PlanFileState | undefined> {
		try {
			return await readPlanFile(await this.env.boundary(), this.env.settings().planFile);
		} catch (error) {
			this.view.message = `The plan cannot be shown: ${(error as Error).message}`;
			return undefined;
		}
	}

	async getChildren(element?: PlanItem): Promise<PlanItem[]> {
		if (element) return [];
		if (!vscode.workspace.workspaceFolders?.length) {
			this.view.message = 'Open a folder to keep a plan.';
			return [];
		}
		if (!this.watching) {
			this.watching = true;
			this.watch();
		}
		const state = await this.planState();
		if (!state) return [];
		if (state.problem) {
			if (state.problem !== this.loggedProblem) this.log.warn(describeProblem(state));
			this.loggedProblem = state.problem;
			this.view.message = `⚠ ${describeProblem(state).replace('the next update_plan', 'the next update')}`;
		} else {
			// An empty plan shows the view's welcome content (package.json viewsWelcome).
			this.view.message = undefined;
		}
		this.view.description = state.plan.tasks.length ? summarize(state.plan) : undefined;
		return state.plan.tasks.map((task, index) => ({ number: index + 1, task }));
	}

	getTreeItem(item: PlanItem): vscode.TreeItem {
		const { task } = item;
		const treeItem = new vscode.TreeItem(`${item.number}. ${task.title.replace(/\s*\n\s*/g, ' ')}`, vscode.TreeItemCollapsibleState.None);
		treeItem.id = `${item.number}:${task.title}`;
		treeItem.checkboxState = {
			state: task.status === 'completed' ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked,
			tooltip: task.status === 'completed' ? 'Completed; untick to set it back to pending' : 'Tick when done',
		};
		const firstDetail = task.details?.split('\n')[0];
		treeItem.description = [task.status === 'in_progress' ? '● in progress' : '', firstDetail].filter(Boolean).join(' — ');
		treeItem.tooltip = new vscode.MarkdownString(`**${task.title}** — ${task.status.replace('_', ' ')}${task.details ? `\n\n${task.details}` : ''}`);
		treeItem.contextValue = task.status;
		return treeItem;
	}

	private async onTicks(items: readonly (readonly [PlanItem, vscode.TreeItemCheckboxState])[]): Promise<void> {
		for (const [item, checkbox] of items) {
			await this.setCompleted(item, checkbox === vscode.TreeItemCheckboxState.Checked);
		}
		this.refresh();
	}

	/** Ticks or unticks one task, refusing when the plan changed under the view. */
	async setCompleted(item: PlanItem, completed: boolean): Promise<boolean> {
		const current = await this.planState();
		const task = current?.plan.tasks[item.number - 1];
		if (!current || current.problem || !task || task.title !== item.task.title) {
			void vscode.window.showWarningMessage('Toolbelt: the plan changed since it was shown; the Plan view has been refreshed. Tick the task again.');
			return false;
		}
		if ((task.status === 'completed') === completed) return true;
		const result = completed
			? await this.registry.invoke('complete_task', { taskNumber: item.number }, { approval: 'preconfirmed' })
			: await this.registry.invoke('update_plan', { tasks: withStatus(current.plan, item.number, 'pending').tasks }, { approval: 'preconfirmed' });
		if (!result.error) return true;
		if (result.error.code === 'untrusted') showUntrustedRefusal(result.error.message);
		else void vscode.window.showErrorMessage(`Toolbelt: could not update the plan: ${result.error.message}`);
		return false;
	}

	async locate(): Promise<PlanFileState | undefined> {
		return this.planState();
	}

	dispose(): void {
		this.disposed = true;
		if (this.refreshTimer) clearTimeout(this.refreshTimer);
		this.watcher?.dispose();
		this.watcher = undefined;
		for (const disposable of this.disposables.splice(0)) disposable.dispose();
	}
}
