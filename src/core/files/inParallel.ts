/**
 * File work spread over the I/O threads a few items at a time: enough to overlap the waits, few
 * enough not to flood the disk or hold many files open.
 */

/** Items worked on at once by default. */
export const FILE_CONCURRENCY = 16;

/**
 * Runs `work` on every item, at most `limit` at once, and settles them all; then throws the error
 * of the first item (in item order) that failed, so the outcome is the one a loop over the items
 * would give. For checks that only read: the items after a failing one are worked on all the same.
 */
export async function everyInOrder<T, R>(items: readonly T[], work: (item: T, index: number) => Promise<R>, limit = FILE_CONCURRENCY): Promise<R[]> {
	const results: ({ ok: true; value: R } | { ok: false; error: unknown })[] = new Array(items.length);
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const index = next++;
			results[index] = await work(items[index], index).then(value => ({ ok: true as const, value }), error => ({ ok: false as const, error }));
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
	return results.map(result => {
		if (!result.ok) throw result.error;
		return result.value;
	});
}

/**
 * A gate for tasks started at different times: at most `limit` run at once, the others wait their
 * turn in the order they came. Each task's promise settles as the task does.
 */
export function concurrencyGate(limit = FILE_CONCURRENCY): <T>(task: () => Promise<T>) => Promise<T> {
	let running = 0;
	const waiting: (() => void)[] = [];
	return async task => {
		// A finished task hands its place straight to the first one waiting (running stays as it is):
		// freed first and taken after, the place could go to a task that came in between.
		if (running >= limit) await new Promise<void>(resolve => waiting.push(resolve));
		else running++;
		try {
			return await task();
		} finally {
			const next = waiting.shift();
			if (next) next();
			else running--;
		}
	};
}

/**
 * Runs `work` on every item, at most `limit` at once, stopping as soon as one fails: its error
 * (tagged with `changeIndex`, the item's index) is thrown once the items under way have settled.
 */
export async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
	let next = 0;
	let failed = false;
	const worker = async () => {
		while (!failed && next < items.length) {
			const index = next++;
			try {
				await work(items[index], index);
			} catch (error) {
				failed = true;
				if (error && typeof error === 'object') Object.assign(error, { changeIndex: index });
				throw error;
			}
		}
	};
	const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
	const rejected = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
	if (rejected) throw rejected.reason;
}
