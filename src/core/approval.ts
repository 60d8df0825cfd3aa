import { ApprovalRequest } from './context';
import { Settings } from './settings';

/**
 * Whether a request must be put to the person. Protected paths always ask, whatever the
 * policy: `never` means "don't ask for ordinary changes", not "touch .git without asking".
 */
export function needsApproval(request: ApprovalRequest, settings: Settings): boolean {
	if (request.kind === 'files' && request.protectedPaths.length > 0) return true;
	switch (settings.approval) {
		case 'never':
			return false;
		case 'mutating':
			return request.kind !== 'call';
		case 'always':
			return true;
	}
}

/** The request as plain text (markdown-safe in a fenced block), for modals, chat and terminals. */
export function describeRequest(request: ApprovalRequest, diffText?: string): string {
	switch (request.kind) {
		case 'command':
			return `${request.title}\n\n${fence(`${request.command}`, 'sh')}\nin ${request.cwd}`;
		case 'call':
			return `${request.title}\n\n${fence(request.detail, 'json')}`;
		case 'files': {
			const warning = request.protectedPaths.length
				? `\n\nProtected path${request.protectedPaths.length > 1 ? 's' : ''}: ${request.protectedPaths.join(', ')}`
				: '';
			return `${request.title}${warning}${diffText ? `\n\n${fence(diffText, 'diff')}` : ''}`;
		}
	}
}

/** A fenced block that survives content holding backticks. */
export function fence(text: string, language = ''): string {
	const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), match => match[0].length));
	const ticks = '`'.repeat(longest + 1);
	return `${ticks}${language}\n${text}${text.endsWith('\n') ? '' : '\n'}${ticks}`;
}
