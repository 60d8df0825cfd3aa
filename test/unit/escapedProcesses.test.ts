import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { escapedMembers, markedGroup, procStat, RUN_MARK } from '../../src/core/commands/process';
import { resultText } from '../../src/core/results/result';
import { makeHarness, makeTree, stopProcessesIn, testStorageDir, unsandboxedCommands, until, withDeadline } from './helpers';

/**
 * Outside the sandbox a command's processes are reached through its process group; `setsid` and a
 * daemon's double fork leave that group. A timeout or cancel said "the command and every process it
 * started were stopped" while those ran on, and a normal end did not mention them. They carry the
 * command's mark (TOOLBELT_RUN) in their environment, which is how they are found now.
 */

const DEADLINE_MS = 10_000;

function readIfThere(file: string): string {
	return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

function running(pid: number): boolean {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		return !/^\S+ \(.*\) [ZX] /.test(stat);
	} catch {
		return false;
	}
}

/** Starts one process with setsid and one daemon by a double fork; both write their pid to a file, then the shell waits. */
const ESCAPING = [
	'setsid sleep 1000 > /dev/null 2>&1 & echo $! > setsid.pid',
	'( ( setsid sleep 1000 > /dev/null 2>&1 & echo $! > daemon.pid ) & )',
].join('; ');

describe('processes that leave the command\'s process group (unsandboxed)', function () {
	this.timeout(DEADLINE_MS + 5_000);
	let tree: ReturnType<typeof makeTree>;
	let h: ReturnType<typeof makeHarness>;
	const pids = () => ['setsid.pid', 'daemon.pid'].map(name => Number(fs.readFileSync(tree.file(name), 'utf8')));
	const started = () => until(() => ['setsid.pid', 'daemon.pid'].every(name => /\d+\n/.test(fs.existsSync(tree.file(name)) ? fs.readFileSync(tree.file(name), 'utf8') : '')), 5_000);

	before(function () {
		// They are found in /proc.
		if (process.platform !== 'linux') this.skip();
	});
	beforeEach(() => {
		tree = makeTree();
		h = makeHarness(tree.root, { settings: { sandbox: { mode: 'off' } } });
	});
	afterEach(() => {
		stopProcessesIn(tree.root);
		tree.cleanup();
	});

	it('a timeout stops them too', async () => {
		const result = await withDeadline(h.invoke('run_command', { command: `${ESCAPING}; sleep 100`, timeoutMs: 1_000 }), DEADLINE_MS, 'run_command did not return');
		assert.match(resultText(result), /^Timed out after 1\.0 s: the command and every process it started were stopped/);
		assert.ok(await started(), 'the command never started them');
		assert.deepEqual(pids().filter(running), [], 'the result says every process was stopped');
	});

	it('a cancel stops them too', async () => {
		const controller = new AbortController();
		const call = h.invoke('run_command', { command: `${ESCAPING}; sleep 100` }, { signal: controller.signal });
		assert.ok(await started(), 'the command never started them');
		controller.abort();
		const result = await withDeadline(call, DEADLINE_MS, 'run_command did not return');
		assert.equal(result.error?.code, 'cancelled');
		assert.deepEqual(pids().filter(running), [], 'the result says every process was stopped');
	});

	it('disposing of the tool host while the command runs stops them too', async () => {
		const call = h.invoke('run_command', { command: `${ESCAPING}; sleep 100` });
		assert.ok(await started(), 'the command never started them');
		await withDeadline(h.stopSessions(), DEADLINE_MS, 'stopping the host did not return');
		await withDeadline(call, DEADLINE_MS, 'run_command did not return');
		assert.deepEqual(pids().filter(running), [], 'they outlived the host that started them');
	});

	it('they get SIGTERM first, and time to act on it', async () => {
		// An escaped process that cleans up on SIGTERM: it must be asked, not only killed after the grace.
		const command = `setsid sh -c 'trap "touch cleaned-up; exit 0" TERM; echo $$ > polite.pid; while :; do sleep 0.05; done' > /dev/null 2>&1 & sleep 100`;
		const started = Date.now();
		const call = h.invoke('run_command', { command, timeoutMs: 1_500 });
		assert.ok(await until(() => /\d+\n/.test(readIfThere(tree.file('polite.pid'))), 5_000), 'it never started');
		const result = await withDeadline(call, DEADLINE_MS, 'run_command did not return');
		assert.match(resultText(result), /^Timed out/);
		// Everything stopped on SIGTERM: the call does not wait out the 2 s grace before the SIGKILL.
		assert.ok(Date.now() - started < 1_500 + 1_200, `took ${Date.now() - started} ms`);
		assert.ok(fs.existsSync(tree.file('cleaned-up')), 'it was never sent SIGTERM');
		assert.equal(running(Number(readIfThere(tree.file('polite.pid')))), false);
	});

	it('one that ignores SIGTERM is killed before the result comes', async () => {
		const command = `setsid sh -c 'trap "" TERM; echo $$ > deaf.pid; while :; do sleep 0.05; done' > /dev/null 2>&1 & sleep 100`;
		const call = h.invoke('run_command', { command, timeoutMs: 1_000 });
		assert.ok(await until(() => /\d+\n/.test(readIfThere(tree.file('deaf.pid'))), 5_000), 'it never started');
		const result = await withDeadline(call, DEADLINE_MS, 'run_command did not return');
		assert.match(resultText(result), /^Timed out after 1\.0 s: the command and every process it started were stopped/);
		assert.equal(running(Number(readIfThere(tree.file('deaf.pid')))), false, 'it still runs, though the result says every process was stopped');
	});

	it('a normal end names them, with how to stop them', async () => {
		const result = await withDeadline(h.invoke('run_command', { command: `${ESCAPING}; sleep 0.3` }), DEADLINE_MS, 'run_command did not return');
		const [setsid, daemon] = pids();
		assert.deepEqual([setsid, daemon].filter(running), [setsid, daemon]);
		assert.deepEqual([...(result.metadata.escapedPids as number[])].sort(), [setsid, daemon].sort());
		assert.match(resultText(result), /left its process group \(setsid, a daemon\) and are still running \(pid \d+ \d+\); Toolbelt does not stop them\. Stop them when done with run_command "kill \d+ \d+"\.$/);
		// A command whose processes all end with it says nothing of the kind.
		assert.equal((await h.invoke('run_command', { command: 'true' })).metadata.escapedPids, undefined);
	});
});

describe('sessions whose processes leave their process group (unsandboxed)', function () {
	this.timeout(DEADLINE_MS + 5_000);
	const suite = unsandboxedCommands(DEADLINE_MS);
	const pidIn = (name: string) => Number(fs.readFileSync(suite.tree.file(name), 'utf8'));
	const written = (name: string) => until(() => fs.existsSync(suite.tree.file(name)) && /\d+\n/.test(fs.readFileSync(suite.tree.file(name), 'utf8')), 5_000);

	before(function () {
		if (process.platform !== 'linux') this.skip();
	});

	for (const tty of [true, false]) {
		it(`kill_session on ${tty ? 'a pty' : 'pipes'} stops them: "stopped with every process it started" is true`, async () => {
			await suite.h.text('exec_command', { command: 'setsid sleep 1000 > /dev/null 2>&1 & echo $! > escaped.pid; sleep 1000', tty, yieldMs: 0 });
			assert.ok(await written('escaped.pid'), 'the session never started it');
			const text = resultText(await withDeadline(suite.h.invoke('kill_session', { sessionId: 1 }), DEADLINE_MS, 'kill_session did not return'));
			assert.match(text, /was stopped with every process it started/);
			assert.equal(running(pidIn('escaped.pid')), false);
		});
	}

	it('when the program exits, what it left outside its group is stopped too, as the description says', async () => {
		await suite.h.text('exec_command', { command: 'setsid sleep 1000 > /dev/null 2>&1 & echo $! > escaped.pid', tty: false, yieldMs: 2_000 });
		assert.ok(await written('escaped.pid'), 'the session never started it');
		assert.ok(await until(() => !running(pidIn('escaped.pid')), 5_000), 'it still runs after its session ended');
	});
});

describe('when the host process exits without stopping its tools (a crash, a test runner)', function () {
	this.timeout(DEADLINE_MS + 5_000);
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree(); });
	afterEach(() => {
		stopProcessesIn(tree.root);
		tree.cleanup();
	});

	it('what a running run_command and a session started goes with it, escaped processes too', async function () {
		if (process.platform !== 'linux') this.skip();
		const out = path.join(__dirname, '../../src');
		const files = ['run-leader.pid', 'run-escaped.pid', 'session-escaped.pid'];
		// A host that starts both, then exits the moment every pid is written: only its exit hook is left to stop them.
		const script = `
			const fs = require('node:fs');
			const { createNodeEnvironment } = require(${JSON.stringify(`${out}/core/nodeHost.js`)});
			const { ALL_TOOLS, ToolRegistry } = require(${JSON.stringify(`${out}/tools/index.js`)});
			const root = ${JSON.stringify(tree.root)};
			const env = createNodeEnvironment({ roots: [root], storageDir: ${JSON.stringify(testStorageDir())}, settings: { sandbox: { mode: 'off' } }, confirm: async () => true });
			const registry = new ToolRegistry(ALL_TOOLS, env);
			void registry.invoke('run_command', { command: 'echo $$ > run-leader.pid; setsid sleep 1000 > /dev/null 2>&1 & echo $! > run-escaped.pid; sleep 1000' });
			void registry.invoke('exec_command', { command: 'setsid sleep 1000 > /dev/null 2>&1 & echo $! > session-escaped.pid; sleep 1000', tty: false, yieldMs: 0 });
			const written = name => fs.existsSync(root + '/' + name) && /\\d+\\n/.test(fs.readFileSync(root + '/' + name, 'utf8'));
			setInterval(() => { if (${JSON.stringify(files)}.every(written)) process.exit(0); }, 20);`;
		const host = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
		let stderr = '';
		host.stderr.on('data', chunk => { stderr += chunk; });
		const code = await withDeadline(new Promise(resolve => host.once('exit', resolve)), DEADLINE_MS, 'the host never exited');
		assert.equal(code, 0, stderr);
		const pids = files.map(name => Number(fs.readFileSync(tree.file(name), 'utf8')));
		assert.ok(await until(() => pids.every(pid => !running(pid)), 2_000), `still running: ${pids.filter(running).join(' ')}`);
	});
});

/** A fake /proc where every process carries `mark`: [pid, ppid, start time in ticks, state (default S)] each. */
function fakeProc(tree: ReturnType<typeof makeTree>, mark: string, processes: Array<[number, number, number, string?]>): string {
	for (const [pid, ppid, startTicks, state = 'S'] of processes) {
		fs.mkdirSync(tree.file(`proc/${pid}`), { recursive: true });
		fs.writeFileSync(tree.file(`proc/${pid}/environ`), `HOME=/root\0${RUN_MARK}=${mark}\0`);
		// proc(5): state, ppid, pgrp, session, tty_nr, tpgid, flags, 8 counters, priority, nice, threads, itrealvalue, starttime, …
		const counters = Array(8).fill(0).join(' ');
		fs.writeFileSync(tree.file(`proc/${pid}/stat`), `${pid} (no de) ${state} ${ppid} ${pid} ${pid} 0 -1 4194560 ${counters} 20 0 1 0 ${startTicks} 1000 100\n`);
	}
	return tree.file('proc');
}

describe('escapedMembers names only what the command started, whatever carries its mark', () => {
	const mark = 'm1';
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({}); });
	afterEach(() => tree.cleanup());

	it('never Toolbelt\'s own process or those above it (a fake /proc where every process carries the mark)', () => {
		const parent = 900_001;
		const proc = fakeProc(tree, mark, [[process.pid, parent, 10], [parent, 1, 5], [1, 0, 1], [123_456, 1, 500], [900_002, 1, 600]]);
		assert.deepEqual(escapedMembers(markedGroup(mark, 123_456, proc), proc), [900_002]);
	});

	it('never a process older than the command (its leader\'s start time), even one that shares no line with Toolbelt', () => {
		const proc = fakeProc(tree, mark, [[1, 0, 1], [123_456, 1, 500], [900_002, 1, 499], [900_003, 1, 500], [900_004, 1, 501]]);
		assert.deepEqual(escapedMembers(markedGroup(mark, 123_456, proc), proc).sort(), [900_003, 900_004]);
	});

	it('never init, even one that looks younger than the command', () => {
		const proc = fakeProc(tree, mark, [[1, 0, 900], [123_456, 1, 500], [900_002, 1, 600]]);
		assert.deepEqual(escapedMembers(markedGroup(mark, 123_456, proc), proc), [900_002]);
	});

	it('never a zombie or a dead process: nothing is left to stop there', () => {
		const proc = fakeProc(tree, mark, [[1, 0, 1], [123_456, 1, 500], [900_002, 1, 600, 'Z'], [900_003, 1, 600, 'X'], [900_004, 1, 600, 'R']]);
		assert.deepEqual(escapedMembers(markedGroup(mark, 123_456, proc), proc), [900_004]);
	});

	it('reads the leader\'s start time from the real /proc by default', async function () {
		if (process.platform !== 'linux') this.skip();
		const child = spawn('sleep', ['100'], { stdio: 'ignore' });
		try {
			const group = markedGroup(mark, child.pid!);
			assert.equal(group.startTicks, procStat(child.pid!)!.startTicks);
			assert.ok(group.startTicks >= procStat(process.pid)!.startTicks);
		} finally {
			child.kill('SIGKILL');
		}
	});

	it('with the leader gone before its start time was read, this process\'s own start time is the bound', () => {
		const proc = fakeProc(tree, mark, [[process.pid, 1, 300], [1, 0, 1], [900_002, 1, 299], [900_003, 1, 301]]);
		const group = markedGroup(mark, 123_456, proc);
		assert.equal(group.startTicks, 300);
		assert.deepEqual(escapedMembers(group, proc), [900_003]);
	});
});
