import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { livingMembers, signalGroup } from '../../src/core/commands/process';
import { resultText } from '../../src/core/results/result';
import { sandboxAvailability } from '../../src/core/sandbox/runtime';
import { makeHarness, makeTree, needsSandbox, stopProcessesIn, withDeadline } from './helpers';

/**
 * A cancel that arrives while run_command runs: the result must come once what ran is over. Raced
 * against the signal, the result said "cancelled" at once while a command that ignores SIGTERM
 * went on writing files for the whole grace period (and, in the sandbox, until bwrap went).
 */

const DEADLINE_MS = 10_000;

async function until(check: () => boolean, ms: number): Promise<boolean> {
	const deadline = Date.now() + ms;
	while (!check() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20));
	return check();
}

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

		it('disposing of the tool host stops a run_command still running, and its result says it was killed', async () => {
			const h = harness();
			const running = h.invoke('run_command', { command: STUBBORN, timeoutMs: 60_000 });
			const ticks = tree.file('ticks');
			assert.ok(await until(() => sizeOf(ticks) > 0, 5_000), 'the command never started');
			if (!sandboxed) groups.push(Number(fs.readFileSync(tree.file('pid'), 'utf8')));
			await withDeadline((h.registry as any).env.state.sessions.dispose(), DEADLINE_MS, 'dispose did not return');
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
				await withDeadline((h.registry as any).env.state.sessions.dispose(), DEADLINE_MS, 'dispose did not return');
			}
		});
	});
}

describe('a cancel while write_stdin waits for output', function () {
	this.timeout(DEADLINE_MS + 5_000);
	let tree: ReturnType<typeof makeTree>;
	let h: ReturnType<typeof makeHarness>;
	beforeEach(() => {
		tree = makeTree();
		h = makeHarness(tree.root, { settings: { sandbox: { mode: 'off' } } });
	});
	afterEach(async () => {
		await withDeadline((h.registry as any).env.state.sessions.dispose(), DEADLINE_MS, 'dispose did not return');
		stopProcessesIn(tree.root);
		tree.cleanup();
	});

	it('the keys were sent, so the result says so, and the output printed meanwhile is not lost', async () => {
		await h.text('exec_command', { command: 'bash --norc', tty: false, yieldMs: 0 });
		const controller = new AbortController();
		setTimeout(() => controller.abort(), 500);
		const result = await withDeadline(h.invoke('write_stdin', { sessionId: 1, chars: 'echo mark$((6*7))\n', yieldMs: 60_000 }, { signal: controller.signal }), DEADLINE_MS, 'write_stdin did not return');
		const later = await h.text('write_stdin', { sessionId: 1, yieldMs: 100 });
		assert.match(`${resultText(result)}\n${later}`, /mark42/, 'the output printed before the cancel was read and dropped');
		assert.equal(result.error, undefined, `the keys were sent, yet the result says: ${result.error?.message}`);
		assert.match(resultText(result), /sent echo mark\$\(\(6\*7\)\)\\n\. The wait for output was cancelled/);
	});

	it('cancelled before the keys are sent: nothing is sent, and the result says so', async () => {
		await h.text('exec_command', { command: 'bash --norc', tty: false, yieldMs: 0 });
		const result = await h.invoke('write_stdin', { sessionId: 1, chars: 'touch made\n' }, { signal: AbortSignal.abort() });
		assert.equal(result.error?.code, 'cancelled');
		await h.text('write_stdin', { sessionId: 1, chars: 'echo done\n', yieldMs: 500 });
		assert.equal(fs.existsSync(tree.file('made')), false);
	});
});
