import { isAbsolute } from 'node:path';

/**
 * Settings as the core sees them: plain data, read from `toolbelt.*` in VS Code and from
 * defaults (or flags) in the CLI. The defaults here are the ones the manifest declares.
 */

export type Approval = 'never' | 'edits' | 'mutating' | 'always';
export type ShowDiffs = 'always' | 'onConfirm' | 'never';
export type FileAccess = 'workspace' | 'unrestricted';
export type ToolGroup = 'read' | 'edit' | 'commands' | 'plan' | 'code';
export type SandboxMode = 'auto' | 'required' | 'off';
export type SandboxNetwork = 'off' | 'on';

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

export interface BackupLimits {
	maxAgeDays: number;
	maxTotalMB: number;
}

/** How commands are confined (see core/sandbox). */
export interface SandboxSettings {
	/** `auto`: sandboxed where the platform allows, else run as is and say so; `required`: refuse then. */
	mode: SandboxMode;
	network: SandboxNetwork;
	/** Paths (absolute or `~/…`) commands may not read, on top of the built-in list. */
	denyRead: string[];
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
	/** How long and how much backups are kept (older and over-budget sets are pruned). */
	backups: BackupLimits;
	sandbox: SandboxSettings;
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

/** Every repository's `.git` (nested ones too: `repo2/.git/hooks/pre-commit`), env files, editor settings, dependencies. */
export const DEFAULT_PROTECTED_PATHS = ['**/.git/**', '**/.env*', '.vscode/*.json', 'node_modules/**'];

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
		backups: { ...DEFAULT_BACKUP_LIMITS },
		sandbox: { mode: 'auto', network: 'off', denyRead: [] },
		searchExcludes: [],
	};
}

export const DEFAULT_BACKUP_LIMITS: BackupLimits = { maxAgeDays: 14, maxTotalMB: 256 };

/** Overrides as they come from settings.json, the CLI or a caller: anything, partly filled. */
export type SettingsOverrides = { [K in keyof Settings]?: unknown };

const CHOICES: Partial<Record<keyof Settings, readonly string[]>> = {
	approval: ['never', 'edits', 'mutating', 'always'],
	showDiffs: ['always', 'onConfirm', 'never'],
	fileAccess: ['workspace', 'unrestricted'],
};

/**
 * `base` with the valid parts of `overrides` on top. Nested groups (limits, backups) merge field
 * by field, so `{ limits: { readBytes: 1000 } }` keeps the other limits. A value of the wrong type
 * or outside its choices is left out and named in `ignored`, so a caller can say so.
 */
export function mergeSettings(base: Settings, overrides: SettingsOverrides = {}): { settings: Settings; ignored: string[] } {
	const settings: Settings = { ...base, limits: { ...base.limits }, backups: { ...base.backups }, sandbox: { ...base.sandbox, denyRead: [...base.sandbox.denyRead] } };
	const ignored: string[] = [];
	for (const [key, value] of Object.entries(overrides) as [keyof Settings, unknown][]) {
		if (value === undefined) continue;
		if (!(key in base)) {
			ignored.push(key);
		} else if (key === 'limits' || key === 'backups') {
			mergeNumbers(settings[key] as unknown as Record<string, number>, value, key, ignored);
		} else if (key === 'sandbox') {
			mergeSandbox(settings.sandbox, value, ignored);
		} else if (Array.isArray(base[key])) {
			if (Array.isArray(value) && value.every(item => typeof item === 'string')) (settings as any)[key] = [...value];
			else ignored.push(key);
		} else if (typeof value === typeof base[key] && (!CHOICES[key] || CHOICES[key]!.includes(value as string))) {
			(settings as any)[key] = value;
		} else {
			ignored.push(key);
		}
	}
	return { settings, ignored };
}

/** Positive numbers only: a hand-edited settings.json can hold anything. */
function mergeNumbers(target: Record<string, number>, value: unknown, group: string, ignored: string[]): void {
	if (value === null || typeof value !== 'object') {
		ignored.push(group);
		return;
	}
	for (const [name, number] of Object.entries(value)) {
		if (name in target && typeof number === 'number' && number > 0) target[name] = number;
		else ignored.push(`${group}.${name}`);
	}
}

const SANDBOX_CHOICES = { mode: ['auto', 'required', 'off'], network: ['off', 'on'] } as const;

/** Field by field; a malformed denyRead entry is dropped and named, the valid ones still apply. */
function mergeSandbox(target: SandboxSettings, value: unknown, ignored: string[]): void {
	if (value === null || typeof value !== 'object') {
		ignored.push('sandbox');
		return;
	}
	for (const [name, field] of Object.entries(value)) {
		if (field === undefined) continue;
		if (name === 'mode' || name === 'network') {
			if ((SANDBOX_CHOICES[name] as readonly unknown[]).includes(field)) (target as any)[name] = field;
			else ignored.push(`sandbox.${name}`);
		} else if (name === 'denyRead' && Array.isArray(field)) {
			target.denyRead = [];
			for (const entry of field) {
				const problem = denyReadProblem(entry);
				if (problem) ignored.push(`sandbox.denyRead entry ${JSON.stringify(entry)} (${problem})`);
				else target.denyRead.push(entry);
			}
		} else {
			ignored.push(`sandbox.${name}`);
		}
	}
}

/** What is wrong with a denyRead entry, or undefined. Relative paths have no meaning for a command anywhere. */
function denyReadProblem(entry: unknown): string | undefined {
	if (typeof entry !== 'string') return 'not a string';
	if (entry.trim() === '') return 'empty';
	if (entry.includes('\0')) return 'holds a NUL byte';
	if (!isAbsolute(entry) && !/^~([\\/]|$)/.test(entry)) return 'not an absolute path: start it with / or ~/';
	return undefined;
}
