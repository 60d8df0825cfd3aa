import * as assert from 'node:assert/strict';
import type { ToolContext } from '../../src/core/context';
import { concurrencyGate, FILE_CONCURRENCY } from '../../src/core/files/inParallel';
import { ReadHandle, watchReadOpens } from '../../src/core/files/verifiedOpen';
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

	it('a gate whose tasks all finished gives their places back: later tasks run at once, up to its limit', async () => {
		const gate = concurrencyGate(2);
		let running = 0;
		let most = 0;
		const task = () => gate(async () => {
			most = Math.max(most, ++running);
			await new Promise(resolve => setTimeout(resolve, 5));
			running--;
		});
		const later = async () => {
			await Promise.all([task(), task()]);
			await task();
			await Promise.all([task(), task(), task()]);
		};
		// A place not given back would leave the later tasks waiting for ever: fail within a second instead.
		const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error('later tasks are still waiting')), 1000).unref());
		await Promise.race([later(), deadline]);
		assert.equal(most, 2);
	});

	it('a patch of many files never holds more files open than the gate lets through', async () => {
		let open = 0;
		let most = 0;
		const count = FILE_CONCURRENCY * 3;
		await withManyFiles(count, original => {
			const handle = original();
			open++;
			most = Math.max(most, open);
			const close = handle.close.bind(handle);
			handle.close = async () => {
				open--;
				return close();
			};
			return handle;
		}, async (files, stage) => {
			const staged = await stage(updatesOf(files, name => files[name]), new AbortController().signal);
			assert.equal(staged.changes.length, count);
			assert.ok(most <= FILE_CONCURRENCY, `at most ${FILE_CONCURRENCY} files open at once, not ${most}`);
		});
	});

	for (const [ending, how] of [['fails on its first file', 'failed'], ['is cancelled', 'cancelled']] as const) {
		it(`a patch that ${ending} reads no more of its files once staging is over`, async () => {
			let opened = 0;
			const controller = new AbortController();
			const count = FILE_CONCURRENCY * 4;
			await withManyFiles(count, original => {
				opened++;
				// Cancelled while the first files are read.
				if (how === 'cancelled') controller.abort();
				return original();
			}, async (files, stage) => {
				// The first file's removed line is not in it, so staging fails there.
				await assert.rejects(stage(updatesOf(files, name => (how === 'failed' && name === 'f0.txt' ? 'not in the file' : files[name])), controller.signal));
				const atEnd = opened;
				await new Promise(resolve => setTimeout(resolve, 100));
				assert.equal(opened, atEnd, 'no file opened after staging ended');
				assert.ok(opened <= FILE_CONCURRENCY * 2, `${opened} of ${count} files opened`);
			});
		});
	}
});

/**
 * A tree of `count` one-line files, with every open of a file to read going through `onOpen` while
 * `work` stages patches of it in a fresh tool context.
 */
async function withManyFiles(
	count: number,
	onOpen: (original: () => ReadHandle) => ReadHandle,
	work: (files: Record<string, string>, stage: (patch: string, signal: AbortSignal) => ReturnType<typeof stagePatch>) => Promise<void>,
): Promise<void> {
	const files: Record<string, string> = {};
	for (let index = 0; index < count; index++) files[`f${index}.txt`] = `line ${index}`;
	const tree = makeTree(Object.fromEntries(Object.entries(files).map(([name, line]) => [name, `${line}\n`])));
	watchReadOpens((at, open) => onOpen(() => open(at)));
	try {
		const env = createNodeEnvironment({ roots: [tree.root], storageDir: tree.file('.storage') });
		const boundary = await env.boundary();
		await work(files, (patch, signal) => {
			const ctx: ToolContext = { tool: 'apply_patch', boundary, host: env.host, state: env.state, settings: env.settings(), signal, note: () => undefined };
			return stagePatch(parsePatch(patch), ctx);
		});
	} finally {
		watchReadOpens(undefined);
		tree.cleanup();
	}
}

/** A patch changing each file's one line, `removed` being the line it expects there. */
function updatesOf(files: Record<string, string>, removed: (name: string) => string): string {
	return ['*** Begin Patch', ...Object.keys(files).flatMap(name => [`*** Update File: ${name}`, '@@', `-${removed(name)}`, '+changed']), '*** End Patch'].join('\n');
}
