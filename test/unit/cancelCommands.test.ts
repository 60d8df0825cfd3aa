import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { makeHarness, makeTree } from './helpers';

const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/**
 * A cancelled command's result comes once the command's processes are gone, and says what it
 * printed. Before, the registry raced the run against the cancel: the result said "cancelled" at
 * once while a command that ignored SIGTERM ran on (until SIGKILL, 2 s later), still writing.
 */
describe('cancelling a command', function () {
	this.timeout(20_000);
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => {
		tree = makeTree({});
	});
	afterEach(() => tree.cleanup());

	/**
	 * A command that says it started, ignores SIGTERM and appends a line to `ticks` every 50 ms: it
	 * is gone when `ticks` stops growing (its PIDs, in the sandbox's PID namespace, cannot be looked up).
	 */
	const STUBBORN = 'echo started; trap "" TERM; while true; do echo tick >> ticks; sleep 0.05; done';

	async function cancelAfter(ms: number, tool: string, input: object) {
		const controller = new AbortController();
		const harness = makeHarness(tree.root);
		setTimeout(() => controller.abort(), ms);
		return harness.invoke(tool, input, { signal: controller.signal });
	}

	it('run_command: the result waits until every process is stopped, then says cancelled, with the output so far', async () => {
		const result = await cancelAfter(400, 'run_command', { command: STUBBORN });
		assert.equal(result.error?.code, 'cancelled');
		const text = (result.content[0] as { text: string }).text;
		assert.match(text, /^Cancelled after \d+(\.\d+)? s: the command and every process it started were stopped\. Output so far is below\./);
		assert.match(text, /started/);
		const ticks = fs.readFileSync(tree.file('ticks'), 'utf8');
		await pause(400);
		assert.equal(fs.readFileSync(tree.file('ticks'), 'utf8'), ticks, 'nothing is written after the result');
	});

	it('exec_command: a session started by a cancelled call is gone when the result comes', async () => {
		const result = await cancelAfter(400, 'exec_command', { command: STUBBORN, tty: false, yieldMs: 10_000 });
		assert.equal(result.error?.code, 'cancelled');
		const ticks = fs.readFileSync(tree.file('ticks'), 'utf8');
		await pause(400);
		assert.equal(fs.readFileSync(tree.file('ticks'), 'utf8'), ticks);
	});
});
