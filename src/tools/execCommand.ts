import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { CancelledError, ToolError } from '../core/results/errors';
import { textResult, ToolResult } from '../core/results/result';
import { MAX_LIVE_SESSIONS, Session } from '../core/commands/sessions';
import { formatCount, TruncationInfo } from '../core/results/truncate';
import {
	CommandDir, decideCommandSandbox, describeEnd, formatDuration, oneLine, openCommandSandbox, pendingCommand, resolveCommandDir, sandboxFields,
	sandboxMetadata, sandboxNotes, sessionsOf,
} from './commandSupport';
import type { SandboxDecision } from '../core/sandbox/runtime';
import { defineTool } from './tool';

export const DEFAULT_EXEC_YIELD_MS = 10_000;
/** Longest a single call waits; the session itself lives on. */
export const MAX_YIELD_MS = 300_000;
const MAX_SESSION_OUTPUT = 1024 * 1024;

const schema = Type.Object({
	command: Type.String({ minLength: 1, description: 'Program or command line (non-empty), e.g. "python3", "bash -i", "npm run dev".' }),
	cwd: Type.Optional(Type.String({ description: 'Folder, workspace-relative (default ".").' })),
	tty: Type.Optional(Type.Boolean({ description: 'Pseudo-terminal (default true); false: plain pipes.' })),
	yieldMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_YIELD_MS, description: `Ms to wait for output (0–${MAX_YIELD_MS}, default ${DEFAULT_EXEC_YIELD_MS}).` })),
	maxOutputBytes: Type.Optional(Type.Integer({ minimum: 256, maximum: MAX_SESSION_OUTPUT, description: `Most output bytes per call (256–${MAX_SESSION_OUTPUT}, default 65536).` })),
	...sandboxFields,
}, { additionalProperties: false });

type Input = typeof schema.static;

export const execCommandTool = defineTool({
	name: 'exec_command',
	referenceName: 'tbExec',
	displayName: 'Start Interactive Session',
	group: 'commands',
	mutating: true,
	icon: 'terminal-bash',
	tags: ['commands', 'shell', 'terminal', 'interactive'],
	userDescription: 'Start a program in an interactive session (a real terminal) that can be sent input later; the person can watch it in a terminal.',
	modelDescription: [
		'Start an interactive program (REPL, shell, server, watcher, or one that asks questions) in a session.',
		'Waits up to yieldMs or until it exits, then returns the output so far (escape codes removed, head and tail kept) and, while it runs, its sessionId for write_stdin, list_sessions and kill_session.',
		'Sandboxed like run_command.',
		`At most ${MAX_LIVE_SESSIONS} live sessions: starting another stops the one idle longest. What it leaves in the background ends when it exits. For a command that just runs to completion, use run_command.`,
	].join(' '),
	schema,
	describe: input => `Starting \`${oneLine(input.command, 60)}\``,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<PendingCall> {
	sessionsOf(ctx); // a host without sessions refuses before anyone is asked
	const dir = await resolveCommandDir(input.cwd, ctx);
	const decision = await decideCommandSandbox(input, ctx);
	return pendingCommand('Starting an interactive session', input.command, dir, decision, input, approved => start(input, dir, decision, approved));
}

async function start(input: Input, dir: CommandDir, decision: SandboxDecision, ctx: ToolContext): Promise<ToolResult> {
	const sessions = sessionsOf(ctx);
	const tty = input.tty ?? true;
	const maxOutputBytes = input.maxOutputBytes ?? ctx.settings.limits.commandBytes;
	const sandbox = await openCommandSandbox(decision, ctx);
	let started: { session: Session; pruned?: Session };
	try {
		started = sessions.start({ command: input.command, cwd: dir.absolute, displayCwd: dir.display, tty, maxOutputBytes, sandbox });
	} catch (error) {
		throw new ToolError('command_failed', `The session could not be started: ${(error as Error).message}. ${tty ? 'Try tty: false, or run_command.' : 'Try run_command.'}`);
	}
	const { session, pruned } = started;
	await session.waitForExit(input.yieldMs ?? DEFAULT_EXEC_YIELD_MS, ctx.signal);
	// The person cancelled the call that started it: the session goes too. One that had already
	// ended by itself ran to completion, and its result says so.
	if (ctx.signal.aborted && session.alive) {
		await session.kill('cancelled');
		throw new CancelledError('Starting the session');
	}
	ctx.note({ target: oneLine(input.command, 60) });
	return sessionResult(session, `Session ${session.id}: \`${oneLine(input.command)}\` in ${dir.display} (${tty ? 'pty' : 'pipes'}, pid ${session.pid}).`, pruned && { session: pruned, maxLive: sessions.maxLive });
}

/** The reply of exec_command and write_stdin: a header, the new output, and what to do next. */
export function sessionResult(session: Session, header: string, pruned?: { session: Session; maxLive: number }): ToolResult {
	const lines = [header];
	if (pruned) {
		lines.push(`Note: session ${pruned.session.id} (\`${oneLine(pruned.session.command, 40)}\`) was stopped to stay within ${pruned.maxLive} live sessions; it was the one idle longest.`);
	}
	const { text, info } = session.read(droppedHint);
	lines.push(text.trim() === '' ? '(no new output)' : text.replace(/\n+$/, ''));
	const sandbox = session.options.sandbox;
	if (sandbox) lines.push(...sandboxNotes(sandbox, text));
	const ran = formatDuration((session.endedAt ?? Date.now()) - session.startedAt);
	lines.push(session.alive
		? `Still running (${ran}). Send input with write_stdin sessionId=${session.id} (chars "\\u0003" interrupts; empty chars just reads new output); stop it with kill_session.`
		: `Session ${session.id} ${describeEnd(session)} after ${ran}.`);
	return textResult(lines.join('\n'), {
		truncated: info.truncated,
		bytesOmitted: info.bytesOmitted,
		linesOmitted: info.linesOmitted,
		sessionId: session.id,
		alive: session.alive,
		pid: session.pid,
		exitCode: session.exit?.exitCode ?? null,
		signal: session.exit?.signal ?? null,
		...(sandbox ? sandboxMetadata(sandbox) : {}),
	});
}

function droppedHint(info: TruncationInfo): string {
	return `the session printed ${formatCount(info.totalBytes)} bytes since the last read; read more often (write_stdin with empty chars and a short yieldMs), or redirect bulky output to a file`;
}
