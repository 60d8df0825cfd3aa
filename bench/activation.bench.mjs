// Activation in the real VS Code host (the test host the integration suite uses): from the request to
// activate until activate() returned and until all our tools are in vscode.lm.tools, split with VS
// Code's own marks into our part (loading dist/extension.js, activate() itself) and VS Code's (before
// loading, and waiting for the extension context: its storage comes from the window); the file-system
// calls made meanwhile; then the first tool call (which loads the tools) beside the second. Target
// ≤ 20 ms, no file I/O. Median of RUNS fresh hosts; the test host is started like
// bench/references.bench.mjs does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureHost, runExtensionTests, tempDir } from '../scripts/lib/host.mjs';
import { repo } from './lib/measure.mjs';

const RUNS = 5;

export default async function () {
	ensureHost();
	const figures = [];
	for (let run = 0; run < RUNS; run++) {
		const folder = tempDir('tb-bench-activation-');
		const out = path.join(folder, '..', `${path.basename(folder)}.json`);
		const code = await runExtensionTests({
			folder,
			extensionDevelopmentPath: repo,
			extensionTestsPath: path.join(repo, 'out', 'bench', 'activationInHost.js'),
			env: { TOOLBELT_BENCH_OUT: out },
			timeoutMs: 3 * 60_000,
		});
		if (code !== 0 || !fs.existsSync(out)) throw new Error(`the activation bench failed in the VS Code host (exit code ${code})`);
		figures.push(JSON.parse(fs.readFileSync(out, 'utf8')));
		fs.rmSync(out, { force: true });
	}
	const median = value => figures.map(value).sort((a, b) => a - b)[Math.floor(figures.length / 2)];
	const ms = value => `${median(value).toFixed(1)} ms`;
	const mark = (from, to) => f => f.marks[to] - (from ? f.marks[from] : 0);
	const activated = median(f => f.activatedMs);
	const ours = f => mark('willLoadExtensionCode', 'didLoadExtensionCode')(f) + f.activateBodyMs;
	const calls = figures.flatMap(f => f.fileCalls);
	console.log(`median of ${RUNS} fresh hosts; VS Code's marks are whole milliseconds`);
	console.log('| Work | Ours | Target | File calls |\n| --- | --- | --- | --- |');
	console.log(`| activation request → activate() returned (our clock) | ${activated.toFixed(1)} ms | ≤ 20 ms ${activated <= 20 ? '✓' : '✗'} | ${calls.length / RUNS} per activation |`);
	console.log(`| … our part: loading dist/extension.js + activate() itself | ${ms(ours)} | ≤ 20 ms ${median(ours) <= 20 ? '✓' : '✗'} | |`);
	console.log(`|   loading dist/extension.js (VS Code's marks) | ${ms(mark('willLoadExtensionCode', 'didLoadExtensionCode'))} | | ${median(f => f.codeLoading.length)} (VS Code reading it) |`);
	console.log(`|   activate() itself (its own clock) | ${ms(f => f.activateBodyMs)} | | |`);
	console.log(`| … VS Code's part: request → loading starts | ${ms(mark(undefined, 'willLoadExtensionCode'))} | | |`);
	console.log(`|   request → activate() called (loading and the extension context in parallel) | ${ms(mark(undefined, 'willActivateExtension'))} | | |`);
	console.log(`|   activate() returned → the request resolved | ${ms(f => f.activatedMs - f.marks.didActivateExtension)} | | |`);
	console.log(`| activation request → all ${figures[0].tools} tools in vscode.lm.tools | ${ms(f => f.toolsMs)} | | |`);
	console.log(`| first tool call (read_file through lm.invokeTool; loads the tools) | ${ms(f => f.firstCallMs)} | | |`);
	console.log(`| second tool call | ${ms(f => f.secondCallMs)} | | |`);
	if (figures.some(f => f.wasActive)) console.log('(the extension was already active in some host: those figures measure nothing)');
	if (calls.length) console.log(`file-system calls during activation: ${[...new Set(calls)].slice(0, 20).join(', ')}`);
}
