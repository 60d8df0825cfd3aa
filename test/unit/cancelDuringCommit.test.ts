import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { FileChange } from '../../src/core/context';
import { applyChangesAtomically } from '../../src/core/files/atomic';
import { resultText } from '../../src/core/results/result';
import { makeHarness, makeTree } from './helpers';

/**
 * A cancel that arrives while a file change is being committed: the result must say what really
 * happened. The commit watches the signal itself (before each file and each rename, putting back
 * what it wrote), so the registry waits for it; racing it against the signal reported "cancelled"
 * while the renames went on and landed after the result.
 */

/** Every entry of a folder, recursively, hidden ones included (a temp is hidden): to find strays. */
function entriesUnder(folder: string): string[] {
	return fs.readdirSync(folder, { recursive: true }).map(String).sort();
}

const PATCH = [
	'--- a/a.txt', '+++ b/a.txt', '@@ -2,1 +2,1 @@', '-a2', '+A2',
	'--- a/sub/b.txt', '+++ b/sub/b.txt', '@@ -1,1 +1,2 @@', ' b1', '+B',
	'--- a/sub/c.txt', '+++ b/sub/c.txt', '@@ -2,1 +2,1 @@', '-c2', '\\ No newline at end of file', '+C2', '\\ No newline at end of file',
].join('\n');
const BEFORE = ['a1\na2\na3\n', 'b1\r\nb2\r\n', 'c1\nc2'];
const AFTER = ['a1\nA2\na3\n', 'b1\r\nB\r\nb2\r\n', 'c1\nC2'];
const ENTRIES = ['a.txt', 'sub', 'sub/b.txt', 'sub/c.txt'];

describe('a cancel during a file change\'s commit', () => {
	let tree: ReturnType<typeof makeTree> | undefined;
	afterEach(() => {
		tree?.cleanup();
		tree = undefined;
	});

	it('at any moment after approval: the files are all changed exactly when the result says applied, and no temp is left when it comes', async () => {
		const outcomes = new Set<string>();
		for (let delay = 0; delay < 12; delay++) {
			tree = makeTree({ 'a.txt': BEFORE[0], 'sub/b.txt': BEFORE[1], 'sub/c.txt': BEFORE[2] });
			const controller = new AbortController();
			const result = await makeHarness(tree.root).invoke('apply_patch', { patch: PATCH }, {
				signal: controller.signal,
				decide: async () => {
					// The abort lands somewhere in the commit that follows the approval.
					setTimeout(() => controller.abort(), delay).unref();
					return true;
				},
			});
			const state = ['a.txt', 'sub/b.txt', 'sub/c.txt'].map(name => fs.readFileSync(tree!.file(name), 'utf8'));
			assert.deepEqual(state, result.error ? BEFORE : AFTER, `delay ${delay}: the result says ${result.error ? `"${result.error.message}"` : 'applied'}`);
			assert.deepEqual(entriesUnder(tree.root), ENTRIES, `delay ${delay}`);
			outcomes.add(result.error ? 'cancelled' : 'applied');
			tree.cleanup();
			tree = undefined;
		}
		// A delay of 0 cancels before the commit starts: at least that one must be refused.
		assert.ok(outcomes.has('cancelled'), 'no cancel was seen in time');
	});

	it('once the files are written: the result says the patch was applied, and the new versions are recorded', async () => {
		tree = makeTree({ 'a.txt': 'a1\na2\n', 'b.txt': 'b1\r\nb2\r\n' });
		const controller = new AbortController();
		const harness = makeHarness(tree.root, {
			// The person's cancel arrives the moment the host has written every file.
			applyChanges: async (changes: readonly FileChange[], signal: AbortSignal, boundary, checked) => {
				const written = await applyChangesAtomically(changes, signal, { boundary, ...checked });
				controller.abort();
				return written;
			},
		});
		const patch = ['--- a/a.txt', '+++ b/a.txt', '@@ -2,1 +2,1 @@', '-a2', '+A2', '--- a/b.txt', '+++ b/b.txt', '@@ -1,1 +1,1 @@', '-b1', '+B1'].join('\n');
		const result = await harness.invoke('apply_patch', { patch }, { signal: controller.signal });
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'a1\nA2\n');
		assert.equal(fs.readFileSync(tree.file('b.txt'), 'utf8'), 'B1\r\nb2\r\n');
		assert.equal(result.error, undefined, `the files changed, yet the result says: ${result.error?.message}`);
		assert.match(resultText(result), /^Applied the patch: 2 files changed, \+2 −2\./);
		// The next edit of a.txt is not refused as stale: the commit recorded the version it wrote.
		assert.equal(await harness.text('apply_patch', { patch: ['--- a/a.txt', '+++ b/a.txt', '@@ -1,1 +1,1 @@', '-a1', '+A1'].join('\n') }), 'Applied the patch: 1 file changed, +1 −1.\nM a.txt (+1 −1)');
	});

	it('while the language servers are awaited after the write: the change is reported applied, without their problems', async () => {
		tree = makeTree({ 'a.txt': 'a1\na2\n' });
		const controller = new AbortController();
		let polls = 0;
		const harness = makeHarness(tree.root, {
			diagnostics: async () => {
				// The first look is the snapshot before the change; the cancel comes with the first poll after it.
				if (polls++ === 1) controller.abort();
				return [];
			},
		});
		const result = await harness.invoke('apply_patch', { patch: ['--- a/a.txt', '+++ b/a.txt', '@@ -2,1 +2,1 @@', '-a2', '+A2'].join('\n') }, { signal: controller.signal });
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'a1\nA2\n');
		assert.ok(polls >= 2, 'the commit waited for the language servers');
		assert.equal(result.error, undefined, `the file changed, yet the result says: ${result.error?.message}`);
	});

	it('a cancel while the person is asked still refuses the change at once, with nothing written', async () => {
		tree = makeTree({ 'a.txt': BEFORE[0], 'sub/b.txt': BEFORE[1], 'sub/c.txt': BEFORE[2] });
		const controller = new AbortController();
		const result = await makeHarness(tree.root).invoke('apply_patch', { patch: PATCH }, {
			signal: controller.signal,
			// The person never answers; the cancel must not wait for them.
			decide: () => {
				controller.abort();
				return new Promise<boolean>(() => undefined);
			},
		});
		assert.equal(result.error?.code, 'cancelled');
		assert.deepEqual(['a.txt', 'sub/b.txt', 'sub/c.txt'].map(name => fs.readFileSync(tree!.file(name), 'utf8')), BEFORE);
		assert.deepEqual(entriesUnder(tree.root), ENTRIES);
	});
});
