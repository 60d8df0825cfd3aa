import * as vscode from 'vscode';
import type { ToolEnvironment } from '../core/context';
import type { ToolRegistry } from '../tools/registry';
import type { ToolDefinition } from '../tools/tool';
import { ActivityView } from './activityView';
import { BackupsUi } from './backupsUi';
import type { ChangeDiffs } from './changeDiffs';
import { CommandHandler, commandHandlers } from './commands';
import { INPUT_SCHEME, ToolDocuments } from './documents';
import { PlanView } from './planView';
import { registerResultLinks } from './resultLinks';

/**
 * Everything the person sees besides chat: the Activity and Plan views, result and input
 * documents, Restore Backup…, and the handlers of the command palette's commands, which it returns
 * (activation has registered their ids). Owns its disposables through `subscriptions`.
 */
export function registerWorkbenchUi(
	subscriptions: vscode.Disposable[],
	parts: { registry: ToolRegistry; env: ToolEnvironment; tools: readonly ToolDefinition<any>[]; log: vscode.LogOutputChannel; diffs: ChangeDiffs },
): Map<string, CommandHandler> {
	const { registry, env, tools, log, diffs } = parts;
	const documents = new ToolDocuments(tools);
	const inputProblems = vscode.languages.createDiagnosticCollection('toolbelt-input');
	const activity = new ActivityView(registry, documents, env.host.storageDir, log);
	const plan = new PlanView(registry, env, log);
	const backups = new BackupsUi(env, diffs, log);
	activity.openDiff = record => backups.openDiffFor(record);
	subscriptions.push(
		documents, inputProblems, activity, plan, backups, registerResultLinks(tools),
		// A typed correction clears the old underlines; the next Run checks again.
		vscode.workspace.onDidChangeTextDocument(event => {
			if (event.document.uri.scheme === INPUT_SCHEME) inputProblems.delete(event.document.uri);
		}),
		registry.onEvent(event => {
			if (event.phase === 'end' && event.filesTouched?.length) backups.schedulePrune();
		}),
		vscode.workspace.onDidChangeConfiguration(event => {
			if (event.affectsConfiguration('toolbelt.backups')) backups.schedulePrune();
		}),
	);
	return commandHandlers({ registry, tools, settings: () => env.settings(), documents, inputProblems, activity, plan, backups, state: env.state });
}
