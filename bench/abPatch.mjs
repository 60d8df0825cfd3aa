// A/B of the apply_patch bench row between two checkouts (each built: `npx tsc -p . --outDir out`):
//   node bench/abPatch.mjs <checkout A> <checkout B> [rounds=10] [full|stage]
// The same tree and patch as patch.bench.mjs; each round runs A then B, each in a fresh process on
// a fresh copy, so a neighbour's load falls on both sides alike. Per side: the median wall time of
// the call, its median CPU time (process.cpuUsage around the call: this thread, the I/O threads and
// the kernel's work for them), and the highest peak RSS. `stage` times parse + stage in memory only.
// Then `git apply` of the same patch, in the same minutes.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FILES, writeInputs } from './patch.bench.mjs';

const [first, second, rounds = '10', mode = 'full'] = process.argv.slice(2);
if (!first || !second || !['full', 'stage'].includes(mode)) {
	console.error('usage: node bench/abPatch.mjs <checkout A> <checkout B> [rounds] [full|stage]');
	process.exit(2);
}
const checkouts = [path.resolve(first), path.resolve(second)];

function callSource(mode) {
	if (mode === 'stage') {
		return `const { parsePatch } = require(repo + '/out/src/core/patch/parse.js');
			const { stagePatch } = require(repo + '/out/src/core/patch/apply.js');
			const ctx = { tool: 'apply_patch', boundary: await env.boundary(), host: env.host, state: env.state, settings: env.settings(), signal: new AbortController().signal, note() {} };
			return (await stagePatch(parsePatch(patch), ctx)).changes.length;`;
	}
	return `const result = await registry.invoke('apply_patch', { patch });
		if (result.error) throw new Error(result.error.message);
		return result.metadata.files.length;`;
}

/** One call in a fresh process: { ms, cpuMs, rssMB }. */
function once(repo, root, storage, patchFile) {
	const script = `
		const repo = ${JSON.stringify(repo)};
		const { createNodeEnvironment } = require(repo + '/out/src/core/nodeHost.js');
		const { ALL_TOOLS, ToolRegistry } = require(repo + '/out/src/tools/index.js');
		const env = createNodeEnvironment({ roots: [${JSON.stringify(root)}], storageDir: ${JSON.stringify(storage)}, settings: { approval: 'never', showDiffs: 'never' }, confirm: async () => true });
		const registry = new ToolRegistry(ALL_TOOLS, env);
		const patch = require('node:fs').readFileSync(${JSON.stringify(patchFile)}, 'utf8');
		(async () => {
			const cpu = process.cpuUsage();
			const start = process.hrtime.bigint();
			const files = await (async () => { ${callSource(mode)} })();
			const ms = Number(process.hrtime.bigint() - start) / 1e6;
			const used = process.cpuUsage(cpu);
			process.stdout.write(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, rssMB: process.resourceUsage().maxRSS / 1024, files }));
		})().catch(error => { console.error(error); process.exit(1); });`;
	const result = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
	if (result.files !== FILES) throw new Error(`${repo}: ${result.files} files changed, not ${FILES}`);
	return result;
}

const median = values => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-ab-patch-')));
try {
	const { pristine, patchFile } = writeInputs(dir);
	const runs = checkouts.map(() => []);
	const gitMs = [];
	for (let round = 0; round < Number(rounds); round++) {
		checkouts.forEach((repo, side) => {
			const root = path.join(dir, `tree-${side}-${round}`);
			const storage = path.join(dir, `storage-${side}-${round}`);
			fs.cpSync(pristine, root, { recursive: true });
			runs[side].push(once(repo, root, storage, patchFile));
			fs.rmSync(root, { recursive: true, force: true });
			fs.rmSync(storage, { recursive: true, force: true });
		});
		const root = path.join(dir, `git-${round}`);
		fs.cpSync(pristine, root, { recursive: true });
		const start = process.hrtime.bigint();
		execFileSync('git', ['apply', patchFile], { cwd: root, stdio: 'pipe' });
		gitMs.push(Number(process.hrtime.bigint() - start) / 1e6);
		fs.rmSync(root, { recursive: true, force: true });
	}
	console.log(`${mode === 'stage' ? 'parse + stage in memory' : 'apply_patch call'}, ${rounds} rounds, ${new Date().toISOString()}, load ${os.loadavg().map(load => load.toFixed(1)).join(' ')}`);
	checkouts.forEach((repo, side) => {
		const all = runs[side];
		console.log(`${repo}: wall median ${median(all.map(r => r.ms)).toFixed(1)} ms, CPU median ${median(all.map(r => r.cpuMs)).toFixed(1)} ms, peak RSS ${Math.max(...all.map(r => r.rssMB)).toFixed(0)} MB (walls ${all.map(r => r.ms.toFixed(0)).join(' ')})`);
	});
	console.log(`git apply: wall median ${median(gitMs).toFixed(1)} ms`);
} finally {
	fs.rmSync(dir, { recursive: true, force: true });
}
