import * as vscode from 'vscode';
import { defaultSettings, mergeSettings, Settings, SettingsOverrides } from '../core/policy/settings';

export const SECTION = 'toolbelt';

/**
 * The `toolbelt.*` settings as the core's plain Settings; invalid values fall back to the defaults
 * and are named to `warn` (the log), as settings.json's own squiggles may go unseen.
 */
export function readSettings(warn?: (message: string) => void): Settings {
	const config = vscode.workspace.getConfiguration(SECTION);
	const overrides: SettingsOverrides = {};
	const defaults = defaultSettings();
	for (const key of Object.keys(defaults) as (keyof Settings)[]) {
		if (key !== 'searchExcludes') overrides[key] = config.get(key);
	}
	const { settings, ignored } = mergeSettings(defaults, overrides);
	if (ignored.length) warn?.(`Settings ignored as invalid: ${ignored.map(name => `toolbelt.${name}`).join('; ')}. An invalid value falls back to its default; an invalid denyRead entry is left out.`);
	return { ...settings, searchExcludes: searchExcludes() };
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
