import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import {
	DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, RunResult, runProcess, SpawnError, StreamCapture,
} from '../core/commands/process';
import { textResult, ToolResult } from '../core/results/result';
import { cleanTerminalText } from '../core/commands/ansi';
import { formatBytes, formatCount } from '../core/results/truncate';
import {
	CommandDir, decideCommandSandbox, formatDuration, oneLine, openCommandSandbox, pendingCommand, resolveCommandDir, sandboxFields, sandboxMetadata,
	sandboxNotes,
} from './commandSupport';
import type { Sandbox, SandboxDecision } from '../core/sandbox/runtime';
import { defineTool } from './tool';

/** An `env` entry: a variable name, `=`, then any value. */
const ENV_ENTRY = '^[A-Za-z_][A-Za-z0-9_]*=';

const schema = Type.Object({
	command: Type.String({ minLength: 1, description: 'Command line (non-empty); pipes, && and redirections work.' }),
	cwd: Type.Optional(Type.String({ description: 'Folder, workspace-relative (default ".").' })),
	timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TIMEOUT_MS, description: `Stop after this many ms (1–${MAX_TIMEOUT_MS}, default ${DEFAULT_TIMEOUT_MS}).` })),
	stdin: Type.Optional(Type.String({ description: 'Standard input, then closed (default empty).' })),
	env: Type.Optional(Type.Array(Type.String({ pattern: ENV_ENTRY }), { description: 'Extra variables as "NAME=value", e.g. ["RUST_BACKTRACE=1"].' })),
	...sandboxFields,
}, { additionalProperties: false });

type Input = typeof schema.static;

export const runCommandTool = defineTool({
	name: 'run_command',
	referenceName: 'tbRun',
	displayName: 'Run Command',
	group: 'commands',
	mutating: true,
	icon: 'terminal',
	tags: ['commands', 'shell'],
	userDescription: 'Run a shell command in the workspace and get its exit code and output.',
	modelDescription: [
		'Run a shell command to completion (bash -o pipefail; pwsh or cmd on Windows) and return its exit code or signal, duration, stdout and stderr. No TTY; PAGER=cat, NO_COLOR=1.',
		'A stream over 64 KB keeps head and tail; a marker names a log of the whole output for read_file.',
		'Sandboxed: writes only the workspace (not protected paths such as .git, .env) and $TMPDIR; no network or secrets (~/.ssh); processes it starts end with it.',
		'A timeout kills them all. For interactive programs, servers or watchers use exec_command.',
	].join(' '),
	schema,
	describe: input => `Running \`${oneLine(input.command, 60)}\``,
	run,
});

/** Plans the command (its folder, its sandbox) for the person to approve; running it is the commit. */
async function run(input: Input, ctx: ToolContext): Promise<PendingCall> {
	refuseLongEnvEntry(input.env);
	const dir = await resolveCommandDir(input.cwd, ctx);
	const decision = await decideCommandSandbox(input, ctx);
	return pendingCommand('Running a command', shownCommand(input), dir, decision, input, approved => runApproved(input, dir, decision, approved));
}

async function runApproved(input: Input, dir: CommandDir, decision: SandboxDecision, ctx: ToolContext): Promise<ToolResult> {
	await ctx.state.commandLogs.beforeCommand();
	const sandbox = await openCommandSandbox(decision, ctx);
	let result: RunResult;
	let created: string[] = [];
	let untrack: () => void = () => undefined;
	try {
		result = await runProcess({
			command: input.command,
			cwd: dir.absolute,
			timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
			stdin: input.stdin,
			env: envVariables(input.env),
			signal: ctx.signal,
			maxOutputBytes: ctx.settings.limits.commandBytes,
			logDir: ctx.state.commandLogs.dir,
			sandbox,
			onStart: group => { untrack = ctx.state.sessions.trackRunning(group); },
		});
	} catch (error) {
		if (error instanceof SpawnError) throw new ToolError('command_failed', `${error.message} Nothing was run. Check that the folder still exists and can be entered; if it does, tell the user that the shell cannot be started.`);
		throw error;
	} finally {
		untrack();
		created = await sandbox.createdProtected().catch(() => []);
		await sandbox.dispose();
	}
	if (result.end === 'cancelled') throw cancelled(result);
	if (result.leftRunning && result.pid !== undefined) ctx.state.sessions.adoptBackground(result.pid, input.command);
	ctx.note({ target: oneLine(input.command, 60), bytes: result.stdout.buffer.totalBytes + result.stderr.buffer.totalBytes });
	return render(input, dir.display, result, sandbox, created.map(found => ctx.boundary.display(found)));
}

/** What a cancelled command did: it ran for a while (and may have changed files), and where its output went. */
function cancelled(result: RunResult): ToolError {
	const logs = [result.stdout.logPath, result.stderr.logPath].filter(Boolean).join(' and ');
	const kept = logs ? ` Its output so far is in ${logs}.` : '';
	return new ToolError('cancelled', `The command was cancelled after ${formatDuration(result.durationMs)}: it and every process it started were stopped. What it did before that (files it wrote) stays.${kept}`);
}

/** The exact command, plus what else shapes it (env, stdin) as shell comments the person can read. */
function shownCommand(input: Input): string {
	const extras: string[] = [];
	for (const [name, value] of Object.entries(envVariables(input.env) ?? {})) extras.push(`# env ${name}=${JSON.stringify(value)}`);
	if (input.stdin) {
		const preview = input.stdin.length > 200 ? `${input.stdin.slice(0, 200)}…` : input.stdin;
		extras.push(`# stdin (${formatBytes(Buffer.byteLength(input.stdin))}): ${JSON.stringify(preview)}`);
	}
	return extras.length ? `${input.command}\n${extras.join('\n')}` : input.command;
}

function render(input: Input, cwd: string, result: RunResult, sandbox: Sandbox, createdProtected: readonly string[]): ToolResult {
	const parts = [headline(input, result)];
	const stdout = section('stdout', result.stdout);
	const stderr = section('stderr', result.stderr);
	if (stdout.text) parts.push(stdout.text);
	if (stderr.text) parts.push(stderr.text);
	if (!stdout.text && !stderr.text) parts.push('(no output)');
	const notes = afterwords(result);
	if (notes) parts.push(notes);
	// Whatever the exit code: `cp -r a /elsewhere || true` was blocked all the same.
	parts.push(...sandboxNotes(sandbox, `${result.stderr.buffer.toText().text}\n${result.stdout.buffer.toText().text}`, createdProtected));
	return textResult(parts.join('\n'), {
		truncated: stdout.truncated || stderr.truncated,
		bytesOmitted: stdout.bytesOmitted + stderr.bytesOmitted,
		linesOmitted: stdout.linesOmitted + stderr.linesOmitted,
		command: input.command,
		cwd,
		exitCode: result.exitCode,
		signal: result.signal,
		timedOut: result.end === 'timeout',
		durationMs: result.durationMs,
		stdoutBytes: result.stdout.buffer.totalBytes,
		stderrBytes: result.stderr.buffer.totalBytes,
		logs: { stdout: result.stdout.logPath, stderr: result.stderr.logPath },
		...sandboxMetadata(sandbox),
		...(result.leftRunning ? { backgroundProcessGroup: result.pid } : {}),
		...(result.escaped.length ? { escapedPids: result.escaped } : {}),
	});
}

function headline(input: Input, result: RunResult): string {
	const took = formatDuration(result.durationMs);
	if (result.end === 'timeout') {
		const limit = formatDuration(input.timeoutMs ?? DEFAULT_TIMEOUT_MS);
		return `Timed out after ${limit}: the command and every process it started were stopped. Output so far is below. If it needs longer, raise timeoutMs (max ${MAX_TIMEOUT_MS / 1000} s) or run it with exec_command and check on it with write_stdin.`;
	}
	if (result.signal) return `Killed by ${result.signal} after ${took}.`;
	const code = result.exitCode;
	if (code === 127) return `Exit code 127 after ${took}: the shell could not find a command${quoteError(result.stderr)}. Check the spelling, and that the program is installed and on PATH.`;
	if (code === 126) return `Exit code 126 after ${took}: a command was found but could not be run${quoteError(result.stderr)} (not executable, or a folder). Check its permissions (chmod +x) or run it through its interpreter.`;
	return `Exit code ${code} after ${took}.`;
}

/** The shell's own complaint (`bash: line 1: foo: command not found`), when there is one. */
function quoteError(stderr: StreamCapture): string {
	const text = stderr.buffer.toText().text;
	const line = text.split('\n').find(l => /command not found|not found|No such file|Permission denied|Is a directory/.test(l));
	return line ? ` (${line.trim().slice(0, 200)})` : '';
}

interface Section {
	text: string;
	truncated: boolean;
	bytesOmitted: number;
	linesOmitted: number;
}

/** One stream of a command's output for its result: head and tail kept, where the rest is. */
export function section(name: string, capture: StreamCapture): Section {
	const total = capture.buffer.totalBytes;
	if (total === 0) return { text: '', truncated: false, bytesOmitted: 0, linesOmitted: 0 };
	const where = capture.logPath ? ` (all of it is in ${capture.logPath})` : '';
	if (capture.binary) {
		const read = capture.logPath ? ` Read it with read_file path="${capture.logPath}" encoding="base64", or redirect the output to a file and inspect that.` : ' Redirect the output to a file and inspect that.';
		return { text: `--- ${name}: ${formatBytes(total)} of binary data, not shown${where}.${read}`, truncated: true, bytesOmitted: total, linesOmitted: 0 };
	}
	const hint = capture.logPath ? () => `read all of it with read_file path="${capture.logPath}"` : () => 'the full output was not saved';
	const { text, info } = capture.buffer.toText(hint);
	const size = `${formatCount(info.totalLines)} line${info.totalLines === 1 ? '' : 's'}, ${formatBytes(total)}`;
	const cut = capture.logCut ? ' The log holds only its first 1 GB.' : '';
	const lost = capture.logError ? ` The full output could not be saved (${capture.logError}).` : '';
	const body = cleanTerminalText(text);
	return {
		text: `--- ${name} (${size})${cut}${lost} ---\n${body}${body.endsWith('\n') ? '' : '\n'}`.replace(/\n$/, ''),
		truncated: info.truncated,
		bytesOmitted: info.bytesOmitted,
		linesOmitted: info.linesOmitted,
	};
}

function afterwords(result: RunResult): string {
	const notes: string[] = [];
	if (result.leftRunning && result.pid !== undefined) {
		const held = result.pipesHeld ? ' They kept its output open; what they print from now on is not collected.' : '';
		notes.push(`Note: processes it started in the background are still running (process group ${result.pid}).${held} They are stopped when Toolbelt stops (the editor closes); stop them sooner with run_command "kill -- -${result.pid}". For servers and watchers, exec_command lets you see their output.`);
	}
	if (result.escaped.length) {
		const pids = result.escaped.join(' ');
		notes.push(`Note: processes it started left its process group (setsid, a daemon) and are still running (pid ${pids}); Toolbelt does not stop them. Stop them when done with run_command "kill ${pids}".`);
	}
	return notes.join('\n');
}

/** Linux refuses any one variable of 128 KiB or more (E2BIG, as for one argument); macOS only the total, far above. */
const MAX_ENV_ENTRY_BYTES = 128 * 1024 - 1;

/** Said before anything is asked or run: spawn's E2BIG read as a fault in the tool, worth a retry. */
function refuseLongEnvEntry(entries: readonly string[] | undefined): void {
	const long = entries?.find(entry => Buffer.byteLength(entry) > MAX_ENV_ENTRY_BYTES);
	if (long === undefined) return;
	throw new ToolError('invalid_input', `The env entry ${long.slice(0, long.indexOf('='))} is ${formatBytes(Buffer.byteLength(long))}; the system takes variables up to ${formatBytes(MAX_ENV_ENTRY_BYTES + 1)}. Write the value to a file with write_file and have the command read it.`);
}

/** `["NAME=value", …]` as variables; a NAME given twice takes its last value, as in a shell. */
function envVariables(entries: readonly string[] | undefined): Record<string, string> | undefined {
	if (!entries?.length) return undefined;
	return Object.fromEntries(entries.map(entry => {
		const equals = entry.indexOf('=');
		return [entry.slice(0, equals), entry.slice(equals + 1)];
	}));
}
