// Activation in the real VS Code host (the test host the integration suite uses): from the request to
// activate until activate() returned and until all our tools are in vscode.lm.tools, split with VS
// Code's own marks into our part (loading dist/extension.js, activate() itself) and VS Code's (before
// loading, and waiting for the extension context: its storage comes from the window); the file-system
// calls made meanwhile; then the first tool call (which loads the tools) beside the second. Target
// ≤ 20 ms, no file I/O. Median of RUNS fresh hosts; the test host is started like
// bench/references.bench.mjs does. Two moments: as the window starts (the test runs as soon as the
// host is up, while the workbench is still loading and answers the extension host slowly) and after
// SETTLE_MS, as when Copilot's first call to one of our tools activates Toolbelt in a window that
// is already open.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureHost, runExtensionTests, tempDir } from '../scripts/lib/host.mjs';
import { repo } from './lib/measure.mjs';

const RUNS = 5;
/** How long the settled runs wait before asking for activation. */
const SETTLE_MS = 3000;

export default async function () {
	ensureHost();
	const atStart = await activations(0);
	const settled = await activations(SETTLE_MS);
	console.log(`median of ${RUNS} fresh hosts per column; VS Code's marks are whole milliseconds`);
	console.log(`| Work | As the window starts | ${SETTLE_MS / 1000} s later | Target | File calls |\n| --- | --- | --- | --- | --- |`);
	const row = (label, value, target) => {
		const cells = [atStart, settled].map(figures => `${median(figures, value).toFixed(1)} ms`);
		const verdict = target === undefined ? '' : `≤ ${target} ms ${[atStart, settled].map(figures => (median(figures, value) <= target ? '✓' : '✗')).join(' / ')}`;
		return `| ${label} | ${cells.join(' | ')} | ${verdict} |`;
	};
	const mark = (from, to) => f => f.marks[to] - (from ? f.marks[from] : 0);
	const ours = f => mark('willLoadExtensionCode', 'didLoadExtensionCode')(f) + f.activateBodyMs;
	const calls = [...atStart, ...settled].flatMap(f => f.fileCalls);
	console.log(`${row('activation request → activate() returned (our clock)', f => f.activatedMs, 20)} ${calls.length / (2 * RUNS)} per activation |`);
	console.log(`${row('… our part: loading dist/extension.js + activate() itself', ours, 20)} |`);
	console.log(`${row('  loading dist/extension.js (VS Code\'s marks)', mark('willLoadExtensionCode', 'didLoadExtensionCode'))} ${median(atStart, f => f.codeLoading.length)} (VS Code reading it) |`);
	console.log(`${row('  activate() itself (its own clock)', f => f.activateBodyMs)} |`);
	console.log(`${row('… VS Code\'s part: request → loading starts', mark(undefined, 'willLoadExtensionCode'))} |`);
	console.log(`${row('  request → activate() called (loading and the extension context in parallel)', mark(undefined, 'willActivateExtension'))} |`);
	console.log(`${row('  activate() returned → the request resolved', f => f.activatedMs - f.marks.didActivateExtension)} |`);
	console.log(`${row(`activation request → all ${atStart[0].tools} tools in vscode.lm.tools`, f => f.toolsMs, 20)} |`);
	console.log(`${row('first tool call (read_file through lm.invokeTool; loads the tools)', f => f.firstCallMs)} |`);
	console.log(`${row('second tool call', f => f.secondCallMs)} |`);
	console.log('VS Code builds the extension context (its storage, from the window) before it calls activate(): as the window starts, that wait is most of the time; ours is the second row.');
	if ([...atStart, ...settled].some(f => f.wasActive)) console.log('(the extension was already active in some host: those figures measure nothing)');
	if (calls.length) console.log(`file-system calls during activation: ${[...new Set(calls)].slice(0, 20).join(', ')}`);
}

/** RUNS fresh hosts, each asking for activation `settleMs` after the test started: their figures. */
async function activations(settleMs) {
	const figures = [];
	for (let run = 0; run < RUNS; run++) {
		const folder = tempDir('tb-bench-activation-');
		const out = path.join(folder, '..', `${path.basename(folder)}.json`);
		const code = await runExtensionTests({
			folder,
			extensionDevelopmentPath: repo,
			extensionTestsPath: path.join(repo, 'out', 'bench', 'activationInHost.js'),
			env: { TOOLBELT_BENCH_OUT: out, TOOLBELT_BENCH_SETTLE_MS: String(settleMs) },
			timeoutMs: 3 * 60_000,
		});
		if (code !== 0 || !fs.existsSync(out)) throw new Error(`the activation bench failed in the VS Code host (exit code ${code})`);
		figures.push(JSON.parse(fs.readFileSync(out, 'utf8')));
		fs.rmSync(out, { force: true });
	}
	return figures;
}

function median(figures, value) {
	return figures.map(value).sort((a, b) => a - b)[Math.floor(figures.length / 2)];
}
