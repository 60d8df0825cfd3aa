// run_command and sessions beside the raw primitives:
// - a command printing 1 GB through run_command (bounded buffers + full log on disk) vs the same
//   command redirected to /dev/null by bash alone: wall ratio, and our peak RSS, which must stay flat;
// - 100 sequential `true` through run_command vs spawning bash directly: per-call overhead;
// - a write to a `cat` session until its echo comes back, vs the same on a bare node-pty.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { measure, registrySource, table } from './lib/measure.mjs';

const GIGABYTE = 1_000_000_000;
// 64-byte lines of text (pipefail off: `yes` ends by SIGPIPE when head is done).
const print = bytes => `set +o pipefail; yes 'a line of command output, sixty-four bytes long, like a log' | head -c ${bytes}`;
const PRINT_1GB = print(GIGABYTE);

const spawnBash = command => `
	const { spawn } = require('node:child_process');
	await new Promise((resolve, reject) => {
		const child = spawn('/bin/bash', ['-c', ${JSON.stringify(command)}], { stdio: ['ignore', 'pipe', 'pipe'] });
		child.stdout.resume();
		child.stderr.resume();
		child.on('error', reject);
		child.on('close', resolve);
	});`;

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
		const rows = [];

		// The same at a tenth of the size: peak memory must not grow with the output.
		const tenth = measure(`let bytes; ${runCommand(print(GIGABYTE / 10))} return bytes;`, { setup });
		rows.push({ name: '100 MB of output: run_command vs bash > /dev/null', ours: tenth, base: measure(spawnBash(`${print(GIGABYTE / 10)} > /dev/null`)) });
		// Context: what merely reading 1 GB through a pipe into Node costs, before any of our work.
		const pipeOnly = measure(spawnBash(PRINT_1GB));
		fs.rmSync(path.join(storageDir, 'commands'), { recursive: true, force: true });
		const big = measure(`let bytes; ${runCommand(PRINT_1GB)} return bytes;`, { setup });
		if (big.value !== GIGABYTE) throw new Error(`run_command saw ${big.value} bytes, expected ${GIGABYTE}`);
		rows.push({ name: '1 GB of output: run_command vs bash > /dev/null', ours: big, base: measure(spawnBash(`${PRINT_1GB} > /dev/null`)) });
		rows.push({ name: '1 GB of output: run_command vs a bare pipe read', ours: big, base: pipeOnly });
		const logBytes = fs.readdirSync(path.join(storageDir, 'commands')).reduce((sum, name) => sum + fs.statSync(path.join(storageDir, 'commands', name)).size, 0);

		const loop = body => `let bytes; for (let i = 0; i < 100; i++) { ${body} } return bytes;`;
		const trues = measure(loop(runCommand('true')), { setup });
		const bare = measure(loop(spawnBash('true')));
		rows.push({ name: '100 × `true`: run_command vs spawn bash', ours: trues, base: bare });

		const sessionSetup = `${setup}
			const { SessionManager } = require(repo + '/out/src/core/sessions.js');
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
		console.log(`\n1 GB: ${(GIGABYTE / 1e6 / (big.ms / 1000)).toFixed(0)} MB/s through run_command (stdout kept as 64 KB head/tail, ${(logBytes / 1e9).toFixed(2)} GB written to the log), peak RSS ${big.rssMB.toFixed(0)} MB (100 MB: ${tenth.rssMB.toFixed(0)} MB; the same process running \`true\`: ${trues.rssMB.toFixed(0)} MB)`);
		console.log(`per call: run_command ${perCall(trues)} ms, spawn bash ${perCall(bare)} ms, overhead ${(perCall(trues) - perCall(bare)).toFixed(2)} ms`);
		console.log(`write → echo round trip: session median ${ours.value.median.toFixed(2)} ms (p95 ${ours.value.p95.toFixed(2)}), bare node-pty median ${raw.value.median.toFixed(2)} ms (p95 ${raw.value.p95.toFixed(2)})`);
		console.log(`write_stdin + reads until cat's copy is back (tools): median ${toolTrip.value.median.toFixed(1)} ms, p95 ${toolTrip.value.p95.toFixed(1)} ms`);
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
		fs.rmSync(storageDir, { recursive: true, force: true });
	}
}
