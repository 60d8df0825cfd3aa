import * as assert from 'node:assert/strict';
import { everyInOrder, FILE_CONCURRENCY, forEachLimited } from '../../src/core/files/inParallel';

/**
 * The helpers that spread file work over a few items at a time (the stale checks, the commit's
 * staging and landing checks). The gate staging reads through is tested in
 * patchStagingLimits.test.ts.
 */

/** Work that records how many items run at once and finishes after a delay per item. */
function counted(delays: readonly number[]) {
	const seen = { running: 0, most: 0, started: [] as number[], finished: [] as number[] };
	const work = async (item: number, index: number) => {
		assert.equal(item, index * 10, 'each item with its own index');
		seen.started.push(index);
		seen.running++;
		seen.most = Math.max(seen.most, seen.running);
		await new Promise(resolve => setTimeout(resolve, delays[index]));
		seen.running--;
		seen.finished.push(index);
		return `item ${index}`;
	};
	return { seen, work, items: delays.map((_, index) => index * 10) };
}

describe('file work a few items at a time', () => {
	describe('everyInOrder', () => {
		it('runs at most its limit at once and gives every result in item order, however they finish', async () => {
			const { seen, work, items } = counted([30, 5, 20, 1, 10, 1]);
			const results = await everyInOrder(items, work, 2);
			assert.deepEqual(results, items.map((_, index) => `item ${index}`));
			assert.equal(seen.most, 2);
			assert.deepEqual(seen.started, [0, 1, 2, 3, 4, 5]);
			assert.notDeepEqual(seen.finished, seen.started, 'the items finished out of order');
		});

		it(`runs ${FILE_CONCURRENCY} at once by default`, async () => {
			const { seen, work, items } = counted(Array.from({ length: FILE_CONCURRENCY * 2 + 3 }, (_, index) => 1 + (index % 4)));
			assert.equal((await everyInOrder(items, work)).length, items.length);
			assert.equal(seen.most, FILE_CONCURRENCY);
		});

		it('works on every item, then throws the failure of the first failing item in item order (not the first to fail)', async () => {
			const worked: number[] = [];
			const failure = everyInOrder([0, 1, 2, 3, 4], async index => {
				// Item 1 fails last, item 3 first.
				await new Promise(resolve => setTimeout(resolve, index === 1 ? 30 : 1));
				worked.push(index);
				if (index === 1 || index === 3) throw new Error(`item ${index} failed`);
				return index;
			}, 2);
			await assert.rejects(failure, { message: 'item 1 failed' });
			assert.deepEqual([...worked].sort(), [0, 1, 2, 3, 4]);
		});

		it('gives nothing for no items', async () => {
			assert.deepEqual(await everyInOrder([], async () => assert.fail('no work')), []);
		});
	});

	describe('forEachLimited', () => {
		it('runs every item once, at most its limit at once, in item order', async () => {
			const { seen, work, items } = counted([20, 1, 15, 1, 5, 1, 1]);
			await forEachLimited(items, 3, async (item, index) => {
				await work(item, index);
			});
			assert.equal(seen.most, 3);
			assert.deepEqual(seen.started, [0, 1, 2, 3, 4, 5, 6]);
			assert.deepEqual([...seen.finished].sort(), [0, 1, 2, 3, 4, 5, 6]);
		});

		it('starts no item after one failed, and throws its error, tagged with its index, once the items under way settled', async () => {
			const started: number[] = [];
			let underWay = 0;
			const failure = forEachLimited(Array.from({ length: 10 }, (_, index) => index), 3, async index => {
				started.push(index);
				underWay++;
				try {
					// Item 1 fails while items 0 and 2 are still running.
					await new Promise(resolve => setTimeout(resolve, index === 1 ? 1 : 25));
					if (index === 1) throw new Error('item 1 failed');
				} finally {
					underWay--;
				}
			});
			const error = await failure.then(() => assert.fail('it must fail'), (reason: unknown) => reason);
			assert.equal((error as Error).message, 'item 1 failed');
			assert.equal((error as { changeIndex?: number }).changeIndex, 1);
			assert.equal(underWay, 0, 'the items under way settled before the error was thrown');
			assert.deepEqual(started, [0, 1, 2]);
		});

		it('throws a failure that is not an object (none, null, words) as it is', async () => {
			for (const thrown of [undefined, null, 'plain words']) {
				const reason = await forEachLimited([0, 1], 1, async index => {
					if (index === 1) throw thrown;
				}).then(() => assert.fail('it must fail'), (error: unknown) => error);
				assert.equal(reason, thrown);
			}
		});

		it('does nothing for no items', async () => {
			await forEachLimited([], 4, async () => assert.fail('no work'));
		});
	});
});
