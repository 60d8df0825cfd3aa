import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createSharedState } from '../../src/core/context';
import { withFileLocks } from '../../src/core/mutation';
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

describe('commitChanges through the tools', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'a\n', '.git/config': '[core]\n' }); });
	afterEach(() => tree.cleanup());

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
