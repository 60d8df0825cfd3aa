import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { ToolContext } from '../../src/core/context';
import { concurrencyGate, FILE_CONCURRENCY } from '../../src/core/files/inParallel';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { stagePatch } from '../../src/core/patch/apply';
import { parsePatch } from '../../src/core/patch/parse';
import { makeTree } from './helpers';

describe('staging reads a few files at a time', () => {
	it('a gate runs at most its limit of tasks at once, in the order they came, each settling as its task does', async () => {
		const gate = concurrencyGate(2);
		let running = 0;
		let most = 0;
		const started: number[] = [];
		const task = (index: number) => gate(async () => {
			started.push(index);
			running++;
			most = Math.max(most, running);
			await new Promise(resolve => setTimeout(resolve, 5));
			running--;
			if (index === 3) throw new Error('task 3 failed');
			return index * 10;
		});
		const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map(task));
		assert.equal(most, 2);
		assert.deepEqual(started, [0, 1, 2, 3, 4, 5]);
		assert.deepEqual(results.map(result => (result.status === 'fulfilled' ? result.value : (result.reason as Error).message)), [0, 10, 20, 'task 3 failed', 40, 50]);
	});

	it('a gate hands a finished task\'s place to the one waiting: a task that comes meanwhile waits its turn', async () => {
		const gate = concurrencyGate(1);
		let running = 0;
		let most = 0;
		const started: string[] = [];
		let firstWork: Promise<void> | undefined;
		const task = (name: string) => async () => {
			started.push(name);
			running++;
			most = Math.max(most, running);
			await new Promise(resolve => setTimeout(resolve, 5));
			running--;
		};
		const done = [gate(() => (firstWork = task('a')())), gate(task('b'))];
		// Someone else awaiting a's work starts a task once it ends: after the gate frees a's place,
		// before b (waiting since before) has taken it.
		await Promise.resolve();
		const late = firstWork!.then(() => gate(task('c')));
		await Promise.all([...done, late]);
		assert.equal(most, 1);
		assert.deepEqual(started, ['a', 'b', 'c']);
	});

	it('a patch of many files never holds more files open than the gate lets through', async () => {
		const count = FILE_CONCURRENCY * 3;
		const files: Record<string, string> = {};
		for (let index = 0; index < count; index++) files[`f${index}.txt`] = `line ${index}\n`;
		const tree = makeTree(files);
		const original = fs.promises.open;
		let open = 0;
		let most = 0;
		fs.promises.open = (async (...args: Parameters<typeof fs.promises.open>) => {
			const handle = await original(...args);
			open++;
			most = Math.max(most, open);
			const close = handle.close.bind(handle);
			handle.close = async () => {
				open--;
				return close();
			};
			return handle;
		}) as typeof fs.promises.open;
		try {
			const env = createNodeEnvironment({ roots: [tree.root], storageDir: tree.file('.storage') });
			const ctx: ToolContext = { tool: 'apply_patch', boundary: await env.boundary(), host: env.host, state: env.state, settings: env.settings(), signal: new AbortController().signal, note: () => undefined };
			const patch = ['*** Begin Patch', ...Object.keys(files).flatMap(name => [`*** Update File: ${name}`, '@@', `-${files[name].trimEnd()}`, '+changed']), '*** End Patch'].join('\n');
			const staged = await stagePatch(parsePatch(patch), ctx);
			assert.equal(staged.changes.length, count);
			assert.ok(most <= FILE_CONCURRENCY, `at most ${FILE_CONCURRENCY} files open at once, not ${most}`);
		} finally {
			fs.promises.open = original;
			tree.cleanup();
		}
	});

	for (const [ending, how] of [['fails on its first file', 'failed'], ['is cancelled', 'cancelled']] as const) {
		it(`a patch that ${ending} reads no more of its files once staging is over`, async () => {
			const count = FILE_CONCURRENCY * 4;
			const files: Record<string, string> = {};
			for (let index = 0; index < count; index++) files[`f${index}.txt`] = `line ${index}\n`;
			const tree = makeTree(files);
			const original = fs.promises.open;
			let opened = 0;
			const controller = new AbortController();
			fs.promises.open = (async (...args: Parameters<typeof fs.promises.open>) => {
				opened++;
				// Cancelled while the first files are read.
				if (how === 'cancelled') controller.abort();
				return original(...args);
			}) as typeof fs.promises.open;
			try {
				const env = createNodeEnvironment({ roots: [tree.root], storageDir: tree.file('.storage') });
				const ctx: ToolContext = { tool: 'apply_patch', boundary: await env.boundary(), host: env.host, state: env.state, settings: env.settings(), signal: controller.signal, note: () => undefined };
				// The first file's removed line is not in it, so staging fails there.
				const removed = (name: string) => (how === 'failed' && name === 'f0.txt' ? 'not in the file' : files[name].trimEnd());
				const patch = ['*** Begin Patch', ...Object.keys(files).flatMap(name => [`*** Update File: ${name}`, '@@', `-${removed(name)}`, '+changed']), '*** End Patch'].join('\n');
				await assert.rejects(stagePatch(parsePatch(patch), ctx));
				const atEnd = opened;
				await new Promise(resolve => setTimeout(resolve, 100));
				assert.equal(opened, atEnd, 'no file opened after staging ended');
				assert.ok(opened <= FILE_CONCURRENCY * 2, `${opened} of ${count} files opened`);
			} finally {
				fs.promises.open = original;
				tree.cleanup();
			}
		});
	}
});
