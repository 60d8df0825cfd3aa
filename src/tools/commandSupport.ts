import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { BoundaryError, CancelledError, ToolError, ValidationError } from '../core/results/errors';
import { statOrExplain } from '../core/files/files';
import { explainBlocked } from '../core/sandbox/blocked';
import { decideSandbox, openSandbox, Sandbox, SandboxDecision } from '../core/sandbox/runtime';
import { warmProtectedScan } from '../core/sandbox/policy';
import type { Session, SessionManager } from '../core/commands/sessions';
import type { ToolResult } from '../core/results/result';
import { formatCount } from '../core/results/truncate';

/** What run_command, exec_command and write_stdin share: where commands run, how times read. */

/** The `sessionId` field of write_stdin and kill_session. */
export const SESSION_ID_DESCRIPTION = 'The session, from exec_command or list_sessions (≥ 1).';

export interface CommandDir {
	readonly absolute: string;
	readonly display: string;
}

/**
 * The folder a command runs in: through the boundary, a directory, inside a workspace folder (a
 * read-only extra root is not enough: a command can write where it runs).
 */
export async function resolveCommandDir(input: string | undefined, ctx: ToolContext): Promise<CommandDir> {
	const target = await ctx.boundary.resolve(input ?? '.', 'read').catch(error => {
		// The boundary's own wording mentions read-only folders, which are no place to run a command.
		if (error instanceof BoundaryError && (error.rule === 'outside_workspace' || error.rule === 'escapes_workspace')) throw outside(input!, error.rule, ctx);
		throw error;
	});
	if (!target.root && ctx.settings.fileAccess !== 'unrestricted') throw outside(target.input, 'outside_workspace', ctx);
	const stat = await statOrExplain(target.absolute, target.display);
	if (!stat.isDirectory()) {
		throw new ToolError('not_directory', `cwd ${target.display} is a file, not a folder. Give the folder to run the command in (for example its parent).`);
	}
	return { absolute: target.absolute, display: target.display };
}

function outside(input: string, rule: 'outside_workspace' | 'escapes_workspace', ctx: ToolContext): BoundaryError {
	const folders = ctx.boundary.roots.map(root => root.path).join(', ');
	return new BoundaryError(rule, input, `cwd ${JSON.stringify(input)} is outside the workspace (rule: ${rule}). Commands run only inside the workspace folder${ctx.boundary.roots.length > 1 ? 's' : ''} ${folders}: give a workspace-relative folder such as "." or "src".`);
}

/** `0.4 s`, `12 s`, `2 min 5 s`. */
export function formatDuration(ms: number): string {
	if (ms < 10_000) return `${(Math.round(ms / 100) / 10).toFixed(1)} s`;
	if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
	const minutes = Math.floor(ms / 60_000);
	const seconds = Math.round((ms % 60_000) / 1000);
	return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/** A command on one line for headers and titles: newlines shown, long ones cut. */
export function oneLine(command: string, max = 80): string {
	const flat = command.replace(/\s*\n\s*/g, ' ⏎ ').trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function sessionsOf(ctx: ToolContext): SessionManager {
	const sessions = ctx.state.sessions;
	if (!sessions) throw new ToolError('io', 'Interactive sessions are not available in this host. Use run_command instead.');
	return sessions;
}

/** The session a call names, or an error that lists the live ones. */
export function findSession(sessions: SessionManager, id: number): Session {
	const session = sessions.get(id);
	if (session) return session;
	const live = sessions.live();
	const list = live.length
		? `Live sessions: ${live.map(s => `${s.id} (\`${oneLine(s.command, 40)}\`)`).join(', ')}.`
		: 'No session is running now.';
	const why = sessions.issued(id)
		? `Session ${id} ended a while ago and is no longer remembered.`
		: `There is no session ${formatCount(id)}.`;
	throw new ToolError('unknown_session', `${why} ${list} Use list_sessions to see them, or start one with exec_command.`);
}

/** How a session's program ended, in a few words. */
export function describeEnd(session: Session): string {
	const exit = session.exit;
	if (!exit) return 'still running';
	const by = session.stopReason ? ` (${session.stopReason === 'pruned' ? 'stopped to make room for a new session' : session.stopReason})` : '';
	if (exit.signal) return `ended by ${exit.signal}${by}`;
	return `exited with code ${exit.exitCode}${by}`;
}

/** Control characters made visible, for confirmations and progress lines. */
export function visibleChars(chars: string): string {
	return JSON.stringify(chars).slice(1, -1);
}

/** The fields run_command and exec_command take to leave the sandbox. */
export const sandboxFields = {
	sandbox: Type.Optional(Type.Boolean({ description: 'false: run outside the sandbox, with full file and network access, when it blocked the task; always asks the user.' })),
	justification: Type.Optional(Type.String({ minLength: 1, description: 'Why, for the user (non-empty); required with sandbox: false.' })),
};

interface SandboxRequest {
	readonly sandbox?: boolean;
	readonly justification?: string;
}

/**
 * How a command will run, decided before the person is asked. `sandbox: false` needs a
 * justification; it escapes only a sandbox that would otherwise apply.
 */
export async function decideCommandSandbox(input: SandboxRequest, ctx: ToolContext): Promise<SandboxDecision> {
	if (input.sandbox === false && !input.justification?.trim()) {
		throw new ValidationError(ctx.tool, [{ path: '/justification', message: 'required when sandbox is false: say why the command must run outside the sandbox (the user reads it before deciding)' }]);
	}
	const decision = await decideSandbox(ctx.settings.sandbox, ctx.host.sandbox, input.sandbox === false);
	// The first command's walk of a big workspace takes a noticeable moment: done while the person reads the request.
	if (decision.kind !== 'none') {
		void warmProtectedScan({
			roots: ctx.boundary.roots.map(root => root.path),
			protectedPaths: ctx.settings.protectedPaths,
			platform: ctx.host.sandbox?.platform,
			scanCache: ctx.state.protectedScans,
		}).catch(() => undefined);
	}
	return decision;
}

/**
 * A command planned for approval, its folder and sandbox decided: the person is asked about
 * `shown`, and running it (`start`, with the invocation's context) is the commit.
 */
export function pendingCommand(
	title: string,
	shown: string,
	dir: CommandDir,
	decision: SandboxDecision,
	input: SandboxRequest,
	start: (ctx: ToolContext) => Promise<ToolResult>,
): PendingCall {
	return {
		pending: true,
		request: { kind: 'command', title, command: shown, cwd: dir.absolute, ...sandboxRequestFields(decision, input) },
		commit: ctx => start(ctx),
		// A cancel stops the process tree, and the result waits for that: raced, it said "cancelled"
		// while a command that ignores SIGTERM went on writing files through the grace period.
		settlesOnCancel: true,
	};
}

/** What the approval request says about the sandbox. */
function sandboxRequestFields(decision: SandboxDecision, input: SandboxRequest): { sandboxed: boolean; unsandboxed?: { justification: string } } {
	if (decision.kind === 'none' && decision.why === 'escalated') return { sandboxed: false, unsandboxed: { justification: input.justification!.trim() } };
	return { sandboxed: decision.kind !== 'none' };
}

/** The sandbox for one approved command or session, from this workspace's folders and settings. */
export async function openCommandSandbox(decision: SandboxDecision, ctx: ToolContext): Promise<Sandbox> {
	const settings = ctx.settings.sandbox;
	const sandbox = await openSandbox(decision, {
		roots: ctx.boundary.roots.map(root => root.path),
		protectedPaths: ctx.settings.protectedPaths,
		denyRead: settings.denyRead,
		network: settings.network === 'on',
		storageRoot: ctx.host.sandbox?.storageRoot ?? ctx.host.storageDir,
		logDir: ctx.state.commandLogs.dir,
		scanCache: ctx.state.protectedScans,
	}, ctx.host.sandbox);
	// Finding the protected paths takes a moment: a call cancelled meanwhile starts nothing.
	if (ctx.signal.aborted) {
		await sandbox.dispose();
		throw new CancelledError('The command');
	}
	return sandbox;
}

/** Result metadata: which sandbox the command ran in, and why none. */
export function sandboxMetadata(sandbox: Sandbox): { sandbox: Sandbox['kind']; sandboxReason?: string } {
	return sandbox.kind === 'none' ? { sandbox: 'none', sandboxReason: sandbox.detail } : { sandbox: sandbox.kind };
}

/**
 * Sentences for the model about the sandbox: that there was none although one was wanted (every
 * such result says so), what it blocked, read from the output, and the protected paths the command
 * created where the sandbox could not guard them (`createdProtected`, as displayed).
 */
export function sandboxNotes(sandbox: Sandbox, output: string, createdProtected: readonly string[] = []): string[] {
	const notes: string[] = [];
	if (sandbox.why === 'unavailable') notes.push(`Not sandboxed: ${sandbox.detail}, so it ran with the user's full permissions (toolbelt.sandbox.mode is "auto").`);
	if (sandbox.kind !== 'none' && !sandbox.scanComplete) notes.push('Sandbox: the workspace is too large to find every protected path in it; some (such as nested .git folders) may be writable.');
	const blocked = explainBlocked(output, sandbox);
	if (blocked) notes.push(blocked);
	if (createdProtected.length) notes.push(createdProtectedNote(createdProtected));
	return notes;
}

/** At most this many created protected paths are named; the rest are counted. */
const CREATED_NAMED = 10;

function createdProtectedNote(created: readonly string[]): string {
	const named = created.slice(0, CREATED_NAMED).join(', ');
	const more = created.length > CREATED_NAMED ? ` and ${created.length - CREATED_NAMED} more` : '';
	return `Sandbox: the command created protected paths (toolbelt.protectedPaths): ${named}${more}. The sandbox keeps existing protected paths and their top-level names (.env, .git, .vscode) read-only, but cannot guard every name a glob matches before it exists. Tell the user what was created and why; to change protected files, use the file tools, which ask the user.`;
}
