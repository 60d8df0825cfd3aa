import * as assert from 'node:assert/strict';
import { lockKey, planWithFileLocks, withFileLocks } from '../../src/core/changes/locks';
import { createChangeState, isPending, PendingCall, ToolContext } from '../../src/core/context';
import { resultText, textResult, ToolResult } from '../../src/core/results/result';

/**
 * The file locks a planned call holds: until its commit or release when it is pending, never
 * past a plain result or a failure, and never against itself when its commit locks again.
 */
const tick = () => new Promise(resolve => setTimeout(resolve, 5));
const request = { kind: 'call', title: 'x' } as unknown as PendingCall['request'];
const anyCtx = {} as ToolContext;

/** A pending call whose commit runs `work` under locks of its own on `paths` (as the change pipeline does). */
function pendingOn(state: ReturnType<typeof createChangeState>, paths: string[], work: () => Promise<void> = async () => undefined, released?: string[]): PendingCall {
	return {
		pending: true,
		request,
		commit: ctx => withFileLocks(state, paths, async () => {
			await work();
			return textResult('committed');
		}, ctx.heldLocks),
		release: () => released?.push('planned'),
	};
}

/** Whether another call on `paths` gets its lock before `ms` pass. */
async function lockFreeWithin(state: ReturnType<typeof createChangeState>, paths: string[], ms = 40): Promise<boolean> {
	let got = false;
	const attempt = withFileLocks(state, paths, async () => { got = true; });
	await new Promise(resolve => setTimeout(resolve, ms));
	const free = got;
	await attempt.catch(() => undefined);
	return free;
}

describe('planWithFileLocks', () => {
	it('keeps a pending call\'s locks until it is committed, and lets go after', async () => {
		const state = createChangeState();
		const planned = await planWithFileLocks(state, ['/w/a'], async () => pendingOn(state, ['/w/a']));
		assert.ok(isPending(planned));
		assert.equal(state.fileLocks.size, 1, 'the plan holds its lock');
		// The commit locks the same path again without waiting on itself (or this would hang).
		const result = await planned.commit(anyCtx, false);
		assert.equal(resultText(result as ToolResult), 'committed');
		assert.equal(state.fileLocks.size, 0);
		assert.equal(await lockFreeWithin(state, ['/w/a']), true);
	});

	it('lets a waiting call in only after the commit, not while the plan waits', async () => {
		const state = createChangeState();
		const log: string[] = [];
		const planned = await planWithFileLocks(state, ['/w/a', '/w/b'], async () => pendingOn(state, ['/w/a', '/w/b'], async () => { log.push('commit'); }));
		assert.ok(isPending(planned));
		const other = withFileLocks(state, ['/w/b'], async () => { log.push('other'); });
		await tick();
		assert.deepEqual(log, [], 'the other call waits for the planned one');
		await planned.commit(anyCtx, false);
		await other;
		assert.deepEqual(log, ['commit', 'other']);
	});

	it('lets go of the locks when released, telling the plan, and a later commit locks again', async () => {
		const state = createChangeState();
		const released: string[] = [];
		const log: string[] = [];
		const planned = await planWithFileLocks(state, ['/w/a'], async () => pendingOn(state, ['/w/a'], async () => { log.push('commit'); }, released));
		assert.ok(isPending(planned));
		planned.release!();
		planned.release!();
		assert.deepEqual(released, ['planned', 'planned'], 'the plan hears of each release (it must tolerate twice)');
		assert.equal(state.fileLocks.size, 0);
		// Someone else takes the file while the person decides: the commit waits for them.
		let finishOther!: () => void;
		const other = withFileLocks(state, ['/w/a'], () => new Promise<void>(resolve => { finishOther = () => { log.push('other'); resolve(); }; }));
		await tick();
		const committing = planned.commit(anyCtx, true);
		await tick();
		assert.deepEqual(log, [], 'the commit waits for the call that holds the file now');
		finishOther();
		await Promise.all([other, committing]);
		assert.deepEqual(log, ['other', 'commit']);
	});

	it('hands the commit the keys its plan holds, and only those: other calls on them still wait', async () => {
		const state = createChangeState();
		let seen: ReadonlySet<string> | undefined;
		const log: string[] = [];
		let other: Promise<void> | undefined;
		const planned = await planWithFileLocks(state, ['/w/a', '/w/./b'], async () => ({
			pending: true, request,
			commit: async ctx => {
				seen = ctx.heldLocks;
				// A call with no keys of its own (another tool's) still waits for these files.
				other = withFileLocks(state, ['/w/b'], async () => { log.push('other'); });
				await tick();
				log.push('commit');
				return textResult('committed');
			},
		}));
		assert.ok(isPending(planned));
		await planned.commit({ heldLocks: new Set(['/w/outer']) } as unknown as ToolContext, false);
		await other;
		assert.deepEqual(log, ['commit', 'other']);
		assert.deepEqual([...seen!].sort(), ['/w/a', '/w/b', '/w/outer']);
		assert.equal(state.fileLocks.size, 0);
	});

	it('withFileLocks takes only the keys not held already', async () => {
		const state = createChangeState();
		const outer = await planWithFileLocks(state, ['/w/a'], async () => pendingOn(state, ['/w/a']));
		assert.ok(isPending(outer));
		const inner = await withFileLocks(state, ['/w/a', '/w/c'], async () => [...state.fileLocks.keys()].sort(), new Set(['/w/a']));
		assert.deepEqual(inner, ['/w/a', '/w/c'], '/w/a stays the plan\'s lock, /w/c is taken');
		assert.equal(state.fileLocks.size, 1, '/w/c is let go after');
		outer.release!();
	});

	it('lets go at once of a plain result and of a failure', async () => {
		const state = createChangeState();
		const plain = await planWithFileLocks(state, ['/w/a'], async () => textResult('nothing to change'));
		assert.ok(!isPending(plain));
		assert.equal(state.fileLocks.size, 0);
		await assert.rejects(planWithFileLocks(state, ['/w/a'], async () => { throw new Error('bad input'); }), /bad input/);
		assert.equal(state.fileLocks.size, 0);
		assert.equal(await lockFreeWithin(state, ['/w/a']), true);
	});

	it('lets go after a commit that fails', async () => {
		const state = createChangeState();
		const planned = await planWithFileLocks(state, ['/w/a'], async () => pendingOn(state, ['/w/a'], async () => { throw new Error('disk full'); }));
		assert.ok(isPending(planned));
		await assert.rejects(planned.commit(anyCtx, false), /disk full/);
		assert.equal(state.fileLocks.size, 0);
	});

	it('takes each path once, however it is spelled', async () => {
		const state = createChangeState();
		const done = await withFileLocks(state, ['/w/a', '/w/./a', '/w/x/../a'], async () => state.fileLocks.size);
		assert.equal(done, 1);
	});

	it('one lock for a name however it is cased only where the file system ignores case', () => {
		assert.equal(lockKey('/w/Src/A.ts', 'darwin'), '/w/src/a.ts');
		assert.equal(lockKey('/w/Src/A.ts', 'win32'), '/w/src/a.ts');
		assert.equal(lockKey('/w/Src/./A.ts', 'linux'), '/w/Src/A.ts', 'on Linux A.ts and a.ts are two files');
	});

	it('on Linux, A.txt and a.txt are locked apart: work on one does not wait for the other', async function () {
		if (process.platform !== 'linux') this.skip();
		const state = createChangeState();
		await withFileLocks(state, ['/w/A.txt'], async () => {
			assert.equal(await lockFreeWithin(state, ['/w/a.txt']), true);
		});
	});

	it('holds only the calls on the same paths: a commit on other files does not wait', async () => {
		const state = createChangeState();
		const planned = await planWithFileLocks(state, ['/w/a'], async () => pendingOn(state, ['/w/a']));
		assert.equal(await lockFreeWithin(state, ['/w/b']), true);
		assert.ok(isPending(planned));
		planned.release!();
	});
});
