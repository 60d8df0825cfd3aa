/**
 * The typed errors of the core. Tools throw these; `toErrorResult` (in result.ts) is the single
 * place that turns any thrown value into a tool result worded for a model.
 */

export type ErrorCode =
	| 'invalid_input'
	| 'unknown_tool'
	| 'disabled'
	| 'outside_boundary'
	| 'read_only'
	| 'not_found'
	| 'is_directory'
	| 'not_directory'
	| 'binary_file'
	| 'too_large'
	| 'already_exists'
	| 'stale_write'
	| 'no_match'
	| 'ambiguous_match'
	| 'patch_parse'
	| 'patch_apply'
	| 'timeout'
	| 'command_failed'
	| 'sandbox_unavailable'
	| 'unknown_session'
	| 'cancelled'
	| 'declined'
	| 'untrusted'
	| 'unavailable'
	| 'io';

export class ToolError extends Error {
	constructor(
		readonly code: ErrorCode,
		message: string,
		readonly details?: Record<string, unknown>,
	) {
		super(message);
		this.name = 'ToolError';
	}
}

export interface FieldIssue {
	/** JSON pointer-ish path of the field, `/edits/0/oldText`; '' for the whole input. */
	readonly path: string;
	readonly message: string;
}

/** Input that does not fit the tool's schema. Names every wrong field. */
export class ValidationError extends ToolError {
	constructor(readonly tool: string, readonly issues: readonly FieldIssue[]) {
		super('invalid_input', ValidationError.describe(tool, issues), { issues });
		this.name = 'ValidationError';
	}

	private static describe(tool: string, issues: readonly FieldIssue[]): string {
		const lines = issues.map(issue => `- ${issue.path ? fieldName(issue.path) : 'input'}: ${issue.message}`);
		return `Invalid input for ${tool}:\n${lines.join('\n')}\nFix these fields and call ${tool} again.`;
	}
}

/** A JSON pointer as a model reads a field: '/edits/0/oldText' → 'edits[0].oldText'. */
export function fieldName(pointer: string): string {
	// '/edits/0/oldText' -> 'edits[0].oldText'
	return pointer
		.split('/')
		.filter(Boolean)
		.map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`))
		.join('');
}

/** A path that a rule of the boundary refuses. `rule` names the rule for logs and tests. */
export class BoundaryError extends ToolError {
	constructor(readonly rule: BoundaryRule, readonly input: string, message: string) {
		super(rule === 'read_only' ? 'read_only' : 'outside_boundary', message, { rule, path: input });
		this.name = 'BoundaryError';
	}
}

export type BoundaryRule =
	| 'empty'
	| 'nul_byte'
	| 'home_shorthand'
	| 'folder_path'
	| 'escapes_workspace'
	| 'outside_workspace'
	| 'symlink_escape'
	| 'no_workspace'
	| 'read_only'
	| 'private_storage'
	| 'swapped_during_call';

/** The caller's abort signal fired. */
export class CancelledError extends ToolError {
	constructor(what = 'The operation') {
		super('cancelled', `${what} was cancelled.`);
		this.name = 'CancelledError';
	}
}

/** The person declined the confirmation; nothing was changed. */
export class DeclinedError extends ToolError {
	constructor(what: string) {
		super('declined', `The user declined ${what}. Nothing was changed. Ask the user how to proceed instead of retrying the same call.`);
		this.name = 'DeclinedError';
	}
}

export function throwIfAborted(signal: AbortSignal | undefined, what?: string): void {
	if (signal?.aborted) throw new CancelledError(what);
}

/** Node's errno errors as model-facing messages, with the display path instead of the absolute one. */
export function fromNodeError(error: unknown, displayPath: string): ToolError {
	if (error instanceof ToolError) return error;
	const code = (error as NodeJS.ErrnoException)?.code;
	switch (code) {
		case 'ENOENT':
			return new ToolError('not_found', `${displayPath} does not exist. Check the path with list_dir or find_files.`);
		case 'EISDIR':
			return new ToolError('is_directory', `${displayPath} is a directory, not a file. Use list_dir to see what it holds.`);
		case 'ENOTDIR':
			return new ToolError('not_directory', `A part of ${displayPath} is a file, not a directory. Check each folder of the path with list_dir.`);
		case 'EACCES':
		case 'EPERM':
			return new ToolError('io', `Permission denied for ${displayPath}. Use another path, or ask the user to change its permissions.`);
		case 'ENOSPC':
		case 'EDQUOT':
			return new ToolError('io', `The disk holding ${displayPath} is full (or its quota is used up). Free some space, or ask the user to, then try again.`);
		case 'EROFS':
			return new ToolError('io', `${displayPath} is on a read-only file system, so it cannot be changed. Tell the user if it should be writable.`);
		case 'ENAMETOOLONG':
			return new ToolError('invalid_input', `${displayPath} is too long for the file system: a name holds at most 255 bytes, a whole path about 4,096. Nothing was changed. Use a shorter name or fewer folders.`);
		case 'ENXIO':
			// What opening a socket gives (or a device with nothing behind it): trying again changes nothing.
			return new ToolError('io', `${displayPath} is not a regular file (a socket or a device) and cannot be opened; these tools neither read nor change such files. Give the path of a regular file.`);
		default:
			return new ToolError('io', `Could not access ${displayPath}: ${(error as Error)?.message ?? String(error)}. Try once more; if it fails again, tell the user.`);
	}
}
