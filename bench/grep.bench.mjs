// grep over pathological lines beside `rg -c` with the same pattern and flags (the least rg can do
// to answer "which lines match": it never looks past a line's first match):
//   a 200 MB single line of `a` searched for `a` (200 million matches) and a 2 MB one;
//   a minified bundle (typescript.js joined into one line, three times) for a common and a rare word.
// Each side runs in a fresh Node process. Peak memory is measured for the Node process (maxRSS)
// and for every rg it starts (VmHWM sampled from /proc every 5 ms, Linux only), and CPU time for
// both (rg's from /proc too), since wall time on a shared machine says more about the neighbours.
// For reference, the 2 MB line also runs through `rg --json` with the pattern as given, which lists
// every match (grep's search wraps the pattern so that a line has one match per window).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { measure, registrySource, repo } from './lib/measure.mjs';

const rg = createRequire(import.meta.url)('@vscode/ripgrep').rgPath;

/**
 * Source that samples this process's children (rg) every 5 ms: their peak RSS (VmHWM, a high-water
 * mark, so a late sample still sees an early peak) and CPU ticks. `children()` stops it and sums up.
 */
const SAMPLER = `
	const children = new Map();
	const tick = 1000 / 100;
	const sample = () => {
		let pids = [];
		try { pids = require('node:fs').readFileSync('/proc/' + process.pid + '/task/' + process.pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean); } catch {}
		for (const pid of pids) {
			try {
				const status = require('node:fs').readFileSync('/proc/' + pid + '/status', 'utf8');
				const stat = require('node:fs').readFileSync('/proc/' + pid + '/stat', 'utf8');
				const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
				const seen = children.get(pid) ?? { kb: 0, ticks: 0 };
				const kb = Number(/VmHWM:\\s+(\\d+)/.exec(status)?.[1] ?? 0);
				children.set(pid, { kb: Math.max(seen.kb, kb), ticks: Math.max(seen.ticks, Number(fields[11]) + Number(fields[12])) });
			} catch {}
		}
	};
	const sampler = setInterval(sample, 5);
	const childFigures = () => {
		clearInterval(sampler);
		const all = [...children.values()];
		return { count: all.length, peakMB: Math.max(0, ...all.map(c => c.kb)) / 1024, cpuMs: all.reduce((sum, c) => sum + c.ticks * tick, 0) };
	};`;

/** Runs `body` (which may await) with the sampler; returns wall ms, Node's own peak and CPU, and rg's. */
function sampled(body, setup = '') {
	const result = measure(`
		${SAMPLER}
		const cpu = process.cpuUsage();
		const value = await (async () => { ${body} })();
		const own = process.cpuUsage(cpu);
		return { value, nodeCpuMs: (own.user + own.system) / 1000, rg: childFigures() };`, { setup });
	const { value, nodeCpuMs, rg: child } = result.value;
	return { ms: result.ms, nodeMB: result.rssMB, nodeCpuMs, rgMB: child.peakMB, rgCpuMs: child.cpuMs, value };
}

function grep(input, setup) {
	return sampled(`
		const result = await registry.invoke('grep', ${JSON.stringify(input)});
		if (result.error) throw new Error(result.error.message);
		return result.content[0].text.length;`, setup);
}

/** rg started and read the way runRg does (streamed, nothing kept), so both sides pay for a pipe. */
function rawRg(args, cwd) {
	return sampled(`
		const child = require('node:child_process').spawn(${JSON.stringify(rg)}, ${JSON.stringify(args)}, { cwd: ${JSON.stringify(cwd)}, stdio: ['ignore', 'pipe', 'ignore'] });
		let bytes = 0;
		child.stdout.on('data', chunk => { bytes += chunk.length; });
		await new Promise(resolve => child.on('close', resolve));
		return bytes;`);
}

function writeLine(file, unit, bytes) {
	const block = Buffer.from(unit.repeat(Math.ceil((1 << 20) / unit.length)));
	const fd = fs.openSync(file, 'w');
	for (let written = 0; written < bytes; written += block.length) fs.writeSync(fd, block);
	fs.writeSync(fd, '\n');
	fs.closeSync(fd);
}

/** typescript.js with its line breaks turned into spaces, three times over: one line of ~27 MB. */
function writeBundle(file) {
	const source = fs.readFileSync(path.join(repo, 'node_modules/typescript/lib/typescript.js'), 'utf8').replace(/\r?\n/g, ' ');
	fs.writeFileSync(file, `${source} ${source} ${source}\n`);
}

const mb = bytes => `${(bytes / (1 << 20)).toFixed(0)} MB`;

export default async function () {
	if (process.platform !== 'linux') console.log('(rg peak memory and CPU are read from /proc: Linux only; shown as 0 elsewhere)');
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-grep-'));
	const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-grep-storage-'));
	try {
		for (const name of ['huge', 'small', 'bundle']) fs.mkdirSync(path.join(dir, name));
		writeLine(path.join(dir, 'huge/a.txt'), 'a', 200 << 20);
		writeLine(path.join(dir, 'small/a.txt'), 'a', 2 << 20);
		writeBundle(path.join(dir, 'bundle/bundle.min.js'));
		const bundleSize = fs.statSync(path.join(dir, 'bundle/bundle.min.js')).size;
		const rows = [];
		const add = (name, folder, input, baseArgs) => {
			const cwd = path.join(dir, folder);
			const ours = grep(input, registrySource(cwd, {}, { storageDir }));
			const base = rawRg(baseArgs, cwd);
			rows.push({ name, ours, base });
		};
		const count = pattern => ['--no-config', '--case-sensitive', '-c', '-e', pattern, '--', '.'];
		add('200 MB line of a, "a" limit 1', 'huge', { pattern: 'a', limit: 1 }, count('a'));
		add('2 MB line of a, "a" limit 1', 'small', { pattern: 'a', limit: 1 }, count('a'));
		add(`bundle (${mb(bundleSize)}, one line), "function"`, 'bundle', { pattern: 'function' }, count('function'));
		add(`bundle (${mb(bundleSize)}, one line), "createTwoFilesPatch|hasOwnProperty\\("`, 'bundle', { pattern: 'createTwoFilesPatch|hasOwnProperty\\(' }, count('createTwoFilesPatch|hasOwnProperty\\('));
		print(rows);
		const json = rawRg(['--no-config', '--case-sensitive', '--json', '-e', 'a', '--', '.'], path.join(dir, 'small'));
		console.log(`\nreference: rg --json "a" over the 2 MB line (the pattern as given): ${json.ms.toFixed(0)} ms, rg CPU ${json.rgCpuMs.toFixed(0)} ms, rg peak ${json.rgMB.toFixed(0)} MB, ${mb(json.value)} of JSON through the pipe`);
		console.log('(one run each; toolbelt CPU = Node + every rg it started; baseline = rg -c with the same pattern and case flag, in the same folder)');
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
		fs.rmSync(storageDir, { recursive: true, force: true });
	}
}

function print(rows) {
	const header = ['case', 'toolbelt', 'CPU', 'Node peak', 'rg peak', 'rg -c', 'CPU', 'rg peak', 'CPU ratio'];
	const lines = rows.map(({ name, ours, base }) => {
		const ourCpu = ours.nodeCpuMs + ours.rgCpuMs;
		const baseCpu = base.nodeCpuMs + base.rgCpuMs;
		return [name, `${ours.ms.toFixed(0)} ms`, `${ourCpu.toFixed(0)} ms`, `${ours.nodeMB.toFixed(0)} MB`, `${ours.rgMB.toFixed(0)} MB`,
			`${base.ms.toFixed(0)} ms`, `${baseCpu.toFixed(0)} ms`, `${base.rgMB.toFixed(0)} MB`, (ourCpu / baseCpu).toFixed(2)];
	});
	const widths = header.map((h, i) => Math.max(h.length, ...lines.map(l => l[i].length)));
	const format = cells => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
	console.log(format(header));
	for (const line of lines) console.log(format(line));
}
