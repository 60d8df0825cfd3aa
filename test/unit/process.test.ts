import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
	commandEnv, groupAlive, procStat, pruneLogs, runProcess, RunOptions, shellInvocation, SpawnError,
} from '../../src/core/commands/process';
import { resultText } from '../../src/core/results/result';
import { makeHarness, makeTree, stopProcessesIn, withDeadline } from './helpers';

/** Running, as opposed to gone or a zombie nobody reaps (PID 1 of some containers never does). */
function running(pid: number): boolean {
	if (process.platform === 'linux') {
		const stat = procStat(pid);
		return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
	}
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** Our own children that are still running (zombies not yet reaped by Node do not count). */
function runningChildren(): number[] {
	if (process.platform !== 'linux') {
		const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' }).trim();
		return out ? out.split(/\s+/).map(Number) : [];
	}
	return fs.readdirSync('/proc')
		.filter(entry => /^\d+$/.test(entry))
		.map(Number)
		.filter(pid => {
			const stat = procStat(pid);
			return stat !== undefined && stat.ppid === process.pid && stat.state !== 'Z';
		});
}

async function until(check: () => boolean, ms = 3000): Promise<boolean> {
	const deadline = Date.now() + ms;
	while (Date.now() < deadline) {
		if (check()) return true;
		await new Promise(resolve => setTimeout(resolve, 20));
	}
	return check();
}

/**
 * How long one command of these tests may take. The slowest whole test of the commands group took
 * 2.3 s beside a mutation run (load 3–4); a run of its own takes under 1 s.
 */
const RUN_DEADLINE_MS = 5_000;

describe('process runner', function () {
	this.timeout(20_000);
	let dir: string;
	let logDir: string;
	// Every command here ends (or is stopped) within a second; the deadline turns a runner that
	// never returns into a failure of this test, not a wait for mocha's or Stryker's timeout.
	const run = (command: string, extra: Partial<RunOptions> = {}) =>
		withDeadline(runProcess({ command, cwd: dir, maxOutputBytes: 64 * 1024, logDir, graceMs: 300, ...extra }), RUN_DEADLINE_MS, `runProcess(${command}) did not return`);

	beforeEach(() => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-proc-')));
		logDir = path.join(dir, '.logs');
	});
	afterEach(() => {
		stopProcessesIn(dir);
		fs.rmSync(dir, { recursive: true, force: true });
	});

	it('runs in bash with pipefail, in the given folder, and keeps stdout and stderr apart', async () => {
		const result = await run('pwd; echo oops >&2; false | true');
		assert.equal(result.end, 'exit');
		assert.equal(result.exitCode, 1, 'pipefail makes `false | true` fail');
		assert.equal(result.signal, null);
		assert.equal(result.stdout.buffer.toText().text, `${dir}\n`);
		assert.equal(result.stderr.buffer.toText().text, 'oops\n');
		assert.ok(result.durationMs >= 0);
	});

	it('reports the exit code and the signal that ended the shell', async () => {
		assert.equal((await run('exit 42')).exitCode, 42);
		const killed = await run('kill -TERM $$');
		assert.equal(killed.exitCode, null);
		assert.equal(killed.signal, 'SIGTERM');
		assert.equal((await run('definitely-not-a-command-xyz')).exitCode, 127);
	});

	it('sets PAGER, GIT_PAGER, NO_COLOR and TERM, adds extra variables, and drops ELECTRON_RUN_AS_NODE', async () => {
		const result = await run('echo "$PAGER|$GIT_PAGER|$NO_COLOR|$TERM|$EXTRA|${ELECTRON_RUN_AS_NODE-unset}"', { env: { EXTRA: 'x y' } });
		assert.equal(result.stdout.buffer.toText().text, 'cat|cat|1|dumb|x y|unset\n');
		const env = commandEnv({ TERM: 'xterm' }, undefined, { ELECTRON_RUN_AS_NODE: '1', HOME: '/h' });
		assert.equal(env.TERM, 'xterm', 'the caller\'s variables win');
		assert.equal(env.HOME, '/h');
		assert.equal('ELECTRON_RUN_AS_NODE' in env, false);
	});

	it('feeds stdin when given, and otherwise gives an empty stdin (never inherited)', async () => {
		const fed = await run('tr a-z A-Z', { stdin: 'hello\nworld' });
		assert.equal(fed.stdout.buffer.toText().text, 'HELLO\nWORLD');
		// `cat` would wait forever on an inherited terminal; on an empty stdin it ends at once.
		const empty = await run('cat; echo "done"');
		assert.equal(empty.stdout.buffer.toText().text, 'done\n');
		const emptyText = await run('cat; echo "done"', { stdin: '' });
		assert.equal(emptyText.stdout.buffer.toText().text, 'done\n');
		// A command that never reads its input must not trip over it.
		const ignored = await run('true', { stdin: 'x'.repeat(1024 * 1024) });
		assert.equal(ignored.exitCode, 0);
	});

	it('keeps head and tail of a big output in a bounded buffer and streams it whole to the log', async () => {
		const result = await run('seq 1 400000', { maxOutputBytes: 8 * 1024 });
		const { text, info } = result.stdout.buffer.toText();
		assert.equal(info.truncated, true);
		assert.ok(result.stdout.buffer.retainedBytes <= 8 * 1024);
		assert.ok(text.startsWith('1\n2\n3\n'));
		assert.ok(text.endsWith('399999\n400000\n'));
		assert.match(text, /\[… [\d,]+ lines \/ [\d.]+ [KM]B omitted …\]/);
		assert.equal(info.totalLines, 400000);
		const log = result.stdout.logPath!;
		assert.ok(log.startsWith(logDir));
		const expected = Array.from({ length: 400000 }, (_, i) => `${i + 1}\n`).join('');
		assert.equal(fs.readFileSync(log, 'utf8'), expected);
		if (process.platform !== 'win32') {
			assert.equal(fs.statSync(log).mode & 0o777, 0o600, 'a log is for its owner only');
			assert.equal(fs.statSync(logDir).mode & 0o777, 0o700);
		}
		assert.equal(result.stderr.logPath, undefined, 'no log for a stream that printed nothing');
	});

	it('says when output is binary', async () => {
		const result = await run('head -c 4096 /dev/zero; printf "text" >&2');
		assert.equal(result.stdout.binary, true);
		assert.equal(result.stderr.binary, false);
		assert.equal(fs.statSync(result.stdout.logPath!).size, 4096);
	});

	it('a timeout kills the whole tree, a background grandchild included', async () => {
		const result = await run('sleep 1000 & echo $!; sleep 1000', { timeoutMs: 300 });
		assert.equal(result.end, 'timeout');
		const grandchild = Number(result.stdout.buffer.toText().text.trim());
		assert.ok(grandchild > 0);
		assert.equal(running(grandchild), false, 'the background sleep is gone');
		assert.equal(groupAlive(result.pid!), false);
		assert.equal(result.leftRunning, false);
	});

	it('cancelling kills the whole tree', async () => {
		const controller = new AbortController();
		const pidFile = path.join(dir, 'pid');
		setTimeout(() => controller.abort(), 300);
		const result = await run(`sleep 1000 & echo $! > ${pidFile}; wait`, { signal: controller.signal });
		assert.equal(result.end, 'cancelled');
		assert.equal(running(Number(fs.readFileSync(pidFile, 'utf8'))), false);
		assert.equal(groupAlive(result.pid!), false);
	});

	it('returns when the shell exits even if a daemon keeps the pipes open, and leaves the daemon running', async () => {
		const result = await run('sleep 1000 & echo started', { drainMs: 100 });
		try {
			assert.equal(result.end, 'exit');
			assert.equal(result.exitCode, 0);
			assert.equal(result.stdout.buffer.toText().text, 'started\n');
			assert.equal(result.pipesHeld, true);
			assert.equal(result.leftRunning, true);
			assert.equal(groupAlive(result.pid!), true);
		} finally {
			process.kill(-result.pid!, 'SIGKILL');
		}
		assert.equal(await until(() => !groupAlive(result.pid!)), true);
	});

	it('a background job that closed its output is reported as left running but not as holding the pipes', async () => {
		const result = await run('sleep 1000 >/dev/null 2>&1 & echo ok');
		try {
			assert.equal(result.pipesHeld, false);
			assert.equal(result.leftRunning, true);
		} finally {
			process.kill(-result.pid!, 'SIGKILL');
		}
	});

	it('leaves no child process behind after 200 commands', async function () {
		this.timeout(60_000);
		const groups: number[] = [];
		for (let i = 0; i < 200; i++) {
			const command = i % 4 === 0 ? 'true' : i % 4 === 1 ? 'echo x | cat | wc -c' : i % 4 === 2 ? '(exit 3)' : 'sleep 0.001; echo $$ >&2';
			const result = await run(command);
			assert.equal(result.end, 'exit');
			groups.push(result.pid!);
		}
		assert.deepEqual(runningChildren(), []);
		assert.deepEqual(groups.filter(pgid => groupAlive(pgid)), []);
	});

	it('a folder that vanished is a clear spawn error, not a crash', async () => {
		await assert.rejects(run('true', { cwd: path.join(dir, 'gone') }), (error: Error) =>
			error instanceof SpawnError && /could not be started: .*ENOENT.*the folder .*gone/.test(error.message));
	});

	it('never sources ~/.bashrc, whatever SHLVL says (bash reads it when stdin is a socket, as Node\'s pipes are)', async () => {
		const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-home-'));
		try {
			fs.writeFileSync(path.join(home, '.bashrc'), 'echo FROM-BASHRC\n');
			const result = await run('echo ran', { env: { HOME: home, SHLVL: '0' } });
			assert.equal(result.stdout.buffer.toText().text, 'ran\n');
		} finally {
			fs.rmSync(home, { recursive: true, force: true });
		}
	});

	it('builds the platform shell invocation', () => {
		const posix = shellInvocation('echo hi', 'linux');
		assert.deepEqual(posix.args.slice(-3), ['pipefail', '-c', 'echo hi'].slice(-3));
		assert.match(posix.file, /bash$|sh$/);
		const windows = shellInvocation('dir', 'win32', { ComSpec: 'C:\\Windows\\system32\\cmd.exe', PATH: '' });
		assert.equal(windows.file, 'C:\\Windows\\system32\\cmd.exe');
		assert.deepEqual(windows.args, ['/d', '/s', '/c', '"dir"']);
		assert.equal(windows.windowsVerbatimArguments, true);
	});

	it('prunes old logs, newest kept', async () => {
		fs.mkdirSync(logDir, { recursive: true });
		for (let i = 0; i < 5; i++) {
			const file = path.join(logDir, `${i}.stdout.log`);
			fs.writeFileSync(file, 'x');
			fs.utimesSync(file, 1000 + i, 1000 + i);
		}
		assert.equal(await pruneLogs(logDir, 2), 3);
		assert.deepEqual(fs.readdirSync(logDir).sort(), ['3.stdout.log', '4.stdout.log']);
	});
});

describe('run_command', function () {
	this.timeout(20_000);
	let tree: ReturnType<typeof makeTree>;

	beforeEach(() => { tree = makeTree({ 'a.txt': 'alpha\n', 'sub/b.txt': 'beta\n' }); });
	afterEach(() => tree.cleanup());

	it('asks with the exact command and folder, then runs it', async () => {
		const h = makeHarness(tree.root);
		const text = await h.text('run_command', { command: 'cat b.txt; echo warn >&2; exit 2', cwd: 'sub' });
		assert.equal(h.asked.length, 1);
		const request = h.asked[0];
		assert.equal(request.kind, 'command');
		if (request.kind === 'command') {
			assert.equal(request.command, 'cat b.txt; echo warn >&2; exit 2');
			assert.equal(request.cwd, path.join(tree.root, 'sub'));
		}
		assert.match(text, /^Exit code 2 after [\d.]+ s\./);
		assert.match(text, /--- stdout \(1 line, 5 B\) ---\nbeta/);
		assert.match(text, /--- stderr \(1 line, 5 B\) ---\nwarn/);
	});

	it('shows extra environment and stdin in the confirmation', async () => {
		const h = makeHarness(tree.root);
		await h.text('run_command', { command: 'cat', stdin: 'payload', env: ['MODE=test'] });
		const request = h.asked[0];
		assert.ok(request.kind === 'command' && request.command === 'cat\n# env MODE="test"\n# stdin (7 B): "payload"');
	});

	it('runs nothing when declined', async () => {
		const h = makeHarness(tree.root, { approve: false });
		const error = await h.error('run_command', { command: 'touch created.txt' });
		assert.equal(error.code, 'declined');
		assert.equal(fs.existsSync(tree.file('created.txt')), false);
	});

	it('previews the request without running anything', async () => {
		const h = makeHarness(tree.root);
		const request = await h.registry.preview('run_command', { command: 'touch previewed.txt' });
		assert.equal(request?.kind, 'command');
		assert.equal(fs.existsSync(tree.file('previewed.txt')), false);
	});

	it('refuses a folder outside the workspace, a file as folder, a missing folder', async () => {
		const h = makeHarness(tree.root);
		const outside = await h.error('run_command', { command: 'touch /tmp/x', cwd: os.tmpdir() });
		assert.equal(outside.code, 'outside_boundary');
		assert.match(outside.message, /Commands run only inside the workspace folder/);
		const escape = await h.error('run_command', { command: 'pwd', cwd: '../..' });
		assert.equal(escape.code, 'outside_boundary');
		assert.equal((await h.error('run_command', { command: 'pwd', cwd: 'a.txt' })).code, 'not_directory');
		assert.equal((await h.error('run_command', { command: 'pwd', cwd: 'nope' })).code, 'not_found');
		assert.equal(h.asked.length, 0, 'nothing was even asked');
	});

	it('refuses negative and huge timeouts by the schema', async () => {
		const h = makeHarness(tree.root);
		const negative = await h.error('run_command', { command: 'true', timeoutMs: -1 });
		assert.match(negative.message, /timeoutMs: must be ≥ 1/);
		const huge = await h.error('run_command', { command: 'true', timeoutMs: 10_000_000 });
		assert.match(huge.message, /timeoutMs: must be ≤ 600000/);
		const badEnv = await h.error('run_command', { command: 'true', env: ['BAD-NAME=x', 'NO_VALUE'] });
		assert.equal(badEnv.code, 'invalid_input');
		assert.match(badEnv.message, /env\[0\]: expected text matching .*got the string "BAD-NAME=x"\n- env\[1\]: expected text matching/);
	});

	it('says plainly when a command does not exist', async () => {
		const h = makeHarness(tree.root);
		const text = await h.text('run_command', { command: 'frobnicate-the-widgets --now' });
		assert.match(text, /^Exit code 127 after [\d.]+ s: the shell could not find a command \(.*frobnicate-the-widgets: command not found\)\. Check the spelling/);
	});

	it('reports a timeout with the output so far', async () => {
		const h = makeHarness(tree.root);
		const result = await h.invoke('run_command', { command: 'echo before; sleep 1000', timeoutMs: 300 });
		const text = resultText(result);
		assert.match(text, /^Timed out after 0\.3 s: the command and every process it started were stopped/);
		assert.match(text, /before/);
		assert.equal(result.metadata.timedOut, true);
	});

	it('cuts big output with a marker naming a log that read_file can page', async () => {
		const h = makeHarness(tree.root);
		const result = await h.invoke('run_command', { command: 'seq 1 100000' });
		const text = resultText(result);
		assert.equal(result.metadata.truncated, true);
		assert.ok(Buffer.byteLength(text) < 70 * 1024);
		const log = (result.metadata.logs as { stdout: string }).stdout;
		assert.ok(text.includes(`read all of it with read_file path="${log}"`));
		const page = await h.text('read_file', { path: log, offset: 50000, limit: 2 });
		assert.match(page, /50000\t50000\n\s*50001\t50001/);
	});

	it('does not dump binary output', async () => {
		const h = makeHarness(tree.root);
		const text = await h.text('run_command', { command: 'head -c 2000 /dev/urandom' });
		assert.match(text, /--- stdout: 2(\.0)? KB of binary data, not shown/);
		assert.match(text, /encoding="base64"/);
		assert.ok(Buffer.byteLength(text) < 1000);
	});

	it('without a sandbox, tells about background processes it leaves running, and the session manager stops them', async () => {
		// In the sandbox nothing outlives the call (sandbox.test.ts); this is the behaviour without one.
		const h = makeHarness(tree.root, { settings: { sandbox: { mode: 'off' } } });
		const env = (h.registry as any).env;
		const result = await h.invoke('run_command', { command: 'sleep 1000 & echo started' });
		const pgid = result.metadata.backgroundProcessGroup as number;
		assert.ok(pgid > 0);
		assert.match(resultText(result), /still running \(process group \d+\)/);
		assert.deepEqual(env.state.sessions.backgroundGroups().map((g: { pgid: number }) => g.pgid), [pgid]);
		await env.state.sessions.dispose();
		assert.equal(groupAlive(pgid), false);
	});

	it('passes extra environment variables and stdin to the command', async () => {
		const h = makeHarness(tree.root);
		// The value is everything after the first '='; a name given twice keeps its last value.
		const envText = await h.text('run_command', { command: 'echo "FOO=$FOO|$BAR"', env: ['FOO=old', 'FOO=bar', 'BAR=a=b c'] });
		assert.match(envText, /--- stdout \(1 line, 14 B\) ---\nFOO=bar\|a=b c/);
		const stdinText = await h.text('run_command', { command: 'cat', stdin: 'hello' });
		assert.match(stdinText, /^Exit code 0 after/);
		assert.match(stdinText, /--- stdout \(1 line, 5 B\) ---\nhello/);
	});

	it('explains exit code 126: a command that was found but could not be run', async () => {
		fs.writeFileSync(tree.file('script.sh'), '#!/bin/sh\necho should-not-run\n', { mode: 0o644 });
		const h = makeHarness(tree.root);
		const result = await h.invoke('run_command', { command: './script.sh' });
		const text = resultText(result);
		assert.equal(result.metadata.exitCode, 126);
		assert.match(text, /^Exit code 126 after [\d.]+ s: a command was found but could not be run \(.*Permission denied\) \(not executable, or a folder\)\. Check its permissions \(chmod \+x\)/);
		assert.doesNotMatch(text, /should-not-run/);
	});

	it('reports a command killed by a signal in its headline and metadata', async () => {
		const h = makeHarness(tree.root);
		const result = await h.invoke('run_command', { command: 'echo dying; kill -TERM $$' });
		const text = resultText(result);
		assert.equal(result.error, undefined);
		assert.match(text, /^Killed by SIGTERM after [\d.]+ s\./);
		assert.match(text, /dying/);
		assert.equal(result.metadata.signal, 'SIGTERM');
		assert.equal(result.metadata.exitCode, null);
	});
});
