import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAtomicTemp, writeFileAtomic } from '../../src/core/files/atomic';
import { makeHarness, makeTree } from './helpers';

const SIZE = 10 * 1024 * 1024;
const ROUNDS = 40;
const WRITER = path.join(__dirname, 'support', 'atomicWriter.js');

/** What a reader finds: wholly A, wholly B, or something else (a torn write). */
function stateOf(file: string): 'A' | 'B' | string {
	const bytes = fs.readFileSync(file);
	if (bytes.length !== SIZE) return `a file of ${bytes.length} bytes`;
	for (const letter of ['A', 'B']) {
		const code = letter.charCodeAt(0);
		if (bytes[0] === code && bytes[SIZE - 1] === code && bytes.every(byte => byte === code)) return letter;
	}
	return 'a mix of both contents';
}

function temps(folder: string): string[] {
	return fs.readdirSync(folder).filter(isAtomicTemp);
}

describe('crash safety and concurrency', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree(); });
	afterEach(() => tree.cleanup());

	it(`a writer killed (SIGKILL) at random moments leaves the file wholly old or wholly new, over ${ROUNDS} rounds of a 10 MB file`, async function () {
		this.timeout(300_000);
		const file = tree.file('big.bin');
		fs.writeFileSync(file, Buffer.alloc(SIZE, 'A'));
		let seed = 12345;
		const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
		const seen = { A: 0, B: 0, tempsAfterKill: 0 };
		for (let round = 0; round < ROUNDS; round++) {
			const child = spawn(process.execPath, [WRITER, file, String(SIZE)], { stdio: ['ignore', 'pipe', 'pipe'] });
			let stderr = '';
			child.stderr.on('data', chunk => { stderr += chunk; });
			// Wait for the writer to be inside its loop, then a random moment within about two writes.
			await new Promise<void>(resolve => child.stdout.once('data', () => resolve()));
			await new Promise(resolve => setTimeout(resolve, random(120)));
			const exited = new Promise(resolve => child.once('exit', resolve));
			child.kill('SIGKILL');
			await exited;
			assert.equal(stderr, '', `round ${round}: the writer failed on its own`);
			const state = stateOf(file);
			assert.ok(state === 'A' || state === 'B', `round ${round}: the file is ${state}`);
			seen[state as 'A' | 'B']++;
			if (temps(tree.root).length > 0) seen.tempsAfterKill++;
			// The next write to the file removes what the killed writer left.
			await writeFileAtomic(file, Buffer.alloc(SIZE, state === 'A' ? 'B' : 'A'));
			assert.deepEqual(temps(tree.root), [], `round ${round}: a temp survived the next write`);
		}
		// The kills landed both between and during writes (else the test proved little).
		assert.ok(seen.A > 0 && seen.B > 0, `states seen: ${JSON.stringify(seen)}`);
		assert.ok(seen.tempsAfterKill > 0, `no kill landed mid-write: ${JSON.stringify(seen)}`);
	});

	it('20 concurrent edit_file calls on one file through one registry all apply, none lost', async () => {
		const lines = Array.from({ length: 20 }, (_, i) => `line ${i}: old`);
		fs.writeFileSync(tree.file('shared.txt'), `${lines.join('\n')}\n`);
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		await h.text('read_file', { path: 'shared.txt' });
		const results = await Promise.all(lines.map((line, i) =>
			h.invoke('edit_file', { path: 'shared.txt', edits: [{ oldText: line, newText: `line ${i}: new` }] })));
		assert.deepEqual(results.map(result => result.error), Array(20).fill(undefined));
		assert.equal(fs.readFileSync(tree.file('shared.txt'), 'utf8'), `${lines.map((_, i) => `line ${i}: new`).join('\n')}\n`);
		assert.deepEqual(temps(tree.root), []);
	});

	it('20 concurrent edits of the same text: one applies, the others fail cleanly with a mismatch', async () => {
		fs.writeFileSync(tree.file('counter.txt'), 'counter = 0\n');
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
			h.invoke('edit_file', { path: 'counter.txt', edits: [{ oldText: 'counter = 0', newText: `counter = ${i + 1}` }] })));
		const applied = results.filter(result => !result.error);
		assert.equal(applied.length, 1);
		assert.ok(results.filter(result => result.error).every(result => result.error!.code === 'no_match'));
		assert.match(fs.readFileSync(tree.file('counter.txt'), 'utf8'), /^counter = \d+\n$/);
	});

	it('concurrent appends and rewrites of one file serialize: it ends as one rewrite plus the appends after it, whole lines', async () => {
		fs.writeFileSync(tree.file('mixed.txt'), 'start\n');
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		const calls = Array.from({ length: 20 }, (_, i) => (i % 2 === 0
			? h.invoke('write_file', { path: 'mixed.txt', content: `step ${i}\n`, mode: 'append' })
			: h.invoke('write_file', { path: 'mixed.txt', content: `rewrite ${i}\n` })));
		const results = await Promise.all(calls);
		assert.deepEqual(results.map(result => result.error), Array(20).fill(undefined));
		// Whatever order the lock gave them, the file is the last rewrite followed by the appends after it.
		const text = fs.readFileSync(tree.file('mixed.txt'), 'utf8');
		assert.match(text, /^rewrite \d+\n(step \d+\n)*$/);
		const steps = text.match(/step \d+/g) ?? [];
		assert.equal(new Set(steps).size, steps.length);
	});

	it('a change made on disk while the person was deciding is not overwritten', async () => {
		fs.writeFileSync(tree.file('race.txt'), 'original\n');
		const h = makeHarness(tree.root);
		const result = await h.invoke('edit_file', { path: 'race.txt', edits: [{ oldText: 'original', newText: 'tool' }] }, {
			decide: async () => {
				fs.writeFileSync(tree.file('race.txt'), 'someone else, meanwhile\n');
				return true;
			},
		});
		assert.equal(result.error?.code, 'stale_write');
		assert.match(result.error!.message, /changed since you were shown the change.*Nothing was written\. Read it again/);
		assert.equal(fs.readFileSync(tree.file('race.txt'), 'utf8'), 'someone else, meanwhile\n');
	});
});
