import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Type } from '@sinclair/typebox';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/tool';
import { livingMembers, signalGroup } from '../../src/core/commands/process';
import { resultText } from '../../src/core/results/result';
import { sandboxAvailability } from '../../src/core/sandbox/runtime';
import { makeHarness, makeTree, needsSandbox, stopProcessesIn, testStorageDir, unsandboxedCommands, until, withDeadline } from './helpers';

/**
 * A cancel that arrives while run_command runs: the result must come once what ran is over. Raced
 * against the signal, the result said "cancelled" at once while a command that ignores SIGTERM
 * went on writing files for the whole grace period (and, in the sandbox, until bwrap went).
 */

const DEADLINE_MS = 10_000;

function sizeOf(file: string): number {
	return fs.existsSync(file) ? fs.statSync(file).size : 0;
}

/** A command that ignores SIGTERM, prints a line, and appends a line to `ticks` every 20 ms. */
const STUBBORN = `trap '' TERM; echo $$ > pid; echo started; while true; do echo tick >> ticks; sleep 0.02; done`;

for (const sandboxed of [false, true]) {
	describe(`a cancel while a command runs (${sandboxed ? 'in the sandbox' : 'unsandboxed'})`, function () {
		this.timeout(DEADLINE_MS + 5_000);
		let tree: ReturnType<typeof makeTree>;
		let groups: number[];

		before(async function () {
			if (process.platform !== 'linux') this.skip();
			if (sandboxed) needsSandbox(this, await sandboxAvailability());
		});
		beforeEach(() => {
			tree = makeTree();
			groups = [];
		});
		afterEach(() => {
			for (const pgid of groups) signalGroup(pgid, 'SIGKILL');
			stopProcessesIn(tree.root);
			tree.cleanup();
		});

		const harness = () => makeHarness(tree.root, { settings: { sandbox: { mode: sandboxed ? 'auto' : 'off' } } });

		it('the result comes once the command stopped writing: nothing it started changes a file after it', async () => {
			const controller = new AbortController();
			const running = harness().invoke('run_command', { command: STUBBORN, timeoutMs: 60_000 }, { signal: controller.signal });
			const ticks = tree.file('ticks');
			assert.ok(await until(() => sizeOf(ticks) > 0, 5_000), 'the command never started');
			if (!sandboxed) groups.push(Number(fs.readFileSync(tree.file('pid'), 'utf8')));
			controller.abort();
			const result = await withDeadline(running, DEADLINE_MS, 'run_command did not return');
			assert.equal(result.error?.code, 'cancelled', resultText(result));
			const atResult = sizeOf(ticks);
			await new Promise(resolve => setTimeout(resolve, 300));
			assert.equal(sizeOf(ticks), atResult, 'the command still wrote after its result said cancelled');
			for (const pgid of groups) assert.deepEqual(livingMembers(pgid), []);
			// What ran is told: for how long, that it may have changed files, where its output is.
			assert.match(result.error!.message, /^The command was cancelled after \d+\.\d s: it and every process it started were stopped\. What it did before that \(files it wrote\) stays\. Its output so far is in \S+\.stdout\.log\.$/);
		});

		it('at any moment before it ends, even while the sandbox is being set up: it is stopped there, and the result says cancelled', async () => {
			const h = harness();
			for (let delay = 0; delay <= 200; delay += 10) {
				fs.rmSync(tree.file('out.txt'), { force: true });
				const controller = new AbortController();
				setTimeout(() => controller.abort(), delay).unref();
				const result = await withDeadline(h.invoke('run_command', { command: 'echo one > out.txt; sleep 0.5; echo two >> out.txt' }, { signal: controller.signal }), DEADLINE_MS, `delay ${delay}: run_command did not return`);
				assert.equal(result.error?.code, 'cancelled', `delay ${delay}: ${resultText(result)}`);
				// It honours SIGTERM: a cancel that reached it stops it long before the second line.
				await new Promise(resolve => setTimeout(resolve, 100));
				const written = fs.existsSync(tree.file('out.txt')) ? fs.readFileSync(tree.file('out.txt'), 'utf8') : '';
				assert.notEqual(written, 'one\ntwo\n', `delay ${delay}: the cancel was lost, and the command ran to its end`);
			}
		});

		it('a cancel after the shell exited, while its output drains: the result is its real exit', async () => {
			const controller = new AbortController();
			// The background sleep holds the output open, so the call waits out the drain after the exit.
			const running = harness().invoke('run_command', { command: 'sleep 3 & echo $! > bg; echo done; exit 3' }, { signal: controller.signal });
			assert.ok(await until(() => fs.existsSync(tree.file('bg')), 5_000), 'the command never started');
			await new Promise(resolve => setTimeout(resolve, 60));
			controller.abort();
			const result = await withDeadline(running, DEADLINE_MS, 'run_command did not return');
			assert.equal(result.error, undefined, `the command had exited with 3, yet the result says: ${result.error?.message}`);
			assert.match(resultText(result), /^Exit code 3 after/);
		});

		it('disposing of the tool host stops a run_command still running, and its result says it was killed', async () => {
			const h = harness();
			const running = h.invoke('run_command', { command: STUBBORN, timeoutMs: 60_000 });
			const ticks = tree.file('ticks');
			assert.ok(await until(() => sizeOf(ticks) > 0, 5_000), 'the command never started');
			if (!sandboxed) groups.push(Number(fs.readFileSync(tree.file('pid'), 'utf8')));
			await withDeadline(h.stopSessions(), DEADLINE_MS, 'dispose did not return');
			const atDispose = sizeOf(ticks);
			await new Promise(resolve => setTimeout(resolve, 300));
			assert.equal(sizeOf(ticks), atDispose, 'the command still ran after the host was disposed of');
			const result = await withDeadline(running, DEADLINE_MS, 'run_command did not return');
			assert.match(resultText(result), /^Killed by SIG(TERM|KILL) after/);
			for (const pgid of groups) assert.deepEqual(livingMembers(pgid), []);
		});

		it('exec_command: the result comes once the session stopped writing', async () => {
			const h = harness();
			const controller = new AbortController();
			const running = h.invoke('exec_command', { command: STUBBORN.replace("trap '' TERM", "trap '' TERM HUP"), yieldMs: 60_000 }, { signal: controller.signal });
			const ticks = tree.file('ticks');
			try {
				assert.ok(await until(() => sizeOf(ticks) > 0, 5_000), 'the session never started');
				controller.abort();
				const result = await withDeadline(running, DEADLINE_MS, 'exec_command did not return');
				assert.equal(result.error?.code, 'cancelled', resultText(result));
				const atResult = sizeOf(ticks);
				await new Promise(resolve => setTimeout(resolve, 300));
				assert.equal(sizeOf(ticks), atResult, 'the session still wrote after its result said cancelled');
			} finally {
				await withDeadline(h.stopSessions(), DEADLINE_MS, 'dispose did not return');
			}
		});
	});
}

describe('a cancel while write_stdin waits for output', function () {
	this.timeout(DEADLINE_MS + 5_000);
	const suite = unsandboxedCommands(DEADLINE_MS);

	it('the keys were sent, so the result says so, and the output printed meanwhile is not lost', async () => {
		await suite.h.text('exec_command', { command: 'bash --norc', tty: false, yieldMs: 0 });
		const controller = new AbortController();
		setTimeout(() => controller.abort(), 500);
		const result = await withDeadline(suite.h.invoke('write_stdin', { sessionId: 1, chars: 'echo mark$((6*7))\n', yieldMs: 60_000 }, { signal: controller.signal }), DEADLINE_MS, 'write_stdin did not return');
		const later = await suite.h.text('write_stdin', { sessionId: 1, yieldMs: 100 });
		assert.match(`${resultText(result)}\n${later}`, /mark42/, 'the output printed before the cancel was read and dropped');
		assert.equal(result.error, undefined, `the keys were sent, yet the result says: ${result.error?.message}`);
		assert.match(resultText(result), /sent echo mark\$\(\(6\*7\)\)\\n\. The wait for output was cancelled/);
	});

	it('cancelled before the keys are sent: nothing is sent, and the result says so', async () => {
		await suite.h.text('exec_command', { command: 'bash --norc', tty: false, yieldMs: 0 });
		const result = await suite.h.invoke('write_stdin', { sessionId: 1, chars: 'touch made\n' }, { signal: AbortSignal.abort() });
		assert.equal(result.error?.code, 'cancelled');
		await suite.h.text('write_stdin', { sessionId: 1, chars: 'echo done\n', yieldMs: 500 });
		assert.equal(fs.existsSync(suite.tree.file('made')), false);
	});
});

describe('a commit that settles on cancel but never stops', () => {
	it('is reported cancelled, and still stopping, once its limit after the cancel has passed', async () => {
		const tree = makeTree();
		try {
			const controller = new AbortController();
			let abortedAt = 0;
			// What a command stuck in the kernel looks like to the registry: its commit never settles.
			const stuck = defineTool({
				name: 'stuck', referenceName: 'tbStuck', displayName: 'Stuck', icon: 'x', tags: [], userDescription: 'test', modelDescription: 'test',
				group: 'commands', mutating: true, schema: Type.Object({}), describe: () => 'Stuck',
				run: async () => ({
					pending: true as const,
					request: { kind: 'call' as const, title: 'Get stuck', detail: '' },
					// The cancel comes once the commit runs (planning may take a while on a busy machine).
					commit: () => {
						abortedAt = Date.now();
						controller.abort();
						return new Promise<never>(() => undefined);
					},
					settlesOnCancel: true,
					settleLimitMs: 200,
				}),
			});
			const registry = new ToolRegistry([stuck], createNodeEnvironment({ roots: [tree.root], storageDir: testStorageDir(), settings: { approval: 'never' } }));
			const result = await withDeadline(registry.invoke('stuck', {}, { signal: controller.signal }), 5_000, 'the call hung with its commit');
			assert.equal(result.error?.code, 'cancelled');
			assert.equal(result.error?.message, 'stuck was cancelled, but had not finished stopping 0.2 s later: what it started may still be running or writing. Check before relying on the files it touches.');
			// Timers may fire a millisecond early.
			assert.ok(abortedAt > 0 && Date.now() - abortedAt >= 195, `reported ${Date.now() - abortedAt} ms after the cancel, before the limit had passed`);
		} finally {
			tree.cleanup();
		}
	});
});

describe('write_stdin after a Ctrl-D closed a session\'s stdin (pipes)', function () {
	this.timeout(DEADLINE_MS + 5_000);
	const suite = unsandboxedCommands(DEADLINE_MS);

	it('does not say "sent" for text that went nowhere, and says why', async () => {
		// The shell reads its commands from the pipe too: after the Ctrl-D nothing reads it any more.
		await suite.h.text('exec_command', { command: 'cat > got.txt; sleep 1000', tty: false, yieldMs: 0 });
		const first = await suite.h.text('write_stdin', { sessionId: 1, chars: 'one\n\u0004two\n', yieldMs: 200 });
		assert.match(first, /sent one\\n\\u0004two\\n\. Text typed after its input was closed \(by a Ctrl-D, "\\u0004", on pipes\) was not delivered; control keys still work\./);
		const second = await suite.h.text('write_stdin', { sessionId: 1, chars: 'three\n', yieldMs: 100 });
		assert.match(second, /was not delivered/);
		assert.equal(fs.readFileSync(suite.tree.file('got.txt'), 'utf8'), 'one\n');
	});

	it('text that reached the program is reported sent, with no such warning', async () => {
		await suite.h.text('exec_command', { command: 'cat > got.txt; sleep 1000', tty: false, yieldMs: 0 });
		const text = await suite.h.text('write_stdin', { sessionId: 1, chars: 'one\n\u0004', yieldMs: 200 });
		assert.doesNotMatch(text, /not delivered/);
		assert.equal(fs.readFileSync(suite.tree.file('got.txt'), 'utf8'), 'one\n');
	});
});
