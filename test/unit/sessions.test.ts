import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { cleanTerminalText, stripAnsi } from '../../src/core/commands/ansi';
import { groupAlive, procStat } from '../../src/core/commands/process';
import { Session, SessionManager } from '../../src/core/commands/sessions';
import { resultText, ToolResult } from '../../src/core/results/result';
import { Harness, makeHarness, makeTree } from './helpers';

const hasPython = (() => {
	try {
		execFileSync('python3', ['-c', 'pass'], { stdio: 'ignore' });
		return true;
	} catch {
		return false;
	}
})();

function running(pid: number): boolean {
	const stat = procStat(pid);
	if (process.platform !== 'linux') {
		try {
			process.kill(pid, 0);
			return true;
		} catch {
			return false;
		}
	}
	return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Reads a session until its output matches, or fails after a few seconds. */
async function readUntil(session: Session, pattern: RegExp, ms = 5000): Promise<string> {
	let seen = '';
	const deadline = Date.now() + ms;
	while (Date.now() < deadline) {
		seen += session.read().text;
		if (pattern.test(seen)) return seen;
		await session.waitForExit(50);
	}
	seen += session.read().text;
	assert.match(seen, pattern);
	return seen;
}

describe('terminal text cleaning', () => {
	it('strips colours, cursor moves, titles and keeps the text', () => {
		assert.equal(stripAnsi('\x1b[1;31mred\x1b[0m \x1b[2K\x1b[1Gok \x1b]0;title\x07done'), 'red ok done');
		assert.equal(cleanTerminalText('a\r\nb\r\n'), 'a\nb\n');
	});

	it('shows what a terminal would show for carriage-return overwrites and backspaces', () => {
		assert.equal(cleanTerminalText('10%\r50%\r100%\n'), '100%\n');
		assert.equal(cleanTerminalText('long text\rab\n'), 'abng text\n');
		assert.equal(cleanTerminalText('abc\b\bX\n'), 'aX\n');
		assert.equal(cleanTerminalText('bell\x07 and nul\x00\n'), 'bell and nul\n');
	});
});

describe('SessionManager', function () {
	this.timeout(20_000);
	let manager: SessionManager;
	let tree: ReturnType<typeof makeTree>;
	const start = (command: string, tty = true, maxOutputBytes = 64 * 1024) =>
		manager.start({ command, cwd: tree.root, tty, maxOutputBytes }).session;

	beforeEach(() => {
		tree = makeTree({ 'a.txt': 'a\n' });
		manager = new SessionManager({ graceMs: 300 });
	});
	afterEach(async () => {
		await manager.dispose();
		tree.cleanup();
	});

	it('gives programs a real TTY when tty is true, and pipes otherwise', async () => {
		const tty = start('if [ -t 0 ] && [ -t 1 ]; then echo TTY; else echo NOTTY; fi');
		const pipes = start('if [ -t 0 ] || [ -t 1 ]; then echo TTY; else echo NOTTY; fi', false);
		await Promise.all([tty.exited, pipes.exited]);
		assert.equal(tty.read().text.trim(), 'TTY');
		assert.equal(pipes.read().text.trim(), 'NOTTY');
		assert.deepEqual(tty.exit, { exitCode: 0, signal: null });
	});

	it('shows a `read -p` prompt and takes the answer', async () => {
		const session = start('read -p "name? " n; echo "hi $n"');
		await readUntil(session, /name\? $/);
		session.write('bob\n');
		await session.waitForExit(5000);
		assert.match(session.read().text, /bob\nhi bob\n/);
		assert.equal(session.exit?.exitCode, 0);
	});

	it('drives an interactive bash: prompt, commands, exit', async () => {
		const session = start('bash --norc --noprofile -i');
		await readUntil(session, /[$#] $/);
		session.write("PS1='PROMPT> '\n");
		await readUntil(session, /PROMPT> $/);
		session.write('echo $((6*7))\n');
		const out = await readUntil(session, /42\r?\n.*PROMPT> $/s);
		assert.match(out, /echo \$\(\(6\*7\)\)/, 'the terminal echoes what was typed');
		session.write('exit 3\n');
		await session.waitForExit(5000);
		assert.equal(session.exit?.exitCode, 3);
	});

	(hasPython ? it : it.skip)('drives python3: prompt, a result, control-C interrupts without ending the session', async () => {
		const session = start('python3 -q -i');
		await readUntil(session, />>> $/);
		session.write('6*7\n');
		await readUntil(session, /42\n>>> $/);
		session.write('import time; time.sleep(1000)\n');
		await session.waitForExit(200);
		session.write('\u0003');
		await readUntil(session, /KeyboardInterrupt\n>>> $/);
		assert.equal(session.alive, true);
		session.write('\u0004');
		await session.waitForExit(5000);
		assert.equal(session.alive, false);
	});

	it('emulates control characters on pipes: ^C interrupts, ^D ends the input', async () => {
		const cat = start('cat', false);
		cat.write('one\r\ntwo\n');
		await readUntil(cat, /one\ntwo\n/);
		cat.write('\u0004');
		await cat.waitForExit(5000);
		assert.equal(cat.exit?.exitCode, 0);
		const sleeper = start('sleep 1000', false);
		sleeper.write('\u0003');
		await sleeper.waitForExit(5000);
		assert.equal(sleeper.exit?.signal, 'SIGINT');
	});

	it('strips escape sequences for the model but hands them raw to mirrors', async () => {
		const session = start('printf "\\033[31mred\\033[0m plain\\n"');
		const raw: string[] = [];
		session.onData(text => raw.push(text));
		await session.exited;
		assert.equal(session.read().text.trim(), 'red plain');
		assert.match(raw.join('') + session.transcript, /\x1b\[31m/);
	});

	it('bounds the unread output and says what was dropped', async () => {
		const session = start('seq 1 200000', false, 4096);
		await session.exited;
		const { text, info } = session.read();
		assert.equal(info.truncated, true);
		assert.ok(Buffer.byteLength(text) < 4096 + 200);
		assert.match(text, /^1\n2\n/);
		assert.match(text, /200000\n$/);
		assert.match(text, /omitted/);
		assert.equal(session.read().text, '', 'a read drains the buffer');
	});

	it('kill stops the whole group, background children included', async () => {
		const session = start('sleep 1000 & echo $!; sleep 1000');
		const child = Number((await readUntil(session, /^\d+\s*$/m)).trim());
		await session.kill('killed');
		assert.equal(session.alive, false);
		assert.equal(session.stopReason, 'killed');
		assert.equal(running(child), false);
		assert.equal(groupAlive(session.pid), false);
	});

	it('when the program exits, what it left in the background is stopped', async () => {
		const session = start('sleep 1000 > /dev/null 2>&1 & echo $!', false);
		const child = Number((await readUntil(session, /^\d+\s*$/m)).trim());
		await session.exited;
		const deadline = Date.now() + 3000;
		while (running(child) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20));
		assert.equal(running(child), false);
	});

	it('keeps at most maxLive sessions, pruning the one idle longest', async () => {
		const small = new SessionManager({ maxLive: 2, graceMs: 200 });
		try {
			const first = small.start({ command: 'sleep 1000', cwd: tree.root, tty: false, maxOutputBytes: 1024 }).session;
			const second = small.start({ command: 'sleep 1000', cwd: tree.root, tty: false, maxOutputBytes: 1024 }).session;
			first.lastActivityAt = Date.now() + 1000; // the first was used more recently
			const third = small.start({ command: 'sleep 1000', cwd: tree.root, tty: false, maxOutputBytes: 1024 });
			assert.equal(third.pruned, second);
			await second.exited;
			assert.equal(second.stopReason, 'pruned');
			assert.deepEqual(small.live().map(s => s.id), [first.id, third.session.id]);
		} finally {
			await small.dispose();
		}
	});

	it('fires start and exit events, and dispose stops everything', async () => {
		const started: number[] = [];
		manager.onDidStart(session => started.push(session.id));
		const a = start('sleep 1000');
		const b = start('sleep 1000', false);
		const exits: number[] = [];
		a.onExit(() => exits.push(a.id));
		b.onExit(() => exits.push(b.id));
		assert.deepEqual(started, [a.id, b.id]);
		await manager.dispose();
		assert.deepEqual(exits.sort(), [a.id, b.id].sort());
		assert.equal(manager.live().length, 0);
		assert.equal(groupAlive(a.pid) || groupAlive(b.pid), false);
	});
});

describe('session tools', function () {
	this.timeout(30_000);
	let tree: ReturnType<typeof makeTree>;
	let h: Harness;
	const sessions = () => (h.registry as any).env.state.sessions as SessionManager;

	beforeEach(() => {
		tree = makeTree({ 'a.txt': 'a\n' });
		h = makeHarness(tree.root);
	});
	afterEach(async () => {
		await sessions().dispose();
		tree.cleanup();
	});

	const meta = (result: ToolResult) => result.metadata as unknown as { sessionId: number; alive: boolean };

	it('exec_command asks with the exact command and cwd, runs, and returns output, liveness and the id', async () => {
		const result = await h.invoke('exec_command', { command: 'echo ready; read x; echo "got $x"', yieldMs: 1500 });
		assert.equal(result.error, undefined);
		const request = h.asked[0];
		assert.ok(request.kind === 'command' && request.command === 'echo ready; read x; echo "got $x"' && request.cwd === tree.root);
		const text = resultText(result);
		assert.match(text, /^Session 1: `echo ready; read x; echo "got \$x"` in \. \(pty, pid \d+\)\.\nready\nStill running/);
		assert.deepEqual([meta(result).sessionId, meta(result).alive], [1, true]);

		const reply = await h.invoke('write_stdin', { sessionId: 1, chars: 'yes\n', yieldMs: 2000 });
		assert.match(resultText(reply), /got yes/);
		assert.equal(meta(reply).alive, false);
		assert.match(resultText(reply), /Session 1 exited with code 0/);
		assert.ok(h.asked[1].kind === 'command' && h.asked[1].command === 'yes\\n', 'the keys are shown with control characters visible');
	});

	it('returns as soon as the program exits rather than waiting for yieldMs', async () => {
		const result = await h.invoke('exec_command', { command: 'echo quick', yieldMs: 60_000 });
		assert.match(resultText(result), /quick\nSession 1 exited with code 0/);
	});

	it('write_stdin with empty chars only reads, without asking', async () => {
		await h.invoke('exec_command', { command: 'sleep 0.3; echo later; sleep 1000', yieldMs: 0 });
		const read = await h.invoke('write_stdin', { sessionId: 1, yieldMs: 1500 });
		assert.match(resultText(read), /later/);
		assert.equal(h.asked.length, 1, 'only exec_command asked');
	});

	it('a preview (prepareInvocation) of a read neither waits nor drains the output', async () => {
		await h.invoke('exec_command', { command: 'echo first; sleep 1000', yieldMs: 0 });
		assert.equal(await h.registry.preview('write_stdin', { sessionId: 1, yieldMs: 60_000 }), undefined, 'a read needs no confirmation');
		assert.match(resultText(await h.invoke('write_stdin', { sessionId: 1, yieldMs: 300 })), /first/);
		const typed = await h.registry.preview('write_stdin', { sessionId: 1, chars: 'x\n' });
		assert.ok(typed?.kind === 'command' && typed.command === 'x\\n');
	});

	it('writing to a finished session is a clear, harmless message', async () => {
		await h.invoke('exec_command', { command: 'echo bye', yieldMs: 2000 });
		const result = await h.invoke('write_stdin', { sessionId: 1, chars: 'hello\n' });
		assert.equal(result.error, undefined);
		assert.match(resultText(result), /^Session 1 \(`echo bye`\) has already exited with code 0; the input was not sent\./);
	});

	it('an unknown session id names the live sessions', async () => {
		await h.invoke('exec_command', { command: 'sleep 1000', yieldMs: 0 });
		const error = await h.error('write_stdin', { sessionId: 42, chars: 'x' });
		assert.equal(error.code, 'unknown_session');
		assert.match(error.message, /There is no session 42\. Live sessions: 1 \(`sleep 1000`\)\./);
		assert.equal((await h.error('kill_session', { sessionId: 7 })).code, 'unknown_session');
		assert.equal((await h.error('write_stdin', { sessionId: 0 })).code, 'invalid_input');
	});

	it('list_sessions and kill_session', async () => {
		await h.invoke('exec_command', { command: 'sleep 1000', yieldMs: 0 });
		await h.invoke('exec_command', { command: 'echo done', yieldMs: 2000, tty: false });
		const list = resultText(await h.invoke('list_sessions', {}));
		assert.match(list, /^1 of at most 16 sessions running, 1 finished:/);
		assert.match(list, /- 1: `sleep 1000` in \. \(pty, pid \d+\) — running for/);
		assert.match(list, /- 2: `echo done` in \. \(pipes, pid \d+\) — exited with code 0/);
		const running = resultText(await h.invoke('list_sessions', { includeFinished: false }));
		assert.match(running, /^1 of at most 16 sessions running, 1 finished \(not listed\):\n- 1: `sleep 1000`/);
		assert.doesNotMatch(running, /echo done/);
		const killed = await h.invoke('kill_session', { sessionId: 1 });
		assert.match(resultText(killed), /was stopped with every process it started/);
		assert.equal(meta(killed).alive, false);
		assert.match(resultText(await h.invoke('kill_session', { sessionId: 1 })), /had already ended by SIG\w+ \(killed\); nothing to stop/);
	});

	it('the 17th session prunes the one idle longest and says so', async function () {
		for (let i = 0; i < 16; i++) await h.invoke('exec_command', { command: `sleep 1000 # ${i + 1}`, tty: false, yieldMs: 0 });
		// Session 1 was just used: session 2 is now the one idle longest.
		await h.invoke('write_stdin', { sessionId: 1, yieldMs: 0 });
		const result = await h.invoke('exec_command', { command: 'sleep 1000 # 17', tty: false, yieldMs: 0 });
		assert.match(resultText(result), /Note: session 2 \(`sleep 1000 # 2`\) was stopped to stay within 16 live sessions/);
		await sessions().get(2)!.exited;
		assert.equal(sessions().live().length, 16);
	});

	it('declined: no session is started', async () => {
		const declining = makeHarness(tree.root, { approve: false });
		const error = await declining.error('exec_command', { command: `touch ${tree.file('made.txt')}` });
		assert.equal(error.code, 'declined');
		const manager = (declining.registry as any).env.state.sessions as SessionManager;
		assert.equal(manager.all().length, 0);
		assert.equal(fs.existsSync(tree.file('made.txt')), false);
	});

	it('cancelling exec_command stops the session it started', async () => {
		const controller = new AbortController();
		// Once it runs: starting takes a while in the sandbox (the first call probes for it).
		sessions().onDidStart(() => setTimeout(() => controller.abort(), 200));
		const result = await h.invoke('exec_command', { command: 'sleep 1000' }, { signal: controller.signal });
		assert.equal(result.error?.code, 'cancelled');
		const session = sessions().get(1)!;
		await session.exited;
		assert.equal(session.stopReason, 'cancelled');
	});

	it('refuses a cwd outside the workspace and bad yieldMs', async () => {
		assert.equal((await h.error('exec_command', { command: 'pwd', cwd: '/' })).code, 'outside_boundary');
		assert.match((await h.error('exec_command', { command: 'pwd', yieldMs: -1 })).message, /yieldMs: must be ≥ 0/);
		assert.match((await h.error('write_stdin', { sessionId: 1, yieldMs: 10_000_000 })).message, /yieldMs: must be ≤ 300000/);
	});

	it('exec_command honours maxOutputBytes: the output is cut to it with head and tail kept', async () => {
		const result = await h.invoke('exec_command', { command: 'seq 1 20000', tty: false, maxOutputBytes: 1024, yieldMs: 5000 });
		assert.equal(result.error, undefined);
		const text = resultText(result);
		assert.equal(result.metadata.truncated, true);
		assert.ok((result.metadata.bytesOmitted as number) > 100_000, `bytesOmitted ${result.metadata.bytesOmitted}`);
		assert.ok(Buffer.byteLength(text) < 2048, `result is ${Buffer.byteLength(text)} bytes`);
		assert.match(text, /\n1\n2\n/, 'the head is kept');
		assert.match(text, /19999\n20000\n/, 'the tail is kept');
		assert.doesNotMatch(text, /\n10000\n/, 'the middle is cut');
	});
});
