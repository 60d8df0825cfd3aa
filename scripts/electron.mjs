// `npm run test:electron`: the same integration suites in desktop VS Code through
// @vscode/test-electron. It downloads VS Code, so it only works where that is reachable; offline,
// `npm run test:integration` runs these suites in the VS Code server instead.
import * as path from 'node:path';
import { downloadAndUnzipVSCode, runTests } from '@vscode/test-electron';
import { cacheDir, tempDir } from './lib/host.mjs';
import { integrationTestsPath, requireBuild, root, suites } from './lib/suites.mjs';

requireBuild('run npm run build && npm run compile-tests first.');

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

let failed = false;
for (const [suite, prepare] of Object.entries(suites)) {
	console.log(`\n── electron: ${suite} ──`);
	const scratch = tempDir(`toolbelt-electron-${suite}-`);
	const { folder, workspaceFile, env, extensions = [] } = prepare(scratch);
	try {
		await runTests({
			vscodeExecutablePath,
			extensionDevelopmentPath: [root, ...extensions],
			extensionTestsPath: integrationTestsPath,
			extensionTestsEnv: { ...env, ...(process.env.TOOLBELT_TEST_GREP ? { TOOLBELT_TEST_GREP: process.env.TOOLBELT_TEST_GREP } : {}) },
			launchArgs: [
				folder ?? workspaceFile,
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
