import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Type } from '@sinclair/typebox';
import { applyChangesAtomically } from '../../src/core/atomic';
import { createSharedState, FileChange } from '../../src/core/context';
import { pendingChange, readCurrent, withFileLocks } from '../../src/core/mutation';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { textResult } from '../../src/core/result';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/tool';
import { makeHarness, makeTree } from './helpers';

const tick = () => new Promise(resolve => setTimeout(resolve, 5));

describe('withFileLocks', () => {
	it('runs work on one path one at a time, in the order asked', async () => {
		const state = createSharedState();
		const log: string[] = [];
		await Promise.all([1, 2, 3].map(n => withFileLocks(state, ['/w/a.txt'], async () => {
			log.push(`start ${n}`);
			await tick();
			log.push(`end ${n}`);
		})));
		assert.deepEqual(log, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
		assert.equal(state.fileLocks.size, 0, 'no lock is left behind');
	});

	it('lets work on different paths overlap, and sets of paths never deadlock', async () => {
		const state = createSharedState();
		const log: string[] = [];
		const job = (name: string, paths: string[]) => withFileLocks(state, paths, async () => {
			log.push(`start ${name}`);
			await tick();
			log.push(`end ${name}`);
		});
		await Promise.all([job('a', ['/w/a']), job('b', ['/w/b']), job('ab', ['/w/b', '/w/a']), job('ba', ['/w/a', '/w/b'])]);
		assert.deepEqual(log.slice(0, 2), ['start a', 'start b']);
		assert.ok(log.indexOf('start ab') > log.indexOf('end a') && log.indexOf('start ab') > log.indexOf('end b'));
		assert.ok(log.indexOf('start ba') > log.indexOf('end ab'));
	});

	it('releases the lock when the work throws', async () => {
		const state = createSharedState();
		await assert.rejects(withFileLocks(state, ['/w/x'], async () => { throw new Error('boom'); }), /boom/);
		assert.equal(await withFileLocks(state, ['/w/x'], async () => 'next'), 'next');
	});
});

describe('the change pipeline through the tools', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'a\n', '.git/config': '[core]\n' }); });
	afterEach(() => tree.cleanup());

	it('asks for a nested repository\'s .git under approval "never", and writes nothing when declined', async () => {
		const h = makeHarness(tree.root, { settings: { approval: 'never' }, approve: false });
		for (const [tool, input] of [
			['write_file', { path: 'repo2/.git/hooks/pre-commit', content: '#!/bin/sh\nexit 0\n' }],
			['apply_patch', { patch: '*** Begin Patch\n*** Add File: vendor/lib/.git/hooks/post-checkout\n+#!/bin/sh\n*** End Patch\n' }],
		] as const) {
			assert.equal((await h.error(tool, input)).code, 'declined', tool);
		}
		assert.deepEqual(h.asked.map(request => request.kind === 'files' && request.protectedPaths), [['repo2/.git/hooks/pre-commit'], ['vendor/lib/.git/hooks/post-checkout']]);
		assert.equal(fs.existsSync(tree.file('repo2')), false);
		assert.equal(fs.existsSync(tree.file('vendor')), false);
	});

	it('treats a symlink onto a protected file as protected', async function () {
		if (process.platform === 'win32') this.skip();
		fs.symlinkSync('.git/config', tree.file('innocent.txt'));
		const h = makeHarness(tree.root, { settings: { approval: 'never' }, approve: false });
		const error = await h.error('write_file', { path: 'innocent.txt', content: 'x' });
		assert.equal(error.code, 'declined');
		assert.deepEqual(h.asked[0].kind === 'files' && h.asked[0].protectedPaths, ['innocent.txt']);
		assert.equal(fs.readFileSync(tree.file('.git/config'), 'utf8'), '[core]\n');
	});

	it('treats a new file under a symlinked folder onto .git as protected', async function () {
		if (process.platform === 'win32') this.skip();
		fs.mkdirSync(tree.file('.git/hooks'));
		fs.symlinkSync('.git/hooks', tree.file('hooks'));
		const h = makeHarness(tree.root, { settings: { approval: 'never' }, approve: false });
		const error = await h.error('write_file', { path: 'hooks/pre-commit', content: '#!/bin/sh\n' });
		assert.equal(error.code, 'declined');
		assert.deepEqual(h.asked[0].kind === 'files' && h.asked[0].protectedPaths, ['hooks/pre-commit']);
		assert.equal(fs.existsSync(tree.file('.git/hooks/pre-commit')), false);
	});

	it('asks before writing inside a folder a protected glob names, whatever the policy', async () => {
		const h = makeHarness(tree.root, { settings: { approval: 'never', protectedPaths: ['deploy'] }, approve: false });
		const error = await h.error('write_file', { path: 'deploy/keys/id.txt', content: 'x' });
		assert.equal(error.code, 'declined');
		assert.deepEqual(h.asked[0].kind === 'files' && h.asked[0].protectedPaths, ['deploy/keys/id.txt']);
		assert.equal(fs.existsSync(tree.file('deploy')), false);
		await h.text('write_file', { path: 'deployment.txt', content: 'x' });
		assert.equal(h.asked.length, 1, 'a sibling whose name starts alike is not protected');
	});

	it('reports an unexplained host failure without claiming nothing changed', async () => {
		const h = makeHarness(tree.root, { applyChanges: async () => { throw new Error('disk full'); } });
		const error = await h.error('write_file', { path: 'a.txt', content: 'b\n' });
		assert.equal(error.code, 'io');
		assert.match(error.message, /^The change could not be applied: disk full\. Some files may have changed: read them again before retrying/);
	});

	it('a file created while the person decided is not overwritten by a create', async () => {
		const h = makeHarness(tree.root);
		const error = await h.error('write_file', { path: 'new.txt', content: 'mine\n' }, {
			decide: async () => {
				fs.writeFileSync(tree.file('new.txt'), 'theirs\n');
				return true;
			},
		});
		assert.equal(error.code, 'already_exists');
		assert.equal(fs.readFileSync(tree.file('new.txt'), 'utf8'), 'theirs\n');
	});
});

describe('stale writes: a same-size change on disk is a change too', () => {
	let tree: ReturnType<typeof makeTree>;
	const ORIGINAL = 'alpha\nbeta\n';
	const THEIRS = 'alpha\nBETA\n';
	/** A whole second: utimes sets it exactly, and it is far from any clock's granularity. */
	const STAMP = 1_700_000_000;
	const read = () => fs.readFileSync(tree.file('a.txt'), 'utf8');
	/** Someone else rewrites the file with as many bytes, and the modification time says `stamp`. */
	const rewrite = (stamp: number) => {
		fs.writeFileSync(tree.file('a.txt'), THEIRS);
		fs.utimesSync(tree.file('a.txt'), stamp, stamp);
	};

	beforeEach(() => {
		tree = makeTree({ 'a.txt': ORIGINAL });
		fs.utimesSync(tree.file('a.txt'), STAMP, STAMP);
	});
	afterEach(() => tree.cleanup());

	const calls: Record<string, object> = {
		edit_file: { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'gamma' }] },
		write_file: { path: 'a.txt', content: 'mine\n' },
	};
	for (const [tool, input] of Object.entries(calls)) {
		it(`${tool} refuses a file rewritten with as many bytes since read_file read it`, async () => {
			const h = makeHarness(tree.root);
			await h.text('read_file', { path: 'a.txt' });
			rewrite(STAMP + 60);
			const error = await h.error(tool, input);
			assert.equal(error.code, 'stale_write');
			assert.match(error.message, /^a\.txt changed on disk since you last read it \(same size, modified 2023-11-14T22:14:20\.000Z\)\. Nothing was written/);
			assert.equal(read(), THEIRS);
		});

		it(`${tool} refuses a file rewritten with as many bytes and the same modification time`, async () => {
			const h = makeHarness(tree.root);
			await h.text('read_file', { path: 'a.txt' });
			// Within a coarse clock's tick (or by a tool that keeps time stamps), size and time stay alike.
			rewrite(STAMP);
			const error = await h.error(tool, input);
			assert.equal(error.code, 'stale_write');
			assert.match(error.message, /^a\.txt changed on disk since you last read it \(same size and time stamp, other content\)/);
			assert.equal(read(), THEIRS);
		});
	}

	it('after its own write, a same-size rewrite with the same time stamp is still noticed', async () => {
		// The host's writes land at STAMP, so the version it records has a time stamp the rewrite can repeat.
		const applyChanges = async (changes: readonly FileChange[]) => {
			await applyChangesAtomically(changes);
			for (const change of changes) fs.utimesSync(change.path, STAMP, STAMP);
		};
		const h = makeHarness(tree.root, { applyChanges });
		await h.text('write_file', { path: 'a.txt', content: ORIGINAL.toUpperCase() });
		rewrite(STAMP);
		assert.equal((await h.error('edit_file', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'gamma' }] })).code, 'stale_write');
		assert.equal(read(), THEIRS);
	});

	it('a file too big for a digest is still refused when its time stamp moved', async () => {
		const big = `${'x'.repeat(2 * 1024 * 1024)}\nalpha\n`;
		fs.writeFileSync(tree.file('a.txt'), big);
		const h = makeHarness(tree.root);
		await h.text('read_file', { path: 'a.txt', offset: -1 });
		fs.writeFileSync(tree.file('a.txt'), big.replace('alpha', 'ALPHA'));
		fs.utimesSync(tree.file('a.txt'), STAMP + 60, STAMP + 60);
		assert.equal((await h.error('edit_file', { path: 'a.txt', edits: [{ oldText: 'x\nALPHA', newText: 'x\ngamma' }] })).code, 'stale_write');
	});

	it('an edit of unsaved editor text is refused when the disk changed while the person decided', async () => {
		const h = makeHarness(tree.root, { dirty: new Map([[tree.file('a.txt'), 'alpha\nunsaved\n']]) });
		const error = await h.error('edit_file', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'gamma' }] }, {
			decide: async () => {
				rewrite(STAMP + 60);
				return true;
			},
		});
		assert.equal(error.code, 'stale_write');
		assert.match(error.message, /changed on disk while waiting for confirmation \(same size, modified/);
		assert.equal(read(), THEIRS);
	});

	/** A registry whose one tool reads a file, lets `meanwhile` run, then commits a change made from what it read. */
	function slowEditor(meanwhile: () => void) {
		const tool = defineTool({
			name: 'slow_edit', referenceName: 'tbSlowEdit', displayName: 'Slow Edit', group: 'edit', mutating: true, icon: 'edit', tags: [],
			userDescription: 'test', modelDescription: 'test', schema: Type.Object({ path: Type.String() }), describe: () => 'Editing slowly',
			run: async (input, ctx) => {
				const target = await ctx.boundary.resolve(input.path, 'write');
				const current = await readCurrent(ctx, target.absolute, target.display);
				meanwhile();
				return pendingChange(ctx, `Edit ${target.display}`, [{ path: target.absolute, displayPath: target.display, before: current.bytes, after: Buffer.from('mine\n') }], () => textResult('edited'));
			},
		});
		return new ToolRegistry([tool], createNodeEnvironment({ roots: [tree.root], confirm: async () => true }));
	}

	for (const [what, theirs] of [['as many bytes', THEIRS], ['other bytes', 'someone else\n']] as const) {
		it(`a file rewritten with ${what} while the change was being prepared is not overwritten`, async () => {
			const registry = slowEditor(() => {
				fs.writeFileSync(tree.file('a.txt'), theirs);
				fs.utimesSync(tree.file('a.txt'), STAMP, STAMP);
			});
			const result = await registry.invoke('slow_edit', { path: 'a.txt' });
			assert.equal(result.error?.code, 'stale_write');
			assert.match(result.error!.message, /^a\.txt changed (on disk while the change was being prepared|since you were shown the change)/);
			assert.equal(read(), theirs);
		});
	}
});
