import { ApprovalRequest } from '../context';
import { unifiedDiffs } from '../changes/diff';
import { Settings } from './settings';
import { truncateText } from '../results/truncate';

/**
 * Whether a request must be put to the person. Protected paths always ask, whatever the
 * policy: `never` means "don't ask for ordinary changes", not "touch .git without asking".
 */
export function needsApproval(request: ApprovalRequest, settings: Settings): boolean {
	if (mustReachPerson(request)) return true;
	switch (settings.approval) {
		case 'never':
			return false;
		case 'edits':
			// A sandboxed command cannot reach past the workspace or touch protected paths, so it runs.
			return request.kind === 'files' || (request.kind === 'command' && !request.sandboxed);
		case 'mutating':
			return request.kind !== 'call';
		case 'always':
			return true;
	}
}

/**
 * Requests that a person must confirm for this very call: a change to a protected path, a command
 * outside the sandbox. Chat's allowances ("Allow in this Session", "Always Allow") skip VS Code's
 * confirmation of later calls, so these are never left to it: the host asks itself, every time.
 */
export function mustReachPerson(request: ApprovalRequest): boolean {
	if (request.kind === 'files') return request.protectedPaths.length > 0;
	return request.kind === 'command' && request.unsandboxed !== undefined;
}

/** Leading words of request titles ("Running a command") as the person is asked ("Run …?"). */
const IMPERATIVES: Record<string, string> = { Running: 'Run', Starting: 'Start', Sending: 'Send', Reading: 'Read' };

/**
 * The request as the question a person answers, for the title of a confirmation: nothing has
 * happened yet, so "Run this command?", not "Running a command".
 */
export function confirmationTitle(request: ApprovalRequest): string {
	const title = request.title.replace(/[.?]$/, '');
	if (request.kind === 'command' && title === 'Running a command') return 'Run this command?';
	const [first, ...rest] = title.split(' ');
	return `${[IMPERATIVES[first] ?? first, ...rest].join(' ')}?`;
}

/**
 * What a confirmation shows under its title (which it never repeats): the command and where it
 * runs, the diff, or the call's input. `markdown` for chat (fenced blocks), `plain` for a modal
 * dialog or a terminal, which show text as it is.
 */
export function describeRequest(request: ApprovalRequest, format: 'markdown' | 'plain', diffText?: string): string {
	const block = (text: string, language: string) => (format === 'markdown' ? fence(text, language) : text.replace(/\n$/, ''));
	switch (request.kind) {
		case 'command':
			return `${block(request.command, 'sh')}\n\nin ${request.cwd}${sandboxLine(request)}`;
		case 'call':
			return block(request.detail, 'json');
		case 'files': {
			const count = request.protectedPaths.length;
			const warning = count ? `Protected path${count > 1 ? 's' : ''}: ${request.protectedPaths.join(', ')}` : '';
			return [warning, diffText ? block(diffText, 'diff') : ''].filter(Boolean).join('\n\n');
		}
	}
}

function sandboxLine(request: Extract<ApprovalRequest, { kind: 'command' }>): string {
	if (request.unsandboxed) return `\n\nOutside the sandbox: it can read and write anything you can, and reach the network. Reason given: ${request.unsandboxed.justification}`;
	return request.sandboxed ? '\n\nIn the sandbox: it can change only the workspace (not its protected paths) and its own temp folder.' : '';
}

/**
 * The diff a confirmation shows (undefined for requests that change no files): whole up to
 * `maxBytes`, else its head and a marker, because the full diff is a click away in the diff editor.
 * One rule for chat's confirmation and the modal, so a diff is never dropped silently.
 */
export function confirmationDiff(request: ApprovalRequest, maxBytes: number): string | undefined {
	if (request.kind !== 'files') return undefined;
	const diff = unifiedDiffs(request.changes);
	return truncateText(diff, { maxBytes, maxLines: Number.POSITIVE_INFINITY, keep: 'head', hint: () => 'the diff editor ("Show Diff") shows all of it' }).text;
}

/** A fenced block that survives content holding backticks. */
export function fence(text: string, language = ''): string {
	const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), match => match[0].length));
	const ticks = '`'.repeat(longest + 1);
	return `${ticks}${language}\n${text}${text.endsWith('\n') ? '' : '\n'}${ticks}`;
}
