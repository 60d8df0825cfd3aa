import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
	groupAlive, ignoresTerm, livingMembers, nextPollPause, POLL_PAUSE_MAX_MS, procStat, runProcess, shellInvocation, signalGroup, terminateGroup,
} from '../../src/core/commands/process';
import { resultText } from '../../src/core/results/result';
import { SessionManager } from '../../src/core/commands/sessions';
import { makeHarness, makeTree, stopProcessesIn, withDeadline } from './helpers';

/** Far more than SIGTERM, the grace period and SIGKILL take; reaching it means the group was never killed. */
const DEADLINE_MS = 8_000;

async function until(check: () => boolean, ms: number): Promise<boolean> {
	const deadline = Date.now() + ms;
	while (!check() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20));
	return check();
}

/** Runs `work` while recording every signal process.kill is asked to send (not the probes: signal 0). */
async function recordingSignals(work: () => Promise<void>): Promise<Array<[number, string | number]>> {
	const sent: Array<[number, string | number]> = [];
	const kill = process.kill;
	process.kill = ((pid: number, signal?: string | number) => {
		if (signal !== 0) sent.push([pid, signal ?? 'default']);
		return kill.call(process, pid, signal);
	}) as typeof process.kill;
	try {
		await work();
	} finally {
		process.kill = kill;
	}
	return sent;
}

/** Starts `bash -c script` as the leader of a new group; resolves once its first line is printed. */
async function startGroup(script: string, cwd: string): Promise<{ pgid: number; firstLine: string; exited: Promise<unknown> }> {
	const child = spawn('bash', ['-c', script], { cwd, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
	const exited = new Promise(resolve => child.once('exit', resolve));
	const firstLine = await withDeadline(new Promise<string>(resolve => child.stdout!.once('data', data => resolve(String(data).trim()))), 5_000, 'the group never started');
	return { pgid: child.pid!, firstLine, exited };
}

/** The numbers a command wrote to a file once it is running (its own pid first). */
async function pidsFrom(file: string): Promise<number[]> {
	const written = () => fs.existsSync(file) && /\d+\s+\d+\s*$/.test(fs.readFileSync(file, 'utf8'));
	assert.ok(await until(written, 5_000), `the command never wrote ${file}`);
	return fs.readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);
}

/**
 * Programs that ignore SIGTERM (and SIGHUP) must still be stopped, by the SIGKILL that follows the
 * grace period. Each test races its own deadline and kills what it started whatever happens, so a
 * runner that forgets the SIGKILL fails these tests in seconds and leaves nothing running.
 */
describe('processes that ignore SIGTERM', function () {
	// Mocha's limit is only the backstop: each test fails at its own deadline first.
	this.timeout(DEADLINE_MS + 5_000);
	let dir: string;
	let groups: number[];

	before(function () {
		// The group's members are read from /proc.
		if (process.platform !== 'linux') this.skip();
	});
	beforeEach(() => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-stubborn-')));
		groups = [];
	});
	afterEach(async () => {
		for (const pgid of groups) signalGroup(pgid, 'SIGKILL');
		stopProcessesIn(dir);
		assert.ok(await until(() => groups.every(pgid => livingMembers(pgid).length === 0), 2_000), 'the cleanup left processes running');
		fs.rmSync(dir, { recursive: true, force: true });
	});

	it('a timed-out command is killed with everything it started, though all of it ignores SIGTERM', async () => {
		const pidFile = path.join(dir, 'pids');
		const running = runProcess({
			command: `trap '' TERM; sleep 1000 & echo $$ $! > ${pidFile}; sleep 1000`,
			cwd: dir, timeoutMs: 300, graceMs: 200, maxOutputBytes: 4096,
		});
		const [pgid, child] = await pidsFrom(pidFile);
		groups.push(pgid);
		assert.ok(livingMembers(pgid).includes(child));
		const result = await withDeadline(running, DEADLINE_MS, 'runProcess did not return: SIGTERM was ignored and no SIGKILL followed');
		assert.equal(result.end, 'timeout');
		assert.equal(result.signal, 'SIGKILL');
		assert.deepEqual(livingMembers(pgid), [], 'nothing of the command is left running');
		// 300 ms, then its own 200 ms grace; the default grace alone would be 2 s.
		assert.ok(result.durationMs < 1_500, `killed after ${result.durationMs} ms`);
	});

	it('a timeout returns only when a child that ignores SIGTERM is gone too, though the shell died at once', async () => {
		const pidFile = path.join(dir, 'pids');
		const running = runProcess({
			command: `(trap '' TERM; sleep 1000) & echo $$ $! > ${pidFile}; sleep 1000`,
			cwd: dir, timeoutMs: 300, graceMs: 300, maxOutputBytes: 4096,
		});
		const [pgid, child] = await pidsFrom(pidFile);
		groups.push(pgid);
		const result = await withDeadline(running, DEADLINE_MS, 'runProcess did not return');
		assert.equal(result.end, 'timeout');
		assert.equal(result.signal, 'SIGTERM', 'the shell itself honoured SIGTERM');
		assert.equal(procStat(child) === undefined || procStat(child)!.state === 'Z', true, 'the stubborn child was killed before the call returned');
		assert.deepEqual(livingMembers(pgid), []);
	});

	it('a cancel during the grace period of a timeout changes nothing: it ended by the timeout, killed at the end of that grace', async () => {
		const pidFile = path.join(dir, 'pids');
		const controller = new AbortController();
		const started = Date.now();
		const running = runProcess({
			command: `trap '' TERM; sleep 1000 & echo $$ $! > ${pidFile}; sleep 1000`,
			cwd: dir, timeoutMs: 200, graceMs: 1_500, maxOutputBytes: 4096, signal: controller.signal,
		});
		const [pgid] = await pidsFrom(pidFile);
		groups.push(pgid);
		// Well inside the grace period that the timeout started; a second stop would start another.
		await new Promise(resolve => setTimeout(resolve, Math.max(0, started + 700 - Date.now())));
		controller.abort();
		const result = await withDeadline(running, DEADLINE_MS, 'runProcess did not return');
		assert.equal(result.end, 'timeout');
		assert.equal(result.signal, 'SIGKILL');
		assert.deepEqual(livingMembers(pgid), []);
	});

	for (const tty of [true, false]) {
		it(`a session on ${tty ? 'a pty' : 'pipes'} that ignores SIGHUP and SIGTERM is killed with its group`, async () => {
			const manager = new SessionManager({ graceMs: 200 });
			try {
				const { session } = manager.start({ command: `trap '' HUP TERM; sleep 1000 & sleep 1000`, cwd: dir, tty, maxOutputBytes: 4096 });
				groups.push(session.pid);
				assert.ok(await until(() => livingMembers(session.pid).length >= 3, 5_000), 'the shell and both sleeps run');
				await withDeadline(session.kill('killed'), DEADLINE_MS, 'kill did not return');
				assert.equal(session.alive, false);
				assert.deepEqual(livingMembers(session.pid), [], 'nothing of the session is left running');
			} finally {
				await withDeadline(manager.dispose(), DEADLINE_MS, 'dispose did not return');
			}
		});
	}

	// The host's process groups are what these tests watch: outside the sandbox, whose PID namespace
	// would end everything anyway (test/unit/sandbox.test.ts covers that).
	describe('through the tools', () => {
		const unsandboxed = { settings: { sandbox: { mode: 'off' } } };
		let tree: ReturnType<typeof makeTree>;
		beforeEach(() => { tree = makeTree(); });
		afterEach(() => tree.cleanup());

		it('run_command: a timeout stops a command that ignores SIGTERM', async () => {
			const h = makeHarness(tree.root, unsandboxed);
			const pidFile = path.join(dir, 'pids');
			const running = h.invoke('run_command', { command: `trap '' TERM; sleep 1000 & echo $$ $! > ${pidFile}; sleep 1000`, timeoutMs: 300 });
			const [pgid] = await pidsFrom(pidFile);
			groups.push(pgid);
			const result = await withDeadline(running, DEADLINE_MS, 'run_command did not return');
			assert.match(resultText(result), /^Timed out after 0\.3 s/);
			assert.deepEqual(livingMembers(pgid), []);
		});

		it('kill_session: stops a session that ignores SIGHUP and SIGTERM', async () => {
			const h = makeHarness(tree.root, unsandboxed);
			const sessions = (h.registry as any).env.state.sessions as SessionManager;
			try {
				await h.text('exec_command', { command: `trap '' HUP TERM; sleep 1000 & sleep 1000`, yieldMs: 0 });
				const pgid = sessions.get(1)!.pid;
				groups.push(pgid);
				assert.ok(await until(() => livingMembers(pgid).length >= 3, 5_000), 'the shell and both sleeps run');
				const text = resultText(await withDeadline(h.invoke('kill_session', { sessionId: 1 }), DEADLINE_MS, 'kill_session did not return'));
				assert.match(text, /was stopped with every process it started/);
				assert.deepEqual(livingMembers(pgid), []);
			} finally {
				await withDeadline(sessions.dispose(), DEADLINE_MS, 'dispose did not return');
			}
		});
	});
});

describe('signalling process groups', function () {
	this.timeout(DEADLINE_MS + 5_000);
	let dir: string;
	beforeEach(() => { dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-groups-'))); });
	afterEach(() => {
		stopProcessesIn(dir);
		fs.rmSync(dir, { recursive: true, force: true });
	});

	it('tells a process that ignores SIGTERM by its SigIgn mask; one it cannot read does not', async function () {
		if (process.platform !== 'linux') this.skip();
		const { pgid: deaf } = await startGroup('trap "" TERM; echo up; while :; do sleep 0.05; done', dir);
		const { pgid: plain } = await startGroup('echo up; while :; do sleep 0.05; done', dir);
		try {
			assert.equal(ignoresTerm(deaf), true);
			assert.equal(ignoresTerm(plain), false);
		} finally {
			signalGroup(deaf, 'SIGKILL');
			signalGroup(plain, 'SIGKILL');
		}
		assert.equal(ignoresTerm(2 ** 22 + 1), false, 'no such process');
		const proc = path.join(dir, 'proc');
		const status = (pid: number, sigIgn: string | undefined) => {
			fs.mkdirSync(path.join(proc, String(pid)), { recursive: true });
			const ignored = sigIgn === undefined ? '' : `SigIgn:\t${sigIgn}\n`;
			fs.writeFileSync(path.join(proc, String(pid), 'status'), `Name:\tsh\nSigBlk:\t0000000000004000\n${ignored}SigCgt:\t0000000000004000\n`);
		};
		// SIGTERM is bit 14; SIGINT (bit 1) and SIGQUIT (bit 2) ignored say nothing of it.
		status(10, '0000000000004006');
		status(11, '0000000000000006');
		status(12, '0000000180004000');
		// A kernel (or a fake) without the line: not known to ignore it.
		status(13, undefined);
		assert.deepEqual([10, 11, 12, 13].map(pid => ignoresTerm(pid, proc)), [true, false, true, false]);
	});

	it('sends SIGTERM again, once, to a member that ignored it and listens now; never twice to one that heard it', async function () {
		if (process.platform !== 'linux') this.skip();
		// A stands for bwrap's launcher: it ignores SIGTERM when it is sent, then starts listening
		// (and keeps running when it hears it, so that only the final SIGKILL ends it). B listens
		// from the start. Each writes a line for every SIGTERM it gets.
		const terms = path.join(dir, 'terms');
		const a = `trap "" TERM; touch a-ready; sleep 0.4; trap "echo A >> ${terms}" TERM; while :; do sleep 0.05; done`;
		const b = `trap "echo B >> ${terms}" TERM; touch b-ready; while :; do sleep 0.05; done`;
		const { pgid } = await startGroup(`(${a}) & (${b}) & until [ -e a-ready ] && [ -e b-ready ]; do sleep 0.01; done; echo up; wait`, dir);
		await withDeadline(terminateGroup(pgid, 1_500), DEADLINE_MS, 'terminateGroup did not return');
		assert.equal(groupAlive(pgid), false);
		assert.deepEqual(fs.readFileSync(terms, 'utf8').trim().split('\n').sort(), ['A', 'B']);
	});

	it('never signals pid 0, 1, a negative or a fractional pid (that would reach other processes)', () => {
		// Signal 0 only checks: even if the guard failed, nothing would be delivered.
		const probe = 0 as unknown as NodeJS.Signals;
		for (const pid of [0, 1, -1, -process.pid, 1.5, Number.NaN]) {
			assert.equal(signalGroup(pid, probe), false, String(pid));
			assert.equal(groupAlive(pid), false, String(pid));
		}
	});

	it('a group that is gone is not signalled and not alive (false, not merely falsy)', async () => {
		const { pgid, exited } = await startGroup('echo started', dir);
		await withDeadline(exited, 5_000, 'the shell did not exit');
		assert.strictEqual(signalGroup(pgid, 0 as unknown as NodeJS.Signals), false);
		assert.strictEqual(groupAlive(pgid), false);
		// Nothing more is sent to a group id that another command may have been given by now.
		const sent = await recordingSignals(() => terminateGroup(pgid, 1_000));
		assert.deepEqual(sent, [[-pgid, 'SIGTERM']]);
	});

	it('a group whose leader is gone is alive while a member runs; on Windows, with no groups, only the leader counts', async function () {
		if (process.platform !== 'linux') this.skip();
		const { pgid, firstLine, exited } = await startGroup('sleep 1000 >/dev/null & echo $!', dir);
		try {
			await withDeadline(exited, 5_000, 'the leader did not exit');
			assert.deepEqual(livingMembers(pgid), [Number(firstLine)]);
			assert.strictEqual(groupAlive(pgid), true);
			assert.strictEqual(groupAlive(pgid, 'win32'), false, 'the pid itself is probed there, and it is gone');
		} finally {
			signalGroup(pgid, 'SIGKILL');
		}
		assert.ok(await until(() => !groupAlive(pgid), 5_000));
	});

	it('stopping a group that honours SIGTERM sends SIGTERM and SIGCONT, and no SIGKILL once it is gone', async () => {
		const { pgid } = await startGroup('echo started; exec sleep 1000', dir);
		try {
			const sent = await recordingSignals(() => withDeadline(terminateGroup(pgid, 5_000), DEADLINE_MS, 'terminateGroup did not return'));
			assert.deepEqual(sent, [[-pgid, 'SIGTERM'], [-pgid, 'SIGCONT']]);
			assert.equal(groupAlive(pgid), false);
		} finally {
			signalGroup(pgid, 'SIGKILL');
		}
	});

	it('stopping a group that ignores SIGTERM sends the first signals in order, SIGCONT, then SIGKILL after the grace period', async () => {
		const { pgid } = await startGroup(`trap '' HUP TERM; echo started; while :; do sleep 0.05; done`, dir);
		try {
			const started = Date.now();
			const sent = await recordingSignals(() => withDeadline(terminateGroup(pgid, 300, ['SIGHUP', 'SIGTERM']), DEADLINE_MS, 'terminateGroup did not return'));
			assert.ok(Date.now() - started >= 300, 'SIGKILL only after the grace period');
			assert.deepEqual(sent, [[-pgid, 'SIGHUP'], [-pgid, 'SIGTERM'], [-pgid, 'SIGCONT'], [-pgid, 'SIGKILL']]);
			assert.equal(groupAlive(pgid), false);
		} finally {
			signalGroup(pgid, 'SIGKILL');
		}
	});

	it('a group that takes a moment to end on SIGTERM is seen gone soon after, not at the end of the grace period', async () => {
		// The trap's sleep outlasts the first looks: the next ones must still come every few ms.
		const { pgid } = await startGroup(`trap 'sleep 0.2; exit 0' TERM; echo started; while :; do sleep 0.05; done`, dir);
		try {
			const started = Date.now();
			const sent = await recordingSignals(() => withDeadline(terminateGroup(pgid, 5_000), DEADLINE_MS, 'terminateGroup did not return'));
			const took = Date.now() - started;
			assert.deepEqual(sent, [[-pgid, 'SIGTERM'], [-pgid, 'SIGCONT']], 'it ended by itself: no SIGKILL');
			assert.ok(took >= 150, `the trap ran (${took} ms)`);
			assert.ok(took < 2_500, `returned after ${took} ms of a 5 s grace period`);
		} finally {
			signalGroup(pgid, 'SIGKILL');
		}
	});

	it('looks at a dying group often at first, then every POLL_PAUSE_MAX_MS', () => {
		const pauses = [5];
		while (pauses.length < 7) pauses.push(nextPollPause(pauses[pauses.length - 1]));
		assert.deepEqual(pauses, [5, 10, 20, 40, 50, 50, 50]);
		assert.equal(POLL_PAUSE_MAX_MS, 50);
		assert.equal(nextPollPause(1), 2);
	});

	it('counts as members only the numbered /proc entries of the group that are neither zombies nor dead', () => {
		const proc = path.join(dir, 'proc');
		const task = (pid: string, state: string, pgrp: number, name = 'sleep') => {
			fs.mkdirSync(path.join(proc, pid), { recursive: true });
			fs.writeFileSync(path.join(proc, pid, 'stat'), `${pid} (${name}) ${state} 1 ${pgrp} ${pgrp} 0 -1 4194560 1 0 0 0 3 1 0 0 20 0 1 0 4242 9000 100\n`);
		};
		task('7', 'S', 7);
		task('9001', 'R', 7, 'a) R 1 7 (b');
		task('12', 'Z', 7);
		task('13', 'X', 7);
		task('14', 'S', 8);
		// /proc/self and friends name a process too, but are no pid of their own.
		fs.symlinkSync('9001', path.join(proc, 'self'));
		task('net', 'S', 7);
		fs.mkdirSync(path.join(proc, 'sys'));
		assert.deepEqual(livingMembers(7, proc).sort((a, b) => a - b), [7, 9001]);
		assert.deepEqual(livingMembers(8, proc), [14]);
		assert.deepEqual(procStat(9001, proc), { state: 'R', ppid: 1, pgrp: 7, startTicks: 4242 });
		assert.equal(procStat(15, proc), undefined);
		// Without /proc, the leader stands for the group that the cheap check found.
		assert.deepEqual(livingMembers(7, path.join(dir, 'no-proc')), [7]);
	});

	it('reads state, parent and group from /proc, whatever the program is called', async function () {
		if (process.platform !== 'linux') this.skip();
		assert.equal(procStat(process.pid)?.ppid, process.ppid);
		// The name in /proc/<pid>/stat is in parentheses and may hold some itself.
		const odd = path.join(dir, 'a) b (c');
		fs.copyFileSync('/bin/sleep', odd);
		fs.chmodSync(odd, 0o755);
		const child = spawn(odd, ['1000'], { cwd: dir, detached: true, stdio: 'ignore' });
		try {
			const stat = procStat(child.pid!);
			assert.deepEqual({ ppid: stat?.ppid, pgrp: stat?.pgrp }, { ppid: process.pid, pgrp: child.pid });
			assert.match(stat!.state, /^[RSD]$/);
			// Its start time, in clock ticks after boot: no earlier than this process's.
			assert.ok(Number.isInteger(stat!.startTicks) && stat!.startTicks >= procStat(process.pid)!.startTicks, `start ${stat!.startTicks}`);
			assert.deepEqual(livingMembers(child.pid!), [child.pid]);
			assert.equal(groupAlive(child.pid!), true);
		} finally {
			child.kill('SIGKILL');
		}
		assert.ok(await until(() => !groupAlive(child.pid!), 5_000));
		assert.equal(procStat(2 ** 22 + 1), undefined, 'no such pid');
	});

	it('a group left with only a zombie that nobody reaps is not alive, and stopping it ends at once', async function () {
		if (process.platform !== 'linux') this.skip();
		// `set -m` gives the background job a group of its own; after `exec` no shell is left to reap it.
		const parent = spawn('bash', ['-c', 'set -m; sleep 0.1 & echo $!; exec sleep 1000'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
		try {
			const job = Number(await new Promise<string>(resolve => parent.stdout!.once('data', resolve)));
			assert.ok(await until(() => procStat(job)?.state === 'Z', 5_000), 'the job ended and stays a zombie');
			assert.equal(procStat(job)!.pgrp, job);
			assert.doesNotThrow(() => process.kill(-job, 0), 'the kernel still counts the zombie in its group');
			assert.deepEqual(livingMembers(job), []);
			assert.equal(groupAlive(job), false);
			assert.equal(groupAlive(job, 'darwin'), true, 'elsewhere the cheap check is all there is');
			await withDeadline(terminateGroup(job, 5_000), 1_000, 'terminateGroup waited for a zombie');
		} finally {
			parent.kill('SIGKILL');
		}
	});

	it('a command gets its grace period to clean up after SIGTERM, then ends as it chooses', async () => {
		// The clean-up takes a while: a SIGKILL sent early would cut it short.
		const command = `trap 'sleep 0.5; echo cleaning up; exit 3' TERM; sleep 1000 & wait`;
		const result = await withDeadline(runProcess({ command, cwd: dir, timeoutMs: 300, graceMs: 5_000, maxOutputBytes: 1024 }), DEADLINE_MS, 'runProcess did not return');
		assert.deepEqual([result.end, result.exitCode, result.signal], ['timeout', 3, null], 'no SIGKILL before the grace period is over');
		assert.equal(result.stdout.buffer.toText().text, 'cleaning up\n');
	});

	it('a command that honours SIGTERM is done at once, not at the end of the grace period', async () => {
		const result = await withDeadline(runProcess({ command: 'sleep 1000', cwd: dir, timeoutMs: 200, graceMs: 5_000, maxOutputBytes: 1024 }), DEADLINE_MS, 'runProcess did not return');
		assert.equal(result.end, 'timeout');
		assert.equal(result.signal, 'SIGTERM');
		assert.ok(result.durationMs < 2_500, `returned after ${result.durationMs} ms`);
	});

	it('a stopped command still ends by SIGTERM: SIGCONT goes with it', async () => {
		const result = await withDeadline(runProcess({ command: 'kill -STOP $$', cwd: dir, timeoutMs: 300, graceMs: 5_000, maxOutputBytes: 1024 }), DEADLINE_MS, 'runProcess did not return');
		assert.equal(result.end, 'timeout');
		assert.equal(result.signal, 'SIGTERM', 'not left stopped until the SIGKILL');
	});

	it('finds PowerShell 7 on the PATH on Windows, else cmd.exe', () => {
		fs.writeFileSync(path.join(dir, 'pwsh.exe'), '');
		for (const env of [{ PATH: `/nowhere${path.delimiter}${dir}` }, { Path: dir }]) {
			assert.deepEqual(shellInvocation('Get-Date', 'win32', env), { file: path.join(dir, 'pwsh.exe'), args: ['-NoLogo', '-NoProfile', '-NonInteractive', '-Command', 'Get-Date'] });
		}
		assert.deepEqual(shellInvocation('dir', 'win32', {}), { file: 'cmd.exe', args: ['/d', '/s', '/c', '"dir"'], windowsVerbatimArguments: true });
	});
});
