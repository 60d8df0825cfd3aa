// Shared benchmark plumbing: each measurement runs in a fresh Node process so its peak memory
// (maxRSS) belongs to that measurement alone; primitives run as whole processes under GNU time.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Runs `body` (the source of an async function body; `require` and `repo` are in scope) in a
 * child process and returns { ms, rssMB, value } where value is what the body returned. `setup`
 * (e.g. loading modules) runs first and is not timed, but its memory counts in the peak; so is
 * `warmup`, an async body awaited before the clock starts. With `runs` > 1 it does so in that many
 * fresh processes: ms is their median, rssMB the highest peak.
 */
export function measure(body, { setup = '', warmup = '', env = {}, runs = 1 } = {}) {
	return medianOf(runs, () => measureOnce(body, setup, warmup, env));
}

function measureOnce(body, setup, warmup, env) {
	const script = `
		const repo = ${JSON.stringify(repo)};
		${setup}
		(async () => {
			await (async () => { ${warmup} })();
			const start = process.hrtime.bigint();
			const value = await (async () => { ${body} })();
			const ms = Number(process.hrtime.bigint() - start) / 1e6;
			process.stdout.write(JSON.stringify({ ms, rssMB: process.resourceUsage().maxRSS / 1024, value }));
		})().catch(error => { console.error(error); process.exit(1); });`;
	const out = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' });
	return JSON.parse(out);
}

/**
 * Source that builds a registry over `root` from the compiled code in out/ (bind it to `registry`).
 * `storageDir` (required) is where its backups and command logs go: a bench makes a temp folder and
 * removes it afterwards, since the CLI's shared default folder is never pruned outside VS Code.
 */
export function registrySource(root, settings = {}, { storageDir } = {}) {
	if (!storageDir) throw new Error('registrySource needs { storageDir }: a temp folder the bench removes afterwards.');
	return `
		const { createNodeEnvironment } = require(repo + '/out/src/core/nodeHost.js');
		const { ALL_TOOLS, ToolRegistry } = require(repo + '/out/src/tools/index.js');
		const registry = new ToolRegistry(ALL_TOOLS, createNodeEnvironment({ roots: [${JSON.stringify(root)}], storageDir: ${JSON.stringify(storageDir)}, settings: ${JSON.stringify(settings)}, confirm: async () => true }));`;
}

/** The median ms of `runs` calls of `once` ({ ms, rssMB, value }), the highest peak, the last value (and mean cpuMs, when measured). */
export function medianOf(runs, once) {
	return summary(Array.from({ length: runs }, () => once()));
}

function summary(all) {
	const median = values => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
	// CPU time as a mean: GNU time counts it in 10 ms steps, which only many runs together resolve.
	const cpuMs = all.reduce((sum, r) => sum + r.cpuMs, 0) / all.length;
	return { ...all[all.length - 1], ms: median(all.map(r => r.ms)), cpuMs, rssMB: Math.max(...all.map(r => r.rssMB)) };
}

/**
 * Runs each of `measurements` (functions returning { ms, rssMB, value }) once per round, in turns,
 * for `runs` rounds, and returns each one's median (as medianOf): on a shared machine the
 * neighbours' load comes and goes, and turns spread it over both sides instead of favouring one.
 */
export function interleaved(runs, ...measurements) {
	const all = measurements.map(() => []);
	for (let round = 0; round < runs; round++) measurements.forEach((once, i) => all[i].push(once()));
	return all.map(summary);
}

const TIME = '/usr/bin/time';
const hasTime = fs.existsSync(TIME);

/**
 * A raw primitive, whole process: `command` (a shell line for bash -c, or an argv run as is) in
 * `cwd`, its output dropped; wall time, and from GNU time the peak RSS of the largest process it
 * ran and the CPU time of all of them (NaN where /usr/bin/time is missing), median of `runs`.
 */
export function primitive(command, { cwd = repo, runs = 1 } = {}) {
	const argv = Array.isArray(command) ? command : ['/bin/bash', '-c', command];
	return medianOf(runs, () => {
		const args = hasTime ? [TIME, '-f', '%M %U %S', ...argv] : argv;
		const start = process.hrtime.bigint();
		const run = spawnSync(args[0], args.slice(1), { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
		const ms = Number(process.hrtime.bigint() - start) / 1e6;
		if (run.status !== 0) throw new Error(`${command} failed (${run.status}): ${run.stderr}`);
		const [peakKB, user, system] = hasTime ? run.stderr.trim().split('\n').pop().split(' ').map(Number) : [Number.NaN, Number.NaN, Number.NaN];
		return { ms, rssMB: peakKB / 1024, cpuMs: (user + system) * 1000, value: undefined };
	});
}

/** bench/.data/<name>: generated inputs live here between runs (gitignored), made once by `make`. */
export function dataFile(name, make) {
	const file = path.join(repo, 'bench/.data', name);
	if (!fs.existsSync(file)) {
		fs.mkdirSync(path.dirname(file), { recursive: true });
		const partial = `${file}.partial`;
		fs.rmSync(partial, { recursive: true, force: true });
		make(partial);
		fs.renameSync(partial, file);
	}
	return file;
}

/** Every row printed by table() in this process, for run.mjs's closing summary. */
export const printedRows = [];

/**
 * Prints rows as Work | Ours | Primitive | Ratio | Target | Peak MB. A row is { name, ours, base }
 * with ours and base as measure() returns them ({ ms, rssMB }), and optionally `primitive` (what
 * base ran, shown in its column) and `target` (the ratio it must stay within; ✓ or ✗ beside it).
 */
export function table(rows) {
	for (const row of rows) printedRows.push(row);
	printTable(rows);
}

export function printTable(rows) {
	const header = ['Work', 'Ours', 'Primitive', 'Ratio', 'Target', 'Peak MB (ours / primitive)'];
	const lines = rows.map(r => {
		const ratio = r.ours.ms / r.base.ms;
		const target = r.target === undefined ? '' : `≤ ${r.target}× ${ratio <= r.target ? '✓' : '✗'}`;
		const primitiveText = `${r.primitive ? `${r.primitive}: ` : ''}${formatMs(r.base.ms)}`;
		return [r.name, formatMs(r.ours.ms), primitiveText, `${ratio.toFixed(2)}×`, target, `${formatMB(r.ours.rssMB)} / ${formatMB(r.base.rssMB)}`];
	});
	const widths = header.map((h, i) => Math.max(h.length, ...lines.map(l => l[i].length)));
	const format = cells => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
	console.log(format(header));
	console.log(format(widths.map(w => '-'.repeat(w))));
	for (const line of lines) console.log(format(line));
}

const formatMs = ms => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const formatMB = mb => (Number.isFinite(mb) ? mb.toFixed(0) : '–');
