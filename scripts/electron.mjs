// `npm run test:electron`: the same integration suites in desktop VS Code through
// @vscode/test-electron. It downloads VS Code, so it only works where that is reachable; offline,
// `npm run test:integration` runs these suites in the VS Code server instead.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { downloadAndUnzipVSCode, runTests } from '@vscode/test-electron';
import { cacheDir, tempDir } from './lib/host.mjs';

const root = path.resolve(import.meta.dirname, '..');
const extensionTestsPath = path.join(root, 'out', 'test', 'integration', 'index.js');
for (const file of [extensionTestsPath, path.join(root, 'dist', 'extension.js')]) {
	if (!fs.existsSync(file)) {
		console.error(`${path.relative(root, file)} is missing: run npm run build && npm run compile-tests first.`);
		process.exit(1);
	}
}

let vscodeExecutablePath;
try {
	vscodeExecutablePath = await downloadAndUnzipVSCode({ cachePath: path.join(cacheDir, 'vscode-test'), timeout: 15_000 });
} catch (error) {
	console.error([
		'',
		`test:electron could not download desktop VS Code (${error.message ?? error}).`,
		'This launcher needs the VS Code download service; on a machine that cannot reach it, run',
		'`npm run test:integration`, which runs the same suites in the VS Code server offline.',
		'',
	].join('\n'));
	process.exit(1);
}

function copyFixture(scratch, fixture) {
	const target = path.join(scratch, path.basename(fixture));
	fs.cpSync(path.join(root, fixture), target, { recursive: true });
	return target;
}

const suites = {
	single(scratch) {
		const folder = copyFixture(scratch, 'test/fixtures/workspace');
		return { target: folder, env: { TOOLBELT_TEST_WORKSPACE: folder } };
	},
	multiroot(scratch) {
		const folders = ['test/fixtures/multiroot/one', 'test/fixtures/multiroot/two'].map(fixture => copyFixture(scratch, fixture));
		const workspaceFile = path.join(scratch, 'multiroot.code-workspace');
		fs.writeFileSync(workspaceFile, JSON.stringify({ folders: folders.map(folder => ({ path: folder })) }, null, '\t'));
		return { target: workspaceFile, env: { TOOLBELT_TEST_WORKSPACE_FILE: workspaceFile } };
	},
};

let failed = false;
for (const [suite, prepare] of Object.entries(suites)) {
	console.log(`\n── electron: ${suite} ──`);
	const scratch = tempDir(`toolbelt-electron-${suite}-`);
	const { target, env } = prepare(scratch);
	try {
		await runTests({
			vscodeExecutablePath,
			extensionDevelopmentPath: root,
			extensionTestsPath,
			extensionTestsEnv: { TOOLBELT_TEST_SUITE: suite, ...env, ...(process.env.TOOLBELT_TEST_GREP ? { TOOLBELT_TEST_GREP: process.env.TOOLBELT_TEST_GREP } : {}) },
			launchArgs: [
				target,
				'--disable-extensions', '--disable-workspace-trust', '--skip-welcome', '--skip-release-notes',
				'--user-data-dir', path.join(scratch, 'user'), '--extensions-dir', path.join(scratch, 'extensions'),
			],
		});
	} catch (error) {
		console.error(`electron ${suite}: ${error.message ?? error}`);
		failed = true;
	}
}
process.exit(failed ? 1 : 0);
