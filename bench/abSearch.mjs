// A/B of the search bench's rows between two checkouts (each built: `npx tsc -p . --outDir out`):
//   node bench/abSearch.mjs <checkout A> <checkout B> [rounds=11] [grep|find_files] [pattern]
// The tree of search.bench.mjs (made by `npm run bench search` first); grep's pattern defaults to
// the bench's rare one. Each round runs A, then B, each as the first call of a fresh process
// (modules loaded before the clock starts, as the bench does), then rg as a whole process with the
// flags the tool passes, so a neighbour's load falls on all three alike. Per side: the median wall
// time of the call and its median CPU time (process.cpuUsage: Node's threads, not rg's). The two
// checkouts' results must be the same text; the script fails when they differ.
// Children run from the temp folder: with one checkout as the working folder, that side's first
// call was seen to take its garbage collection at another moment than the other side's.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { repo } from './lib/measure.mjs';

const [first, second, rounds = '11', tool = 'grep', pattern] = process.argv.slice(2);
if (!first || !second || !['grep', 'find_files'].includes(tool)) {
	console.error('usage: node bench/abSearch.mjs <checkout A> <checkout B> [rounds] [grep|find_files] [pattern]');
	process.exit(2);
}
const checkouts = [path.resolve(first), path.resolve(second)];
const tree = path.join(repo, 'bench/.data/tree-207mb');
if (!fs.existsSync(tree)) {
	console.error(`${tree} is missing: run \`npm run bench search\` once to make it.`);
	process.exit(2);
}
const rg = createRequire(import.meta.url)('@vscode/ripgrep').rgPath;
const SKIPPED = ['--no-config', '--no-require-git', '--glob', '!.git', '--glob', '!node_modules'];
const input = tool === 'grep' ? { pattern: pattern ?? 'createTwoFilesPatch' } : { pattern: pattern ?? '**/*.ts', limit: 100 };
const rgArgs = tool === 'grep'
	? ['--json', ...SKIPPED, '--case-sensitive', '--regexp', input.pattern, '--', '.']
	: [...SKIPPED, '--glob', input.pattern, '--files', '--', '.'];

/** One first call in a fresh process: { ms, cpuMs, text }. */
function once(checkout, storage) {
	const script = `
		const repo = ${JSON.stringify(checkout)};
		const { createNodeEnvironment } = require(repo + '/out/src/core/nodeHost.js');
		const { ALL_TOOLS, ToolRegistry } = require(repo + '/out/src/tools/index.js');
		const registry = new ToolRegistry(ALL_TOOLS, createNodeEnvironment({ roots: [${JSON.stringify(tree)}], storageDir: ${JSON.stringify(storage)}, settings: {}, confirm: async () => true }));
		(async () => {
			const cpu = process.cpuUsage();
			const start = process.hrtime.bigint();
			const result = await registry.invoke(${JSON.stringify(tool)}, ${JSON.stringify(input)});
			const ms = Number(process.hrtime.bigint() - start) / 1e6;
			const used = process.cpuUsage(cpu);
			process.stdout.write(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, text: result.content.map(part => part.text).join('\\n') }));
		})().catch(error => { console.error(error); process.exit(1); });`;
	return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: os.tmpdir(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
}

/** rg as a whole process, its output dropped: { ms }. */
function rgOnce() {
	const start = process.hrtime.bigint();
	const run = spawnSync(rg, rgArgs, { cwd: tree, stdio: ['ignore', 'ignore', 'pipe'] });
	if (run.status !== 0) throw new Error(`rg failed (${run.status}): ${run.stderr}`);
	return { ms: Number(process.hrtime.bigint() - start) / 1e6 };
}

const median = values => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-ab-search-'));
try {
	const runs = checkouts.map(() => []);
	const rgRuns = [];
	for (let round = 0; round < Number(rounds); round++) {
		checkouts.forEach((checkout, side) => runs[side].push(once(checkout, storage)));
		rgRuns.push(rgOnce());
	}
	const rgMs = median(rgRuns.map(run => run.ms));
	console.log(`${tool} ${JSON.stringify(input)}, ${rounds} rounds, ${new Date().toISOString()}, load ${os.loadavg().map(load => load.toFixed(1)).join(' ')}`);
	checkouts.forEach((checkout, side) => {
		const all = runs[side];
		const ms = median(all.map(run => run.ms));
		console.log(`${checkout}: wall median ${ms.toFixed(1)} ms (${(ms / rgMs).toFixed(2)}× rg), CPU median ${median(all.map(run => run.cpuMs)).toFixed(1)} ms (walls ${all.map(run => run.ms.toFixed(0)).join(' ')})`);
	});
	console.log(`rg: wall median ${rgMs.toFixed(1)} ms (walls ${rgRuns.map(run => run.ms.toFixed(0)).join(' ')})`);
	const texts = runs.flat().map(run => run.text);
	if (texts.some(text => text !== texts[0])) throw new Error('the two checkouts\' results differ');
	console.log('results: the same text on every call');
} finally {
	fs.rmSync(storage, { recursive: true, force: true });
}
