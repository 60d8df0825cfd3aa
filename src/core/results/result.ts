import { ErrorCode, ToolError } from './errors';

export type ResultPart =
	| { readonly kind: 'text'; readonly text: string }
	| { readonly kind: 'image'; readonly mimeType: string; readonly data: Uint8Array };

/** Every result says whether it was cut and by how much; tools add their own fields. */
export interface ResultMetadata {
	truncated: boolean;
	bytesOmitted?: number;
	linesOmitted?: number;
	/** Workspace-relative paths the call changed. */
	filesTouched?: string[];
	[key: string]: unknown;
}

export interface ToolResult {
	readonly content: ResultPart[];
	readonly metadata: ResultMetadata;
	readonly error?: { readonly code: ErrorCode; readonly message: string };
}

export function textResult(text: string, metadata: Partial<ResultMetadata> = {}): ToolResult {
	return { content: [{ kind: 'text', text }], metadata: { truncated: false, ...metadata } };
}

/** The text of a result as a model sees it (images become a short placeholder). */
export function resultText(result: ToolResult): string {
	return result.content
		.map(part => (part.kind === 'text' ? part.text : `[image ${part.mimeType}, ${part.data.byteLength} bytes]`))
		.join('\n');
}

/**
 * The one place where anything a tool throws becomes a result. Typed errors keep their
 * message; anything else is an internal fault, reported without a stack trace.
 */
export function toErrorResult(error: unknown, tool: string): ToolResult {
	if (error instanceof ToolError) {
		const details = error.details;
		return {
			content: [{ kind: 'text', text: `Error: ${error.message}` }],
			metadata: { truncated: false, ...(details ? { errorDetails: details } : {}) },
			error: { code: error.code, message: error.message },
		};
	}
	const message = `${tool} failed unexpectedly: ${(error as Error)?.message ?? String(error)}. This is a fault in the tool, not in your input; try again once, then tell the user.`;
	return {
		content: [{ kind: 'text', text: `Error: ${message}` }],
		metadata: { truncated: false },
		error: { code: 'io', message },
	};
}
