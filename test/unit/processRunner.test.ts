import * as assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { OutputSink, outputSockets } from '../../src/core/commands/output';
import {
	CommandLogs, commandLogDir, findOnPath, findPosixShell, groupAlive, Launch, LOG_CAP_BYTES, posixInvocation, pruneLogs, runProcess, RunOptions, RunResult, signalGroup, SpawnError, spawnOptions,
} from '../../src/core/commands/process';
import type { Sandbox } from '../../src/core/sandbox/runtime';
import { defaultSettings } from '../../src/core/policy/settings';
import { workspaceBoundary } from '../../src/core/policy/workspaceBoundary';
import { makeReadOnly, stopProcessesIn, withDeadline } from './helpers';

/** The runner module as a new tool host first loads it: its memo of the shell not yet set. */
function freshProcessModule(): typeof import('../../src/core/commands/process') {
	const id = require.resolve('../../src/core/commands/process');
	const loaded = require.cache[id];
	delete require.cache[id];
	try {
		return require(id);
	} finally {
		require.cache[id] = loaded;
	}
}

/**
 * A stand-in for bwrap: runs the program under `env` with a marker variable, reads every exit as
 * `readExitAs`, and says whether the program's processes end with it.
 */
function fakeSandbox(endsWithProgram: boolean, readExitAs?: { exitCode: number }): Sandbox {
	return {
		kind: 'bwrap',
		scanComplete: true,
		endsWithProgram,
		env: { TMPDIR: '/sandbox-tmp' },
		readExit: exit => (readExitAs ? { ...exit, ...readExitAs } : exit),
		wrap: program => ({ ...program, file: '/usr/bin/env', args: ['WRAPPED=yes', program.file, ...program.args] }),
		createdProtected: async () => [],
		dispose: async () => undefined,
	};
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
	const deadline = Date.now() + ms;
	while (!check() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20));
	return check();
}

/** The runner's bookkeeping: streams, logs, the abort signal, what it reports about what is left. */
describe('process runner: streams, logs and signals', function () {
	this.timeout(20_000);
	let dir: string;
	const run = (command: string, extra: Partial<RunOptions> = {}) =>
		withDeadline(runProcess({ command, cwd: dir, maxOutputBytes: 64 * 1024, graceMs: 300, ...extra }), 5_000, `runProcess(${command}) did not return`);

	beforeEach(() => { dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-runner-'))); });
	afterEach(() => {
		stopProcessesIn(dir);
		fs.rmSync(dir, { recursive: true, force: true });
	});

	it('says nothing is left running after a plain command, and writes no log without a log folder', async () => {
		const result = await run('echo out; echo err >&2');
		assert.deepEqual([result.end, result.exitCode, result.leftRunning, result.pipesHeld], ['exit', 0, false, false]);
		assert.ok(result.durationMs >= 0 && result.durationMs < 5_000, `took ${result.durationMs} ms`);
		assert.deepEqual([result.stdout.logPath, result.stderr.logPath], [undefined, undefined]);
		assert.deepEqual([result.stdout.logCut, result.stderr.logCut], [false, false], 'no log, nothing cut from it');
		assert.deepEqual(fs.readdirSync(dir), []);
	});

	it('names logs by time, process and a random part, two commands never alike', async () => {
		const logDir = path.join(dir, 'logs');
		const first = await run('echo one; echo two >&2', { logDir });
		const second = await run('echo three', { logDir });
		const name = /^\d{8}-\d{6}-\d{3}-(\d+)-[0-9a-f]{8}\.(stdout|stderr)\.log$/;
		const [, pid] = name.exec(path.basename(first.stdout.logPath!))!;
		assert.equal(Number(pid), process.pid);
		assert.equal(path.basename(first.stderr.logPath!), path.basename(first.stdout.logPath!).replace('stdout', 'stderr'));
		assert.match(path.basename(second.stdout.logPath!), name);
		assert.notEqual(path.basename(second.stdout.logPath!), path.basename(first.stdout.logPath!));
		assert.equal(fs.readFileSync(first.stderr.logPath!, 'utf8'), 'two\n');
	});

	it('stops a log at its cap and says so, while the buffer still sees the whole stream', async () => {
		const logDir = path.join(dir, 'logs');
		const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join('');
		// Two writes: the cap falls inside the first, the second goes to the buffer only.
		const over = await run('seq 1 1000; sleep 0.05; seq 1001 2000', { logDir, logCapBytes: 1000 });
		assert.equal(fs.readFileSync(over.stdout.logPath!, 'utf8'), lines(1, 2000).slice(0, 1000));
		assert.equal(over.stdout.logCut, true);
		assert.equal(over.stdout.buffer.totalBytes, lines(1, 2000).length);
		assert.ok(over.stdout.buffer.toText().text.endsWith('1999\n2000\n'));
		// Output of exactly the cap fits whole: nothing was cut.
		const exact = await run('printf "%01000d" 0', { logDir, logCapBytes: 1000 });
		assert.equal(fs.readFileSync(exact.stdout.logPath!, 'utf8'), '0'.repeat(1000));
		assert.equal(exact.stdout.logCut, false);
	});

	it('stops a log at a cap past its first pieces to the byte, while the buffer sees the rest', async () => {
		const logDir = path.join(dir, 'logs');
		const whole = Array.from({ length: 500_000 }, (_, i) => `${i + 1}\n`).join('');
		// The log is written in 1 MB pieces: the cap falls inside the third.
		const cap = 2 * 1024 * 1024 + 12_345;
		const result = await run('seq 1 500000', { logDir, logCapBytes: cap });
		assert.equal(fs.readFileSync(result.stdout.logPath!, 'utf8'), whole.slice(0, cap));
		assert.equal(result.stdout.logCut, true);
		assert.equal(result.stdout.buffer.totalBytes, whole.length);
		assert.equal(result.stdout.buffer.toText().info.totalLines, 500_000);
		assert.ok(result.stdout.buffer.toText().text.endsWith('499999\n500000\n'));
	});

	it('reads through sockets of its own, or through Node\'s pipes where none can be made, to the same result', async function () {
		if (process.platform === 'win32') this.skip();
		const logDir = path.join(dir, 'logs');
		// The command sees a socket either way, as it always has.
		const command = 'seq 1 300000; seq 1 1000 >&2; [ -S /dev/stdout ] && echo "a socket" >&2';
		const viaSockets = await run(command, { logDir });
		// A temp folder too deep for a socket's path: no socket is made there, Node's pipes are used.
		const deep = path.join(dir, 'd'.repeat(100));
		fs.mkdirSync(deep);
		const tmpdir = process.env.TMPDIR;
		process.env.TMPDIR = deep;
		let viaPipes: RunResult;
		try {
			assert.equal(await outputSockets([new OutputSink(1024, undefined).reader()]), undefined);
			viaPipes = await run(command, { logDir });
		} finally {
			if (tmpdir === undefined) delete process.env.TMPDIR;
			else process.env.TMPDIR = tmpdir;
		}
		assert.deepEqual(fs.readdirSync(deep), [], 'nothing left in the temp folder');
		const stdout = Array.from({ length: 300_000 }, (_, i) => `${i + 1}\n`).join('');
		const stderr = `${Array.from({ length: 1000 }, (_, i) => `${i + 1}\n`).join('')}a socket\n`;
		for (const result of [viaSockets, viaPipes]) {
			assert.equal(result.exitCode, 0);
			assert.equal(fs.readFileSync(result.stdout.logPath!, 'utf8'), stdout);
			assert.equal(fs.readFileSync(result.stderr.logPath!, 'utf8'), stderr);
			assert.equal(result.stderr.buffer.toText().text, stderr);
			assert.deepEqual([result.stdout.buffer.totalBytes, result.stdout.buffer.toText().info.totalLines], [stdout.length, 300_000]);
			assert.ok(result.stdout.buffer.toText().text.endsWith('299999\n300000\n'));
		}
	});

	it('makes sockets while their path fits in 103 bytes, none past that, and leaves no temp folder either way', async function () {
		if (process.platform === 'win32') this.skip();
		// The socket is <TMPDIR>/toolbelt-out-XXXXXX/s: 22 bytes past the temp folder's path.
		const tempOf = (socketPathBytes: number) => {
			const length = socketPathBytes - 22 - dir.length - 1;
			if (length < 1) this.skip();
			const temp = path.join(dir, `${socketPathBytes}`.padEnd(length, 't'));
			fs.mkdirSync(temp);
			return temp;
		};
		const longest = tempOf(103);
		const tooLong = tempOf(104);
		const tmpdir = process.env.TMPDIR;
		let made: Awaited<ReturnType<typeof outputSockets>>;
		let notMade: Awaited<ReturnType<typeof outputSockets>>;
		try {
			process.env.TMPDIR = longest;
			made = await outputSockets([new OutputSink(1024, undefined).reader()]);
			process.env.TMPDIR = tooLong;
			notMade = await outputSockets([new OutputSink(1024, undefined).reader()]);
		} finally {
			if (tmpdir === undefined) delete process.env.TMPDIR;
			else process.env.TMPDIR = tmpdir;
		}
		for (const pair of [...made ?? [], ...notMade ?? []]) {
			pair.ours.destroy();
			pair.theirs.destroy();
		}
		assert.equal(made?.length, 1, 'a 103-byte socket path is allowed');
		assert.equal(notMade, undefined, 'a 104-byte one is not');
		assert.deepEqual([fs.readdirSync(longest), fs.readdirSync(tooLong)], [[], []], 'the private folders are removed');
	});

	it('makes socket pairs whose data reaches the reader in order, one pair per reader', async function () {
		if (process.platform === 'win32') this.skip();
		const sinks = [new OutputSink(1024 * 1024, undefined), new OutputSink(1024 * 1024, undefined)];
		const pairs = (await outputSockets(sinks.map(sink => sink.reader())))!;
		assert.equal(pairs.length, 2);
		pairs.forEach((pair, i) => sinks[i].readSocket(pair.ours));
		const sent = [Buffer.alloc(700_000, 'first\n'), Buffer.alloc(300_000, 'second\n')];
		pairs.forEach((pair, i) => pair.theirs.end(sent[i]));
		await Promise.all(sinks.map(sink => sink.closed));
		const kept = await Promise.all(sinks.map(sink => sink.finish()));
		kept.forEach((capture, i) => {
			assert.equal(capture.buffer.totalBytes, sent[i].length);
			assert.equal(capture.buffer.toText().text, sent[i].toString());
		});
	});

	it('pauses a Node stream while its log cannot keep up, and resumes it when the log is done with', async function () {
		if (process.platform === 'win32') this.skip();
		// Opening a FIFO for writing waits for a reader: until one comes, no piece of the log is written.
		const fifo = path.join(dir, 'log');
		execFileSync('mkfifo', [fifo]);
		const sink = new OutputSink(64 * 1024, { path: fifo, cap: LOG_CAP_BYTES });
		const stream = new PassThrough();
		sink.readStream(stream);
		const chunk = Buffer.alloc(1024 * 1024, 'abc\n');
		for (let i = 0; i < 12; i++) stream.write(chunk);
		stream.end();
		await new Promise(resolve => setTimeout(resolve, 200));
		assert.equal(stream.isPaused(), true, 'paused with 8 pieces held');
		assert.ok(sink.buffer.totalBytes < 12 * chunk.length, `${sink.buffer.totalBytes} bytes taken while the log was stalled`);
		// The reader lets the open return; the writes then fail (a FIFO takes no positioned write),
		// which lets the stream go on too: the buffer still sees every byte.
		const reader = fs.createReadStream(fifo).on('error', () => undefined);
		try {
			await withDeadline(sink.closed, 5_000, 'the stream was never resumed');
			const capture = await sink.finish();
			assert.equal(capture.buffer.totalBytes, 12 * chunk.length);
		} finally {
			reader.destroy();
		}
	});

	it('keeps a log to its cap to the byte through either reader, and calls it cut only when something was left out', async () => {
		const MB = 1024 * 1024;
		// Output sizes around a cap inside the third 1 MB piece, and around a cap on a piece's end.
		const cases = [[2 * MB + 100, 2 * MB + 99], [2 * MB + 100, 2 * MB + 100], [2 * MB + 100, 2 * MB + 101], [MB, MB], [MB, MB + 1], [MB, 0]];
		const output = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => 97 + (i * 7 + (i >> 12)) % 26));
		/** Feeds `bytes` as a socket would: each read lands in the buffer the reader offers, at most 100,000 bytes of it. */
		const throughSocket = (sink: OutputSink, bytes: Buffer) => {
			const { buffer, callback } = sink.reader() as { buffer: () => Uint8Array; callback: (length: number, into: Uint8Array) => boolean };
			for (let at = 0; at < bytes.length;) {
				const into = buffer();
				const length = bytes.copy(into, 0, at, Math.min(bytes.length, at + 100_000));
				callback(length, into);
				at += length;
			}
		};
		const throughStream = (sink: OutputSink, bytes: Buffer) => {
			const stream = new PassThrough();
			sink.readStream(stream);
			for (let at = 0; at < bytes.length; at += 300_000) stream.write(bytes.subarray(at, at + 300_000));
			stream.end();
			return withDeadline(sink.closed, 5_000, 'the stream was never read to its end');
		};
		for (const [cap, size] of cases) {
			const bytes = output(size);
			for (const [name, feed] of [['socket', throughSocket], ['stream', throughStream]] as const) {
				const log = path.join(dir, `${name}-${cap}-${size}.log`);
				const sink = new OutputSink(64 * 1024, { path: log, cap });
				await feed(sink, bytes);
				const capture = await sink.finish();
				const label = `${name}: ${size} bytes, cap ${cap}`;
				assert.equal(capture.logCut, size > cap, label);
				assert.equal(capture.buffer.totalBytes, size, label);
				if (size === 0) {
					assert.equal(capture.logPath, undefined, `${label}: nothing printed, no log`);
					continue;
				}
				assert.ok(fs.readFileSync(log).equals(bytes.subarray(0, cap)), `${label}: the log is the output's first ${Math.min(cap, size)} bytes`);
			}
		}
	});

	it('says the log failed when a write fails midway, and the buffer still sees every byte', async function () {
		if (process.platform !== 'linux') this.skip();
		// /dev/full opens for writing, and every write to it fails with ENOSPC, as on a full disk.
		const sink = new OutputSink(64 * 1024, { path: '/dev/full', cap: LOG_CAP_BYTES });
		const stream = new PassThrough();
		sink.readStream(stream);
		const chunk = Buffer.alloc(300 * 1024, 'abc\n');
		for (let i = 0; i < 10; i++) stream.write(chunk);
		stream.end();
		await withDeadline(sink.closed, 5_000, 'the stream was never read to its end');
		const capture = await sink.finish();
		assert.match(capture.logError ?? '', /^ENOSPC/);
		assert.equal(capture.logPath, undefined);
		assert.equal(capture.buffer.totalBytes, 10 * chunk.length);
		assert.equal(capture.buffer.toText().info.totalLines, 10 * chunk.length / 4);
	});

	it('closes every socket and file it opened, however the command ends', async function () {
		if (process.platform !== 'linux') this.skip();
		const openFiles = () => fs.readdirSync('/proc/self/fd').length;
		const before = openFiles();
		const logDir = path.join(dir, 'logs');
		await run('seq 1 100000; echo err >&2', { logDir });
		await run('sleep 5', { logDir, timeoutMs: 200 });
		await run('true', { cwd: path.join(dir, 'gone') }).catch(() => undefined);
		const held = await run('(sleep 2; echo late) & echo started', { logDir, drainMs: 50 });
		assert.equal(held.pipesHeld, true);
		// Read straight into the log's piece, which was written out while the pipe was still read.
		assert.equal(fs.readFileSync(held.stdout.logPath!, 'utf8'), 'started\n');
		signalGroup(held.pid!, 'SIGKILL');
		assert.ok(await until(() => openFiles() === before, 2_000), `${openFiles() - before} more open than before`);
	});

	it('holds a command back while its log cannot keep up, then writes the log whole', async function () {
		if (process.platform === 'win32') this.skip();
		// The log's writes run on libuv's thread pool: opening FIFOs no one writes to occupies every
		// thread, so the log stalls as a slow disk would. The command must then wait, not fill memory.
		const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
		const fifos = Array.from({ length: threads }, (_, i) => path.join(dir, `stall-${i}`));
		for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
		let released = 0;
		/** Opens each FIFO's other end without blocking, until every stalled open has returned. */
		const release = async (stalls: Promise<unknown>[]) => {
			for (const deadline = Date.now() + 5_000; released < stalls.length && Date.now() < deadline;) {
				for (const fifo of fifos) {
					try {
						fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
					} catch {
						// ENXIO: no open waiting on this one (released, or not yet on a thread).
					}
				}
				await new Promise(resolve => setTimeout(resolve, 20));
			}
		};
		const logDir = path.join(dir, 'logs');
		fs.mkdirSync(logDir);
		const started = path.join(dir, 'started');
		const done = path.join(dir, 'done');
		const running = run(`touch ${started}; sleep 0.3; head -c 24000000 /dev/zero; touch ${done}`, { logDir });
		const stalls: Promise<unknown>[] = [];
		try {
			assert.ok(await until(() => fs.existsSync(started), 5_000), 'the command started');
			stalls.push(...fifos.map(fifo => fs.promises.open(fifo, 'r').then(handle => handle.close(), () => undefined).finally(() => released++)));
			await new Promise(resolve => setTimeout(resolve, 1_000));
			assert.equal(fs.existsSync(done), false, 'the command printed 24 MB while 8 MB could be held');
		} finally {
			await release(stalls);
		}
		assert.equal(released, threads, 'every stalled thread was let go');
		const result = await running;
		assert.equal(fs.existsSync(done), true);
		assert.equal(result.stdout.buffer.totalBytes, 24_000_000);
		assert.equal(fs.statSync(result.stdout.logPath!).size, 24_000_000);
		assert.equal(result.stdout.logCut, false);
	});

	it('says why the log could not be written, and still returns all the output', async function () {
		const logDir = path.join(dir, 'logs');
		fs.mkdirSync(logDir);
		const undo = makeReadOnly(logDir);
		if (!undo) this.skip();
		try {
			const result = await run('seq 1 100000; echo oops >&2', { logDir });
			assert.deepEqual([result.end, result.exitCode, result.pipesHeld], ['exit', 0, false]);
			assert.match(result.stdout.logError ?? '', /^(EPERM|EACCES): .*\.stdout\.log'$/);
			assert.match(result.stderr.logError ?? '', /\.stderr\.log'$/);
			assert.deepEqual([result.stdout.logPath, result.stderr.logPath], [undefined, undefined]);
			assert.ok(result.stdout.buffer.toText().text.endsWith('99999\n100000\n'));
			assert.equal(result.stderr.buffer.toText().text, 'oops\n');
		} finally {
			undo();
		}
		assert.deepEqual(fs.readdirSync(logDir), []);
	});

	it('without /bin/bash, runs bash from the PATH, else /bin/sh, which may not know pipefail', () => {
		const noBash = path.join(dir, 'no-bash');
		const bin = path.join(dir, 'bin');
		fs.mkdirSync(bin);
		fs.writeFileSync(path.join(bin, 'bash'), '');
		assert.deepEqual(findPosixShell({ PATH: `${dir}${path.delimiter}${bin}` }, noBash), { file: path.join(bin, 'bash'), pipefail: true });
		const sh = findPosixShell({ PATH: dir }, noBash);
		assert.deepEqual(sh, { file: '/bin/sh', pipefail: false });
		// Without pipefail a pipeline's status is its last command's.
		const plain = posixInvocation(sh, 'false | echo piped');
		assert.equal(execFileSync(plain.file, plain.args, { encoding: 'utf8' }), 'piped\n');
		const strict = posixInvocation({ file: '/bin/bash', pipefail: true }, 'false | echo piped');
		assert.throws(() => execFileSync(strict.file, strict.args, { stdio: 'ignore' }), /Command failed/);
	});

	it('takes /bin/bash by default, before a bash on the PATH', function () {
		if (!fs.existsSync('/bin/bash')) this.skip();
		const bin = path.join(dir, 'bin');
		fs.mkdirSync(bin);
		fs.writeFileSync(path.join(bin, 'bash'), '');
		assert.deepEqual(findPosixShell({ PATH: bin }), { file: '/bin/bash', pipefail: true });
	});

	it('gives the first command of a new tool host a shell (the memo starts empty)', () => {
		const fresh = freshProcessModule();
		assert.deepEqual(fresh.shellInvocation('echo hi', 'linux'), posixInvocation(findPosixShell(process.env), 'echo hi'));
	});

	it('starts the shell with three pipes, in a session of its own except on Windows, where no console window opens', () => {
		const launch: Launch = { file: 'sh', args: [], env: { A: '1' }, windowsVerbatimArguments: true };
		const common = { cwd: dir, env: { A: '1' }, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, windowsVerbatimArguments: true };
		assert.deepEqual(spawnOptions(launch, dir, undefined, 'linux'), { ...common, detached: true });
		assert.deepEqual(spawnOptions(launch, dir, undefined, 'darwin'), { ...common, detached: true });
		assert.deepEqual(spawnOptions(launch, dir, undefined, 'win32'), { ...common, detached: false });
	});

	it('runs through the sandbox: its wrapper, its TMPDIR, its reading of the exit', async () => {
		const result = await run('echo "$WRAPPED $TMPDIR"; exit 3', { sandbox: fakeSandbox(false, { exitCode: 7 }), env: { TMPDIR: '/ours' } });
		assert.equal(result.stdout.buffer.toText().text, 'yes /sandbox-tmp\n', 'the sandbox\'s TMPDIR wins over the caller\'s');
		assert.equal(result.exitCode, 7);
		assert.equal((await run('exit 3', { sandbox: fakeSandbox(false) })).exitCode, 3);
	});

	it('in a sandbox whose processes end with it, waits for them before saying what is left running', async () => {
		// bwrap reports its exit while the PID namespace is still being torn down; this stand-in's
		// background job ends by itself shortly after the shell, as the namespace's processes would.
		const command = 'sleep 0.3 >/dev/null 2>&1 & exit 0';
		const sandboxed = await run(command, { sandbox: fakeSandbox(true), graceMs: 5_000 });
		assert.equal(sandboxed.leftRunning, false);
		assert.equal(groupAlive(sandboxed.pid!), false);
		const plain = await run(command, { sandbox: fakeSandbox(false), graceMs: 5_000 });
		assert.equal(plain.leftRunning, true, 'without the wait the job would be reported as left running');
	});

	it('takes the given /bin/bash when it exists, whatever the PATH holds', () => {
		const binBash = path.join(dir, 'bash');
		fs.writeFileSync(binBash, '');
		assert.deepEqual(findPosixShell({ PATH: '' }, binBash), { file: binBash, pipefail: true });
	});

	it('never takes an empty PATH entry for the current folder', () => {
		fs.writeFileSync(path.join(dir, 'pwsh.exe'), '');
		const cwd = process.cwd();
		process.chdir(dir);
		try {
			// A shell reads an empty entry as "here": a pwsh.exe dropped in the folder would run.
			assert.equal(findOnPath('pwsh.exe', { PATH: `${path.delimiter}/nowhere` }), undefined);
		} finally {
			process.chdir(cwd);
		}
	});

	it('stops reading the pipes a background process keeps open once the drain is over, and closes them', async () => {
		const result = await run('(while true; do echo tick; sleep 0.05; done) & echo started', { drainMs: 100, graceMs: 5_000 });
		try {
			assert.equal(result.pipesHeld, true);
			assert.ok(result.durationMs < 2_500, `returned after ${result.durationMs} ms: after the drain, not a grace period`);
			const seen = result.stdout.buffer.totalBytes;
			await new Promise(resolve => setTimeout(resolve, 400));
			assert.equal(result.stdout.buffer.totalBytes, seen, 'nothing more is read after the call returned');
			// Our end of the pipe is closed: the next `echo` meets SIGPIPE and the loop ends.
			assert.ok(await until(() => !groupAlive(result.pid!), 3_000), 'the writer still had a reader');
		} finally {
			signalGroup(result.pid!, 'SIGKILL');
		}
	});

	it('leaves no timer behind, after an exit or a spawn error (a timer would hold the call\'s buffers until it fired)', async () => {
		const timers = () => process.getActiveResourcesInfo().filter(kind => kind === 'Timeout').length;
		// Mocha starts this test's own timer once the test has returned its promise.
		await new Promise(resolve => setImmediate(resolve));
		const before = timers();
		await run('true', { timeoutMs: 60_000, drainMs: 10 });
		await run('true', { cwd: path.join(dir, 'gone'), timeoutMs: 60_000 }).catch(() => undefined);
		// The drain's own short timer may still be pending for a moment.
		await new Promise(resolve => setTimeout(resolve, 100));
		assert.equal(timers(), before);
	});

	it('cancels at once when the signal was aborted before the start, and leaves no listener on it', async () => {
		const aborted = AbortSignal.abort();
		const result = await run('sleep 1000', { signal: aborted, timeoutMs: 5_000 });
		assert.equal(result.end, 'cancelled');
		const controller = new AbortController();
		await run('true', { signal: controller.signal });
		assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
	});

	it('decides whether output is binary on its first 8 KB, however it arrives', async () => {
		// NUL bytes after a small first chunk, within the first 8 KB: binary.
		assert.equal((await run('printf text; sleep 0.2; head -c 100 /dev/zero')).stdout.binary, true);
		// 8 KB of text first, NUL bytes only after them: text, even when the 8 KB came in two chunks.
		assert.equal((await run('printf "%0100d" 0; sleep 0.2; printf "%08092d" 0; head -c 4000 /dev/zero')).stdout.binary, false);
	});

	it('names its spawn errors', async () => {
		const error = await run('true', { cwd: path.join(dir, 'gone') }).catch(caught => caught);
		assert.ok(error instanceof SpawnError);
		assert.equal(error.name, 'SpawnError');
		assert.equal(error.code, 'ENOENT');
	});

	it('names the command log folder without making it; the boundary builder makes it, parents included', async () => {
		const storage = path.join(dir, 'not', 'yet');
		assert.equal(commandLogDir(storage), path.join(storage, 'commands'));
		assert.equal(fs.existsSync(storage), false);
		const boundary = await workspaceBoundary({ roots: [{ name: 'ws', path: dir }], settings: defaultSettings(), storageDir: storage });
		assert.ok(fs.statSync(path.join(storage, 'commands')).isDirectory());
		assert.equal((await boundary.resolve(path.join(storage, 'commands', 'x.stdout.log'), 'read')).absolute, path.join(storage, 'commands', 'x.stdout.log'));
		await assert.rejects(boundary.resolve(path.join(storage, 'backups', 'x'), 'read'));
	});

	it('prunes a tool host\'s logs on its first command and then every 25th', async () => {
		const logs = new CommandLogs(dir);
		const write = (count: number) => {
			for (let i = 0; i < count; i++) fs.writeFileSync(path.join(dir, `${fs.readdirSync(dir).length}-${i}.log`), 'x');
		};
		write(401);
		await logs.beforeCommand();
		assert.equal(fs.readdirSync(dir).length, 400);
		for (let command = 1; command < 25; command++) {
			write(1);
			await logs.beforeCommand();
		}
		assert.equal(fs.readdirSync(dir).length, 424);
		write(1);
		await logs.beforeCommand();
		assert.equal(fs.readdirSync(dir).length, 400);
		write(1);
		await new CommandLogs(dir).beforeCommand();
		assert.equal(fs.readdirSync(dir).length, 400, 'another tool host counts from its own first command');
	});

	it('prunes only .log files, newest kept, names breaking ties', async () => {
		for (const name of ['a.log', 'b.log', 'c.log', 'd.log', 'e.log', 'keep.txt']) {
			fs.writeFileSync(path.join(dir, name), 'x');
			fs.utimesSync(path.join(dir, name), 1000, 1000);
		}
		assert.equal(await pruneLogs(dir, 1), 4);
		assert.deepEqual(fs.readdirSync(dir).sort(), ['e.log', 'keep.txt']);
		assert.equal(await pruneLogs(path.join(dir, 'missing'), 1), 0);
		// By time first: the newest is kept though its name sorts first.
		fs.writeFileSync(path.join(dir, 'a-new.log'), 'x');
		fs.utimesSync(path.join(dir, 'a-new.log'), 2000, 2000);
		assert.equal(await pruneLogs(dir, 1), 1);
		assert.deepEqual(fs.readdirSync(dir).sort(), ['a-new.log', 'keep.txt']);
		// A log that cannot be stat'ed (here a dangling link) counts as the oldest, whatever its name.
		fs.symlinkSync(path.join(dir, 'missing'), path.join(dir, 'z-unreadable.log'));
		assert.equal(await pruneLogs(dir, 1), 1);
		assert.deepEqual(fs.readdirSync(dir).sort(), ['a-new.log', 'keep.txt']);
	});
});
