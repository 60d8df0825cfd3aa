import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, CallToolResult, ListToolsRequestSchema, Tool } from '@modelcontextprotocol/sdk/types.js';
import { confirmationDiff, confirmationTitle, describeRequest } from '../core/policy/approval';
import type { ApprovalRequest } from '../core/context';
import { ToolError } from '../core/results/errors';
import { decideSandbox } from '../core/sandbox/runtime';
import { createNodeEnvironment } from '../core/nodeHost';
import type { ToolResult } from '../core/results/result';
import type { Approval, SettingsOverrides } from '../core/policy/settings';
import { ALL_TOOLS, ToolRegistry } from '../tools';
import { CustomToolCatalog } from '../tools/custom/catalog';
import { formatProblem } from '../tools/custom/definitions';
import { describeTool, type ToolDescription } from '../tools/description';
import { modelName } from '../tools/tool';

export interface McpOptions {
	/** Workspace folders from --root; when empty, the client's MCP roots (or the current folder). */
	roots: string[];
	/** Holds --approval, when given (default `mutating`, as everywhere). */
	settings: SettingsOverrides;
	storageDir?: string;
	/** Serve only the workspace's custom tools (VS Code, which has the built-in ones already). */
	onlyCustom?: boolean;
}

/** Diffs shown in an elicitation: enough to judge, small enough for any client's dialog. */
const ELICITATION_DIFF_BYTES = 32 * 1024;
/** How often a long call tells the client it is still running. */
const PROGRESS_EVERY_MS = 5000;
/** Tools that only VS Code's language services can run are not offered outside it. */
const MCP_TOOLS = ALL_TOOLS.filter(tool => !tool.needsVscode);
/**
 * How often custom tool definitions are read again. Polled rather than watched: the definitions
 * folder may not exist yet, and a few small reads every two seconds cost nothing.
 */
const CUSTOM_TOOLS_POLL_MS = 2000;
/**
 * How long the server, told to stop, waits for its cancelled calls to end: enough for a command's
 * SIGTERM grace and SIGKILL, bounded so that a call that ignores its cancel cannot keep it alive.
 */
const STOP_WAIT_MS = 4000;

/** Serves every tool that works outside VS Code over stdio until the client goes away. */
export async function serveMcp(options: McpOptions): Promise<void> {
	const { server, dispose } = createMcpServer(options);
	// The client closing stdin (or signalling the server) ends it; its running commands and sessions
	// end first: a command runs in a process group of its own, which outlives a server that just exits.
	let stopping = false;
	const stop = () => {
		if (stopping) return;
		stopping = true;
		void dispose().finally(() => process.exit(0));
	};
	process.stdin.once('end', stop);
	// The transport closes itself on a message it cannot take (one beyond the SDK's 10 MB, say): the
	// server then stops as when the client leaves, instead of lingering unreachable with its sessions.
	server.onclose = stop;
	// MCP clients keep a server's stderr in their log: the one place to say why the connection ended.
	server.onerror = error => process.stderr.write(`toolbelt: the MCP connection failed: ${error.message}\n`);
	process.once('SIGTERM', stop);
	process.once('SIGINT', stop);
	await server.connect(new StdioServerTransport());
}

export function createMcpServer(options: McpOptions): { server: Server; dispose(): Promise<void> } {
	const server = new Server({ name: 'toolbelt', version: '0.1.0' }, { capabilities: { tools: { listChanged: true } } });
	const builtIns = options.onlyCustom ? [] : MCP_TOOLS;
	let workspace: Promise<Workspace> | undefined;
	let poll: NodeJS.Timeout | undefined;
	// Cancels every call still running when the server stops; `running` is what they settle to.
	const closing = new AbortController();
	const running = new Set<Promise<unknown>>();
	// Built on first use, after initialization: only then are the client's roots and elicitation known.
	const getWorkspace = () => (workspace ??= workspaceRoots(server, options.roots).then(async roots => {
		const env = createNodeEnvironment({
			roots,
			settings: options.settings,
			storageDir: options.storageDir,
			confirm: (request, signal) => askPerson(server, request, env.settings().approval, signal),
		});
		const opened = { env, registry: new ToolRegistry(builtIns, env), custom: new CustomToolCatalog(env.boundary) };
		await refreshCustomTools(opened);
		poll = setInterval(() => void refreshAndTell(opened).catch(() => undefined), CUSTOM_TOOLS_POLL_MS);
		poll.unref();
		return opened;
	}));
	const refreshAndTell = async (opened: Workspace) => {
		if (await refreshCustomTools(opened)) await server.sendToolListChanged();
	};
	const descriptions = builtIns.map(tool => describeTool(tool));
	// Our first request to the client gets JSON-RPC id 0, and clients built on the TypeScript SDK
	// ignore a cancel of id 0 (modelcontextprotocol/typescript-sdk#2283): a question put as the
	// first request would stay open after its call was cancelled. A ping takes that id.
	server.oninitialized = () => void server.ping().catch(() => undefined);

	server.setRequestHandler(ListToolsRequestSchema, async () => {
		let opened;
		try {
			opened = await getWorkspace();
		} catch {
			// The workspace cannot be opened: the built-in tools are listed, and each call says why it fails.
			workspace = undefined;
			return { tools: descriptions.map(tool => toMcpTool(tool)) };
		}
		await refreshCustomTools(opened);
		const closed = await commandsStayInside(opened.env);
		return { tools: opened.registry.listDefinitions().map(tool => toMcpTool(tool, closed)) };
	});
	server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
		const progressToken = request.params._meta?.progressToken;
		// Progress must increase with each notification: a count of them does.
		let sent = 0;
		const progress = progressToken === undefined ? undefined : startProgress(message => extra.sendNotification({
			method: 'notifications/progress',
			params: { progressToken, progress: ++sent, message },
		}).catch(() => undefined));
		try {
			let opened;
			try {
				opened = await getWorkspace();
			} catch (error) {
				// A workspace folder that does not exist or an unsafe storage folder: the message says what to fix.
				workspace = undefined;
				return { content: [{ type: 'text', text: `Error: the Toolbelt MCP server cannot open its workspace: ${(error as Error).message}` }], isError: true };
			}
			// A definition edited since the last listing runs as it is now.
			if (!builtIns.some(tool => tool.name === modelName(request.params.name))) await refreshAndTell(opened);
			const invoking = opened.registry.invoke(request.params.name, request.params.arguments ?? {}, { signal: AbortSignal.any([extra.signal, closing.signal]) });
			const settled = invoking.catch(() => undefined);
			running.add(settled);
			void settled.then(() => running.delete(settled));
			return toMcpResult(await invoking);
		} finally {
			// Sent before the result: a client stops listening for progress once the call has answered.
			await progress?.finish();
		}
	});
	return {
		server,
		dispose: async () => {
			clearInterval(poll);
			closing.abort();
			await Promise.race([Promise.all(running), new Promise(resolve => setTimeout(resolve, STOP_WAIT_MS).unref())]);
			const opened = await workspace?.catch(() => undefined);
			await opened?.env.state.sessions?.dispose();
		},
	};
}

interface Workspace {
	readonly env: ReturnType<typeof createNodeEnvironment>;
	readonly registry: ToolRegistry;
	readonly custom: CustomToolCatalog;
}

/**
 * Reads the custom tool definitions again; true when the tools offered changed. Problems go to
 * stderr, which MCP clients keep in their server log, each time they change.
 */
async function refreshCustomTools(workspace: Workspace): Promise<boolean> {
	let change;
	try {
		change = await workspace.custom.reload();
	} catch (error) {
		// The set offered stays as it was; the next listing, call or poll tries again.
		process.stderr.write(`toolbelt: custom tools could not be read: ${(error as Error).message}\n`);
		return false;
	}
	if (change.problems) {
		for (const problem of workspace.custom.problems) process.stderr.write(`toolbelt: custom tool not offered: ${formatProblem(problem)}\n`);
	}
	if (change.tools) workspace.registry.setCustomTools(workspace.custom.tools);
	return change.tools;
}

/** The --root folders; else the client's file roots when it offers them; else the current folder. */
async function workspaceRoots(server: Server, given: string[]): Promise<string[]> {
	if (given.length) return given;
	if (server.getClientCapabilities()?.roots) {
		try {
			const { roots } = await server.listRoots();
			const paths = roots.filter(root => root.uri.startsWith('file:')).map(root => fileURLToPath(root.uri));
			if (paths.length) return paths;
		} catch {
			// A client that announces roots but cannot list them gets the current folder, as one without roots.
		}
	}
	return [process.cwd()];
}

/**
 * Puts a request to the person through the client (elicitation) when it can ask; otherwise
 * refuses with what would allow the call. Reached only when the request needs a person. A
 * cancelled call takes its question back (the SDK tells the client), so no dialog outlives it.
 */
async function askPerson(server: Server, request: ApprovalRequest, approval: Approval, signal: AbortSignal | undefined): Promise<boolean> {
	if (!server.getClientCapabilities()?.elicitation) throw cannotAsk(request, approval);
	const details = describeRequest(request, 'plain', confirmationDiff(request, ELICITATION_DIFF_BYTES));
	const answer = await server.elicitInput({
		message: `${confirmationTitle(request)}\n\n${details}`,
		requestedSchema: { type: 'object', properties: {} },
	}, { signal });
	return answer.action === 'accept';
}

function cannotAsk(request: ApprovalRequest, approval: Approval): ToolError {
	const what = confirmationTitle(request).replace(/\?$/, '').toLowerCase();
	const mustReach = request.kind === 'files' ? 'it touches a protected path' : 'it runs outside the sandbox';
	const protectedCall = (request.kind === 'files' && request.protectedPaths.length > 0) || (request.kind === 'command' && request.unsandboxed !== undefined);
	if (protectedCall) {
		return new ToolError('declined', `Refused to ${what}: ${mustReach}, so a person must confirm it, and this MCP client cannot ask one (it does not support elicitation). Nothing was changed. Do it another way, or ask the user to do it themselves.`);
	}
	return new ToolError('declined', `Refused to ${what}: the Toolbelt MCP server runs with --approval ${approval}, which needs a person to confirm this, and this MCP client cannot ask one (it does not support elicitation). Nothing was changed. To allow it, the user can restart the server with --approval never, or use a client that supports elicitation.`);
}

/** Tells the client a call started, then every few seconds that it is still running, then that it ended. */
function startProgress(send: (message: string) => Promise<unknown>): { finish(): Promise<void> } {
	const started = Date.now();
	void send('started');
	const timer = setInterval(() => void send(`running ${Math.round((Date.now() - started) / 1000)} s`), PROGRESS_EVERY_MS);
	return {
		finish: async () => {
			clearInterval(timer);
			await send('finished');
		},
	};
}

/**
 * Whether a command (a custom tool's script included) runs in a sandbox with the network off: it
 * then reaches nothing beyond the workspace, and clients need not put its results to review.
 */
async function commandsStayInside(env: Workspace['env']): Promise<boolean> {
	const { sandbox } = env.settings();
	if (sandbox.network !== 'off') return false;
	const decision = await decideSandbox(sandbox, env.host.sandbox).catch(() => undefined);
	return decision !== undefined && decision.kind !== 'none';
}

/** `commandsStayInside`: commands run sandboxed with the network off (see above). */
export function toMcpTool(tool: ToolDescription, commandsStayInside = false): Tool {
	const runsCommands = tool.group === 'commands';
	// The plan tools change only the plan, never a file of the workspace.
	const changesWorkspace = tool.mutating && tool.group !== 'plan';
	return {
		name: tool.name,
		description: tool.description,
		// A plain JSON copy: TypeBox marks its schemas with symbol keys no client needs.
		inputSchema: JSON.parse(JSON.stringify(tool.inputSchema)),
		annotations: {
			readOnlyHint: !tool.mutating,
			destructiveHint: changesWorkspace,
			idempotentHint: !tool.mutating || tool.name === 'write_file',
			// A command may reach the network or files outside, unless the sandbox keeps it in.
			openWorldHint: runsCommands && !commandsStayInside,
		},
	};
}

export function toMcpResult(result: ToolResult): CallToolResult {
	return {
		content: result.content.map(part => part.kind === 'text'
			? { type: 'text' as const, text: part.text }
			: { type: 'image' as const, mimeType: part.mimeType, data: Buffer.from(part.data).toString('base64') }),
		...(result.error ? { isError: true } : {}),
	};
}
