import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkNotStale, checkStillAsShown, currentVersion, DIGEST_MAX_BYTES, readCurrent, recordVersions, withDigest } from '../../src/core/changes/stale';
import { ChangeContext, createChangeState, FileChange } from '../../src/core/context';
import type { FileSystem } from '../../src/core/files/fileSystem';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { makeHarness, makeReadOnly, makeTree } from './helpers';
import { MemoryFileSystem } from './support/memoryFileSystem';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The stale rules called as the change pipeline and the tools call them. */
describe('stale rules: what a change reads and hands on', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'ws/.keep': '' }); });
	afterEach(() => tree.cleanup());

	async function context(options: { dirty?: Map<string, string>; fileSystem?: FileSystem } = {}): Promise<ChangeContext> {
		const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage'), ...options });
		return { tool: 'test', boundary: await env.boundary(), host: env.host, state: createChangeState(), signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined };
	}
	/** A change of ws/<rel> made from `before` (its own copy, as a tool holds it). */
	const change = (rel: string, before: Buffer | null): FileChange => ({
		path: tree.file(`ws/${rel}`), displayPath: rel, before: before && new Uint8Array(Buffer.from(before)), after: Buffer.from('mine\n'),
	});

	it('plans with each file\'s version, null for a file still to be made', async () => {
		fs.writeFileSync(tree.file('ws/a.txt'), 'alpha\n');
		const stat = fs.statSync(tree.file('ws/a.txt'));
		const disk = await checkNotStale(await context(), [change('a.txt', Buffer.from('alpha\n')), change('new.txt', null)]);
		assert.deepEqual(disk, new Map([[tree.file('ws/a.txt'), { mtimeMs: stat.mtimeMs, size: 6 }], [tree.file('ws/new.txt'), null]]));
	});

	it('records a moved file under its new path only: its old path keeps no version of it', async () => {
		const [from, to] = [tree.file('ws/a.txt'), tree.file('ws/b.txt')];
		const state = createChangeState();
		state.fileVersions.set(from, { mtimeMs: 1, size: 6 });
		fs.writeFileSync(to, 'alpha\n');
		await recordVersions(state, [{ path: from, displayPath: 'a.txt', before: Buffer.from('alpha\n'), after: Buffer.from('alpha\n'), movedTo: { path: to, displayPath: 'b.txt' } }]);
		assert.deepEqual([...state.fileVersions.keys()], [to]);
		assert.equal(state.fileVersions.get(to)?.size, 6);
	});

	it('hands the commit the very bytes the change was made from when the file still holds them, not a second copy', async () => {
		// Empty, small, and over one 4 MB compare chunk.
		const contents = [Buffer.alloc(0), Buffer.from('alpha\n'), Buffer.alloc(5 * 1024 * 1024 + 7, 'b')];
		for (const [index, content] of contents.entries()) {
			fs.writeFileSync(tree.file(`ws/${index}.txt`), content);
		}
		const ctx = await context();
		const changes = [...contents.map((content, index) => change(`${index}.txt`, content)), change('new.txt', null)];
		const { onDisk, realPaths } = await checkStillAsShown(ctx, changes, await checkNotStale(ctx, changes));
		for (const planned of changes.slice(0, -1)) assert.equal(onDisk.get(planned.path), planned.before, planned.displayPath);
		assert.equal(onDisk.has(tree.file('ws/new.txt')), false, 'a new file has no bytes on disk to back up');
		for (const planned of changes.slice(0, -1)) assert.equal(realPaths.get(planned.path), fs.realpathSync(planned.path), planned.displayPath);
		assert.equal(realPaths.has(tree.file('ws/new.txt')), false, 'a new file is nowhere yet');
	});

	it('compares a big file to its last byte', async () => {
		const content = Buffer.alloc(5 * 1024 * 1024, 'c');
		fs.writeFileSync(tree.file('ws/big.txt'), content);
		const ctx = await context();
		const planned = [change('big.txt', content)];
		const disk = await checkNotStale(ctx, planned);
		const theirs = Buffer.from(content);
		theirs[theirs.length - 1] = 'd'.charCodeAt(0);
		fs.writeFileSync(tree.file('ws/big.txt'), theirs);
		await assert.rejects(checkStillAsShown(ctx, planned, disk), { code: 'stale_write', message: /^big\.txt changed since you were shown the change/ });
	});

	it('re-encodes an editor\'s unsaved text with exactly the file\'s BOM', async () => {
		fs.writeFileSync(tree.file('ws/bom.txt'), Buffer.concat([BOM, Buffer.from('saved\n')]));
		fs.writeFileSync(tree.file('ws/plain.txt'), 'saved\n');
		const cases: [string, string, Buffer][] = [
			// VS Code may hand the text with or without the BOM character in front.
			['bom.txt', '\ufeffunsaved\n', Buffer.concat([BOM, Buffer.from('unsaved\n')])],
			['bom.txt', 'unsaved\n', Buffer.concat([BOM, Buffer.from('unsaved\n')])],
			['plain.txt', 'unsaved\n', Buffer.from('unsaved\n')],
		];
		for (const [rel, text, expected] of cases) {
			const ctx = await context({ dirty: new Map([[tree.file(`ws/${rel}`), text]]) });
			const current = await readCurrent(ctx, tree.file(`ws/${rel}`), rel);
			assert.equal(current.fromEditor, true);
			assert.deepEqual(Buffer.from(current.bytes!), expected, JSON.stringify(text));
		}
	});

	it('closes every file it opened', async function () {
		if (process.platform !== 'linux') this.skip();
		fs.writeFileSync(tree.file('ws/a.txt'), 'alpha\n');
		const ctx = await context();
		const planned = [change('a.txt', Buffer.from('alpha\n'))];
		const open = () => fs.readdirSync('/proc/self/fd').length;
		const before = open();
		for (let i = 0; i < 40; i++) {
			await readCurrent(ctx, planned[0].path, 'a.txt');
			await checkStillAsShown(ctx, planned, new Map());
		}
		// 80 opens: a leak shows as dozens of descriptors; a few may come and go meanwhile.
		assert.ok(open() - before < 10, `${open() - before} more descriptors open`);
	});
});

describe('stale rules: recorded versions and their digest', () => {
	let tree: ReturnType<typeof makeTree>;
	afterEach(() => tree.cleanup());

	async function versionOf(file: string) {
		const handle = await fs.promises.open(file, 'r');
		try {
			return await currentVersion(handle);
		} finally {
			await handle.close();
		}
	}

	it('digests a file up to the limit, not one byte over it (reading it whole would cost too much)', async () => {
		const limit = Buffer.alloc(DIGEST_MAX_BYTES, 'a');
		tree = makeTree({ 'limit.bin': limit, 'over.bin': Buffer.alloc(DIGEST_MAX_BYTES + 1, 'a') });
		assert.equal((await versionOf(tree.file('limit.bin'))).sha256, sha256(limit));
		const over = await versionOf(tree.file('over.bin'));
		assert.equal('sha256' in over, false);
		assert.equal(over.size, DIGEST_MAX_BYTES + 1);
	});

	it('records a version without a digest when the content cannot be read', async () => {
		tree = makeTree({ 'folder/a.txt': 'a' });
		// A folder opens, and has a size, but reading it fails (EISDIR).
		const version = await versionOf(tree.file('folder'));
		assert.deepEqual(Object.keys(version).sort(), ['mtimeMs', 'size']);
	});

	it('gives a digest only to bytes of the version\'s size', () => {
		tree = makeTree();
		const abc = Buffer.from('abc');
		assert.deepEqual(withDigest({ mtimeMs: 1, size: 3 }, abc), { mtimeMs: 1, size: 3, sha256: sha256(abc) });
		assert.deepEqual(withDigest({ mtimeMs: 1, size: 4 }, abc), { mtimeMs: 1, size: 4 });
		assert.deepEqual(withDigest({ mtimeMs: 1, size: 3 }, null), { mtimeMs: 1, size: 3 });
		const big = Buffer.alloc(DIGEST_MAX_BYTES + 1);
		assert.deepEqual(withDigest({ mtimeMs: 1, size: big.length }, big), { mtimeMs: 1, size: big.length });
	});
});

describe('stale rules through the tools', () => {
	let tree: ReturnType<typeof makeTree>;
	afterEach(() => tree?.cleanup());

	const deletedMessage = 'a.txt was deleted or moved since you were shown the change, so the change shown no longer fits it. Nothing was written. Read it again with read_file, then redo your change on its current content.';

	it('a file deleted while the person decided is named as deleted, and nothing is written', async () => {
		tree = makeTree({ 'a.txt': 'alpha\n' });
		const h = makeHarness(tree.root);
		const result = await h.invoke('edit_file', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'gamma' }] }, {
			decide: async () => {
				fs.rmSync(tree.file('a.txt'));
				return true;
			},
		});
		assert.deepEqual(result.error, { code: 'stale_write', message: deletedMessage });
		assert.deepEqual(result.metadata.errorDetails, { path: 'a.txt' });
		assert.deepEqual(fs.readdirSync(tree.root), []);
	});

	it('after a read, an edit works on the editor\'s unsaved text (which no recorded digest describes)', async () => {
		tree = makeTree({ 'a.txt': 'alpha\nbeta\n' });
		const dirty = new Map<string, string>();
		const h = makeHarness(tree.root, { dirty });
		await h.text('read_file', { path: 'a.txt' });
		dirty.set(tree.file('a.txt'), 'alpha\nunsaved\n');
		await h.text('edit_file', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'gamma' }] });
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'gamma\nunsaved\n');
	});

	describe('in a virtual workspace', () => {
		function virtual(root: string, files: Record<string, string>) {
			const memory = new MemoryFileSystem('memfs', Object.fromEntries(Object.entries(files).map(([rel, content]) => [`${root}/${rel}`, content])));
			memory.folders.add(root);
			return { memory, harness: makeHarness(root, { fileSystem: memory }) };
		}

		it('refuses a folder given as the file to write or edit, and reads nothing', async () => {
			tree = makeTree();
			const { memory, harness } = virtual('/ws', { 'src/a.txt': 'a\n' });
			for (const [tool, input] of [['write_file', { path: 'src', content: 'x' }], ['edit_file', { path: 'src', edits: [{ oldText: 'a', newText: 'b' }] }]] as const) {
				assert.deepEqual(await harness.error(tool, input), { code: 'is_directory', message: 'src is a directory, not a file. Use list_dir to see what it holds, and give the path of a file.' }, tool);
			}
			assert.equal(memory.reads.size, 0);
			assert.deepEqual([...memory.files.keys()], ['/ws/src/a.txt']);
			assert.deepEqual(harness.asked, []);
		});

		it('refuses a device, socket or pipe given as the file to write or edit, and reads nothing', async () => {
			tree = makeTree();
			const { memory, harness } = virtual('/ws', { 'a.txt': 'a\n' });
			memory.others.add('/ws/pipe');
			for (const [tool, input] of [['write_file', { path: 'pipe', content: 'x' }], ['edit_file', { path: 'pipe', edits: [{ oldText: 'a', newText: 'b' }] }]] as const) {
				assert.deepEqual(await harness.error(tool, input), { code: 'io', message: 'pipe is not a regular file (a device, socket or pipe); these tools neither read nor change such files. Give the path of a regular file.' }, tool);
			}
			assert.equal(memory.reads.size, 0);
			assert.deepEqual(harness.asked, []);
		});

		it('a file deleted while the person decided is named as deleted', async () => {
			tree = makeTree();
			const { memory, harness } = virtual('/ws', { 'a.txt': 'alpha\n' });
			const error = await harness.error('edit_file', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'gamma' }] }, {
				decide: async () => {
					await memory.delete('/ws/a.txt');
					return true;
				},
			});
			assert.deepEqual(error, { code: 'stale_write', message: deletedMessage });
			assert.equal(memory.files.size, 0);
		});

		it('a same-size rewrite under the same time stamp is told apart by its digest', async () => {
			tree = makeTree();
			const { memory, harness } = virtual('/ws', { 'a.txt': 'alpha\n' });
			await harness.text('read_file', { path: 'a.txt' });
			const { mtimeMs } = memory.files.get('/ws/a.txt')!;
			memory.files.set('/ws/a.txt', { bytes: Buffer.from('ALPHA\n'), mtimeMs });
			const error = await harness.error('edit_file', { path: 'a.txt', edits: [{ oldText: 'ALPHA', newText: 'gamma' }] });
			assert.equal(error.code, 'stale_write');
			assert.match(error.message, /^a\.txt changed on disk since you last read it \(same size and time stamp, other content\)/);
			assert.equal(memory.text('/ws/a.txt'), 'ALPHA\n');
		});

		it('is not judged by a local folder of the same path: a read-only one there refuses nothing', async function () {
			// A virtual folder /owner/repo is no local path; a local check would meet `/`, read-only
			// for anyone but root. Here the same path exists locally and is made read-only.
			tree = makeTree({ 'a.txt': 'local\n' });
			const undo = [makeReadOnly(tree.file('a.txt')), makeReadOnly(tree.root)];
			try {
				if (undo.some(step => step === undefined)) this.skip();
				const { memory, harness } = virtual(tree.root, { 'a.txt': 'alpha\n' });
				await harness.text('edit_file', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'gamma' }] });
				await harness.text('write_file', { path: 'new.txt', content: 'new\n' });
				assert.equal(memory.text(path.join(tree.root, 'a.txt')), 'gamma\n');
				assert.equal(memory.text(path.join(tree.root, 'new.txt')), 'new\n');
			} finally {
				for (const step of undo.reverse()) step?.();
			}
		});
	});
});
