import * as vscode from 'vscode';
import type { ToolEvent } from '../core/context';
import type { ToolbeltApi } from './api';
import { MCP_PROVIDER_ID, mcpApi } from './mcpApi';
import type { Workbench } from './workbench';

/**
 * The workbench (workbench.ts), started once: by the first entry point used, or right after
 * activation. Tool events and custom-tool changes reach the entry points' own emitters, which
 * exist from activation on.
 */
export class LazyWorkbench {
	private started: Promise<Workbench> | undefined;
	private toldFailure = false;
	readonly toolEvents = new vscode.EventEmitter<ToolEvent>();
	readonly customToolsChanged = new vscode.EventEmitter<void>();

	constructor(private readonly subscriptions: vscode.Disposable[], private readonly start: () => Promise<Workbench>) {
		subscriptions.push(this.toolEvents, this.customToolsChanged);
	}

	get(): Promise<Workbench> {
		return (this.started ??= this.start().then(
			workbench => {
				this.subscriptions.push(workbench.onDidInvokeTool(event => this.toolEvents.fire(event)));
				if (workbench.customTools) this.subscriptions.push(workbench.customTools.onDidChangeMcpServerDefinitions(() => this.customToolsChanged.fire()));
				return workbench;
			},
			error => this.failedToStart(error),
		));
	}

	/**
	 * A start that failed is not kept: the next entry point used tries again. The person is told
	 * once; each caller (a model among them) gets what happened and what to do, not a loader's words.
	 */
	private failedToStart(error: unknown): never {
		this.started = undefined;
		const message = `Toolbelt could not start (${(error as Error)?.message ?? String(error)}). Reload the window (Developer: Reload Window); if it keeps failing, reinstall the extension. The details are in the extension host log.`;
		console.error('Toolbelt could not start:', error);
		if (!this.toldFailure) {
			this.toldFailure = true;
			void vscode.window.showErrorMessage(message);
		}
		throw new Error(message);
	}

	/** Stops the sessions, when the workbench was started (none can run otherwise). */
	stopSessions(): Promise<void> | undefined {
		return this.started?.then(workbench => workbench.stopSessions(), () => undefined);
	}
}

interface Contributions {
	readonly languageModelTools: ReadonlyArray<{ readonly name: string }>;
	readonly commands: ReadonlyArray<{ readonly command: string }>;
}

/**
 * All activation does: registers every tool and command package.json contributes, and the custom
 * tools' MCP provider, each forwarding to the workbench, and returns the API. VS Code knows their
 * names, schemas and titles from the manifest it has already read (`packageJSON` is that, in
 * memory): activation loads none of the tools and touches no file, so the tools are registered
 * within a few milliseconds of the activation event, and the workbench's load is paid once, by
 * whatever needs it first.
 */
export function registerEntryPoints(context: vscode.ExtensionContext, workbench: LazyWorkbench): ToolbeltApi {
	const contributes = context.extension.packageJSON.contributes as Contributions;
	const tool = async (name: string) => (await workbench.get()).tools.get(name) ?? missing(`tool ${name}`);
	const command = async (id: string) => (await workbench.get()).commands.get(id) ?? missing(`command ${id}`);
	context.subscriptions.push(
		...contributes.languageModelTools.map(({ name }) => vscode.lm.registerTool<object>(name, {
			prepareInvocation: async (options, token) => (await tool(name)).prepareInvocation?.(options, token),
			invoke: async (options, token) => (await tool(name)).invoke(options, token),
		})),
		...contributes.commands.map(({ command: id }) => vscode.commands.registerCommand(id, async (...args: unknown[]) => (await command(id))(...args))),
	);
	const mcp = mcpApi();
	if (mcp) {
		context.subscriptions.push(mcp.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
			onDidChangeMcpServerDefinitions: workbench.customToolsChanged.event,
			provideMcpServerDefinitions: async () => (await workbench.get()).customTools?.provideMcpServerDefinitions() ?? [],
		}));
	}
	return {
		onDidInvokeTool: workbench.toolEvents.event,
		invoke: async (name, input, token) => (await workbench.get()).invoke(name, input, token),
	};
}

/** package.json and the code disagree: a unit test (manifest, contributions) keeps that from shipping. */
function missing(what: string): never {
	throw new Error(`Toolbelt has no handler for the ${what} that package.json contributes.`);
}
