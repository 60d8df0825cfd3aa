import type { ActivityRecord } from './activityStore';

/**
 * How the Activity view words a call: its status (what happened, not only whether the tool
 * worked: a command that exits 1 ran fine and still failed), its times (the person's time to
 * decide apart from the tool's), and its details. Pure, so tests read it without VS Code.
 */

/** The colour family of a status, for the icon. */
export type StatusTone = 'busy' | 'waiting' | 'ok' | 'warning' | 'error' | 'muted';

export interface StatusLabel {
	/** Short, first in the row so a narrow side bar does not cut it: `done`, `exit 2`, `waiting for you`. */
	readonly text: string;
	readonly tone: StatusTone;
}

export function statusLabel(record: ActivityRecord): StatusLabel {
	switch (record.status) {
		case 'running': return { text: 'running', tone: 'busy' };
		case 'waiting': return { text: 'waiting for you', tone: 'waiting' };
		case 'failed': return { text: 'failed', tone: 'error' };
		case 'declined': return { text: 'declined', tone: 'muted' };
		case 'cancelled': return { text: 'cancelled', tone: 'muted' };
		case 'done': {
			const exit = record.exit;
			if (exit?.timedOut) return { text: 'timed out', tone: 'warning' };
			if (exit?.signal) return { text: `killed (${exit.signal})`, tone: 'warning' };
			if (exit && exit.code !== 0 && exit.code !== null) return { text: `exit ${exit.code}`, tone: 'warning' };
			return { text: 'done', tone: 'ok' };
		}
	}
}

/** `1.2 s`, or `1.2 s · waited 8.0 s` when the call waited for the person. */
function timing(record: ActivityRecord): string {
	if (record.durationMs === undefined) return '';
	const waited = record.waitedMs ?? 0;
	const ran = formatDuration(Math.max(0, record.durationMs - waited));
	if (!waited) return ran;
	// A declined call never ran: its time was the person's.
	return record.status === 'declined' ? `after ${formatDuration(waited)}` : `${ran} · waited ${formatDuration(waited)}`;
}

const TARGET_CHARS = 48;

/** The row after the tool's name: status first (the side bar cuts the end), then time, target, truncation. */
export function rowDescription(record: ActivityRecord): string {
	const status = statusLabel(record).text;
	return [`${status}${record.durationMs !== undefined ? ` ${timing(record)}` : ''}`, shortTarget(record.target), record.truncated ? '✂ truncated' : '']
		.filter(Boolean).join(' · ');
}

/** The row already names the tool: `Writing README.md` reads as `README.md`. */
function shortTarget(target: string | undefined): string | undefined {
	if (!target) return undefined;
	const short = target.replace(/^[A-Z][a-z]+ing\s+/, '');
	return short.length > TARGET_CHARS ? `${short.slice(0, TARGET_CHARS - 1)}…` : short;
}

export function formatDuration(ms: number | undefined): string {
	if (ms === undefined) return '';
	if (ms < 1000) return `${ms} ms`;
	if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
	return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** One line: `exit 2 in 1.2 s · waited 8.0 s`. */
export function statusLine(record: ActivityRecord): string {
	return `${statusLabel(record).text}${record.durationMs !== undefined ? ` in ${timing(record).replace(/^after /, '')}` : ''}`;
}

/** A details tab's title: the tool and the time of the call, no internal ids. */
export function detailsTitle(record: ActivityRecord): string {
	const time = new Date(record.startedAt).toTimeString().slice(0, 8);
	return `${record.tool} at ${time}`;
}

export function detailsText(record: ActivityRecord): string {
	const header = [
		`${record.tool} — ${statusLine(record)}, started ${new Date(record.startedAt).toISOString()}`,
		record.target ? `Target: ${record.target}` : '',
		record.filesTouched?.length ? `Files touched: ${record.filesTouched.join(', ')}` : '',
		record.truncated ? 'The result was truncated.' : '',
	].filter(Boolean);
	const pending = record.status === 'waiting' ? '(waiting for you to confirm)' : record.status === 'running' ? '(still running)' : '(none)';
	return [...header, '', '## Input', record.inputText ?? '(none)', '', '## Result', record.resultText ?? pending, ''].join('\n');
}
