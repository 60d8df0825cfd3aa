// `npm run test:integration`: the integration suites inside a real VS Code (the code-server build of
// the VS Code server + headless Chromium). Expects `npm run build` and `tsc` to `out/` to have run.
//   --only NAME     run one configuration (single, multiroot, virtual, vsix)
//   --grep PATTERN  only the mocha tests matching PATTERN
//   --vsix PATH     test this .vsix (default: toolbelt-<platform>-<arch>.vsix at the repo root, as
//                   npm run package makes it; skipped when absent)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureHost, installVsix, runExtensionTests, tempDir } from './lib/host.mjs';
import { copyFixture, integrationTestsPath, requireBuild, root, suites } from './lib/suites.mjs';
import { vsixName } from './lib/vsix.mjs';
import { linkFolder } from './lib/workbench.mjs';

const { values: options } = parseArgs({ options: { only: { type: 'string' }, grep: { type: 'string' }, vsix: { type: 'string' } } });
const vsixPath = options.vsix ? path.resolve(options.vsix) : path.join(root, vsixName(`${process.platform}-${process.arch}`));
const grepEnv = options.grep ? { TOOLBELT_TEST_GREP: options.grep } : {};

/** A suite from scripts/lib/suites.mjs, run in the VS Code server with the repository as the dev extension. */
function suite(prepare) {
	return scratch => {
		const { env, extensions = [], ...workspace } = prepare(scratch);
		return runExtensionTests({
			...workspace,
			// Test extensions (a file-system provider) load beside Toolbelt through one folder of links.
			extensionDevelopmentPath: extensions.length ? linkFolder(path.join(scratch, 'development'), [root, ...extensions]) : root,
			extensionTestsPath: integrationTestsPath,
			env: { ...env, ...grepEnv },
		});
	};
}

const configurations = {
	single: suite(suites.single),
	multiroot: suite(suites.multiroot),
	virtual: suite(suites.virtual),
	// The packaged extension alone: installed from the .vsix, tested by a probe extension, with no
	// development path pointing at the repository.
	vsix(scratch) {
		const extensionsDir = path.join(scratch, 'extensions');
		console.log(`installing ${vsixPath}`);
		installVsix(vsixPath, extensionsDir);
		const probe = path.join(root, 'test', 'integration', 'vsixProbe');
		return runExtensionTests({
			folder: copyFixture(scratch, 'test/fixtures/workspace'),
			extensionsDir,
			extensionDevelopmentPath: probe,
			extensionTestsPath: path.join(probe, 'test.js'),
		});
	},
};

let names = Object.keys(configurations);
if (options.only) {
	if (!configurations[options.only]) {
		console.error(`Unknown configuration "${options.only}"; choose one of: ${names.join(', ')}`);
		process.exit(2);
	}
	names = [options.only];
}
if (names.includes('vsix') && !fs.existsSync(vsixPath)) {
	if (options.vsix || options.only === 'vsix') {
		console.error(`${vsixPath} does not exist (make it with npm run package).`);
		process.exit(1);
	}
	console.log(`(skipping vsix: no ${path.relative(root, vsixPath)}; npm run package makes it)`);
	names = names.filter(name => name !== 'vsix');
}
if (names.some(name => name !== 'vsix')) {
	requireBuild('run npm run build && npm run compile-tests first (npm run test:integration does both).');
}

ensureHost();
const results = [];
for (const name of names) {
	console.log(`\n── integration: ${name} ──`);
	const scratch = tempDir(`toolbelt-${name}-`);
	const started = Date.now();
	let code;
	try {
		code = await configurations[name](scratch);
	} catch (error) {
		console.error(`integration ${name}: ${error.stack ?? error}`);
		code = 1;
	} finally {
		fs.rmSync(scratch, { recursive: true, force: true });
	}
	results.push({ name, code, seconds: Math.round((Date.now() - started) / 1000) });
}

console.log('');
for (const { name, code, seconds } of results) console.log(`${code === 0 ? 'ok  ' : 'FAIL'} ${name} (${seconds} s)${code === 0 ? '' : `, exit code ${code}`}`);
process.exit(results.every(result => result.code === 0) ? 0 : 1);
