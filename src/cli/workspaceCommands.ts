import { createInterface } from 'node:readline';
import { confirmationTitle, describeRequest } from '../core/policy/approval';
import { pruneBackups } from '../core/changes/backupPruning';
import type { ApprovalRequest } from '../core/context';
import { createNodeEnvironment } from '../core/nodeHost';
import type { ToolResult } from '../core/results/result';
import { ToolError } from '../core/results/errors';
import type { BackupLimits } from '../core/policy/settings';
import { StorageError } from '../core/files/storage';
import { ALL_TOOLS, ToolRegistry } from '../tools';
import { CustomToolCatalog } from '../tools/custom/catalog';
import { formatProblem } from '../tools/custom/definitions';
import type { RunArgs } from './main';
import { UsageError } from './usageError';

/**
 * The CLI's commands that need the tools themselves and a registry on the workspace. main.ts loads
 * this module only for them: `toolbelt list` without custom tools answers from the descriptions
 * written at build time, and evaluates none of this.
 */

const MB = 1024 * 1024;
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Puts a request to the person on the terminal; no terminal means no one to say yes. */
async function askOnTerminal(request: ApprovalRequest): Promise<boolean> {
	if (!process.stdin.isTTY || !process.stderr.isTTY) throw noTerminal(request);
	const rl = createInterface({ input: process.stdin, output: process.stderr });
	try {
		process.stderr.write(`${confirmationTitle(request)}\n${describeRequest(request, 'plain')}\n`);
		const answer = await new Promise<string>(resolve => rl.question('Go ahead? [y/N] ', resolve));
		return /^y(es)?$/i.test(answer.trim());
	} finally {
		rl.close();
	}
}

/** A refusal that says no one was asked: a plain "no" would read as "the user declined" (as an MCP client that cannot ask gets). */
function noTerminal(request: ApprovalRequest): ToolError {
	const what = confirmationTitle(request).replace(/\?$/, '').toLowerCase();
	return new ToolError('declined', `Refused to ${what}: it needs a person's confirmation, and there is no terminal to ask on. Nothing was changed. To allow it, the user can run the command in a terminal, or again with --yes.`);
}

function toJson(result: ToolResult): string {
	const content = result.content.map(part =>
		part.kind === 'text' ? part : { kind: 'image', mimeType: part.mimeType, base64: Buffer.from(part.data).toString('base64') });
	return JSON.stringify({ content, metadata: result.metadata, error: result.error ?? null }, null, 2);
}

type NodeEnvironment = ReturnType<typeof createNodeEnvironment>;

/** The environment for the roots given; roots that cannot be used are the caller's mistake. */
function environmentFor(options: Parameters<typeof createNodeEnvironment>[0]): NodeEnvironment {
	try {
		return createNodeEnvironment(options);
	} catch (error) {
		// An unsafe storage folder is not a usage mistake: its message says what to do.
		if (error instanceof StorageError) throw error;
		throw new UsageError((error as Error).message);
	}
}

export async function run(args: RunArgs): Promise<number> {
	const env = environmentFor({ roots: args.roots, settings: args.settings, storageDir: args.storageDir, confirm: args.yes ? async () => true : askOnTerminal });
	const registry = new ToolRegistry(ALL_TOOLS, env);
	await offerCustomTools(registry, env);
	const controller = new AbortController();
	const interrupt = () => controller.abort();
	// Ctrl-C, a closed terminal, a job runner stopping: each cancels the call, which ends its command
	// (in a process group of its own, it outlived a CLI that a SIGTERM or SIGHUP simply ended).
	for (const signal of STOP_SIGNALS) process.once(signal, interrupt);
	// main() also runs in-process (tests): the listeners must not outlive the call.
	const result = await registry.invoke(args.tool, args.input, { signal: controller.signal }).finally(() => {
		for (const signal of STOP_SIGNALS) process.off(signal, interrupt);
	});
	process.stdout.write(`${toJson(result)}\n`);
	// One call per process: a session (or a background job) cannot outlive it, and must not keep it alive.
	await env.state.sessions?.dispose();
	// Outside VS Code nothing else keeps the backup folder within its limits: each change does.
	if (result.metadata.filesTouched?.length) await pruneQuietly(env.host.storageDir, env.settings().backups);
	return result.error ? 1 : 0;
}

/** Prunes backups; a failure is told on stderr but does not change the call's outcome. */
async function pruneQuietly(storageDir: string, limits: BackupLimits): Promise<void> {
	try {
		await pruneBackups(storageDir, { maxAgeDays: limits.maxAgeDays, maxTotalBytes: limits.maxTotalMB * MB });
	} catch (error) {
		process.stderr.write(`toolbelt: pruning old backups in ${storageDir} failed: ${(error as Error).message}\n`);
	}
}

/** `toolbelt list` for workspace folders where custom tools may be defined: the built-in tools and theirs. */
export async function listWithCustomTools(roots: string[]): Promise<number> {
	const env = environmentFor({ roots });
	const registry = new ToolRegistry(ALL_TOOLS, env);
	await offerCustomTools(registry, env);
	process.stdout.write(`${JSON.stringify(registry.listDefinitions(), null, 2)}\n`);
	return 0;
}

/** Adds the workspace's custom tools to a registry; each definition with a problem is told on stderr instead. */
async function offerCustomTools(registry: ToolRegistry, env: NodeEnvironment): Promise<void> {
	const catalog = new CustomToolCatalog(env.boundary);
	await catalog.reload();
	for (const problem of catalog.problems) process.stderr.write(`toolbelt: custom tool not offered: ${formatProblem(problem)}\n`);
	registry.setCustomTools(catalog.tools);
}
