/**
 * Settings as the core sees them: plain data, read from `toolbelt.*` in VS Code and from
 * defaults (or flags) in the CLI. The defaults here are the ones the manifest declares.
 */

export type Approval = 'never' | 'mutating' | 'always';
export type ShowDiffs = 'always' | 'onConfirm' | 'never';
export type FileAccess = 'workspace' | 'unrestricted';
export type ToolGroup = 'read' | 'edit' | 'commands' | 'plan' | 'code';

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
		backups: { ...DEFAULT_BACKUP_LIMITS },
		searchExcludes: [],
	};
}

export const DEFAULT_BACKUP_LIMITS: BackupLimits = { maxAgeDays: 14, maxTotalMB: 256 };

/** Overrides as they come from settings.json, the CLI or a caller: anything, partly filled. */
export type SettingsOverrides = { [K in keyof Settings]?: unknown };

const CHOICES: Partial<Record<keyof Settings, readonly string[]>> = {
	approval: ['never', 'mutating', 'always'],
	showDiffs: ['always', 'onConfirm', 'never'],
	fileAccess: ['workspace', 'unrestricted'],
};

/**
 * `base` with the valid parts of `overrides` on top. Nested groups (limits, backups) merge field
 * by field, so `{ limits: { readBytes: 1000 } }` keeps the other limits. A value of the wrong type
 * or outside its choices is left out and named in `ignored`, so a caller can say so.
 */
export function mergeSettings(base: Settings, overrides: SettingsOverrides = {}): { settings: Settings; ignored: string[] } {
	const settings: Settings = { ...base, limits: { ...base.limits }, backups: { ...base.backups } };
	const ignored: string[] = [];
	for (const [key, value] of Object.entries(overrides) as [keyof Settings, unknown][]) {
		if (value === undefined) continue;
		if (!(key in base)) {
			ignored.push(key);
		} else if (key === 'limits' || key === 'backups') {
			mergeNumbers(settings[key] as unknown as Record<string, number>, value, key, ignored);
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
