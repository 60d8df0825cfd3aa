import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultSettings, mergeSettings, SettingsOverrides } from '../core/policy/settings';
import type { McpOptions } from '../mcp/server';
import { builtinDescriptions } from '../tools/builtinDescriptions';
import { DEFINITIONS_FOLDER } from '../tools/custom/location';
import { isUsageError, UsageError } from './usageError';

const USAGE = `Usage:
  toolbelt list [--root DIR]...
      Lists every tool with its description and input schema (JSON), with the custom tools
      defined in .toolbelt/tools/ of the workspace folder(s) (default: the current folder).
      Definitions with problems are not listed; each problem is told on stderr.
  toolbelt run <tool> --input '<json>' | --input @file.json [--root DIR]... [--yes] [--settings '<json>'] [--storage DIR]
      Runs one tool on the workspace folder(s) given by --root (default: the current folder)
      and prints its result as JSON: { content, metadata, error }.
      --yes approves changes and commands without asking; without it they are put to you
      on a terminal, and refused when there is no terminal.
      --storage is where backups and command logs go (default: a private folder per set of
      workspace folders under <temp>/toolbelt-<uid>); it must be yours and closed to other users
      (mode 700). After a change, backups beyond the settings' backups.maxAgeDays / maxTotalMB
      are removed.
  toolbelt mcp [--root DIR]... [--approval never|edits|mutating|always] [--settings '<json>'] [--storage DIR] [--only-custom]
      Serves the tools over MCP on stdin/stdout. Without --root, the client's MCP roots (or the
      current folder) are the workspace. Changes and commands that need approval are put to the
      person through the client (MCP elicitation); a client that cannot ask gets them refused,
      unless --approval (default mutating) lets them run. Protected paths and commands outside
      the sandbox always need a person. Custom tools are served too, and read again when their
      definitions change; --only-custom serves nothing else.

Exit codes: 0 success, 1 the tool reported an error, 2 bad usage.`;

export interface RunArgs {
	tool: string;
	input: unknown;
	roots: string[];
	yes: boolean;
	settings: SettingsOverrides;
	storageDir?: string;
}

function parseRunArgs(args: string[]): RunArgs {
	const [tool, ...rest] = args;
	if (!tool || tool.startsWith('-')) throw new UsageError('run needs a tool name: toolbelt run <tool> --input <json>.');
	const roots: string[] = [];
	let input: unknown;
	let yes = false;
	let settings: SettingsOverrides = {};
	let storageDir: string | undefined;
	parseFlags(rest, {
		'--root': value => roots.push(value()),
		'--input': value => { input = parseJson(readArg(value()), '--input'); },
		'--settings': value => { settings = parseSettings(readArg(value())); },
		'--storage': value => { storageDir = value(); },
		'--yes': () => { yes = true; },
		'-y': () => { yes = true; },
	});
	if (input === undefined) throw new UsageError('run needs --input with the tool\'s JSON input (or @file.json).');
	return { tool, input, roots: roots.length ? roots : [process.cwd()], yes, settings, ...(storageDir ? { storageDir: path.resolve(storageDir) } : {}) };
}

function parseMcpArgs(args: string[]): McpOptions {
	const options: McpOptions = { roots: [], settings: {} };
	let approval: string | undefined;
	parseFlags(args, {
		'--root': value => options.roots.push(path.resolve(value())),
		'--settings': value => { options.settings = parseSettings(readArg(value())); },
		'--storage': value => { options.storageDir = path.resolve(value()); },
		'--approval': value => { approval = value(); },
		'--only-custom': () => { options.onlyCustom = true; },
	});
	// --approval wins over an approval given in --settings, whatever their order.
	if (approval !== undefined) {
		if (mergeSettings(defaultSettings(), { approval }).ignored.length) throw new UsageError('--approval must be one of never, edits, mutating, always.');
		options.settings = { ...options.settings, approval };
	}
	return options;
}

/** Reads flags in order; each handler takes its flag's value, if it has one, by calling `value`. */
function parseFlags(args: string[], handlers: Record<string, (value: () => string) => void>): void {
	for (let i = 0; i < args.length; i++) {
		const flag = args[i];
		const handler = Object.hasOwn(handlers, flag) ? handlers[flag] : undefined;
		if (!handler) throw new UsageError(`Unknown option ${flag}.`);
		handler(() => {
			const next = args[++i];
			if (next === undefined) throw new UsageError(`${flag} needs a value.`);
			return next;
		});
	}
}

/** Settings overrides; one that would be ignored is a usage error, not a silent default. */
function parseSettings(text: string): SettingsOverrides {
	const settings = parseJson(text, '--settings');
	if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) throw new UsageError('--settings must be a JSON object, e.g. {"limits":{"readLines":100}}.');
	const { ignored } = mergeSettings(defaultSettings(), settings as SettingsOverrides);
	if (ignored.length) throw new UsageError(`--settings has unknown or invalid values: ${ignored.join(', ')}. See the settings table in the README.`);
	return settings as SettingsOverrides;
}

function readArg(value: string): string {
	if (!value.startsWith('@')) return value;
	try {
		return fs.readFileSync(value.slice(1), 'utf8');
	} catch (error) {
		throw new UsageError(`Cannot read ${value.slice(1)}: ${(error as Error).message}`);
	}
}

function parseJson(text: string, flag: string): unknown {
	try {
		return JSON.parse(text);
	} catch (error) {
		throw new UsageError(`${flag} is not valid JSON: ${(error as Error).message}`);
	}
}

/**
 * The built-in tools need nothing of the workspace: where no folder has custom tools, the list is
 * their descriptions as built, printed without a registry, the tools' code or a storage folder.
 */
async function list(args: string[], loader: BundleLoader): Promise<number> {
	const roots: string[] = [];
	parseFlags(args, { '--root': value => roots.push(path.resolve(value())) });
	if (roots.length === 0) roots.push(process.cwd());
	if (roots.some(root => !isFolder(root) || fs.existsSync(path.join(root, ...DEFINITIONS_FOLDER.split('/'))))) {
		// Custom tools to read (or a folder to complain about): that takes the workspace and the registry.
		return (await workspaceCommands(loader)).listWithCustomTools(roots);
	}
	process.stdout.write(`${JSON.stringify(builtinDescriptions(), null, 2)}\n`);
	return 0;
}

/** How main() loads its other bundles; the launcher (launch.ts) passes one that uses its code cache. */
export interface BundleLoader {
	load?<T>(bundle: string): T;
}

/**
 * The commands that need the tools themselves and a registry on the workspace. In the bundles they
 * are dist/cliWorkspace.js (esbuild.mjs), which the launcher loads through its code cache.
 */
async function workspaceCommands(loader: BundleLoader): Promise<typeof import('./workspaceCommands')> {
	return loader.load ? loader.load('cliWorkspace.js') : import('./workspaceCommands');
}

function isFolder(file: string): boolean {
	return fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/**
 * The MCP server with its SDK (half of the CLI's code) is loaded only for `toolbelt mcp`: the bundle
 * keeps it in its own file, so `list` and `run` neither compile nor evaluate it.
 */
async function serve(options: McpOptions): Promise<void> {
	const { serveMcp } = await import('../mcp/server');
	await serveMcp(options);
}

let stdoutClosedIgnored = false;

/**
 * A reader that stops early (`toolbelt run ... | head -1`) closes the pipe: the rest of the output
 * has no one to read it, which is not a failure of the call. Node makes that EPIPE an unhandled
 * error that ended the process with a stack trace and exit code 1, mid-way through what followed
 * the print (ending sessions, pruning backups). Once per process: tests call main() many times.
 */
function ignoreClosedStdout(): void {
	if (stdoutClosedIgnored) return;
	stdoutClosedIgnored = true;
	process.stdout.on('error', (error: NodeJS.ErrnoException) => {
		if (error.code !== 'EPIPE') throw error;
	});
}

export async function main(argv: string[], loader: BundleLoader = {}): Promise<number> {
	const [command, ...rest] = argv;
	ignoreClosedStdout();
	try {
		switch (command) {
			case 'list': return await list(rest, loader);
			case 'run': return await (await workspaceCommands(loader)).run(parseRunArgs(rest));
			case 'mcp': await serve(parseMcpArgs(rest)); return 0;
			case 'help': case '--help': case '-h': process.stdout.write(`${USAGE}\n`); return 0;
			default: throw new UsageError(command ? `Unknown command "${command}".` : 'No command given.');
		}
	} catch (error) {
		if (isUsageError(error)) {
			process.stderr.write(`toolbelt: ${error.message}\n\n${USAGE}\n`);
			return 2;
		}
		process.stderr.write(`toolbelt: ${(error as Error).message}\n`);
		return 1;
	}
}

if (require.main === module) {
	main(process.argv.slice(2)).then(code => {
		process.exitCode = code;
	});
}
