// run_command and sessions beside the raw primitives:
// - the row: 100 MB of 2-byte lines (`yes | head -c 100M`) through run_command (head/tail
//   buffers, line counts and the full log on disk) vs the same command `> file`, target ≤ 1.5×; as
//   the first call in a process (the CLI's case) and after one (VS Code's);
// - a command printing 1 GiB through run_command (bounded buffers + full log on disk) vs the same
//   command redirected to /dev/null by bash alone: wall ratio, and our peak RSS, which must stay flat;
// - the same 1 GiB in the OS sandbox (the default) vs with toolbelt.sandbox.mode off;
// - 100 sequential `true` through run_command vs spawning bash directly: per-call overhead, and the
//   sandbox's start-up per call (median) beside an unsandboxed run, in a tiny workspace and in this
//   repository (where the walk for protected paths has real work);
// - a write to a `cat` session until its echo comes back, vs the same on a bare node-pty.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { measure, primitive, registrySource, repo, table } from './lib/measure.mjs';

const GIGABYTE = 1024 ** 3;
const UNSANDBOXED = { sandbox: { mode: 'off' } };
// 64-byte lines of text (pipefail off: `yes` ends by SIGPIPE when head is done).
const print = bytes => `set +o pipefail; yes 'a line of command output, sixty-four bytes long, like a log' | head -c ${bytes}`;
const PRINT_1GB = print(GIGABYTE);
const YES_100MB = 'set +o pipefail; yes | head -c 100M';

const spawnBash = command => `
	const { spawn } = require('node:child_process');
	await new Promise((resolve, reject) => {
		const child = spawn('/bin/bash', ['-c', ${JSON.stringify(command)}], { stdio: ['ignore', 'pipe', 'pipe'] });
		child.stdout.resume();
		child.stderr.resume();
		child.on('error', reject);
		child.on('close', resolve);
	});`;

/** Median milliseconds of `calls` sequential run_command calls of `true` (first call, the probe, excluded). */
function perCallMedian(calls) {
	return `
		await registry.invoke('run_command', { command: 'true' });
		const times = [];
		for (let i = 0; i < ${calls}; i++) {
			const start = process.hrtime.bigint();
			const result = await registry.invoke('run_command', { command: 'true' });
			if (result.error) throw new Error(result.content[0].text);
			times.push(Number(process.hrtime.bigint() - start) / 1e6);
		}
		times.sort((a, b) => a - b);
		return { median: times[times.length >> 1], sandbox: (await registry.invoke('run_command', { command: 'true' })).metadata.sandbox };`;
}

/** One run_command call; its stdout byte count ends up in `bytes`. */
function runCommand(command) {
	return `
		const result = await registry.invoke('run_command', { command: ${JSON.stringify(command)} });
		if (result.error || result.metadata.exitCode !== 0) throw new Error(result.content[0].text);
		bytes = result.metadata.stdoutBytes;`;
}

const ROUND_TRIPS = 200;

/** Body that writes `ping N` to cat on a pty and waits for cat's own copy (after the echo). */
function roundTrips(write, listen) {
	return `
		let seen = '';
		let waiting;
		${listen}(text => { seen += text; if (waiting && waiting.test()) { const w = waiting; waiting = undefined; w.resolve(); } });
		const times = [];
		for (let i = 0; i < ${ROUND_TRIPS}; i++) {
			const line = 'ping ' + i + '\\r\\n';
			const start = process.hrtime.bigint();
			await new Promise(resolve => {
				// The terminal echoes the line, then cat prints it again: two copies mean a round trip.
				waiting = { resolve, test: () => seen.split(line).length > 2 };
				${write}('ping ' + i + '\\n');
			});
			times.push(Number(process.hrtime.bigint() - start) / 1e6);
			seen = '';
		}
		times.sort((a, b) => a - b);
		return { median: times[times.length >> 1], p95: times[Math.floor(times.length * 0.95)] };`;
}

export default async function () {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-cmd-'));
	const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-cmd-storage-'));
	try {
		const setup = registrySource(root, {}, { storageDir });
		const unsandboxed = registrySource(root, UNSANDBOXED, { storageDir });
		const rows = [];

		// Per-call costs first: the gigabytes of logs written below slow the disk for a while after.
		const loop = body => `let bytes; for (let i = 0; i < 100; i++) { ${body} } return bytes;`;
		const trues = measure(loop(runCommand('true')), { setup });
		const bare = measure(loop(spawnBash('true')));
		rows.push({ name: '100 × `true`: run_command vs spawn bash', ours: trues, base: bare });
		const truesOpen = measure(loop(runCommand('true')), { setup: unsandboxed });
		rows.push({ name: '100 × `true`: sandboxed vs sandbox off', ours: trues, base: truesOpen });
		const CALLS = 50;
		const startup = measure(perCallMedian(CALLS), { setup });
		const startupOpen = measure(perCallMedian(CALLS), { setup: unsandboxed });
		const repoSetup = registrySource(repo, {}, { storageDir });
		const repoStartup = measure(perCallMedian(CALLS), { setup: repoSetup });
		const repoStartupOpen = measure(perCallMedian(CALLS), { setup: registrySource(repo, UNSANDBOXED, { storageDir }) });

		const yes = measure(`let bytes; ${runCommand(YES_100MB)} return bytes;`, { setup, runs: 3 });
		const yesToFile = primitive(`${YES_100MB} > ${path.join(root, 'yes.out')}`, { runs: 3 });
		fs.rmSync(path.join(root, 'yes.out'));
		rows.push({ name: 'run_command: 100 MB of 2-byte lines', ours: yes, base: yesToFile, primitive: 'same > file', target: 1.5 });
		// The same as a second call in the process, as in VS Code: the sandbox probe and the scan for
		// protected paths are made once per session there, not once per command.
		const yesWarm = measure(`let bytes; ${runCommand(YES_100MB)} return bytes;`, { setup, warmup: `await registry.invoke('run_command', { command: 'true' });`, runs: 3 });
		rows.push({ name: '  the same, after a first call', ours: yesWarm, base: yesToFile, primitive: 'same > file' });

		// The same at an eighth of the size: peak memory must not grow with the output.
		const tenth = measure(`let bytes; ${runCommand(print(GIGABYTE / 8))} return bytes;`, { setup });
		rows.push({ name: '128 MiB of output: run_command vs bash > /dev/null', ours: tenth, base: measure(spawnBash(`${print(GIGABYTE / 8)} > /dev/null`)) });
		// Context: what merely reading 1 GiB through a pipe into Node costs, before any of our work.
		const pipeOnly = measure(spawnBash(PRINT_1GB));
		const logsDir = path.join(storageDir, 'commands');
		fs.rmSync(logsDir, { recursive: true, force: true });
		const big = measure(`let bytes; ${runCommand(PRINT_1GB)} return bytes;`, { setup });
		if (big.value !== GIGABYTE) throw new Error(`run_command saw ${big.value} bytes, expected ${GIGABYTE}`);
		const logBytes = fs.readdirSync(logsDir).reduce((sum, name) => sum + fs.statSync(path.join(logsDir, name)).size, 0);
		fs.rmSync(logsDir, { recursive: true, force: true });
		const bigOpen = measure(`let bytes; ${runCommand(PRINT_1GB)} return bytes;`, { setup: unsandboxed });
		fs.rmSync(logsDir, { recursive: true, force: true });
		rows.push({ name: '1 GiB of output: run_command vs bash > /dev/null', ours: big, base: measure(spawnBash(`${PRINT_1GB} > /dev/null`)) });
		rows.push({ name: '1 GiB of output: run_command vs a bare pipe read', ours: big, base: pipeOnly });
		rows.push({ name: '1 GiB of output: sandboxed vs sandbox off', ours: big, base: bigOpen });

		const sessionSetup = `${setup}
			const { SessionManager } = require(repo + '/out/src/core/commands/sessions.js');
			const manager = new SessionManager();
			const session = manager.start({ command: 'cat', cwd: ${JSON.stringify(root)}, tty: true, maxOutputBytes: 65536 }).session;`;
		const ours = measure(`${roundTrips('session.write', 'session.onData')}`.replace(/return (\{[^}]+\});$/, 'const r = $1; await manager.dispose(); return r;'), { setup: sessionSetup });
		const ptySetup = `
			const pty = require(repo + '/node_modules/@lydell/node-pty');
			const term = pty.spawn('/bin/bash', ['-c', 'cat'], { cols: 160, rows: 40, cwd: ${JSON.stringify(root)}, env: process.env });`;
		const raw = measure(`${roundTrips('term.write', 'term.onData')}`.replace(/return (\{[^}]+\});$/, 'const r = $1; term.kill(); return r;'), { setup: ptySetup });
		rows.push({ name: `write → echo from cat (session vs bare pty), ${ROUND_TRIPS} trips`, ours, base: raw });

		// The same through the tools, as a model drives it: write_stdin with yieldMs 0, then reads
		// (empty chars, yieldMs 5) until cat's copy is back.
		const toolTrip = measure(`
			const started = await registry.invoke('exec_command', { command: 'cat', yieldMs: 100 });
			const id = started.metadata.sessionId;
			const times = [];
			for (let i = 0; i < 50; i++) {
				const start = process.hrtime.bigint();
				let seen = (await registry.invoke('write_stdin', { sessionId: id, chars: 'ping ' + i + '\\n', yieldMs: 0 })).content[0].text;
				while (seen.split('ping ' + i + '\\n').length < 3) seen += (await registry.invoke('write_stdin', { sessionId: id, yieldMs: 5 })).content[0].text;
				times.push(Number(process.hrtime.bigint() - start) / 1e6);
			}
			await registry.invoke('kill_session', { sessionId: id });
			times.sort((a, b) => a - b);
			return { median: times[25], p95: times[47] };`, { setup });

		table(rows);
		const perCall = r => (r.ms / 100).toFixed(2);
		const mib = bytes => bytes / 1024 ** 2;
		console.log(`\n1 GiB: ${(mib(GIGABYTE) / (big.ms / 1000)).toFixed(0)} MiB/s through run_command in the ${startup.value.sandbox} sandbox, ${(mib(GIGABYTE) / (bigOpen.ms / 1000)).toFixed(0)} MiB/s without (ratio ${(big.ms / bigOpen.ms).toFixed(2)}); stdout kept as 64 KB head/tail, ${(logBytes / GIGABYTE).toFixed(2)} GiB written to the log; peak RSS ${big.rssMB.toFixed(0)} MB (128 MiB: ${tenth.rssMB.toFixed(0)} MB; the same process running \`true\`: ${trues.rssMB.toFixed(0)} MB)`);
		console.log(`per call: run_command ${perCall(trues)} ms (sandbox off: ${perCall(truesOpen)} ms), spawn bash ${perCall(bare)} ms, overhead ${(perCall(trues) - perCall(bare)).toFixed(2)} ms`);
		const median = (ours, base) => {
			const added = ours.value.median - base.value.median;
			return `${ours.value.median.toFixed(1)} ms vs ${base.value.median.toFixed(1)} ms without (${added >= 0 ? '+' : ''}${added.toFixed(1)} ms, ratio ${(ours.value.median / base.value.median).toFixed(2)})`;
		};
		console.log(`sandbox start-up, median of ${CALLS} calls of \`true\`: tiny workspace ${median(startup, startupOpen)}; this repository ${median(repoStartup, repoStartupOpen)}`);
		console.log(`write → echo round trip: session median ${ours.value.median.toFixed(2)} ms (p95 ${ours.value.p95.toFixed(2)}), bare node-pty median ${raw.value.median.toFixed(2)} ms (p95 ${raw.value.p95.toFixed(2)})`);
		console.log(`write_stdin + reads until cat's copy is back (tools): median ${toolTrip.value.median.toFixed(1)} ms, p95 ${toolTrip.value.p95.toFixed(1)} ms`);
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
		fs.rmSync(storageDir, { recursive: true, force: true });
	}
}
