// The integration suites' workspaces, shared by the two launchers that run them: the VS Code
// server one (scripts/integration.mjs) and the desktop one (scripts/electron.mjs). One definition,
// so a fixture setting (files.autoSave: off) cannot reach one launcher and not the other.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const root = path.resolve(import.meta.dirname, '..', '..');
/** The compiled mocha entry point both launchers hand to VS Code. */
export const integrationTestsPath = path.join(root, 'out', 'test', 'integration', 'index.js');

/** Exits with `advice` when the build the suites run against is missing. */
export function requireBuild(advice) {
	for (const file of [integrationTestsPath, path.join(root, 'dist', 'extension.js')]) {
		if (!fs.existsSync(file)) {
			console.error(`${path.relative(root, file)} is missing: ${advice}`);
			process.exit(1);
		}
	}
}

/** A fresh temp copy of a fixture folder, named like the original (multi-root tests see the names). */
export function copyFixture(scratch, fixture) {
	const target = path.join(scratch, path.basename(fixture));
	fs.cpSync(path.join(root, fixture), target, { recursive: true });
	return target;
}

/**
 * Each suite prepares its workspace in `scratch` and returns what to open — `{ folder }` or
 * `{ workspaceFile }` — and `env`, what test/integration/index.js reads to pick and find it.
 */
export const suites = {
	single(scratch) {
		// The fixture's own .vscode/settings.json turns auto-save off.
		const folder = copyFixture(scratch, 'test/fixtures/workspace');
		return { folder, env: { TOOLBELT_TEST_SUITE: 'single', TOOLBELT_TEST_WORKSPACE: folder } };
	},
	multiroot(scratch) {
		const folders = ['test/fixtures/multiroot/one', 'test/fixtures/multiroot/two'].map(fixture => copyFixture(scratch, fixture));
		const workspaceFile = path.join(scratch, 'multiroot.code-workspace');
		// Web VS Code saves after a delay by default; tests need dirty editors to stay dirty.
		fs.writeFileSync(workspaceFile, JSON.stringify({ folders: folders.map(folder => ({ path: folder })), settings: { 'files.autoSave': 'off' } }, null, '\t'));
		return { workspaceFile, env: { TOOLBELT_TEST_SUITE: 'multiroot', TOOLBELT_TEST_WORKSPACE_FILE: workspaceFile } };
	},
	virtual(scratch) {
		// A folder that is not on disk: memfs:/ws, served from memory by a test extension loaded next
		// to Toolbelt (`extensions`).
		const workspaceFile = path.join(scratch, 'virtual.code-workspace');
		fs.writeFileSync(workspaceFile, JSON.stringify({ folders: [{ uri: 'memfs:/ws', name: 'ws' }], settings: { 'files.autoSave': 'off' } }, null, '\t'));
		return { workspaceFile, extensions: [path.join(root, 'test', 'integration', 'memfsProvider')], env: { TOOLBELT_TEST_SUITE: 'virtual' } };
	},
};
