import * as vscode from 'vscode';
import { defaultSettings, mergeSettings, Settings, SettingsOverrides } from '../core/settings';

export const SECTION = 'toolbelt';

/** The `toolbelt.*` settings as the core's plain Settings; invalid values fall back to the defaults. */
export function readSettings(): Settings {
	const config = vscode.workspace.getConfiguration(SECTION);
	const overrides: SettingsOverrides = {};
	const defaults = defaultSettings();
	for (const key of Object.keys(defaults) as (keyof Settings)[]) {
		if (key !== 'searchExcludes') overrides[key] = config.get(key);
	}
	return { ...mergeSettings(defaults, overrides).settings, searchExcludes: searchExcludes() };
}

/**
 * The globs the person hides from the explorer and from search. Only entries set to `true`:
 * the `{ when: … }` form depends on sibling files, which a glob handed to ripgrep cannot express.
 */
function searchExcludes(): string[] {
	const globs = new Set<string>();
	for (const section of ['files.exclude', 'search.exclude']) {
		const entries = vscode.workspace.getConfiguration().get<Record<string, unknown>>(section) ?? {};
		for (const [glob, value] of Object.entries(entries)) if (value === true && glob.trim() !== '') globs.add(glob);
	}
	return [...globs];
}
