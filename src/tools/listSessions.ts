import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { textResult, ToolResult } from '../core/results/result';
import { MAX_LIVE_SESSIONS, Session } from '../core/commands/sessions';
import { formatBytes } from '../core/results/truncate';
import { describeEnd, formatDuration, oneLine, sessionsOf } from './commandSupport';
import { defineTool } from './tool';

// A real field rather than none: Gemini refuses a function whose parameters object has no properties.
const schema = Type.Object({
	includeFinished: Type.Optional(Type.Boolean({ description: 'Also list sessions that have ended (default true).' })),
}, { additionalProperties: false });

export const listSessionsTool = defineTool({
	name: 'list_sessions',
	referenceName: 'tbSessions',
	displayName: 'List Sessions',
	group: 'commands',
	mutating: false,
	icon: 'list-unordered',
	tags: ['commands', 'terminal', 'interactive'],
	userDescription: 'List the interactive sessions started with exec_command: what runs, since when, and whether it has output waiting.',
	modelDescription: `List the interactive sessions started by exec_command: id, command, folder, pid, run and idle time, unread output, and when finished ones ended. At most ${MAX_LIVE_SESSIONS} run at once. Also lists background processes that run_command left running.`,
	schema,
	describe: () => 'Listing sessions',
	run,
});

async function run(input: typeof schema.static, ctx: ToolContext): Promise<ToolResult> {
	const sessions = sessionsOf(ctx);
	const all = sessions.all();
	const live = all.filter(s => s.alive);
	const shown = input.includeFinished === false ? live : all;
	const background = sessions.backgroundGroups();
	const lines: string[] = [];
	if (all.length === 0) lines.push('No sessions. Start one with exec_command.');
	else {
		const finished = all.length > live.length ? `, ${all.length - live.length} finished${shown === live ? ' (not listed)' : ''}` : '';
		lines.push(`${live.length} of at most ${MAX_LIVE_SESSIONS} sessions running${finished}${shown.length ? ':' : '.'}`);
	}
	for (const session of shown) lines.push(describe(session));
	if (background.length) {
		lines.push('Background processes left running by run_command (stopped when Toolbelt stops; stop one with run_command "kill -- -PGID"):');
		for (const group of background) lines.push(`- process group ${group.pgid}: \`${oneLine(group.command, 80)}\``);
	}
	return textResult(lines.join('\n'), {
		truncated: false,
		sessions: sessions.summaries(),
		backgroundProcessGroups: background,
	});
}

function describe(session: Session): string {
	const now = Date.now();
	const state = session.alive
		? `running for ${formatDuration(now - session.startedAt)}, idle ${formatDuration(now - session.lastActivityAt)}`
		: describeEnd(session);
	const unread = session.unreadBytes ? `, ${formatBytes(session.unreadBytes)} of output not read yet` : '';
	const cwd = session.options.displayCwd ?? session.options.cwd;
	return `- ${session.id}: \`${oneLine(session.command, 80)}\` in ${cwd} (${session.tty ? 'pty' : 'pipes'}, pid ${session.pid}) — ${state}${unread}`;
}
