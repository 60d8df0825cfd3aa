import * as assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resultText, ToolResult } from '../../src/core/results/result';
import { Harness, makeHarness, makeTree, snapshotTree } from './helpers';

const SWAPPER = path.join(__dirname, 'support', 'swapper.js');
/** Each kind of call runs at least this many times while the folder flips… */
const ROUNDS = 60;
/** …and more until this long has passed (fast failures must not end the race before it starts). */
const MIN_RACE_MS = 2000;
/** Rounds whose calls are in flight at once. */
const ROUNDS_AT_ONCE = 2;
/** The swapper stops by itself after this, even if the test never gets to stop it. */
const SWAPPER_SECONDS = 30;
const SECRET = 'OUTSIDE-SECRET';
const MIN_FLIPS = 200;

/** Starts the swapper and resolves once it is flipping; `stop` ends it and gives the flip count. */
async function startSwapper(args: string[]): Promise<{ stop(): Promise<number> }> {
	const child: ChildProcess = spawn(process.execPath, [SWAPPER, ...args, String(SWAPPER_SECONDS)], { stdio: ['ignore', 'pipe', 'pipe'] });
	let out = '';
	let err = '';
	child.stdout!.on('data', chunk => { out += chunk; });
	child.stderr!.on('data', chunk => { err += chunk; });
	const exited = new Promise<void>(resolve => child.once('exit', () => resolve()));
	await new Promise<void>((resolve, reject) => {
		child.stdout!.once('data', () => resolve());
		child.once('exit', () => reject(new Error(`the swapper exited early: ${err}`)));
	});
	return {
		stop: async () => {
			child.kill('SIGTERM');
			const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
			await exited;
			clearTimeout(killer);
			assert.equal(err, '', 'the swapper failed');
			return Number(/flips (\d+)/.exec(out)?.[1] ?? 0);
		},
	};
}

/** Runs rounds of calls, `ROUNDS_AT_ONCE` rounds at a time, for at least ROUNDS rounds and MIN_RACE_MS. */
async function runRounds(h: Harness): Promise<ToolResult[]> {
	const results: ToolResult[] = [];
	const started = Date.now();
	for (let round = 0; round < ROUNDS || Date.now() - started < MIN_RACE_MS; round += ROUNDS_AT_ONCE) {
		const calls = Array.from({ length: ROUNDS_AT_ONCE }, (_, i) => roundOfCalls(h, round + i)).flat();
		results.push(...await Promise.all(calls.map(call => call())));
	}
	return results;
}

/** One of each kind of call, on paths below the swapped folder. */
function roundOfCalls(h: Harness, i: number): (() => Promise<ToolResult>)[] {
	return [
		() => h.invoke('write_file', { path: `sub/w-${i}.txt`, content: `written ${i}\n` }),
		() => h.invoke('apply_patch', { patch: `*** Begin Patch\n*** Add File: sub/deep-${i}/p.txt\n+added ${i}\n*** End Patch\n` }),
		() => h.invoke('edit_file', { path: 'sub/e.txt', edits: [{ oldText: 'edit me', newText: 'edit me!' }] }),
		() => h.invoke('read_file', { path: 'sub/r.txt' }),
		() => h.invoke('read_file', { path: 'sub/r.txt', offset: -1 }),
	];
}

describe('a folder on the path swapped with a link to an outside folder while calls run', function () {
	this.timeout(120_000);
	let tree: ReturnType<typeof makeTree>;
	let outside: string;
	let before: Record<string, string>;
	beforeEach(function () {
		if (process.platform === 'win32') this.skip();
		tree = makeTree();
		outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-outside-')));
		fs.writeFileSync(path.join(outside, 'r.txt'), `${SECRET} read\n`);
		fs.writeFileSync(path.join(outside, 'e.txt'), `edit me ${SECRET}\n`);
		before = snapshotTree(outside);
	});
	afterEach(() => {
		tree?.cleanup();
		if (outside) fs.rmSync(outside, { recursive: true, force: true });
	});

	async function race(swapperArgs: string[]): Promise<void> {
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		const swapper = await startSwapper(swapperArgs);
		let results: ToolResult[];
		let flips: number;
		try {
			results = await runRounds(h);
		} finally {
			flips = await swapper.stop();
		}
		const leaked = results.filter(result => resultText(result).includes(SECRET) || result.error?.message.includes(SECRET));
		const after = snapshotTree(outside);
		if (process.env.TOOLBELT_RACE_REPORT) {
			const written = Object.keys(after).filter(name => after[name] !== before[name]);
			const succeeded = results.filter(result => !result.error).length;
			console.log(`      ${swapperArgs[0]}: ${results.length} calls (${succeeded} succeeded), ${flips} flips; ${written.length} entries written outside, ${leaked.length} results with outside content`);
		}
		assert.deepEqual(after, before, 'a call wrote into the outside folder');
		assert.equal(leaked.length, 0, `outside content came back: ${leaked.map(resultText).join('\n---\n')}`);
		// A floor, not a rate: the swapper must really have been flipping while the calls ran.
		assert.ok(flips >= MIN_FLIPS, `the swapper flipped only ${flips} times: the race proved little`);
	}

	it('a real folder and a symlink taking turns under the same name: nothing written outside, nothing read from there', async () => {
		fs.mkdirSync(tree.file('sub'));
		fs.writeFileSync(tree.file('sub/r.txt'), 'inside read\n');
		fs.writeFileSync(tree.file('sub/e.txt'), 'edit me inside\n');
		await race(['replace', tree.file('sub'), outside]);
	});

	it('a symlink flipping between an inside folder and an outside one: nothing written outside, nothing read from there', async () => {
		fs.mkdirSync(tree.file('real'));
		fs.writeFileSync(tree.file('real/r.txt'), 'inside read\n');
		fs.writeFileSync(tree.file('real/e.txt'), 'edit me inside\n');
		await race(['retarget', tree.file('sub'), tree.file('real'), outside]);
	});
});
