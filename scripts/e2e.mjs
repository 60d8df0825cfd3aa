// `npm run test:e2e`: end-to-end tests that drive the real workbench in headless Chromium, as a
// person would (test/e2e/*.e2e.mjs). The extension is loaded for development with no tests path,
// so confirmations are the real modal dialogs. Screenshots for the README land in media/screenshots/.
// A suite exports `steps` ([title, async context => …]; a step that cannot run yet returns
// `{ skipped: 'why' }`), and optionally `options` (for openWorkbench: an object, or a function of
// `{ scratch, folder }` that also prepares the workspace) and `diagnose(context)`, whose text is
// printed under a failed step.
//   --only NAME         run one file (e.g. --only palette)
//   --screenshots DIR   where screenshots go (default media/screenshots, which the README shows;
//                       `npm test` points this into out/ so a full run leaves tracked files alone)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureHost, tempDir } from './lib/host.mjs';
import { openWorkbench } from './lib/workbench.mjs';

const root = path.resolve(import.meta.dirname, '..');
const { values: options } = parseArgs({ options: { only: { type: 'string' }, screenshots: { type: 'string' } } });
const failuresDir = path.join(root, 'out', 'e2e');
const screenshotsDir = path.resolve(root, options.screenshots ?? path.join('media', 'screenshots'));

if (!fs.existsSync(path.join(root, 'dist', 'extension.js'))) {
	console.error('dist/extension.js is missing: run npm run build first (npm run test:e2e does).');
	process.exit(1);
}
ensureHost();

const files = fs.readdirSync(path.join(root, 'test', 'e2e'))
	.filter(name => name.endsWith('.e2e.mjs') && (!options.only || name.startsWith(options.only)))
	.sort();
if (!files.length) {
	console.error(`No test/e2e/*.e2e.mjs files${options.only ? ` starting with "${options.only}"` : ''}.`);
	process.exit(2);
}

let failed = 0;
for (const file of files) {
	const suite = await import(path.join(root, 'test', 'e2e', file));
	console.log(`\n── e2e: ${file} ──`);
	const scratch = tempDir('toolbelt-e2e-');
	const folder = path.join(scratch, 'workspace');
	fs.cpSync(path.join(root, 'test', 'fixtures', 'workspace'), folder, { recursive: true });
	const started = Date.now();
	let workbench;
	try {
		const options = typeof suite.options === 'function' ? await suite.options({ scratch, folder }) : suite.options;
		workbench = await openWorkbench({ folder, extensionDevelopmentPath: root, ...options });
		// The view container's icon appears once the extension's contributions are in.
		await workbench.page.locator('.activitybar .action-item a[aria-label^="Toolbelt"]').waitFor({ timeout: 60_000 });
	} catch (error) {
		console.error(`  ✗ the workbench did not open: ${error.message}`);
		failed++;
		continue;
	}
	const context = {
		page: workbench.page,
		folder,
		file: rel => path.join(folder, rel),
		screenshot: async name => {
			fs.mkdirSync(screenshotsDir, { recursive: true });
			await workbench.page.screenshot({ path: path.join(screenshotsDir, `${name}.png`) });
		},
	};
	for (const [title, step] of suite.steps) {
		const stepStarted = Date.now();
		try {
			const outcome = await step(context);
			if (outcome?.skipped) console.log(`  ○ ${title} (skipped: ${outcome.skipped})`);
			else console.log(`  ✔ ${title} (${Date.now() - stepStarted} ms)`);
		} catch (error) {
			failed++;
			fs.mkdirSync(failuresDir, { recursive: true });
			const shot = path.join(failuresDir, `${path.basename(file, '.e2e.mjs')}-failure.png`);
			await workbench.page.screenshot({ path: shot }).catch(() => {});
			console.error(`  ✗ ${title}\n    ${error.stack ?? error}\n    screenshot: ${path.relative(root, shot)}`);
			const diagnosis = await suite.diagnose?.(context).catch(problem => `(diagnose failed: ${problem.message})`);
			if (diagnosis) console.error(diagnosis.replace(/^/gm, '    '));
			if (process.env.TOOLBELT_TEST_VERBOSE) console.error(workbench.logs.join('\n'));
			break;
		}
	}
	await workbench.close();
	console.log(`  (${Math.round((Date.now() - started) / 1000)} s)`);
}
console.log(failed ? `\n✗ ${failed} end-to-end step(s) failed` : '\n✓ end-to-end tests passed');
process.exit(failed ? 1 : 0);
