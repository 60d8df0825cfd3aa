import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyChangesAtomically, writeFileAtomic } from '../../src/core/files/atomic';
import { Boundary } from '../../src/core/policy/boundary';
import { BoundaryError, ToolError } from '../../src/core/results/errors';
import { makeFolders, openForReading, PinnedFolder, useProcFd } from '../../src/core/files/verifiedOpen';
import { makeHarness, makeTree, snapshotTree } from './helpers';

/** Fails a promise that has not settled within `ms`: a FIFO opened the blocking way would hang forever. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout;
	return Promise.race([
		promise.finally(() => clearTimeout(timer)),
		new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not return within ${ms} ms`)), ms); }),
	]);
}

/** Runs the same tests with the /proc checks of Linux and with the portable ones of macOS and Windows. */
const MODES = process.platform === 'linux' ? [{ name: 'descriptor paths (/proc/self/fd)', procFd: undefined }, { name: 'the portable fallback (macOS, Windows)', procFd: false }] : [{ name: 'this platform', procFd: undefined }];

for (const mode of MODES) {
	describe(`checked after opening, with ${mode.name}`, () => {
		let tree: ReturnType<typeof makeTree>;
		let outside: string;
		let untouched: Record<string, string>;
		before(() => useProcFd(mode.procFd));
		after(() => useProcFd(undefined));
		beforeEach(function () {
			if (process.platform === 'win32') this.skip();
			tree = makeTree({ 'sub/r.txt': 'inside\n', 'sub/e.txt': 'edit me inside\n' });
			outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-outside-')));
			fs.writeFileSync(path.join(outside, 'r.txt'), 'OUTSIDE\n');
			fs.writeFileSync(path.join(outside, 'e.txt'), 'edit me OUTSIDE\n');
			untouched = snapshotTree(outside);
		});
		afterEach(() => {
			tree?.cleanup();
			if (outside) fs.rmSync(outside, { recursive: true, force: true });
		});

		/** Puts a symlink to the outside folder where `sub` was (the real folder moves aside). */
		const swap = () => {
			fs.renameSync(tree.file('sub'), tree.file('sub.real'));
			fs.symlinkSync(outside, tree.file('sub'));
		};
		const boundary = () => Boundary.create({ roots: [{ name: 'ws', path: tree.root }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] });

		it('a read whose folder is swapped after the boundary checked it is refused before a byte is read', async () => {
			const b = await boundary();
			const target = await b.resolve('sub/r.txt', 'read');
			swap();
			await assert.rejects(openForReading(target.absolute, target.display, b), (error: BoundaryError) => error.rule === 'swapped_during_call' && /led to .*outside the workspace/.test(error.message));
		});

		it('a write whose folder is swapped while the person decides lands nowhere: refused, nothing outside', async () => {
			const h = makeHarness(tree.root);
			const result = await h.invoke('write_file', { path: 'sub/new.txt', content: 'x\n' }, { decide: async () => { swap(); return true; } });
			assert.equal(result.error?.code, 'outside_boundary', result.error?.message);
			assert.deepEqual(snapshotTree(outside), untouched);
		});

		it('an edit and a patch whose folder is swapped while the person decides are refused, nothing outside changes', async () => {
			const h = makeHarness(tree.root);
			const edit = await h.invoke('edit_file', { path: 'sub/e.txt', edits: [{ oldText: 'edit me', newText: 'edited' }] }, { decide: async () => { swap(); return true; } });
			assert.ok(edit.error, 'the edit went through');
			fs.rmSync(tree.file('sub'));
			fs.renameSync(tree.file('sub.real'), tree.file('sub'));
			const patch = await h.invoke('apply_patch', { patch: '*** Begin Patch\n*** Add File: sub/deep/p.txt\n+p\n*** Delete File: sub/r.txt\n*** End Patch\n' }, { decide: async () => { swap(); return true; } });
			assert.ok(patch.error, 'the patch went through');
			assert.deepEqual(snapshotTree(outside), untouched);
			assert.equal(fs.readFileSync(tree.file('sub.real/e.txt'), 'utf8'), 'edit me inside\n');
			assert.equal(fs.readFileSync(tree.file('sub.real/r.txt'), 'utf8'), 'inside\n');
		});

		it('writes into the folder that was checked, whatever its path leads to afterwards', async function () {
			if (mode.procFd === false) this.skip(); // only descriptor paths can follow the folder itself
			const folder = await PinnedFolder.open('sub', { expect: tree.file('sub') });
			try {
				swap();
				fs.writeFileSync(folder.entry('through-descriptor.txt'), 'pinned\n');
			} finally {
				await folder.close();
			}
			assert.equal(fs.readFileSync(tree.file('sub.real/through-descriptor.txt'), 'utf8'), 'pinned\n');
			assert.deepEqual(snapshotTree(outside), untouched);
		});

		it('makes folders one level at a time and refuses a level that is a symlink to outside', async () => {
			const { folder, created } = await makeFolders(tree.file('sub/a/b/c'), 'sub/a/b/c', await boundary());
			await folder.close();
			assert.deepEqual(created, ['sub/a', 'sub/a/b', 'sub/a/b/c'].map(rel => tree.file(rel)));
			fs.symlinkSync(outside, tree.file('sub/link'));
			await assert.rejects(makeFolders(tree.file('sub/link/new'), 'sub/link/new', await boundary()), BoundaryError);
			await assert.rejects(writeFileAtomic(tree.file('sub/link/new/x.txt'), Buffer.from('x'), { boundary: await boundary() }), BoundaryError);
			assert.deepEqual(snapshotTree(outside), untouched);
		});

		it('a change set whose folder is swapped between staging and commit writes nothing outside', async () => {
			const b = await boundary();
			const change = (rel: string, was: string | null, after: string) => ({ path: tree.file(rel), displayPath: rel, before: was === null ? null : Buffer.from(was), after: Buffer.from(after) });
			fs.writeFileSync(tree.file('top.txt'), 'top\n');
			const changes = [change('top.txt', 'top\n', 'top changed\n'), change('sub/new.txt', null, 'new\n')];
			const applied = applyChangesAtomically(changes, undefined, { boundary: b, beforeCommit: (_change, index) => { if (index === 1) swap(); } });
			if (mode.procFd === undefined) {
				// The temp is renamed in the folder it was made in: the one that was checked, now sub.real.
				await applied;
				assert.equal(fs.readFileSync(tree.file('sub.real/new.txt'), 'utf8'), 'new\n');
			} else {
				// By path, the rename finds no temp behind the link: the set fails whole (its temp stays in sub.real, inside).
				await assert.rejects(applied, /were restored: nothing was changed/);
				assert.equal(fs.readFileSync(tree.file('top.txt'), 'utf8'), 'top\n');
			}
			assert.deepEqual(snapshotTree(outside), untouched);
		});
	});
}

describe('a file opened to read (a descriptor opened on this thread)', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'hello, descriptor\n' }); });
	afterEach(() => tree.cleanup());

	it('reads at a position through the I/O threads, stats, and closes once: its number is -1 after, and really closed', async () => {
		const file = await openForReading(tree.file('a.txt'), 'a.txt', undefined);
		const fd = file.handle.fd;
		assert.ok(fd >= 0);
		const buffer = Buffer.alloc(10);
		const { bytesRead, buffer: filled } = await file.handle.read(buffer, 2, 8, 7);
		assert.deepEqual([bytesRead, filled === buffer, buffer.subarray(2).toString()], [8, true, 'descript']);
		// Past the end: nothing read, as a FileHandle says.
		assert.equal((await file.handle.read(buffer, 0, 10, 1000)).bytesRead, 0);
		const stat = await file.handle.stat();
		assert.deepEqual([stat.ino, stat.size], [fs.statSync(tree.file('a.txt')).ino, 18]);
		await file.handle.close();
		assert.equal(file.handle.fd, -1);
		assert.throws(() => fs.fstatSync(fd), { code: 'EBADF' });
		// A second close closes nothing (the number may be another file's by now).
		const other = fs.openSync(tree.file('a.txt'), 'r');
		try {
			await file.handle.close();
			assert.ok(fs.fstatSync(other).isFile());
		} finally {
			fs.closeSync(other);
		}
		// A read after the close fails: it never reads whatever file took the number.
		await assert.rejects(file.handle.read(buffer, 0, 1, 0));
	});
});

describe('special targets', () => {
	let tree: ReturnType<typeof makeTree>;
	let outside: string;
	beforeEach(function () {
		if (process.platform === 'win32') this.skip();
		tree = makeTree({ 'a.txt': 'a\n' });
		outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-outside-')));
	});
	afterEach(() => {
		tree?.cleanup();
		if (outside) fs.rmSync(outside, { recursive: true, force: true });
	});

	it('a FIFO is refused at once by read_file, write_file and edit_file, and stays a FIFO', async () => {
		execFileSync('mkfifo', [tree.file('pipe')]);
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		for (const [tool, input] of [
			['read_file', { path: 'pipe' }],
			['read_file', { path: 'pipe', encoding: 'base64' }],
			['write_file', { path: 'pipe', content: 'x' }],
			['write_file', { path: 'pipe', content: 'x', mode: 'append' }],
			['edit_file', { path: 'pipe', edits: [{ oldText: 'a', newText: 'b' }] }],
		] as const) {
			const error = await within(h.error(tool, input), 5000, tool);
			assert.match(error.message, /not a regular file/, `${tool}: ${error.message}`);
		}
		assert.ok(fs.lstatSync(tree.file('pipe')).isFIFO());
	});

	it('a hard link to an outside file: a read reads it (inside by its path), a write replaces the link and leaves the outside file alone', async function () {
		fs.writeFileSync(path.join(outside, 'target.txt'), 'outside original\n');
		try {
			fs.linkSync(path.join(outside, 'target.txt'), tree.file('hard.txt'));
		} catch {
			this.skip(); // the temp folders are on different file systems
		}
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		assert.match(await h.text('read_file', { path: 'hard.txt' }), /outside original/);
		await h.text('write_file', { path: 'hard.txt', content: 'new inside\n' });
		assert.equal(fs.readFileSync(tree.file('hard.txt'), 'utf8'), 'new inside\n');
		assert.equal(fs.readFileSync(path.join(outside, 'target.txt'), 'utf8'), 'outside original\n');
		assert.equal(fs.statSync(path.join(outside, 'target.txt')).nlink, 1, 'the link was replaced, not written through');
	});

	it('a dangling symlink as target: inside, the write creates its target and keeps the link; outside, it is refused', async () => {
		fs.symlinkSync('made-by-link.txt', tree.file('dangling'));
		fs.symlinkSync(path.join(outside, 'nowhere.txt'), tree.file('dangling-out'));
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		assert.equal((await h.error('read_file', { path: 'dangling' })).code, 'not_found');
		await h.text('write_file', { path: 'dangling', content: 'through\n' });
		assert.ok(fs.lstatSync(tree.file('dangling')).isSymbolicLink());
		assert.equal(fs.readFileSync(tree.file('made-by-link.txt'), 'utf8'), 'through\n');
		assert.equal((await h.error('write_file', { path: 'dangling-out', content: 'x' })).code, 'outside_boundary');
		assert.deepEqual(fs.readdirSync(outside), []);
	});

	it('long paths: 30 levels of 100-character names are written and read; a path past the system limit fails cleanly', async () => {
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		const level = 'l'.repeat(100);
		const deep = `${Array.from({ length: 30 }, (_, i) => `${i}${level}`).join('/')}/${'f'.repeat(200)}.txt`;
		await h.text('write_file', { path: deep, content: 'deep\n' });
		assert.match(await h.text('read_file', { path: deep }), /deep/);
		const tooDeep = `${Array.from({ length: 45 }, (_, i) => `${i}${level}`).join('/')}/x.txt`;
		const error = await h.error('write_file', { path: tooDeep, content: 'x' });
		assert.ok(error instanceof Object && typeof error.message === 'string' && error.code !== 'internal', error.message);
		assert.doesNotMatch(error.message, /fault in the tool/);
	});

	it('refuses to read or change Toolbelt\'s own storage inside a workspace, except this workspace\'s command logs', async () => {
		const storage = tree.file('.storage');
		fs.mkdirSync(storage, { mode: 0o700 });
		const h = makeHarness(tree.root, { storageDir: storage, settings: { approval: 'never' } });
		await h.text('write_file', { path: 'a.txt', content: 'changed\n' });
		const [set] = fs.readdirSync(path.join(storage, 'backups'));
		const backup = `.storage/backups/${set}/manifest.json`;
		const refused = await h.error('read_file', { path: backup });
		assert.equal(refused.code, 'outside_boundary');
		assert.match(refused.message, /private_storage/);
		assert.match((await h.error('write_file', { path: backup, content: '{}' })).message, /private_storage/);
		fs.writeFileSync(path.join(storage, 'commands', 'x.log'), 'log line\n');
		assert.match(await h.text('read_file', { path: '.storage/commands/x.log' }), /log line/);
		assert.match((await h.error('write_file', { path: '.storage/commands/x.log', content: 'x' })).message, /private_storage|read_only/);
	});

	it('surfaces ToolErrors, not crashes, for paths that cannot be opened', async () => {
		const b = await Boundary.create({ roots: [{ name: 'ws', path: tree.root }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] });
		await assert.rejects(openForReading(tree.file('missing.txt'), 'missing.txt', b), (error: ToolError) => error.code === 'not_found');
		await assert.rejects(openForReading(tree.root, '.', b), (error: ToolError) => error.code === 'is_directory');
	});
});
