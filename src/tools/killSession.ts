import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import type { ToolResult } from '../core/results/result';
import { describeEnd, findSession, oneLine, SESSION_ID_DESCRIPTION, sessionsOf } from './commandSupport';
import { sessionResult } from './execCommand';
import { defineTool } from './tool';

const schema = Type.Object({
	sessionId: Type.Integer({ minimum: 1, description: SESSION_ID_DESCRIPTION }),
}, { additionalProperties: false });

export const killSessionTool = defineTool({
	name: 'kill_session',
	referenceName: 'tbKill',
	displayName: 'Stop Session',
	group: 'commands',
	mutating: false,
	icon: 'debug-stop',
	tags: ['commands', 'terminal', 'interactive'],
	userDescription: 'Stop an interactive session started with exec_command, with every process it started.',
	modelDescription: 'Stop an interactive session started by exec_command and its whole process group (SIGHUP and SIGTERM, a second later SIGKILL). Returns the output printed since the last read. Stopping an ended session is harmless.',
	schema,
	describe: input => `Stopping session ${input.sessionId}`,
	run,
});

async function run(input: typeof schema.static, ctx: ToolContext): Promise<ToolResult> {
	const session = findSession(sessionsOf(ctx), input.sessionId);
	const label = `Session ${session.id} (\`${oneLine(session.command, 60)}\`)`;
	if (!session.alive) return sessionResult(session, `${label} had already ${describeEnd(session)}; nothing to stop.`);
	await session.kill('killed');
	ctx.note({ target: `session ${session.id}` });
	return sessionResult(session, `${label} was stopped with every process it started.`);
}
