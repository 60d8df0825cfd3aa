import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import { applyChangesAtomically } from '../../src/core/files/atomic';
import { createChangeState, Diagnostic, FileChange } from '../../src/core/context';
import { withFileLocks } from '../../src/core/changes/locks';
import { pendingChange } from '../../src/core/changes/pipeline';
import { readCurrent } from '../../src/core/changes/stale';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { resultText, textResult } from '../../src/core/results/result';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/tool';
import { fileChange, makeHarness, makeTree, testStorageDir } from './helpers';

const tick = () => new Promise(resolve => setTimeout(resolve, 5));

describe('withFileLocks', () => {
	it('runs work on one path one at a time, in the order asked', async () => {
		const state = createChangeState();
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
		const state = createChangeState();
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
		const state = createChangeState();
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

	it('holds no lock on a file while the person decides: another call writes it meanwhile, and the first is refused', async () => {
		const h = makeHarness(tree.root);
		let deadline: NodeJS.Timeout | undefined;
		// Were the first call's locks kept, the second call would wait for its commit, which waits for this answer.
		const otherWrite = (): Promise<string> => Promise.race([
			h.text('write_file', { path: 'a.txt', content: 'theirs\n' }, { decide: async () => true }),
			new Promise<string>((_, reject) => { deadline = setTimeout(() => reject(new Error('the other write waited for the pending call\'s lock')), 2_000); }),
		]).finally(() => clearTimeout(deadline));
		let other: string | undefined;
		const error = await h.error('write_file', { path: 'a.txt', content: 'mine\n' }, {
			decide: async () => {
				other = await otherWrite().catch((problem: Error) => problem.message);
				return true;
			},
		});
		assert.match(other ?? '', /a\.txt/);
		assert.equal(error.code, 'stale_write');
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'theirs\n');
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
	function slowEditor(meanwhile: () => void, asked: unknown[] = []) {
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
		return new ToolRegistry([tool], createNodeEnvironment({ roots: [tree.root], storageDir: testStorageDir(), confirm: async request => (asked.push(request), true) }));
	}

	// Another size is refused before anyone is asked; the same size only by the bytes, after.
	for (const [what, theirs, refusal, askedCount] of [
		['as many bytes', THEIRS, /^a\.txt changed since you were shown the change/, 1],
		['other bytes', 'someone else\n', /^a\.txt changed on disk while the change was being prepared \(size 11 → 13 bytes\)\. Nothing was written/, 0],
	] as const) {
		it(`a file rewritten with ${what} while the change was being prepared is not overwritten`, async () => {
			const asked: unknown[] = [];
			const registry = slowEditor(() => {
				fs.writeFileSync(tree.file('a.txt'), theirs);
				fs.utimesSync(tree.file('a.txt'), STAMP, STAMP);
			}, asked);
			const result = await registry.invoke('slow_edit', { path: 'a.txt' });
			assert.equal(result.error?.code, 'stale_write');
			assert.match(result.error!.message, refusal);
			assert.equal(asked.length, askedCount);
			assert.equal(read(), theirs);
		});
	}
});

describe('the change pipeline, planned and committed', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n' }); });
	afterEach(() => tree.cleanup());
	const envOf = (h: ReturnType<typeof makeHarness>) => (h.registry as any).env as ReturnType<typeof createNodeEnvironment>;

	/** A registry whose one tool makes `changes()` (computed after `meanwhile`), then commits them. */
	function committing(changes: () => FileChange[], meanwhile: () => void = () => undefined, options: Parameters<typeof createNodeEnvironment>[0] extends infer O ? Partial<O> : never = {}) {
		const tool = defineTool({
			name: 'commit_these', referenceName: 'tbCommit', displayName: 'Commit', group: 'edit', mutating: true, icon: 'edit', tags: [],
			userDescription: 'test', modelDescription: 'test', schema: Type.Object({}), describe: () => 'Committing',
			run: async (_input, ctx) => {
				const prepared = changes();
				meanwhile();
				return pendingChange(ctx, 'Commit these', prepared, () => textResult('committed'));
			},
		});
		return new ToolRegistry([tool], createNodeEnvironment({ roots: [tree.root], storageDir: testStorageDir(), confirm: async () => true, ...options }));
	}
	const change = (rel: string, before: string | null, after: string | null, movedTo?: string) => fileChange(tree, rel, before, after, movedTo);

	it('refuses what changed on disk while the change was prepared: a new file that appeared, a file that went, a move target that appeared', async () => {
		const created = await committing(() => [change('new.txt', null, 'mine\n')], () => fs.writeFileSync(tree.file('new.txt'), 'theirs\n')).invoke('commit_these', {});
		assert.deepEqual(created.error, { code: 'already_exists', message: 'new.txt was created by someone else while this change was prepared. Nothing was written. Read it, then decide whether to overwrite it.' });
		const deleted = await committing(() => [change('a.txt', 'alpha\n', 'A\n')], () => fs.rmSync(tree.file('a.txt'))).invoke('commit_these', {});
		assert.deepEqual(deleted.error, { code: 'stale_write', message: 'a.txt was deleted or moved on disk since it was read. Nothing was written. Check with list_dir or find_files, then read it again.' });
		const target = await committing(() => [change('b.txt', 'beta\n', 'beta\n', 'c.txt')], () => fs.writeFileSync(tree.file('c.txt'), 'in the way\n')).invoke('commit_these', {});
		assert.deepEqual(target.error, { code: 'already_exists', message: 'c.txt already exists, so b.txt cannot be moved there. Nothing was written.' });
		assert.equal(fs.readFileSync(tree.file('b.txt'), 'utf8'), 'beta\n');
	});

	it('says exactly what changed, with the versions in the error details', async () => {
		const h = makeHarness(tree.root);
		await h.text('read_file', { path: 'a.txt' });
		fs.writeFileSync(tree.file('a.txt'), 'much longer now\n');
		fs.utimesSync(tree.file('a.txt'), 1_700_000_000, 1_700_000_000);
		const result = await h.invoke('edit_file', { path: 'a.txt', edits: [{ oldText: 'much', newText: 'far' }] });
		assert.equal(result.error?.message, 'a.txt changed on disk since you last read it (size 6 → 16 bytes, modified 2023-11-14T22:13:20.000Z). Nothing was written, so the other change is not lost. Read the file again with read_file, then redo your change on its current content.');
		const details = result.metadata.errorDetails as { path: string; known: { size: number }; now: { size: number; mtimeMs: number } };
		assert.deepEqual([details.path, details.known.size, details.now.size, details.now.mtimeMs], ['a.txt', 6, 16, 1_700_000_000_000]);
	});

	it('a file created while the person decided is named in the refusal', async () => {
		const h = makeHarness(tree.root);
		const error = await h.error('write_file', { path: 'new.txt', content: 'mine\n' }, { decide: async () => { fs.writeFileSync(tree.file('new.txt'), 'theirs\n'); return true; } });
		assert.equal(error.message, 'new.txt was created by someone else since you were shown the change. Nothing was written. Read it, then decide whether to overwrite it.');
	});

	it('refuses a path that is no regular file (a FIFO)', async function () {
		if (process.platform === 'win32') this.skip();
		execFileSync('mkfifo', [tree.file('pipe')]);
		const error = await makeHarness(tree.root).error('write_file', { path: 'pipe', content: 'x' });
		assert.deepEqual(error, { code: 'io', message: 'pipe is not a regular file (a device, socket or pipe); these tools neither read nor change such files. Give the path of a regular file.' });
	});

	it('says when the backup cannot be made, and changes nothing', async () => {
		// A private storage folder at first (the host checks it), replaced by a file before the change.
		const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-storage-'));
		const h = makeHarness(tree.root, { storageDir });
		fs.rmSync(storageDir, { recursive: true });
		fs.writeFileSync(storageDir, 'not a folder');
		const error = await h.error('write_file', { path: 'a.txt', content: 'changed\n' });
		fs.rmSync(storageDir, { force: true });
		assert.equal(error.code, 'io');
		assert.match(error.message, /^Could not back up the original files before changing them \(.+\)\. Nothing was changed\.$/);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'alpha\n');
	});

	it('reports a host failure that is not even an Error', async () => {
		const error = await makeHarness(tree.root, { applyChanges: async () => { throw null; } }).error('write_file', { path: 'a.txt', content: 'b\n' });
		assert.match(error.message, /^The change could not be applied: null\. Some files may have changed/);
	});

	it('remembers the versions it wrote: a moved file under its new path only, a deleted one not at all', async () => {
		const h = makeHarness(tree.root);
		await h.text('read_file', { path: 'a.txt' });
		await h.text('read_file', { path: 'b.txt' });
		await h.text('apply_patch', { patch: '*** Begin Patch\n*** Update File: a.txt\n*** Move to: moved.txt\n*** Delete File: b.txt\n*** End Patch' });
		const versions = envOf(h).state.fileVersions;
		assert.deepEqual([versions.has(tree.file('a.txt')), versions.has(tree.file('moved.txt')), versions.has(tree.file('b.txt'))], [false, true, false]);
	});

	it('a lock is let go only by the call that holds it: a third call still waits for the second', async () => {
		const state = createChangeState();
		const log: string[] = [];
		const job = (name: string, ms: number) => withFileLocks(state, ['/w/f'], async () => {
			log.push(`start ${name}`);
			await new Promise(resolve => setTimeout(resolve, ms));
			log.push(`end ${name}`);
		});
		const first = job('first', 5);
		const second = job('second', 40);
		await first;
		await Promise.all([second, job('third', 1)]);
		assert.deepEqual(log, ['start first', 'end first', 'start second', 'end second', 'start third', 'end third']);
	});

	describe('new diagnostics', () => {
		const file = () => tree.file('a.txt');
		const diagnostic = (message: string, extra: Partial<Diagnostic> = {}): Diagnostic => ({ path: file(), line: 1, column: 1, severity: 'error', message, ...extra });
		/** A host whose language server reports `before` first, then `after` from the `from`th call on; records what it was asked. */
		const server = (before: Diagnostic[], after: Diagnostic[], from = 2) => {
			const asked: (readonly string[])[] = [];
			return { asked, diagnostics: async (paths: readonly string[]) => { asked.push(paths); return asked.length >= from ? after : before; } };
		};
		let writes = 0;
		const report = async (before: Diagnostic[], after: Diagnostic[], from = 2) => {
			const { diagnostics } = server(before, after, from);
			const result = await makeHarness(tree.root, { diagnostics }).invoke('write_file', { path: 'a.txt', content: `change ${++writes}\n` });
			const text = resultText(result);
			return text.includes('New problems') ? text.slice(text.indexOf('New problems')) : '';
		};

		it('lists errors before warnings, by path and line, leaves out info and hints and what was there before', async () => {
			const other = tree.file('b.txt');
			const text = await report([diagnostic('old'), diagnostic('twice')], [
				diagnostic('old'), diagnostic('twice'), diagnostic('twice'),
				diagnostic('a warning', { severity: 'warning', line: 2 }),
				diagnostic('later error', { line: 9, column: 4, code: 'E1' }),
				diagnostic('earlier error', { line: 3, source: 'ts' }),
				diagnostic('in b', { path: other, line: 1 }),
				diagnostic('just info', { severity: 'info' }), diagnostic('a hint', { severity: 'hint' }),
				diagnostic('old', { source: 'eslint' }), diagnostic('old', { code: 'X9' }),
			]);
			assert.equal(text, [
				'New problems reported after the change:',
				'a.txt:1:1 error: twice',
				'a.txt:1:1 error: old (eslint)',
				'a.txt:1:1 error X9: old',
				'a.txt:3:1 error: earlier error (ts)',
				'a.txt:9:4 error E1: later error',
				'b.txt:1:1 error: in b',
				'a.txt:2:1 warning: a warning',
			].join('\n'));
		});

		it('waits for a language server that reacts late, and says "more" only beyond ten', async () => {
			assert.match(await report([], [diagnostic('slow')], 4), /error: slow$/);
			const ten = Array.from({ length: 10 }, (_, i) => diagnostic(`new ${i}`, { line: i + 1 }));
			const text = await report([], ten);
			assert.equal(text.split('\n').length, 11);
			assert.doesNotMatch(text, /more/);
		});

		it('asks about the files as they end up: not deleted ones, moved ones under their new name', async () => {
			const deleting = server([], []);
			await makeHarness(tree.root, { diagnostics: deleting.diagnostics }).text('apply_patch', { patch: '*** Begin Patch\n*** Delete File: b.txt\n*** End Patch' });
			assert.deepEqual(deleting.asked, [], 'nothing to ask about: no file was written');
			const moving = server([], []);
			await makeHarness(tree.root, { diagnostics: moving.diagnostics }).text('apply_patch', { patch: '*** Begin Patch\n*** Update File: a.txt\n*** Move to: c.txt\n*** End Patch' });
			assert.deepEqual(moving.asked[0], [tree.file('c.txt')]);
		});
	});
});
