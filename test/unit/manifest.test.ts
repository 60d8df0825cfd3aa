import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultSettings } from '../../src/core/policy/settings';
import { ALL_TOOLS } from '../../src/tools';
import { parametersMarkdown, replaceSection, settingsMarkdown, toolContributions, toolsMarkdown } from '../../src/tools/manifest';

const packageJson = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8'));

describe('package.json manifest', () => {
	const contributed: any[] = packageJson.contributes.languageModelTools;
	const generated = toolContributions(ALL_TOOLS) as any[];

	it('contributes every tool of the code', () => {
		const names = new Set(contributed.map(tool => tool.name));
		const missing = generated.filter(tool => !names.has(tool.name)).map(tool => tool.name);
		assert.deepEqual(missing, [], `Tools in the code but not in package.json (run npm run manifest): ${missing.join(', ')}`);
	});

	it('contributes no tool the code lacks', () => {
		const names = new Set(generated.map(tool => tool.name));
		const extra = contributed.filter(tool => !names.has(tool.name)).map(tool => tool.name);
		assert.deepEqual(extra, [], `Tools in package.json but not in the code (run npm run manifest): ${extra.join(', ')}`);
	});

	it('holds exactly what the code generates, field by field', () => {
		for (const tool of generated) {
			const entry = contributed.find(candidate => candidate.name === tool.name);
			assert.deepEqual(entry, tool, `package.json entry for ${tool.name} is stale: run npm run manifest`);
		}
	});

	it('states the caps in every model description and has the fields VS Code needs', () => {
		for (const tool of contributed) {
			for (const field of ['name', 'toolReferenceName', 'displayName', 'userDescription', 'modelDescription', 'inputSchema', 'icon']) {
				assert.ok(tool[field], `${tool.name} lacks ${field}`);
			}
			assert.equal(tool.canBeReferencedInPrompt, true);
			assert.match(tool.name, /^toolbelt_[a-z_]+$/);
		}
	});

	it('declares a setting for every setting the core reads', () => {
		const properties = packageJson.contributes.configuration.properties;
		const settings = defaultSettings() as unknown as Record<string, unknown>;
		for (const key of Object.keys(settings)) {
			if (key === 'limits' || key === 'backups' || key === 'sandbox') {
				for (const [name, value] of Object.entries(settings[key] as object)) {
					const declared: any = properties[`toolbelt.${key}.${name}`];
					assert.ok(declared, `toolbelt.${key}.${name} is not declared`);
					assert.deepEqual(declared.default, value, `toolbelt.${key}.${name}'s default differs from the core's`);
				}
				continue;
			}
			if (key === 'searchExcludes') continue; // read from files.exclude / search.exclude
			const declared = properties[`toolbelt.${key}`];
			assert.ok(declared, `toolbelt.${key} is not declared in package.json`);
			assert.deepEqual(declared.default, settings[key], `toolbelt.${key}'s default differs from the core's`);
			assert.ok(declared.markdownDescription && declared.scope, `toolbelt.${key} needs a markdownDescription and a scope`);
		}
	});

	it('takes a switched-off tool out of the model\'s list, by name or by group', () => {
		// VS Code gives when clauses an array setting as its JSON text, and `=~` tests a regex on it.
		const visible = (tool: any, disabledTools: string[], disabledGroups: string[]) => {
			const [, toolsRegex, groupsRegex] = /^!\(config\.toolbelt\.disabledTools =~ \/(.+)\/\) && !\(config\.toolbelt\.disabledGroups =~ \/(.+)\/\)$/.exec(tool.when)!;
			return !new RegExp(toolsRegex).test(JSON.stringify(disabledTools)) && !new RegExp(groupsRegex).test(JSON.stringify(disabledGroups));
		};
		const grep = contributed.find(tool => tool.name === 'toolbelt_grep');
		const find = contributed.find(tool => tool.name === 'toolbelt_find_files');
		const run = contributed.find(tool => tool.name === 'toolbelt_run_command');
		assert.equal(visible(grep, [], []), true);
		assert.equal(visible(grep, ['grep'], []), false);
		assert.equal(visible(grep, ['run_command', 'grep', 'x'], []), false);
		assert.equal(visible(grep, ['grep_files', 'rep'], []), true, 'only the exact name counts');
		assert.equal(visible(find, ['grep'], []), true);
		assert.equal(visible(run, [], ['commands']), false);
		assert.equal(visible(grep, [], ['commands']), true);
	});

	it('keeps the README tool and settings tables equal to the code', () => {
		const readme = fs.readFileSync(path.join(__dirname, '../../../README.md'), 'utf8');
		let expected = replaceSection(readme, 'tools', toolsMarkdown(ALL_TOOLS));
		expected = replaceSection(expected, 'parameters', parametersMarkdown(ALL_TOOLS));
		expected = replaceSection(expected, 'settings', settingsMarkdown(packageJson.contributes.configuration.properties));
		assert.ok(readme === expected, 'README.md tables are stale: run npm run manifest');
	});

	it('is a marketplace-ready manifest', () => {
		assert.equal(packageJson.name, 'toolbelt');
		assert.deepEqual(packageJson.activationEvents, []);
		assert.deepEqual(packageJson.extensionKind, ['workspace']);
		assert.equal(packageJson.capabilities.untrustedWorkspaces.supported, 'limited');
		// Virtual workspaces: the file tools through workspace.fs; commands, sessions and code tools refuse.
		assert.equal(packageJson.capabilities.virtualWorkspaces.supported, 'limited');
		assert.match(packageJson.capabilities.virtualWorkspaces.description, /read_file.*apply_patch.*Commands, sessions and the code tools need a folder on disk/);
		assert.ok(fs.existsSync(path.join(__dirname, '../../..', packageJson.icon)));
		assert.ok(packageJson.categories.includes('AI') && packageJson.categories.includes('Chat'));
	});
});
