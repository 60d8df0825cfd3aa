import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import type { Session } from '../core/commands/sessions';
import type { ToolResult } from '../core/results/result';
import { describeEnd, findSession, oneLine, SESSION_ID_DESCRIPTION, sessionsOf, visibleChars } from './commandSupport';
import { MAX_YIELD_MS, sessionResult } from './execCommand';
import { defineTool } from './tool';

export const DEFAULT_WRITE_YIELD_MS = 250;

const schema = Type.Object({
	sessionId: Type.Integer({ minimum: 1, description: SESSION_ID_DESCRIPTION }),
	chars: Type.Optional(Type.String({ description: 'Keys as typed: "ls\\n" runs a line, "\\u0003" is Ctrl-C, "\\u0004" Ctrl-D, "\\u001b[A" the up arrow. Default empty: only read.' })),
	yieldMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_YIELD_MS, description: `Ms to wait for output (0–${MAX_YIELD_MS}, default ${DEFAULT_WRITE_YIELD_MS}).` })),
}, { additionalProperties: false });

type Input = typeof schema.static;

export const writeStdinTool = defineTool({
	name: 'write_stdin',
	referenceName: 'tbStdin',
	displayName: 'Write to Session',
	group: 'commands',
	mutating: true,
	icon: 'arrow-right',
	tags: ['commands', 'terminal', 'interactive'],
	userDescription: 'Send keys to an interactive session started with exec_command and read its new output.',
	modelDescription: [
		'Send keys to a session started by exec_command, wait yieldMs, and return the output printed since the last read (escape codes removed, at most 64 KB, head and tail kept) and whether it still runs.',
		'With empty chars it only reads new output: use that to follow a long-running program.',
	].join(' '),
	schema,
	describe: input => (input.chars ? `Sending ${oneLine(visibleChars(input.chars), 40)} to session ${input.sessionId}` : `Reading session ${input.sessionId}`),
	run,
});

/**
 * Plans the call without touching the session: a preview (prepareInvocation) must not send the
 * keys, nor drain the output the real call is about to return. Reading needs no confirmation
 * (unless approval is "always"); sending keys is a command the person may be asked about.
 */
async function run(input: Input, ctx: ToolContext): Promise<PendingCall> {
	const session = findSession(sessionsOf(ctx), input.sessionId);
	const chars = input.chars ?? '';
	const label = `Session ${session.id} (\`${oneLine(session.command, 60)}\`)`;
	if (!chars || !session.alive) {
		return {
			pending: true,
			request: { kind: 'call', title: `Reading the output of session ${session.id}`, detail: JSON.stringify(input, null, 2) },
			commit: approved => (session.alive
				? follow(session, input, approved, `${label}.`)
				// Harmless: nothing is sent, and whatever it printed last is still handed over.
				: Promise.resolve(sessionResult(session, `${label} has already ${describeEnd(session)}; ${chars ? 'the input was not sent' : 'there is nothing more to wait for'}. Start it again with exec_command if you need it.`))),
			settlesOnCancel: true,
		};
	}
	return {
		pending: true,
		request: {
			kind: 'command',
			title: `Sending input to session ${session.id} (${oneLine(session.command, 40)})`,
			command: visibleChars(chars),
			cwd: session.options.cwd,
			sandboxed: (session.options.sandbox?.kind ?? 'none') !== 'none',
		},
		commit: async approved => {
			// The session may have ended while the person was deciding.
			if (!session.alive) return sessionResult(session, `${label} ${describeEnd(session)} before the input could be sent; nothing was sent.`);
			session.write(chars);
			return follow(session, input, approved, `${label}: sent ${oneLine(visibleChars(chars), 60)}.`);
		},
		// Once the keys are sent, a cancel only ends the wait: the result says they were sent and
		// hands over what was read. Raced, it said "cancelled" and the output it had read was lost.
		settlesOnCancel: true,
	};
}

/** Waits for the session's output (up to yieldMs), then returns what it printed. */
async function follow(session: Session, input: Input, ctx: ToolContext, header: string): Promise<ToolResult> {
	session.lastActivityAt = Date.now();
	await session.waitForExit(input.yieldMs ?? DEFAULT_WRITE_YIELD_MS, ctx.signal);
	ctx.note({ target: `session ${session.id}` });
	return sessionResult(session, ctx.signal.aborted ? `${header} The wait for output was cancelled; this is what it printed so far.` : header);
}
