import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.join(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const contributes = manifest.contributes;

describe('package.json contributions (commands, views, settings)', () => {
	it('every command is in the Toolbelt category and has a command palette entry', () => {
		const palette = new Map<string, string | undefined>(contributes.menus.commandPalette.map((entry: { command: string; when?: string }) => [entry.command, entry.when]));
		for (const command of contributes.commands) {
			assert.equal(command.category, 'Toolbelt', command.command);
			assert.ok(palette.has(command.command), `${command.command} has no menus.commandPalette entry`);
		}
		for (const id of palette.keys()) assert.ok(contributes.commands.some((command: { command: string }) => command.command === id), `${id} is in the palette menu but not contributed`);
	});

	it('every contributed command has a handler, and every handler is contributed', () => {
		// commandHandlers needs VS Code to run; its table is read from the source instead. Activation
		// registers the ids package.json names and looks each handler up when the command first runs.
		const source = fs.readFileSync(path.join(root, 'src/vscode/commands.ts'), 'utf8');
		const table = source.slice(source.indexOf('export function commandHandlers'));
		const handled = [...table.matchAll(/\bcommand\('(toolbelt\.[\w.]+)'/g)].map(match => match[1]).sort();
		const contributed = contributes.commands.map((command: { command: string }) => command.command).sort();
		assert.ok(handled.length >= 15, `only ${handled.length} handlers found: has commandHandlers changed shape?`);
		assert.deepEqual(handled, contributed);
	});

	it('commands that need a folder or an editor say so; internal ones are hidden', () => {
		const when = (id: string) => contributes.menus.commandPalette.find((entry: { command: string }) => entry.command === id)?.when ?? '';
		for (const id of ['toolbelt.runTool', 'toolbelt.searchWorkspace', 'toolbelt.findFiles', 'toolbelt.applyPatchFromClipboard', 'toolbelt.restoreBackup', 'toolbelt.openPlan']) {
			assert.match(when(id), /workspaceFolderCount > 0/, id);
		}
		assert.match(when('toolbelt.applyPatchFromEditor'), /editorIsOpen/);
		assert.equal(when('toolbelt.runInputDocument'), 'resourceScheme == toolbelt-input');
		for (const id of ['toolbelt.activity.open', 'toolbelt.activity.showDetails', 'toolbelt.activity.showDiff', 'toolbelt.plan.complete', 'toolbelt.plan.reopen']) {
			assert.equal(when(id), 'false', id);
		}
	});

	it('the views live in a Toolbelt container whose icon exists', () => {
		const [container] = contributes.viewsContainers.activitybar;
		assert.equal(container.id, 'toolbelt');
		assert.ok(fs.existsSync(path.join(root, container.icon)), container.icon);
		assert.deepEqual(contributes.views.toolbelt.map((view: { id: string }) => view.id), ['toolbelt.activity', 'toolbelt.plan']);
		for (const view of contributes.views.toolbelt) assert.ok(fs.existsSync(path.join(root, view.icon)), view.icon);
	});

	it('every setting has a type, a default, a Markdown description and a scope', () => {
		for (const [key, setting] of Object.entries<Record<string, unknown>>(contributes.configuration.properties)) {
			assert.ok(setting.type, `${key} has no type`);
			assert.ok('default' in setting, `${key} has no default`);
			assert.ok(typeof setting.markdownDescription === 'string' && setting.markdownDescription.length > 20, `${key} has no markdownDescription`);
			assert.ok(setting.scope, `${key} has no scope`);
		}
	});

	it('the README shows only screenshots that exist', () => {
		const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
		const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map(match => match[1]);
		assert.ok(images.length >= 5);
		for (const image of images) assert.ok(fs.existsSync(path.join(root, image)), `${image} is missing`);
	});
});
