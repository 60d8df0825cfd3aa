// The sandbox's start-up per command in a larger workspace: run_command `true` in a generated tree
// of ~40,000 entries (a source tree, and generated folders holding nested node_modules, which the
// root-only `node_modules/**` glob does not skip) beside the same call with the sandbox off.
// Before and after each sandboxed command the workspace is walked for protected paths; the walks
// remember each folder's listing, so a command's walks read only what changed. Shown: the first
// command in a process (nothing remembered yet), and the median of the calls after it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dataFile, measure, registrySource, table } from './lib/measure.mjs';

const CALLS = 30;

/** ~40k entries in ~4k folders: 40 generated copies of 25 packages (lib/, dist/, a test folder) and a src tree. */
function workspace() {
	return dataFile('sandbox-tree-40k', dir => {
		const write = (relative, text = '') => {
			fs.mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
			fs.writeFileSync(path.join(dir, relative), text);
		};
		for (let copy = 0; copy < 40; copy++) {
			for (let pkg = 0; pkg < 25; pkg++) {
				const base = `out/build${copy}/node_modules/pkg${pkg}`;
				write(`${base}/package.json`, '{}');
				for (let file = 0; file < 14; file++) write(`${base}/lib/m${file}.js`);
				for (let file = 0; file < 14; file++) write(`${base}/dist/m${file}.min.js`);
				for (let file = 0; file < 6; file++) write(`${base}/test/t${file}.js`);
			}
		}
		for (let folder = 0; folder < 100; folder++) for (let file = 0; file < 20; file++) write(`src/area${folder}/file${file}.ts`);
		write('.env', 'SECRET=1');
		write('.git/HEAD', 'ref: refs/heads/main');
		write('src/area7/.env.local', '');
	});
}

/** The first call's time, then the median of CALLS more, each `true` through run_command (the probe ran before, in another workspace). */
const perCall = `
	const time = async () => {
		const start = process.hrtime.bigint();
		const cpuStart = process.cpuUsage();
		const result = await registry.invoke('run_command', { command: 'true' });
		if (result.error) throw new Error(result.content[0].text);
		const cpu = process.cpuUsage(cpuStart);
		return { ms: Number(process.hrtime.bigint() - start) / 1e6, cpuMs: (cpu.user + cpu.system) / 1000, sandbox: result.metadata.sandbox };
	};
	const first = await time();
	const calls = [];
	for (let i = 0; i < ${CALLS}; i++) calls.push(await time());
	const median = values => values.sort((a, b) => a - b)[values.length >> 1];
	return { first: first.ms, firstCpu: first.cpuMs, median: median(calls.map(call => call.ms)), medianCpu: median(calls.map(call => call.cpuMs)), sandbox: first.sandbox };`;

export default async function () {
	const tree = workspace();
	const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-sandbox-storage-'));
	const tiny = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-sandbox-tiny-'));
	try {
		// The probe (once per process) runs in a tiny workspace first: it is no part of a command's start-up here.
		const warm = `await (() => { ${registrySource(tiny, {}, { storageDir }).replace('const registry', 'const probe')} return probe.invoke('run_command', { command: 'true' }); })();`;
		const run = settings => measure(`${warm} ${perCall}`, { setup: registrySource(tree, settings, { storageDir }) }).value;
		const ours = run({});
		const open = run({ sandbox: { mode: 'off' } });
		const row = (name, key) => ({ name, ours: { ms: ours[key], rssMB: Number.NaN }, base: { ms: open[key], rssMB: Number.NaN }, primitive: 'sandbox off' });
		const entries = fs.readdirSync(tree, { recursive: true }).length;
		console.log(`tree: ${tree}, ${entries} entries; sandbox: ${ours.sandbox}`);
		table([
			row(`run_command \`true\`, ${Math.round(entries / 1000)}k-entry tree, first call`, 'first'),
			row(`  the same, median of the ${CALLS} calls after it`, 'median'),
		]);
		console.log(`(per command: sandboxed ${ours.median.toFixed(1)} ms vs ${open.median.toFixed(1)} ms off, +${(ours.median - open.median).toFixed(1)} ms; the first, walking every folder: +${(ours.first - open.first).toFixed(1)} ms)`);
		// On a shared machine the wall time is mostly the neighbours': the process's own CPU time (bwrap's apart) says what the walks cost.
		console.log(`(CPU of this process per command: sandboxed ${ours.medianCpu.toFixed(1)} ms vs ${open.medianCpu.toFixed(1)} ms off; the first ${ours.firstCpu.toFixed(1)} vs ${open.firstCpu.toFixed(1)} ms)`);
	} finally {
		fs.rmSync(storageDir, { recursive: true, force: true });
		fs.rmSync(tiny, { recursive: true, force: true });
	}
}
