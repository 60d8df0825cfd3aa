import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { applyChangesAtomically, isAtomicTemp, removeDeadTemps, writeFileAtomic } from '../../src/core/files/atomic';
import type { FileChange } from '../../src/core/context';
import { CancelledError, ToolError } from '../../src/core/results/errors';
import { Boundary } from '../../src/core/policy/boundary';
import { fileChange, makeTree } from './helpers';

const bytes = (text: string) => new Uint8Array(Buffer.from(text));
const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
/** A signal that reads as aborted from its `n`th look on: to cancel between two steps. */
const abortedFrom = (n: number) => {
	let looks = 0;
	return { get aborted() { return ++looks >= n; } } as AbortSignal;
};

describe('atomic writes: the edges', () => {
	let tree: ReturnType<typeof makeTree>;
	const temps = () => fs.readdirSync(tree.root).filter(isAtomicTemp);
	beforeEach(() => { tree = makeTree({ 'a.txt': 'old\n', 'empty/.keep': '' }); });
	afterEach(() => tree.cleanup());

	it('recognises only its own temp names', () => {
		assert.equal(isAtomicTemp('.a.txt.tb123-0123abcd.tmp'), true);
		for (const name of ['a.b.tb1-0123abcd.tmp', '.a.txt.tb123-0123abcd.tmp.bak', '.a.txt.tbx-0123abcd.tmp', '.a.txt.tb1-0123abcg.tmp']) {
			assert.equal(isAtomicTemp(name), false, name);
		}
	});

	it('refuses a folder in the target\'s place with EISDIR', async () => {
		await assert.rejects(writeFileAtomic(tree.file('empty'), bytes('x')), (error: NodeJS.ErrnoException) => error.code === 'EISDIR');
	});

	it('gives a new file the mode asked for, and an existing one its own mode whatever the umask', async function () {
		if (process.platform === 'win32') this.skip();
		await writeFileAtomic(tree.file('script.sh'), bytes('#!/bin/sh\n'), { mode: 0o700 });
		assert.equal(modeOf(tree.file('script.sh')), 0o700);
		fs.chmodSync(tree.file('a.txt'), 0o666);
		await writeFileAtomic(tree.file('a.txt'), bytes('x'));
		assert.equal(modeOf(tree.file('a.txt')), 0o666);
	});

	it('keeps the owner of a file it replaces (when run as root)', async function () {
		if (process.getuid?.() !== 0) this.skip();
		fs.chownSync(tree.file('a.txt'), 65534, 65534);
		await writeFileAtomic(tree.file('a.txt'), bytes('x'));
		assert.equal(fs.statSync(tree.file('a.txt')).uid, 65534);
	});

	it('a cancel after the bytes are staged still changes nothing and leaves no temp', async () => {
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new'), { signal: abortedFrom(2) }), CancelledError);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'old\n');
		assert.deepEqual(temps(), []);
	});

	it('finds the dead temps of a file whose name is too long to repeat whole in a temp name', async () => {
		const long = `${'n'.repeat(230)}.txt`;
		fs.writeFileSync(tree.file(long), 'x');
		const dead = `.${long.slice(0, 200)}.tb4194303-0123abcd.tmp`;
		fs.writeFileSync(tree.file(dead), 'half');
		assert.deepEqual(await removeDeadTemps(tree.file(long)), [dead]);
		assert.deepEqual(await removeDeadTemps(tree.file('missing/x.txt')), []);
	});
});

describe('applyChangesAtomically: the edges', () => {
	let tree: ReturnType<typeof makeTree>;
	const change = (rel: string, before: string | null, after: string | null, movedTo?: string) => fileChange(tree, rel, before, after, movedTo);
	const read = (rel: string) => fs.readFileSync(tree.file(rel), 'utf8');
	const failAt = (failing: number, sabotage: () => void = () => undefined) => ({
		beforeCommit: (_change: FileChange, index: number) => {
			if (index !== failing) return;
			sabotage();
			throw Object.assign(new Error('EIO: i/o error (injected)'), { code: 'EIO' });
		},
	});

	beforeEach(() => {
		tree = makeTree({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'dir/c.txt': 'c\n', 'run.sh': '#!/bin/sh\n', 'empty/.keep': '' });
		fs.rmSync(tree.file('empty/.keep'));
	});
	afterEach(() => tree.cleanup());

	it('a moved file keeps its permission bits', async function () {
		if (process.platform === 'win32') this.skip();
		fs.chmodSync(tree.file('run.sh'), 0o750);
		await applyChangesAtomically([change('run.sh', '#!/bin/sh\n', '#!/bin/sh\nexit 0\n', 'bin/run.sh')]);
		assert.equal(modeOf(tree.file('bin/run.sh')), 0o750);
		assert.equal(fs.existsSync(tree.file('run.sh')), false);
	});

	it('a rollback restores each file with its permission bits, removes what it created, and keeps folders that were there', async function () {
		if (process.platform === 'win32') this.skip();
		fs.chmodSync(tree.file('a.txt'), 0o600);
		await assert.rejects(
			applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('empty/new.txt', null, 'new\n'), change('b.txt', 'b\n', 'B\n')], undefined, failAt(2)),
			(error: ToolError) => error.code === 'io' && /^Could not write b\.txt: .* The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.equal(read('a.txt'), 'a\n');
		assert.equal(modeOf(tree.file('a.txt')), 0o600);
		assert.deepEqual(fs.readdirSync(tree.file('empty')), [], 'the new file is gone, the folder it was made in stays');
		assert.equal(read('b.txt'), 'b\n');
	});

	it('says which files it could not restore', async () => {
		const sabotage = () => {
			// The folder of the file already written turns into a file: the original cannot go back.
			fs.rmSync(tree.file('dir'), { recursive: true });
			fs.writeFileSync(tree.file('dir'), 'in the way');
		};
		await assert.rejects(
			applyChangesAtomically([change('dir/c.txt', 'c\n', 'C\n'), change('b.txt', 'b\n', 'B\n')], undefined, failAt(1, sabotage)),
			(error: Error) => /^Could not write b\.txt: .* The files written before it could not all be restored: dir\/c\.txt may hold the new content\. Tell the user; the originals are in the backup\.$/.test(error.message),
		);
	});

	it('reports a cancel as cancelled, before anything is staged or between files', async () => {
		await assert.rejects(
			applyChangesAtomically([change('a.txt', 'a\n', 'A\n')], AbortSignal.abort()),
			(error: ToolError) => error.code === 'cancelled' && /^Writing the changes stopped at a\.txt: the call was cancelled\. Nothing was changed\.$/.test(error.message),
		);
		// The first looks are the staging's; the one after them is the commit loop's.
		await assert.rejects(
			applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('b.txt', 'b\n', 'B\n')], abortedFrom(5)),
			(error: ToolError) => error.code === 'cancelled' && /the call was cancelled\./.test(error.message),
		);
		assert.deepEqual([read('a.txt'), read('b.txt')], ['a\n', 'b\n']);
	});

	it('a folder moved out of the workspace during the commit: the write that went with it is removed there, the rest put back', async () => {
		const outside = makeTree();
		try {
			const boundary = await Boundary.create({ roots: [{ name: 'ws', path: tree.root }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] });
			const moveOut = () => fs.renameSync(tree.file('dir'), outside.file('dir'));
			await assert.rejects(
				applyChangesAtomically([change('dir/c.txt', 'c\n', 'C\n'), change('b.txt', 'b\n', 'B\n')], undefined, {
					boundary,
					beforeCommit: (_change, index) => { if (index === 1) moveOut(); },
				}),
				(error: ToolError) => error.code === 'io' && /^Could not write dir\/c\.txt: dir\/c\.txt was not written where it was meant to go.* The files written before it were restored: nothing was changed\.$/.test(error.message),
			);
			assert.equal(read('b.txt'), 'b\n');
			assert.deepEqual(fs.readdirSync(outside.file('dir')), [], 'the new c.txt went out with its folder and was removed there');
		} finally {
			outside.cleanup();
		}
	});

	it('a file already gone when its deletion commits is fine; a folder in a new file\'s place is not, and leaves no temp', async () => {
		await applyChangesAtomically([change('b.txt', 'b\n', null), change('a.txt', 'a\n', 'A\n')], undefined, {
			beforeCommit: (_change, index) => { if (index === 0) fs.rmSync(tree.file('b.txt')); },
		});
		assert.equal(read('a.txt'), 'A\n');
		await assert.rejects(applyChangesAtomically([change('late.txt', null, 'x')], undefined, {
			beforeCommit: () => fs.mkdirSync(tree.file('late.txt/inner'), { recursive: true }),
		}), (error: Error) => /^Could not write late\.txt: late\.txt is a directory/.test(error.message));
		assert.deepEqual(fs.readdirSync(tree.root).filter(isAtomicTemp), []);
	});
});
