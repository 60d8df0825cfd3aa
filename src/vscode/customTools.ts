import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import type { Boundary } from '../core/policy/boundary';
import type { Settings } from '../core/policy/settings';
import { CustomToolCatalog } from '../tools/custom/catalog';
import { formatProblem } from '../tools/custom/definitions';
import { DEFINITIONS_FOLDER } from '../tools/custom/location';
import { isSwitchedOff } from '../tools/tool';
import type { McpServerDefinitionProvider } from './mcpApi';

/**
 * Custom tools reach Copilot (and any chat participant) as an MCP server VS Code starts: ours,
 * `dist/cli.js mcp --only-custom`, on the extension host's own Node. The built-in tools are
 * registered as language model tools already, so the server offers the custom ones alone.
 * Definitions are watched; a change of the tools makes VS Code ask for the server again (a new
 * `version` restarts it), and a change of their problems is told to the person once.
 */

const SERVER_LABEL = 'Toolbelt custom tools';

type McpStdioServerDefinitionClass = new (label: string, command: string, args: string[], env: Record<string, string>, version: string) => { cwd?: vscode.Uri };

export interface CustomToolsOptions {
	boundary(): Promise<Boundary>;
	settings(): Settings;
	/** The shipped CLI, `<extension>/dist/cli.js`. */
	cliPath: string;
	log: vscode.LogOutputChannel;
}

export interface CustomToolsProvider extends McpServerDefinitionProvider, vscode.Disposable {
	/** Reads the definitions again now (also done by the file watcher). */
	reload(): Promise<void>;
}

/** How often the definitions are read again besides the file watcher's events (a few small files). */
const RELOAD_INTERVAL_MS = 5000;

/** The provider alone, for the extension to register and for tests to ask. */
export function createCustomToolsProvider(options: CustomToolsOptions): CustomToolsProvider {
	const changed = new vscode.EventEmitter<void>();
	const catalog = new CustomToolCatalog(options.boundary);
	let loaded: Promise<void> | undefined;
	const reload = async () => {
		const change = await catalog.reload();
		if (change.problems) report(catalog.problems.map(formatProblem), options.log);
		if (change.tools) changed.fire();
	};
	// A failed read (a workspace that cannot be opened) is logged and tried again on the next change.
	const reloadLogged = () => (loaded = reload().catch(error => options.log.error(`Custom tools: ${(error as Error).message}`)));
	const watcher = vscode.workspace.createFileSystemWatcher(`**/${DEFINITIONS_FOLDER}/*`);
	// File watchers can miss or delay events (a busy machine, a `files.watcherExclude` covering the
	// folder): a light re-read, once the definitions were first asked for, catches what they miss.
	const poll = setInterval(() => loaded && reloadLogged(), RELOAD_INTERVAL_MS);
	const subscriptions: vscode.Disposable[] = [
		changed,
		watcher,
		{ dispose: () => clearInterval(poll) },
		watcher.onDidCreate(reloadLogged),
		watcher.onDidChange(reloadLogged),
		watcher.onDidDelete(reloadLogged),
		vscode.workspace.onDidChangeWorkspaceFolders(reloadLogged),
		// A new version restarts the server with the current settings (sandbox, limits, protected paths).
		vscode.workspace.onDidChangeConfiguration(event => event.affectsConfiguration('toolbelt') && changed.fire()),
		vscode.workspace.onDidGrantWorkspaceTrust(() => changed.fire()),
	];
	return {
		onDidChangeMcpServerDefinitions: changed.event,
		reload: async () => {
			await reloadLogged();
		},
		provideMcpServerDefinitions: async () => {
			await (loaded ?? reloadLogged());
			const settings = options.settings();
			// An untrusted workspace's scripts never run; switched-off tools are not offered.
			if (!vscode.workspace.isTrusted || !catalog.tools.some(tool => !isSwitchedOff(tool, settings))) return [];
			return [serverDefinition(options.cliPath, settings, await options.boundary(), catalog)];
		},
		dispose: () => vscode.Disposable.from(...subscriptions).dispose(),
	};
}

function serverDefinition(cliPath: string, settings: Settings, boundary: Boundary, catalog: CustomToolCatalog): object {
	const Definition = (vscode as unknown as { McpStdioServerDefinition: McpStdioServerDefinitionClass }).McpStdioServerDefinition;
	// VS Code asks before each MCP tool call that is not read-only: the server need not ask again.
	const args = [cliPath, 'mcp', '--only-custom', '--approval', 'never', '--settings', JSON.stringify({ ...settings, approval: 'never' })];
	for (const root of boundary.roots) args.push('--root', root.path);
	// The extension host's own Node: in desktop VS Code that is Electron, which runs as Node when told so.
	const env: Record<string, string> = process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {};
	const definition = new Definition(SERVER_LABEL, process.execPath, args, env, versionOf(args, catalog));
	if (boundary.roots[0]) definition.cwd = vscode.Uri.file(boundary.roots[0].path);
	return definition;
}

/** Changes whenever what the server would offer or how it runs changes: VS Code then restarts it. */
function versionOf(args: string[], catalog: CustomToolCatalog): string {
	const tools = catalog.tools.map(tool => [tool.name, tool.modelDescription, tool.inputSchema, tool.mutating]);
	return createHash('sha256').update(JSON.stringify([args, tools])).digest('hex').slice(0, 16);
}

/** Each problem goes to the log; the person is told once per change, with a way to the details. */
function report(problems: string[], log: vscode.LogOutputChannel): void {
	for (const problem of problems) log.warn(`Custom tool not offered: ${problem}`);
	if (!problems.length) return;
	const first = problems[0];
	const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
	void vscode.window.showWarningMessage(`Toolbelt: a custom tool definition has a problem and is not offered: ${first}${more}`, 'Show Log').then(choice => {
		if (choice) log.show();
	});
}
