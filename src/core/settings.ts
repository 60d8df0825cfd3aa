/**
 * Settings as the core sees them: plain data, read from `toolbelt.*` in VS Code and from
 * defaults (or flags) in the CLI. The defaults here are the ones the manifest declares.
 */

export type Approval = 'never' | 'mutating' | 'always';
export type ShowDiffs = 'always' | 'onConfirm' | 'never';
export type FileAccess = 'workspace' | 'unrestricted';
export type ToolGroup = 'read' | 'edit' | 'commands' | 'plan';

export interface Limits {
	/** Bytes of text a read returns. */
	readBytes: number;
	/** Lines a read returns. */
	readLines: number;
	/** Bytes of command output a result keeps (head quarter, tail three quarters). */
	commandBytes: number;
	/** Matches a grep returns. */
	grepMatches: number;
	/** Entries a listing returns. */
	listEntries: number;
	/** Characters of one line before it is cut. */
	lineChars: number;
	/** Bytes of an image returned as an image part. */
	imageBytes: number;
}

export interface Settings {
	approval: Approval;
	showDiffs: ShowDiffs;
	fileAccess: FileAccess;
	additionalReadPaths: string[];
	protectedPaths: string[];
	outputsDirectory: string;
	planFile: string;
	disabledTools: string[];
	disabledGroups: ToolGroup[];
	limits: Limits;
	/**
	 * Globs the person excluded in VS Code (`files.exclude` and `search.exclude` entries set to
	 * true); list_dir, find_files and grep skip them unless asked for ignored files.
	 */
	searchExcludes: string[];
}

export const DEFAULT_LIMITS: Limits = {
	readBytes: 32 * 1024,
	readLines: 2000,
	commandBytes: 64 * 1024,
	grepMatches: 100,
	listEntries: 500,
	lineChars: 2000,
	imageBytes: 5 * 1024 * 1024,
};

export const DEFAULT_PROTECTED_PATHS = ['.git/**', '**/.env*', '.vscode/*.json', 'node_modules/**'];

export function defaultSettings(): Settings {
	return {
		approval: 'mutating',
		showDiffs: 'onConfirm',
		fileAccess: 'workspace',
		additionalReadPaths: [],
		protectedPaths: [...DEFAULT_PROTECTED_PATHS],
		outputsDirectory: 'outputs',
		planFile: '.toolbelt/plan.json',
		disabledTools: [],
		disabledGroups: [],
		limits: { ...DEFAULT_LIMITS },
		searchExcludes: [],
	};
}
