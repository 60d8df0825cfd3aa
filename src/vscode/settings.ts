import * as vscode from 'vscode';
import { defaultSettings, Limits, Settings } from '../core/settings';

export const SECTION = 'toolbelt';

/** The `toolbelt.*` settings as the core's plain Settings, read fresh on every call. */
export function readSettings(scope?: vscode.Uri): Settings {
	const config = vscode.workspace.getConfiguration(SECTION, scope);
	const defaults = defaultSettings();
	const limits = config.get<Partial<Limits>>('limits') ?? {};
	return {
		approval: config.get('approval', defaults.approval),
		showDiffs: config.get('showDiffs', defaults.showDiffs),
		fileAccess: config.get('fileAccess', defaults.fileAccess),
		additionalReadPaths: config.get('additionalReadPaths', defaults.additionalReadPaths),
		protectedPaths: config.get('protectedPaths', defaults.protectedPaths),
		outputsDirectory: config.get('outputsDirectory', defaults.outputsDirectory),
		planFile: config.get('planFile', defaults.planFile),
		disabledTools: config.get('disabledTools', defaults.disabledTools),
		disabledGroups: config.get('disabledGroups', defaults.disabledGroups),
		limits: { ...defaults.limits, ...onlyPositiveNumbers(limits) },
		searchExcludes: searchExcludes(scope),
	};
}

/**
 * The globs the person hides from the explorer and from search. Only entries set to `true`:
 * the `{ when: … }` form depends on sibling files, which a glob handed to ripgrep cannot express.
 */
function searchExcludes(scope?: vscode.Uri): string[] {
	const globs = new Set<string>();
	for (const section of ['files.exclude', 'search.exclude']) {
		const entries = vscode.workspace.getConfiguration(undefined, scope).get<Record<string, unknown>>(section) ?? {};
		for (const [glob, value] of Object.entries(entries)) if (value === true && glob.trim() !== '') globs.add(glob);
	}
	return [...globs];
}

/** A hand-edited settings.json can hold anything; a bad limit falls back to the default. */
function onlyPositiveNumbers(limits: Partial<Limits>): Partial<Limits> {
	return Object.fromEntries(Object.entries(limits).filter(([, value]) => typeof value === 'number' && value > 0));
}
