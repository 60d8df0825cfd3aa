import * as vscode from 'vscode';
import type { ToolEvent } from '../core/context';

/** One structured line per finished call in the "Toolbelt" log, plus debug lines for its start and its wait for a person. */
export function createLogSink(channel: vscode.LogOutputChannel): (event: ToolEvent) => void {
	return event => {
		if (event.phase === 'start') {
			channel.debug(`${event.tool} started`, { id: event.id });
			return;
		}
		if (event.phase === 'update') {
			channel.debug(`${event.tool} ${event.status === 'waiting' ? 'waits for the person to confirm' : 'goes on'}`, { id: event.id });
			return;
		}
		const fields = {
			id: event.id,
			tool: event.tool,
			status: event.status,
			durationMs: event.durationMs,
			waitedMs: event.waitedMs,
			exit: event.exit,
			bytes: event.bytes,
			truncated: event.truncated ?? false,
			target: event.target,
			filesTouched: event.filesTouched,
			error: event.error,
		};
		const line = `${event.tool} ${event.status} in ${event.durationMs} ms ${JSON.stringify(fields)}`;
		if (event.status === 'failed') channel.warn(line);
		else channel.info(line);
	};
}
