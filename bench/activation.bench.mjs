// Activation in the real VS Code host (the test host the integration suite uses): loading
// dist/extension.js, then from the request to activate until activate() returned and until all our
// tools are in vscode.lm.tools, with the file-system calls made meanwhile. Target ≤ 20 ms, no file I/O.
// Median of RUNS fresh hosts; the test host is started like bench/references.bench.mjs does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureHost, runExtensionTests, tempDir } from '../scripts/lib/host.mjs';
import { repo } from './lib/measure.mjs';

const RUNS = 3;

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
	const median = key => figures.map(f => f[key]).sort((a, b) => a - b)[Math.floor(figures.length / 2)];
	const activated = median('activatedMs');
	const calls = figures.flatMap(f => f.fileCalls);
	console.log(`median of ${RUNS} fresh hosts`);
	console.log('| Work | Ours | Target | File calls |\n| --- | --- | --- | --- |');
	console.log(`| loading dist/extension.js (require) | ${median('loadMs').toFixed(1)} ms | | |`);
	console.log(`| activate() itself (its own clock) | ${median('activateBodyMs').toFixed(1)} ms | | |`);
	console.log(`| activation request → activate() returned | ${activated.toFixed(1)} ms | ≤ 20 ms ${activated <= 20 ? '✓' : '✗'} | ${calls.length / RUNS} per activation |`);
	console.log(`| activation request → all ${figures[0].tools} tools in vscode.lm.tools | ${median('toolsMs').toFixed(1)} ms | | |`);
	if (figures.some(f => f.wasActive)) console.log('(the extension was already active in some host: those figures measure nothing)');
	if (calls.length) console.log(`file-system calls during activation: ${[...new Set(calls)].slice(0, 20).join(', ')}`);
}
