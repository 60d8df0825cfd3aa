import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { commitPlan, planChange } from '../../src/core/changes/pipeline';
import { withFileLocks } from '../../src/core/changes/locks';
import { ChangeContext, createChangeState, FileChange } from '../../src/core/context';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { makeHarness, makeTree, snapshotTree } from './helpers';

/** The change pipeline's own rules: cancels, the locks a commit takes, a path turning protected. */
describe('the change pipeline: cancels, commit locks, approval still valid', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'ws/a.txt': 'one\n', 'ws/sub/keep.txt': 'keep\n', 'ws/.git/config': '[core]\n' }); });
	afterEach(() => tree.cleanup());

	async function context(signal = new AbortController().signal): Promise<ChangeContext> {
		const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage') });
		return { tool: 'test', boundary: await env.boundary(), host: env.host, state: createChangeState(), signal, settings: { showDiffs: 'never' }, note: () => undefined };
	}
	const edit = (): FileChange => ({ path: tree.file('ws/a.txt'), displayPath: 'a.txt', before: Buffer.from('one\n'), after: Buffer.from('two\n') });

	it('a cancelled call neither plans nor commits, and says it was cancelled', async () => {
		await assert.rejects(planChange(await context(AbortSignal.abort()), 'Edit', [edit()]), { code: 'cancelled', message: 'The change was cancelled.' });
		const plan = await planChange(await context(), 'Edit', [edit()]);
		await assert.rejects(commitPlan(await context(AbortSignal.abort()), plan, false), { code: 'cancelled', message: 'The change was cancelled.' });
		assert.equal(fs.readFileSync(tree.file('ws/a.txt'), 'utf8'), 'one\n');
	});

	it('commits under the lock of every path it touches, a move\'s target too', async () => {
		const moved = tree.file('ws/moved.txt');
		const cases: [string, FileChange][] = [
			[tree.file('ws/a.txt'), edit()],
			[moved, { ...edit(), after: Buffer.from('one\n'), movedTo: { path: moved, displayPath: 'moved.txt' } }],
		];
		for (const [held, change] of cases) {
			const ctx = await context();
			const plan = await planChange(ctx, 'Change', [change]);
			let release!: () => void;
			let committed = false;
			const holder = withFileLocks(ctx.state, [held], () => new Promise<void>(resolve => { release = resolve; }));
			const commit = commitPlan(ctx, plan, false).then(() => { committed = true; });
			// Long enough for a commit that did not wait to be done, even on a loaded machine.
			await new Promise(resolve => setTimeout(resolve, 500));
			assert.equal(committed, false, `the commit waited for the lock on ${held}`);
			release();
			await Promise.all([holder, commit]);
			assert.equal(committed, true);
			fs.writeFileSync(tree.file('ws/a.txt'), 'one\n');
			fs.rmSync(moved, { force: true });
		}
	});

	it('a move\'s target counts as a place it writes: protected when asked, and refused if it turned protected before the commit', async function () {
		if (process.platform === 'win32') this.skip();
		const move = (to: string): FileChange => ({ ...edit(), after: Buffer.from('one\n'), movedTo: { path: tree.file(`ws/${to}`), displayPath: to } });
		assert.deepEqual((await planChange(await context(), 'Move', [move('.git/moved.txt')])).request.protectedPaths, ['.git/moved.txt']);
		const ctx = await context();
		const plan = await planChange(ctx, 'Move', [move('sub/moved.txt')]);
		assert.deepEqual(plan.request.protectedPaths, []);
		fs.rmSync(tree.file('ws/sub'), { recursive: true });
		fs.symlinkSync('.git', tree.file('ws/sub'));
		await assert.rejects(commitPlan(ctx, plan, true), { code: 'stale_write', message: /^sub\/moved\.txt became a protected path while waiting for confirmation/ });
		assert.equal(fs.readFileSync(tree.file('ws/a.txt'), 'utf8'), 'one\n');
		assert.equal(fs.existsSync(tree.file('ws/.git/moved.txt')), false);
	});

	it('refuses a path that became protected while the person decided, and writes nothing there', async function () {
		if (process.platform === 'win32') this.skip();
		const h = makeHarness(tree.file('ws'));
		const before = snapshotTree(tree.file('ws/.git'));
		const error = await h.error('apply_patch', { patch: '*** Begin Patch\n*** Add File: sub/new.txt\n+x\n*** Add File: sub/other.txt\n+y\n*** End Patch\n' }, {
			decide: async () => {
				// The folder is swapped for a link into .git: the same path now leads somewhere protected.
				fs.rmSync(tree.file('ws/sub'), { recursive: true });
				fs.symlinkSync('.git', tree.file('ws/sub'));
				return true;
			},
		});
		assert.equal(error.code, 'stale_write');
		assert.equal(error.message, 'sub/new.txt, sub/other.txt became a protected path while waiting for confirmation (a folder or symlink on the way changed). Nothing was written. Check the path with list_dir, then make the change again.');
		assert.deepEqual(snapshotTree(tree.file('ws/.git')), before);
	});

	it('refuses a change whose path led to another file for the write than for the byte check, and writes neither', async function () {
		if (process.platform === 'win32') this.skip();
		// Both files hold the bytes the change was made on: only where the path leads tells them apart.
		fs.mkdirSync(tree.file('ws/one'));
		fs.mkdirSync(tree.file('ws/two'));
		fs.writeFileSync(tree.file('ws/one/a.txt'), 'one\n');
		fs.writeFileSync(tree.file('ws/two/a.txt'), 'one\n');
		fs.symlinkSync('one', tree.file('ws/dir'));
		const ctx = await context();
		const viaLink = tree.file('ws/dir/a.txt');
		const plan = await planChange(ctx, 'Edit', [{ path: viaLink, displayPath: 'dir/a.txt', before: Buffer.from('one\n'), after: Buffer.from('two\n') }]);
		// The link is swapped between the two looks at the path: the byte check sees one/, the write check two/.
		const resolve = ctx.boundary.resolve.bind(ctx.boundary);
		ctx.boundary.resolve = (at, access) => resolve(at === viaLink ? tree.file('ws/two/a.txt') : at, access);
		await assert.rejects(commitPlan(ctx, plan, false), {
			code: 'stale_write',
			message: 'dir/a.txt led to another file while the change was being checked (a folder or symlink on its path changed). Nothing was written. Check the path with list_dir, read the file again, then make the change again.',
			details: { path: 'dir/a.txt' },
		});
		assert.equal(fs.readFileSync(tree.file('ws/one/a.txt'), 'utf8'), 'one\n');
		assert.equal(fs.readFileSync(tree.file('ws/two/a.txt'), 'utf8'), 'one\n');
	});
});
