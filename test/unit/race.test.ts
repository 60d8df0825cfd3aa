import * as assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resultText, ToolResult } from '../../src/core/result';
import { Harness, makeHarness, makeTree } from './helpers';

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

/** Every file under a folder with its bytes, to compare before and after. */
function snapshot(folder: string): Record<string, string> {
	const files: Record<string, string> = {};
	for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
		const full = path.join(entry.parentPath ?? entry.path, entry.name);
		files[path.relative(folder, full)] = entry.isFile() ? fs.readFileSync(full, 'utf8') : entry.isDirectory() ? '<dir>' : '<other>';
	}
	return files;
}

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
		before = snapshot(outside);
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
		const succeeded = results.filter(result => !result.error).length;
		const after = snapshot(outside);
		const written = Object.keys(after).filter(name => after[name] !== before[name]);
		if (process.env.TOOLBELT_RACE_REPORT) {
			const codes: Record<string, number> = {};
			for (const result of results) if (result.error) codes[result.error.code] = (codes[result.error.code] ?? 0) + 1;
			console.log(`      ${JSON.stringify(written)} ${swapperArgs[0]}: ${results.length} calls, ${succeeded} succeeded, ${flips} flips; escapes: ${written.length} entries written outside, ${leaked.length} results with outside content; errors ${JSON.stringify(codes)}`);
			for (const result of results.filter(r => r.error).slice(0, 400)) if (!/outside_boundary|not_found/.test(result.error!.code)) console.log(result.error!.message.slice(0, 300));
		}
		assert.deepEqual(after, before, 'a call wrote into the outside folder');
		assert.equal(leaked.length, 0, `outside content came back: ${leaked.map(resultText).join('\n---\n')}`);
		assert.ok(flips > 1000, `the swapper flipped only ${flips} times: the race proved little`);
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
