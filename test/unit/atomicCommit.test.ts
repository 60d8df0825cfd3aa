import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
// The module object itself: the checks around a temp and a rename are synchronous calls, stubbed on it.
import nodeFs from 'node:fs';
import * as path from 'node:path';
import { applyChangesAtomically, isAtomicTemp, removeDeadTemps, writeFileAtomic } from '../../src/core/files/atomic';
import type { FileChange } from '../../src/core/context';
import { Boundary } from '../../src/core/policy/boundary';
import { PinnedFolder } from '../../src/core/files/verifiedOpen';
import { BoundaryError, CancelledError, ToolError } from '../../src/core/results/errors';
import { fileChange, makeTree } from './helpers';

const bytes = (text: string) => new Uint8Array(Buffer.from(text));
const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
/** The descriptors this process holds (Linux): a write must give back every one it opened. */
const openDescriptors = () => fs.readdirSync('/proc/self/fd').length;
const injectedEio = () => Object.assign(new Error('EIO: i/o error (injected)'), { code: 'EIO' });

describe('atomic writes: names, cancels, temps of other writers, descriptors', () => {
	let tree: ReturnType<typeof makeTree>;
	const temps = () => fs.readdirSync(tree.root).filter(isAtomicTemp);
	beforeEach(() => { tree = makeTree({ 'a.txt': 'old\n', 'dir/b.txt': 'b\n' }); });
	afterEach(() => tree.cleanup());

	it('writes a file whose name is too long to repeat whole in its temp name', async () => {
		const long = `${'n'.repeat(250)}.txt`;
		await writeFileAtomic(tree.file(long), bytes('long\n'));
		assert.equal(fs.readFileSync(tree.file(long), 'utf8'), 'long\n');
		assert.deepEqual(temps(), []);
	});

	it('names the path it was given when no display name is', async () => {
		await assert.rejects(writeFileAtomic(tree.file('dir'), bytes('x')), (error: Error) => error.message === `EISDIR: ${tree.file('dir')}`);
	});

	it('says what was cancelled: before the rename, and between the chunks of a big write', async () => {
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new'), { signal: AbortSignal.abort() }), (error: CancelledError) => error.message === 'The write was cancelled.');
		let looks = 0;
		// The first look is the one before the first chunk; the second, before the second chunk.
		const secondChunk = { get aborted() { return ++looks >= 2; } } as AbortSignal;
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), new Uint8Array(9 * 1024 * 1024), { signal: secondChunk }), (error: CancelledError) => error.message === 'The write was cancelled.');
		assert.equal(looks, 2, 'stopped at the second chunk, before the rename');
		// A small write looks once while writing, once more just before the rename.
		looks = 0;
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new'), { signal: secondChunk }), (error: CancelledError) => error.message === 'The write was cancelled.');
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'old\n');
		assert.deepEqual(temps(), []);
	});

	it('removes the temps of dead writers only: a live process\'s temp and this process\'s own stay', async () => {
		const temp = (pid: number) => `.a.txt.tb${pid}-0123abcd.tmp`;
		for (const pid of [4194303, 1, process.pid]) fs.writeFileSync(tree.file(temp(pid)), 'half');
		await writeFileAtomic(tree.file('a.txt'), bytes('new\n'));
		assert.deepEqual(temps().sort(), [temp(1), temp(process.pid)].sort());
		assert.deepEqual(await removeDeadTemps(tree.file('a.txt')), []);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'new\n');
	});

	it('closes every folder and file it opened, after a change set in several folders and after a failure', async function () {
		if (!fs.existsSync('/proc/self/fd')) this.skip();
		const before = openDescriptors();
		await applyChangesAtomically([
			fileChange(tree, 'a.txt', 'old\n', 'A\n'),
			fileChange(tree, 'dir/b.txt', 'b\n', 'B\n'),
			fileChange(tree, 'dir/new.txt', null, 'new\n'),
			fileChange(tree, 'dir/deeper/new.txt', null, 'new\n'),
			fileChange(tree, 'dir/deeper/other.txt', null, 'other\n'),
		]);
		await writeFileAtomic(tree.file('a.txt'), bytes('again\n'));
		await assert.rejects(applyChangesAtomically([fileChange(tree, 'a.txt', 'again\n', 'x'), fileChange(tree, 'dir/b.txt', 'B\n', 'y')], undefined, {
			beforeCommit: (_change, index) => { if (index === 1) throw injectedEio(); },
		}));
		assert.equal(openDescriptors(), before);
	});
});

describe('atomic writes when the disk or another process gets in the way (simulated at the fs calls)', () => {
	let tree: ReturnType<typeof makeTree>;
	const restores: (() => void)[] = [];
	/** Replaces a method until the test ends. */
	function stub<T extends object, K extends keyof T>(owner: T, key: K, replacement: (original: T[K]) => T[K]): void {
		const original = owner[key];
		owner[key] = replacement(original);
		restores.push(() => { owner[key] = original; });
	}
	/** A copy of a stat with some fields changed. */
	const altered = (stat: fs.Stats, fields: Partial<fs.Stats>) => Object.assign(Object.create(Object.getPrototypeOf(stat)), stat, fields) as fs.Stats;
	const temps = () => fs.readdirSync(tree.root).filter(isAtomicTemp);
	const read = (rel: string) => fs.readFileSync(tree.file(rel), 'utf8');
	const landedElsewhere = (error: ToolError) => error.code === 'io' && /^a\.txt was not written where it was meant to go/.test(error.message);

	beforeEach(() => { tree = makeTree({ 'a.txt': 'old\n', 'dir/c.txt': 'c\n', 'dir/d.txt': 'd\n' }); });
	afterEach(() => {
		for (const restore of restores.splice(0).reverse()) restore();
		tree.cleanup();
	});

	it('a temp that is not the entry made in the checked folder fails the write before a byte is written', async function () {
		if (!fs.existsSync('/proc/self/fd')) this.skip();
		const cases: [string, (stat: fs.Stats) => fs.Stats | undefined][] = [
			['gone', () => undefined],
			['another file', stat => altered(stat, { ino: stat.ino + 1 })],
			['on another device', stat => altered(stat, { dev: stat.dev + 1 })],
		];
		for (const [what, entryFor] of cases) {
			const lstat = nodeFs.lstatSync;
			const writable = nodeFs as { lstatSync: typeof nodeFs.lstatSync };
			writable.lstatSync = ((at: string) => {
				const stat = lstat(at);
				if (!isAtomicTemp(path.basename(at))) return stat;
				const entry = entryFor(stat);
				if (!entry) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
				return entry;
			}) as typeof nodeFs.lstatSync;
			try {
				await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new\n'), { display: 'a.txt' }), landedElsewhere, what);
			} finally {
				writable.lstatSync = lstat;
			}
			assert.equal(read('a.txt'), 'old\n', what);
			assert.deepEqual(temps(), [], what);
		}
		// A temp whose descriptor does not say where it is.
		stub(nodeFs, 'readlinkSync', readlink => ((at: string) => {
			const link = readlink(at);
			if (isAtomicTemp(path.basename(String(link)))) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
			return link;
		}) as typeof nodeFs.readlinkSync);
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new\n'), { display: 'a.txt' }), landedElsewhere);
		assert.equal(read('a.txt'), 'old\n');
		assert.deepEqual(temps(), []);
	});

	it('fails a write whose target, after the rename, is not the file written', async () => {
		stub(nodeFs, 'lstatSync', lstat => ((at: string) => {
			const stat = lstat(at);
			return path.basename(at) === 'a.txt' ? altered(stat!, { dev: stat!.dev + 1 }) : stat;
		}) as typeof nodeFs.lstatSync);
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new\n'), { display: 'a.txt' }), landedElsewhere);
	});

	it('removes a write whose folder cannot say where it is after the rename', async function () {
		if (!fs.existsSync('/proc/self/fd')) this.skip();
		let renamed = false;
		stub(nodeFs, 'renameSync', rename => ((from: fs.PathLike, to: fs.PathLike) => {
			rename(from, to);
			renamed = true;
		}) as typeof nodeFs.renameSync);
		stub(nodeFs, 'readlinkSync', readlink => ((at: string) => {
			const link = readlink(at);
			if (renamed && link === tree.root) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
			return link;
		}) as typeof nodeFs.readlinkSync);
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new\n'), { display: 'a.txt' }), landedElsewhere);
		assert.equal(fs.existsSync(tree.file('a.txt')), false, 'what was written is removed again');
		assert.deepEqual(temps(), []);
	});

	it('leaves a file alone that its owner may not write (simulated: the tests run as root)', async () => {
		stub(nodeFs, 'accessSync', access => ((at: fs.PathLike, mode?: number) => {
			if (path.basename(String(at)) === 'a.txt') throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
			return access(at, mode);
		}) as typeof nodeFs.accessSync);
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new\n')), { code: 'EACCES' });
		assert.equal(read('a.txt'), 'old\n');
		assert.deepEqual(temps(), []);
	});

	it('a temp whose close fails (EIO after its flush) is removed, and the file is left as it was', async function () {
		if (!fs.existsSync('/proc/self/fd')) this.skip();
		let failed = 0;
		stub(nodeFs, 'closeSync', close => ((fd: number) => {
			const where = fs.readlinkSync(`/proc/self/fd/${fd}`);
			close(fd);
			if (isAtomicTemp(path.basename(where))) {
				failed++;
				throw injectedEio();
			}
		}) as typeof nodeFs.closeSync);
		const before = openDescriptors();
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new\n'), { display: 'a.txt' }), { code: 'EIO' });
		assert.equal(failed, 1, 'closed once');
		assert.equal(read('a.txt'), 'old\n');
		assert.deepEqual(temps(), []);
		assert.equal(openDescriptors(), before);
	});

	it('flushes the temp before its rename; a temp whose flush fails is closed and removed, and the file is left as it was', async function () {
		if (!fs.existsSync('/proc/self/fd')) this.skip();
		const flushed: string[] = [];
		stub(nodeFs, 'fsync', () => ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
			flushed.push(path.basename(fs.readlinkSync(`/proc/self/fd/${fd}`)));
			callback(injectedEio());
		}) as typeof nodeFs.fsync);
		const before = openDescriptors();
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('new\n'), { display: 'a.txt' }), { code: 'EIO' });
		assert.equal(flushed.length, 1, 'flushed once');
		assert.ok(isAtomicTemp(flushed[0]), 'the temp, before it took the name');
		assert.equal(read('a.txt'), 'old\n');
		assert.deepEqual(temps(), []);
		assert.equal(openDescriptors(), before, 'the temp was closed');
	});

	it('keeps the temp of a live process that belongs to someone else (kill answers EPERM)', async () => {
		const temp = (pid: number) => `.a.txt.tb${pid}-0123abcd.tmp`;
		fs.writeFileSync(tree.file(temp(4194301)), 'half');
		fs.writeFileSync(tree.file(temp(4194302)), 'half');
		stub(process, 'kill', kill => ((pid: number, signal?: string | number) => {
			if (pid === 4194301) throw Object.assign(new Error('EPERM'), { code: 'EPERM' });
			return kill(pid, signal);
		}) as typeof process.kill);
		assert.deepEqual(await removeDeadTemps(tree.file('a.txt')), [temp(4194302)]);
		assert.deepEqual(temps(), [temp(4194301)]);
	});

	it('refuses a write into a read-only extra folder by its own rule', async () => {
		const extra = makeTree({ 'x.txt': 'x\n' });
		try {
			const boundary = await Boundary.create({ roots: [{ name: 'ws', path: tree.root }], fileAccess: 'workspace', additionalReadPaths: [extra.root], protectedPaths: [] });
			await assert.rejects(writeFileAtomic(extra.file('x.txt'), bytes('y'), { boundary }), (error: BoundaryError) => error.rule === 'read_only');
			assert.equal(fs.readFileSync(extra.file('x.txt'), 'utf8'), 'x\n');
		} finally {
			extra.cleanup();
		}
	});

	it('flushes each folder it wrote in once', async () => {
		const synced: string[] = [];
		stub(PinnedFolder.prototype, 'sync', sync => async function (this: PinnedFolder) {
			synced.push(this.real);
			return sync.call(this);
		});
		await applyChangesAtomically([
			fileChange(tree, 'a.txt', 'old\n', 'A\n'),
			fileChange(tree, 'dir/c.txt', 'c\n', 'C\n'),
			fileChange(tree, 'dir/d.txt', 'd\n', 'D\n'),
			fileChange(tree, 'dir/new/e.txt', null, 'e\n'),
		]);
		assert.deepEqual(synced.sort(), [tree.root, tree.file('dir'), tree.file('dir/new')].sort());
	});
});

describe('applyChangesAtomically: commit and rollback', () => {
	let tree: ReturnType<typeof makeTree>;
	const change = (rel: string, before: string | null, after: string | null, movedTo?: string) => fileChange(tree, rel, before, after, movedTo);
	const read = (rel: string) => fs.readFileSync(tree.file(rel), 'utf8');
	const exists = (rel: string) => fs.existsSync(tree.file(rel));
	/** Fails the commit of change `failing` as a disk error would, after `sabotage`. */
	const failAt = (failing: number, sabotage: () => void = () => undefined) => ({
		beforeCommit: (_change: FileChange, index: number) => {
			if (index !== failing) return;
			sabotage();
			throw injectedEio();
		},
	});
	/** Runs `act` just before change `at` commits, without failing it. */
	const before = (at: number, act: () => void) => ({ beforeCommit: (_change: FileChange, index: number) => { if (index === at) act(); } });

	beforeEach(() => { tree = makeTree({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'dir/c.txt': 'c\n', 'run.sh': '#!/bin/sh\n' }); });
	afterEach(() => tree.cleanup());

	it('refuses a new file someone else made meanwhile, naming it, and leaves theirs alone', async () => {
		fs.writeFileSync(tree.file('new.txt'), 'theirs\n');
		await assert.rejects(
			applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('new.txt', null, 'mine\n')]),
			(error: ToolError) => error.code === 'io' && /^Could not write new\.txt: new\.txt was created by someone else while this change was prepared\. Nothing was written\./.test(error.message),
		);
		assert.equal(read('new.txt'), 'theirs\n');
		assert.equal(read('a.txt'), 'a\n');
	});

	it('refuses to move a file onto one that appeared meanwhile, naming the target', async () => {
		fs.writeFileSync(tree.file('taken.txt'), 'theirs\n');
		await assert.rejects(
			applyChangesAtomically([change('a.txt', 'a\n', 'A\n', 'taken.txt')]),
			(error: ToolError) => /taken\.txt was created by someone else while this change was prepared/.test(error.message),
		);
		assert.equal(read('taken.txt'), 'theirs\n');
		assert.equal(read('a.txt'), 'a\n');
	});

	it('gives a new file of a change set the same mode a plain new file gets', async function () {
		if (process.platform === 'win32') this.skip();
		fs.writeFileSync(tree.file('plain.txt'), 'x');
		await applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('new.txt', null, 'new\n')]);
		assert.equal(modeOf(tree.file('new.txt')), modeOf(tree.file('plain.txt')));
	});

	it('deletes and moves a symlink itself, never the file it points to', async function () {
		if (process.platform === 'win32') this.skip();
		fs.symlinkSync('a.txt', tree.file('gone.lnk'));
		fs.symlinkSync('b.txt', tree.file('moving.lnk'));
		await applyChangesAtomically([change('gone.lnk', 'a\n', null), change('moving.lnk', 'b\n', 'b\n', 'moved.txt')]);
		assert.equal(exists('gone.lnk'), false);
		assert.equal(exists('moving.lnk'), false);
		assert.equal(read('a.txt'), 'a\n');
		assert.equal(read('b.txt'), 'b\n');
		assert.equal(read('moved.txt'), 'b\n');
	});

	it('puts a deleted or moved symlink back as the same symlink, not as a copy of its file', async function () {
		if (process.platform === 'win32') this.skip();
		fs.symlinkSync('a.txt', tree.file('gone.lnk'));
		fs.symlinkSync('dir/c.txt', tree.file('moving.lnk'));
		await assert.rejects(
			applyChangesAtomically([change('gone.lnk', 'a\n', null), change('moving.lnk', 'c\n', 'c\n', 'moved.txt'), change('b.txt', 'b\n', 'B\n')], undefined, failAt(2)),
			(error: ToolError) => /The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.equal(fs.readlinkSync(tree.file('gone.lnk')), 'a.txt');
		assert.equal(fs.readlinkSync(tree.file('moving.lnk')), 'dir/c.txt');
		assert.equal(exists('moved.txt'), false);
		assert.equal(read('a.txt'), 'a\n');
		assert.equal(read('dir/c.txt'), 'c\n');
	});

	it('puts a file written through a symlink back through it, the link kept', async function () {
		if (process.platform === 'win32') this.skip();
		fs.symlinkSync('b.txt', tree.file('link.txt'));
		await assert.rejects(
			applyChangesAtomically([change('link.txt', 'b\n', 'via link\n'), change('a.txt', 'a\n', 'A\n')], undefined, failAt(1)),
			(error: ToolError) => /The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.ok(fs.lstatSync(tree.file('link.txt')).isSymbolicLink());
		assert.equal(fs.readlinkSync(tree.file('link.txt')), 'b.txt');
		assert.equal(read('b.txt'), 'b\n');
	});

	it('a move whose source cannot be removed takes its new copy back, and the set is put back', async () => {
		await assert.rejects(
			applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('dir/c.txt', 'c\n', 'C\n', 'moved.txt')], undefined, before(1, () => {
				fs.rmSync(tree.file('dir'), { recursive: true });
				fs.writeFileSync(tree.file('dir'), 'in the way');
			})),
			(error: ToolError) => /^Could not write dir\/c\.txt: .* The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.equal(exists('moved.txt'), false);
		assert.equal(read('a.txt'), 'a\n');
	});

	it('a deletion that meets a folder in the file\'s place fails, and the set is put back', async () => {
		await assert.rejects(
			applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('b.txt', 'b\n', null)], undefined, before(1, () => {
				fs.rmSync(tree.file('b.txt'));
				fs.mkdirSync(tree.file('b.txt'));
			})),
			(error: ToolError) => /^Could not write b\.txt: .*The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.equal(read('a.txt'), 'a\n');
		assert.equal(fs.statSync(tree.file('b.txt')).isDirectory(), true);
	});

	it('puts back newest first: new files in a new folder go, and so does the folder', async () => {
		await assert.rejects(applyChangesAtomically([change('fresh/one.txt', null, '1'), change('fresh/two.txt', null, '2'), change('a.txt', 'a\n', 'A\n')], undefined, failAt(2)));
		assert.equal(exists('fresh'), false);
		assert.equal(read('a.txt'), 'a\n');
	});

	it('a file gone since the change was planned is written anew, and a rollback removes it again', async () => {
		fs.rmSync(tree.file('b.txt'));
		await applyChangesAtomically([change('b.txt', 'b\n', 'B\n'), change('a.txt', 'a\n', 'A\n')]);
		assert.equal(read('b.txt'), 'B\n');
		fs.rmSync(tree.file('b.txt'));
		await assert.rejects(
			applyChangesAtomically([change('b.txt', 'b\n', 'B again\n'), change('a.txt', 'A\n', 'AA\n')], undefined, failAt(1)),
			(error: ToolError) => /The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.equal(exists('b.txt'), false);
		assert.equal(read('a.txt'), 'A\n');
	});

	it('a deleted file put back keeps its permission bits', async function () {
		if (process.platform === 'win32') this.skip();
		fs.chmodSync(tree.file('run.sh'), 0o750);
		await assert.rejects(applyChangesAtomically([change('run.sh', '#!/bin/sh\n', null), change('a.txt', 'a\n', 'A\n')], undefined, failAt(1)));
		assert.equal(read('run.sh'), '#!/bin/sh\n');
		assert.equal(modeOf(tree.file('run.sh')), 0o750);
	});

	it('names the deletions it could not put back', async () => {
		fs.writeFileSync(tree.file('dir/d.txt'), 'd\n');
		await assert.rejects(
			applyChangesAtomically([change('dir/c.txt', 'c\n', null), change('dir/d.txt', 'd\n', null), change('a.txt', 'a\n', 'A\n')], undefined, failAt(2, () => {
				// The deleted files' folder turns into a file: there is nowhere to put them back.
				fs.rmSync(tree.file('dir'), { recursive: true });
				fs.writeFileSync(tree.file('dir'), 'in the way');
			})),
			(error: ToolError) => /^Could not write a\.txt: .* could not all be restored: dir\/d\.txt, dir\/c\.txt may hold the new content\./.test(error.message),
		);
		assert.equal(read('a.txt'), 'a\n');
	});

	it('a deletion of a file already gone is nothing to put back', async () => {
		await assert.rejects(
			applyChangesAtomically([change('gone.txt', 'x\n', null), change('a.txt', 'a\n', 'A\n')], undefined, failAt(1)),
			(error: ToolError) => /^Could not write a\.txt: .* The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.equal(exists('gone.txt'), false);
	});

	it('a "move" onto its own path is a plain change', async () => {
		await applyChangesAtomically([change('a.txt', 'a\n', 'A\n', 'a.txt'), change('b.txt', 'b\n', 'B\n')]);
		assert.equal(read('a.txt'), 'A\n');
	});

	it('refuses, before anything changes, to delete a link whose file is outside the workspace', async function () {
		if (process.platform === 'win32') this.skip();
		const outside = makeTree({ 'secret.txt': 'secret\n' });
		try {
			fs.symlinkSync(outside.file('secret.txt'), tree.file('out.lnk'));
			const boundary = await Boundary.create({ roots: [{ name: 'ws', path: tree.root }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] });
			await assert.rejects(
				applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('out.lnk', 'secret\n', null)], undefined, { boundary }),
				(error: ToolError) => /^Could not write out\.lnk: .* Nothing was changed\.$/.test(error.message),
			);
			assert.equal(fs.lstatSync(tree.file('out.lnk')).isSymbolicLink(), true);
			assert.equal(read('a.txt'), 'a\n');
		} finally {
			outside.cleanup();
		}
	});

	it('a written file someone else wrote to before the set is done is left alone and named, not put back over their bytes', async () => {
		await assert.rejects(
			applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('b.txt', 'b\n', 'B\n')], undefined, before(1, () => {
				// The same file (inode) as ours, with more in it: the size tells it is no longer ours alone.
				fs.appendFileSync(tree.file('a.txt'), 'theirs\n');
			})),
			(error: ToolError) => error.code === 'io' && /^Could not write a\.txt: a\.txt was not written where it was meant to go.* could not all be restored: a\.txt may hold the new content\./.test(error.message),
		);
		assert.equal(read('a.txt'), 'A\ntheirs\n');
		assert.equal(read('b.txt'), 'b\n');
	});

	it('a written file replaced by someone else before the set is done is left alone and named, the rest put back: one of another size, and one of the same size (told by its inode)', async () => {
		for (const theirs of ['theirs\n', 'T\n']) {
			fs.writeFileSync(tree.file('a.txt'), 'a\n');
			await assert.rejects(
				applyChangesAtomically([change('a.txt', 'a\n', 'A\n'), change('b.txt', 'b\n', 'B\n')], undefined, before(1, () => {
					// Made while ours still exists, so it cannot get our file's inode number back (rm first and
					// a file system may hand out the same number, which looks like our file in its place).
					fs.writeFileSync(tree.file('theirs.tmp'), theirs);
					fs.renameSync(tree.file('theirs.tmp'), tree.file('a.txt'));
				})),
				(error: ToolError) => error.code === 'io' && /^Could not write a\.txt: a\.txt was not written where it was meant to go.* could not all be restored: a\.txt may hold the new content\./.test(error.message),
				JSON.stringify(theirs),
			);
			assert.equal(read('a.txt'), theirs);
			assert.equal(read('b.txt'), 'b\n');
		}
	});
});
