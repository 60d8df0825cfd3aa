import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { backupOriginals, LinkSource, listBackups, restoreChanges, sealBackups } from '../../src/core/changes/backups';
import { commitPlan, planChange } from '../../src/core/changes/pipeline';
import { ChangeContext, createChangeState } from '../../src/core/context';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { fileChange, makeHarness, makeTree } from './helpers';

/**
 * Attacks on backups by hard link (backups.ts linkOriginal/sealBackups): files swapped or rewritten
 * in the windows between the check, the link and the seal; a backup that fails halfway; a backup
 * store on another file system; restoring a set that moved and deleted files; special files opened
 * on the main thread. Each asserts what a backup must be: the checked bytes, owner-only, and never
 * a second name of a live workspace file.
 */
describe('backups by hard link under attack', () => {
	let tree: ReturnType<typeof makeTree>;
	const ORIGINAL = 'line one\nline two\n';
	/** Same length as ORIGINAL: a rewrite the size check cannot see. */
	const SAME_SIZE = 'LINE ONE\nLINE TWO\n';
	beforeEach(() => { tree = makeTree({ 'ws/a.txt': ORIGINAL, 'ws/b.txt': 'bee\n', 'outside/secret.txt': 'secret\n' }); });
	afterEach(() => tree.cleanup());

	const modeOf = (file: string) => fs.statSync(file).mode & 0o7777;
	const inodeOf = (file: string) => fs.statSync(file).ino;

	function sourceOf(rel: string): LinkSource {
		const stat = fs.statSync(tree.file(rel));
		return { real: tree.file(rel), identity: { dev: stat.dev, ino: stat.ino, mtimeMs: stat.mtimeMs } };
	}

	/** What Node's atomic write does to a file: a new file renamed over it. */
	function replaceByRename(rel: string, text: string): void {
		fs.writeFileSync(tree.file(`${rel}.new`), text);
		fs.renameSync(tree.file(`${rel}.new`), tree.file(rel));
	}

	async function boundary() {
		return createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage') }).boundary();
	}

	it('a backup that fails halfway leaves no set behind, so no second name of a workspace file', async () => {
		const a = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		// The second file became a symlink out of the workspace: its copy is refused by the boundary.
		fs.rmSync(tree.file('ws/b.txt'));
		fs.symlinkSync(tree.file('outside/secret.txt'), tree.file('ws/b.txt'));
		const b = fileChange(tree, 'ws/b.txt', 'bee\n', 'new\n');
		const storage = tree.file('storage');
		await assert.rejects(backupOriginals(storage, 'Edit two', [a, b], { reach: await boundary(), onDisk: new Map([[a.path, a.before as Uint8Array]]), replaced: new Map([[a.path, sourceOf('ws/a.txt')]]) }));
		assert.equal(fs.statSync(tree.file('ws/a.txt')).nlink, 1, 'no name of a.txt left in the storage');
		assert.deepEqual(fs.readdirSync(path.join(storage, 'backups')), [], 'no half-made set');
		assert.equal(fs.statSync(tree.file('outside/secret.txt')).nlink, 1);
	});

	it('a file rewritten in place to the same size between the check and the link is backed up with the checked bytes', async () => {
		const checked = sourceOf('ws/a.txt');
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const rewriteThenLink = (existing: string, made: string) => {
			fs.writeFileSync(existing, SAME_SIZE);
			fs.linkSync(existing, made);
		};
		const backup = await backupOriginals(tree.file('storage'), 'Edit a', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, checked]]), link: rewriteThenLink });
		replaceByRename('ws/a.txt', 'new\n');
		await sealBackups(backup.linked);
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
		assert.equal(modeOf(backup.copies[0]), 0o600);
	});

	it('a file rewritten in place to the same size between the link and the seal is backed up with the checked bytes', async () => {
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(tree.file('storage'), 'Edit a', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, sourceOf('ws/a.txt')]]) });
		assert.equal(backup.linked.length, 1);
		// Written through the workspace name while the change is being written, then replaced by it.
		fs.writeFileSync(tree.file('ws/a.txt'), SAME_SIZE);
		replaceByRename('ws/a.txt', 'new\n');
		await sealBackups(backup.linked);
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
		assert.equal(fs.statSync(backup.copies[0]).nlink, 1);
		assert.equal(modeOf(backup.copies[0]), 0o600);
	});

	it('a file rewritten in place to another size with its mtime put back (cp -p, rsync -t) before the seal is backed up with the checked bytes', async () => {
		// A whole second, which utimes sets exactly (a stat's sub-millisecond mtime would not survive it).
		const mtime = new Date(Date.UTC(2024, 0, 1, 3));
		fs.utimesSync(tree.file('ws/a.txt'), mtime, mtime);
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const checked = sourceOf('ws/a.txt');
		const backup = await backupOriginals(tree.file('storage'), 'Edit a', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, checked]]) });
		assert.equal(backup.linked.length, 1);
		// Only the size tells this write apart: the mtime is the one checked again.
		fs.writeFileSync(tree.file('ws/a.txt'), 'a longer text written in place\n');
		fs.utimesSync(tree.file('ws/a.txt'), mtime, mtime);
		assert.equal(fs.statSync(tree.file('ws/a.txt')).mtimeMs, checked.identity.mtimeMs);
		replaceByRename('ws/a.txt', 'new\n');
		await sealBackups(backup.linked);
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
		assert.equal(modeOf(backup.copies[0]), 0o600);
	});

	it('a third name made between the link and the seal gets a copy of the checked bytes; that name keeps the file', async () => {
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(tree.file('storage'), 'Edit a', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, sourceOf('ws/a.txt')]]) });
		const original = inodeOf(tree.file('ws/a.txt'));
		fs.linkSync(tree.file('ws/a.txt'), tree.file('ws/third.txt'));
		replaceByRename('ws/a.txt', 'new\n');
		await sealBackups(backup.linked);
		assert.notEqual(inodeOf(backup.copies[0]), original);
		assert.equal(fs.statSync(tree.file('ws/third.txt')).nlink, 1);
		assert.equal(modeOf(tree.file('ws/third.txt')), 0o644, 'the workspace name keeps its mode');
		fs.writeFileSync(tree.file('ws/third.txt'), SAME_SIZE);
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
	});

	it('a parent folder swapped for a symlink out of the workspace before the link: nothing outside is linked or copied', async () => {
		fs.mkdirSync(tree.file('ws/sub'));
		fs.writeFileSync(tree.file('ws/sub/c.txt'), 'secret\n');
		const checked = sourceOf('ws/sub/c.txt');
		fs.mkdirSync(tree.file('outside/sub'));
		fs.writeFileSync(tree.file('outside/sub/c.txt'), 'secret\n');
		fs.renameSync(tree.file('ws/sub'), tree.file('ws/sub-old'));
		fs.symlinkSync(tree.file('outside/sub'), tree.file('ws/sub'));
		const change = fileChange(tree, 'ws/sub/c.txt', 'secret\n', 'new\n');
		const backup = await backupOriginals(tree.file('storage'), 'Edit c', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, checked]]) });
		assert.deepEqual(backup.linked, []);
		assert.equal(fs.statSync(tree.file('outside/sub/c.txt')).nlink, 1);
		assert.notEqual(inodeOf(backup.copies[0]), inodeOf(tree.file('outside/sub/c.txt')));
	});

	it('a backup store on another file system (tmpfs) gets copies: exact, owner-only, no second name of the workspace file', async function () {
		if (!fs.existsSync('/dev/shm') || fs.statSync('/dev/shm').dev === fs.statSync(tree.root).dev) this.skip();
		const shm = makeTree({}, '/dev/shm');
		try {
			const original = inodeOf(tree.file('ws/a.txt'));
			const h = makeHarness(tree.file('ws'), { storageDir: shm.root, settings: { approval: 'never' } });
			await h.text('apply_patch', { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n line one\n-line two\n+line 2\n' });
			const [set] = await listBackups(shm.root);
			const copy = path.join(set.dir, set.files[0].copy!);
			assert.deepEqual([fs.readFileSync(copy, 'utf8'), modeOf(copy), fs.statSync(copy).nlink], [ORIGINAL, 0o600, 1]);
			assert.notEqual(inodeOf(copy), original);
			assert.deepEqual(fs.readdirSync(set.dir).sort(), ['0-a.txt', 'manifest.json']);
		} finally {
			shm.cleanup();
		}
	});

	it('a change that fails before anything is renamed leaves exact, owner-only backups that are not workspace files, and workspace modes as they were', async function () {
		// Root or not, an immutable folder refuses the second file's staging.
		fs.mkdirSync(tree.file('ws/locked'));
		fs.writeFileSync(tree.file('ws/locked/c.txt'), 'sea\n');
		fs.chmodSync(tree.file('ws/a.txt'), 0o4755);
		fs.chmodSync(tree.file('ws/b.txt'), 0o444);
		try {
			execFileSync('chattr', ['+i', tree.file('ws/locked')], { stdio: 'ignore' });
		} catch {
			this.skip();
		}
		try {
			const storage = tree.file('storage');
			const h = makeHarness(tree.file('ws'), { storageDir: storage, settings: { approval: 'never' } });
			const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-line two\n+line 2\n*** Update File: locked/c.txt\n@@\n-sea\n+C\n*** Update File: b.txt\n@@\n-bee\n+B\n*** End Patch';
			await h.error('apply_patch', { patch });
			assert.deepEqual([fs.readFileSync(tree.file('ws/a.txt'), 'utf8'), fs.readFileSync(tree.file('ws/b.txt'), 'utf8'), fs.readFileSync(tree.file('ws/locked/c.txt'), 'utf8')], [ORIGINAL, 'bee\n', 'sea\n']);
			assert.deepEqual([modeOf(tree.file('ws/a.txt')), modeOf(tree.file('ws/b.txt'))], [0o4755, 0o444], 'sealing changed no workspace file');
			const sets = await listBackups(storage);
			for (const set of sets) {
				for (const entry of set.files) {
					const copy = path.join(set.dir, entry.copy!);
					assert.equal(fs.statSync(copy).nlink, 1, entry.displayPath);
					assert.equal(modeOf(copy), 0o600, entry.displayPath);
					assert.equal(fs.readFileSync(copy, 'utf8'), fs.readFileSync(entry.path, 'utf8'), entry.displayPath);
				}
			}
			for (const rel of ['ws/a.txt', 'ws/b.txt', 'ws/locked/c.txt']) assert.equal(fs.statSync(tree.file(rel)).nlink, 1, rel);
		} finally {
			execFileSync('chattr', ['-i', tree.file('ws/locked')], { stdio: 'ignore' });
		}
	});

	it('a patch that moves a file onto another one\'s name and deletes a third is restored byte for byte from its backup set', async () => {
		fs.writeFileSync(tree.file('ws/c.txt'), 'sea\n');
		const storage = tree.file('storage');
		const h = makeHarness(tree.file('ws'), { storageDir: storage, settings: { approval: 'never' } });
		const before = Object.fromEntries(['a.txt', 'b.txt', 'c.txt'].map(rel => [rel, fs.readFileSync(tree.file(`ws/${rel}`), 'utf8')]));
		// a.txt moves onto b.txt's name (b.txt is deleted first in the same patch), c.txt is deleted.
		await h.text('apply_patch', { patch: '*** Begin Patch\n*** Delete File: b.txt\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n line one\n-line two\n+line 2\n*** Delete File: c.txt\n*** End Patch' });
		assert.deepEqual([fs.existsSync(tree.file('ws/a.txt')), fs.readFileSync(tree.file('ws/b.txt'), 'utf8'), fs.existsSync(tree.file('ws/c.txt'))], [false, 'line one\nline 2\n', false]);
		const [set] = await listBackups(storage);
		const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: storage });
		const ctx: ChangeContext = { tool: 'restore', boundary: await env.boundary(), host: env.host, state: createChangeState(), signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined };
		const changes = await restoreChanges(set, absolute => path.relative(tree.file('ws'), absolute));
		await commitPlan(ctx, await planChange(ctx, 'Restore', changes), true);
		const after = Object.fromEntries(['a.txt', 'b.txt', 'c.txt'].map(rel => [rel, fs.readFileSync(tree.file(`ws/${rel}`), 'utf8')]));
		assert.deepEqual(after, before);
	});

	describe('special files opened on the main thread never block it', () => {
		/** The call, or a failure after `ms`: a blocked event loop cannot even fire the timer. */
		async function within<T>(ms: number, call: Promise<T>): Promise<T> {
			let timer: NodeJS.Timeout | undefined;
			const deadline = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`not done within ${ms} ms`)), ms); });
			try {
				return await Promise.race([call, deadline]);
			} finally {
				clearTimeout(timer);
			}
		}

		it('a FIFO, a character device and a socket in the workspace are refused at once by read_file and write_file', async function () {
			this.timeout(10_000);
			execFileSync('mkfifo', [tree.file('ws/fifo')]);
			let device = true;
			try {
				execFileSync('mknod', [tree.file('ws/zero'), 'c', '1', '5'], { stdio: 'ignore' });
			} catch {
				device = false;
			}
			const server = net.createServer().listen(tree.file('ws/sock'));
			await new Promise(resolve => server.once('listening', resolve));
			try {
				const h = makeHarness(tree.file('ws'), { storageDir: tree.file('storage'), settings: { approval: 'never' } });
				for (const name of ['fifo', 'sock', ...(device ? ['zero'] : [])]) {
					const read = await within(3000, h.error('read_file', { path: name }));
					assert.ok(read.message.length > 0, name);
					const write = await within(3000, h.error('write_file', { path: name, content: 'x\n' }));
					assert.ok(write.message.length > 0, name);
					assert.deepEqual(await listBackups(tree.file('storage')), [], `${name}: nothing backed up`);
				}
				assert.equal(fs.lstatSync(tree.file('ws/fifo')).isFIFO(), true, 'the FIFO is still there');
			} finally {
				await new Promise(resolve => server.close(resolve));
			}
		});

		it('a file on /proc reached through a workspace symlink is refused, not read', async function () {
			this.timeout(10_000);
			if (!fs.existsSync('/proc/self/status')) this.skip();
			fs.symlinkSync('/proc/self/status', tree.file('ws/status'));
			const h = makeHarness(tree.file('ws'), { storageDir: tree.file('storage'), settings: { approval: 'never' } });
			const read = await within(3000, h.error('read_file', { path: 'status' }));
			assert.doesNotMatch(read.message, /State:|Pid:/);
			await within(3000, h.error('write_file', { path: 'status', content: 'x\n' }));
			assert.deepEqual(await listBackups(tree.file('storage')), []);
		});
	});
});
