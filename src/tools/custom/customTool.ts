import type { PendingCall, ToolContext } from '../../core/context';
import { CancelledError, ToolError } from '../../core/results/errors';
import { commandLogDir, RunResult, runProcess, SpawnError } from '../../core/commands/process';
import { textResult, ToolResult } from '../../core/results/result';
import type { SandboxDecision } from '../../core/sandbox/runtime';
import { cleanTerminalText } from '../../core/commands/ansi';
import { CommandDir, decideCommandSandbox, formatDuration, openCommandSandbox, pendingCommand, sandboxMetadata, sandboxNotes } from '../commandSupport';
import { section } from '../runCommand';
import type { ToolDefinition } from '../tool';
import { CustomToolSpec, resolveScript, ScriptPath } from './definitions';

/**
 * A custom tool as the registry runs it: its input validated against the definition's schema,
 * then its script run like run_command runs a command (same approval, sandbox, timeout, output
 * caps and logs), with the input as JSON on stdin. Its stdout is the result; any other end
 * (an exit code other than 0, a signal, the timeout) is an error result with all the output.
 */
export function customTool(spec: CustomToolSpec): ToolDefinition {
	return {
		name: spec.name,
		referenceName: spec.name,
		displayName: spec.name,
		// It runs a program: switching off the commands group switches it off too.
		group: 'commands',
		mutating: spec.mutating,
		icon: 'tools',
		tags: ['custom'],
		userDescription: spec.description,
		modelDescription: spec.description,
		schema: spec.schema,
		inputSchema: spec.inputSchema,
		describe: () => `Running ${spec.name} (${spec.script.display})`,
		run: (input, ctx) => plan(spec, input, ctx),
		// A read-only one runs its script in `run`, which answers a cancel itself (see plan).
		runSettlesOnCancel: !spec.mutating,
	};
}

/** A mutating tool is planned for approval like a command; one declared read-only runs at once. */
async function plan(spec: CustomToolSpec, input: unknown, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	// Even a tool its author calls read-only runs a script from the workspace: an untrusted workspace runs none.
	if (!ctx.host.isTrusted()) {
		throw new ToolError('untrusted', `${spec.name} runs a script from this workspace, and this workspace is not trusted, so it is refused. The user can trust the workspace (command "Workspaces: Manage Workspace Trust").`);
	}
	const script = await resolveScript(ctx.boundary, spec.script.absolute, spec.script.display).catch((error: Error) => {
		throw new ToolError('not_found', `${spec.name} cannot run: ${error.message}. Its definition is ${spec.file}; tell the user.`);
	});
	const dir: CommandDir = { absolute: spec.root.path, display: spec.root.name };
	const decision = await decideCommandSandbox({}, ctx);
	const stdin = JSON.stringify(input);
	const start = (runCtx: ToolContext) => execute(spec, script, stdin, dir, decision, runCtx);
	if (!spec.mutating) return start(ctx);
	// runProcess answers a cancel itself (it stops the whole group and waits), and a script that
	// already exited keeps its real result: racing it reported "cancelled" for a finished script
	// and came back while a stopping one could still write.
	return { ...pendingCommand(`Running custom tool ${spec.name}`, `${script.display}\n# stdin: ${stdin}`, dir, decision, {}, start), settlesOnCancel: true };
}

async function execute(spec: CustomToolSpec, script: ScriptPath, stdin: string, dir: CommandDir, decision: SandboxDecision, ctx: ToolContext): Promise<ToolResult> {
	const sandbox = await openCommandSandbox(decision, ctx);
	let result: RunResult;
	try {
		result = await runProcess({
			command: shellQuote(script.absolute),
			cwd: dir.absolute,
			timeoutMs: spec.timeoutMs,
			stdin,
			signal: ctx.signal,
			maxOutputBytes: ctx.settings.limits.commandBytes,
			// The same folder as run_command's logs, which run_command keeps pruned.
			logDir: commandLogDir(ctx.host.storageDir),
			sandbox,
		});
	} catch (error) {
		if (error instanceof SpawnError) throw new ToolError('command_failed', `${spec.name}: ${error.message} Nothing was run; tell the user.`);
		throw error;
	} finally {
		await sandbox.dispose();
	}
	if (result.end === 'cancelled') throw new CancelledError(spec.name);
	if (result.leftRunning && result.pid !== undefined) ctx.state.sessions?.adoptBackground(result.pid, script.display);
	ctx.note({ bytes: result.stdout.buffer.totalBytes + result.stderr.buffer.totalBytes });
	const output = `${result.stderr.buffer.toText().text}\n${result.stdout.buffer.toText().text}`;
	const notes = sandboxNotes(sandbox, output);
	const exit = { exitCode: result.exitCode, signal: result.signal, timedOut: result.end === 'timeout', durationMs: result.durationMs, logs: { stdout: result.stdout.logPath, stderr: result.stderr.logPath }, ...sandboxMetadata(sandbox) };
	if (result.end !== 'exit' || result.signal || result.exitCode !== 0) {
		const sections = [section('stdout', result.stdout).text, section('stderr', result.stderr).text].filter(Boolean);
		const body = [...(sections.length ? sections : ['(no output)']), ...notes].join('\n');
		throw new ToolError(result.end === 'timeout' ? 'timeout' : 'command_failed', `${failure(spec, result)}\n${body}`, exit);
	}
	const hint = result.stdout.logPath ? () => `read all of it with read_file path="${result.stdout.logPath}"` : () => 'the full output was not saved';
	const { text, info } = result.stdout.buffer.toText(hint);
	const shown = cleanTerminalText(text).replace(/\n$/, '');
	return textResult([shown || '(no output)', ...notes].join('\n'), {
		truncated: info.truncated,
		bytesOmitted: info.bytesOmitted,
		linesOmitted: info.linesOmitted,
		...exit,
	});
}

function failure(spec: CustomToolSpec, result: RunResult): string {
	const took = formatDuration(result.durationMs);
	if (result.end === 'timeout') return `${spec.name} timed out after ${formatDuration(spec.timeoutMs)} (timeoutMs in ${spec.file}): its script and every process it started were stopped. Output so far:`;
	if (result.signal) return `${spec.name} was killed by ${result.signal} after ${took}. Its output:`;
	return `${spec.name} failed: its script exited with code ${result.exitCode} after ${took}. Its output:`;
}

/** The script's path as one word for the shell. */
function shellQuote(file: string): string {
	if (process.platform === 'win32') return `& "${file}"`;
	return `'${file.replace(/'/g, `'\\''`)}'`;
}
