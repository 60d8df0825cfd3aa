import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { escapedMembers, markedGroup, RUN_MARK } from '../../src/core/commands/process';
import { resultText } from '../../src/core/results/result';
import { makeHarness, makeTree, stopProcessesIn, unsandboxedCommands, until, withDeadline } from './helpers';

/**
 * Outside the sandbox a command's processes are reached through its process group; `setsid` and a
 * daemon's double fork leave that group. A timeout or cancel said "the command and every process it
 * started were stopped" while those ran on, and a normal end did not mention them. They carry the
 * command's mark (TOOLBELT_RUN) in their environment, which is how they are found now.
 */

const DEADLINE_MS = 10_000;

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

/** A fake /proc where every process carries `mark`: [pid, ppid, start time in ticks] each. */
function fakeProc(tree: ReturnType<typeof makeTree>, mark: string, processes: Array<[number, number, number]>): string {
	for (const [pid, ppid, startTicks] of processes) {
		fs.mkdirSync(tree.file(`proc/${pid}`), { recursive: true });
		fs.writeFileSync(tree.file(`proc/${pid}/environ`), `HOME=/root\0${RUN_MARK}=${mark}\0`);
		// proc(5): state, ppid, pgrp, session, tty_nr, tpgid, flags, 8 counters, priority, nice, threads, itrealvalue, starttime, …
		const counters = Array(8).fill(0).join(' ');
		fs.writeFileSync(tree.file(`proc/${pid}/stat`), `${pid} (no de) S ${ppid} ${pid} ${pid} 0 -1 4194560 ${counters} 20 0 1 0 ${startTicks} 1000 100\n`);
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

	it('with the leader gone before its start time was read, this process\'s own start time is the bound', () => {
		const proc = fakeProc(tree, mark, [[process.pid, 1, 300], [1, 0, 1], [900_002, 1, 299], [900_003, 1, 301]]);
		const group = markedGroup(mark, 123_456, proc);
		assert.equal(group.startTicks, 300);
		assert.deepEqual(escapedMembers(group, proc), [900_003]);
	});
});
