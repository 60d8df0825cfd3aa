import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { backupOriginals, LinkSource, listBackups, sealBackups } from '../../src/core/changes/backups';
import { commitPlan, planChange } from '../../src/core/changes/pipeline';
import { ChangeContext, createChangeState, FileChange } from '../../src/core/context';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { fileChange, makeHarness, makeTree } from './helpers';

/**
 * Backups by hard link (backups.ts, linkOriginal and sealBackups): where the host replaces files by
 * rename, a backup is a second name of the original file. These tests check that such a backup
 * holds the original bytes for good, whatever is later written at the workspace path, and that
 * every case where a link could change later gets a copy instead.
 */
describe('backups by hard link', () => {
	let tree: ReturnType<typeof makeTree>;
	const ORIGINAL = 'line one\nline two\n';
	beforeEach(() => { tree = makeTree({ 'ws/a.txt': ORIGINAL, 'ws/b.txt': 'bee\n' }); });
	afterEach(() => tree.cleanup());

	const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
	const inodeOf = (file: string) => fs.statSync(file).ino;

	/** The one backup set's copy of a workspace file (by its display path). */
	async function backupOf(storage: string, display: string): Promise<string> {
		const [set] = await listBackups(storage);
		const entry = set.files.find(file => file.displayPath === display)!;
		return path.join(set.dir, entry.copy!);
	}

	/** What the commit check reports for a file: where it is and which file it is. */
	function sourceOf(rel: string): LinkSource {
		const stat = fs.statSync(tree.file(rel));
		return { real: tree.file(rel), identity: { dev: stat.dev, ino: stat.ino, mtimeMs: stat.mtimeMs } };
	}

	it('a patched file\'s backup is the original file itself, owner-only, and keeps its bytes when the new file is rewritten in place', async () => {
		const original = inodeOf(tree.file('ws/a.txt'));
		const storage = tree.file('storage');
		const h = makeHarness(tree.file('ws'), { storageDir: storage, settings: { approval: 'never' } });
		await h.text('apply_patch', { patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n line one\n-line two\n+line 2\n' });
		const backup = await backupOf(storage, 'a.txt');
		// The link was taken (no copy made) and is the only name of the original now.
		assert.equal(inodeOf(backup), original);
		assert.equal(fs.statSync(backup).nlink, 1);
		assert.equal(modeOf(backup), 0o600);
		assert.notEqual(inodeOf(tree.file('ws/a.txt')), original);
		// Someone rewrites the workspace file in place (same inode, same size): the backup is another file.
		fs.writeFileSync(tree.file('ws/a.txt'), 'LINE ONE\nLINE 2\n');
		assert.equal(fs.readFileSync(backup, 'utf8'), ORIGINAL);
	});

	it('a file with another hard link is backed up by a copy: writing through that link later leaves the backup as it was', async () => {
		fs.linkSync(tree.file('ws/a.txt'), tree.file('elsewhere.txt'));
		const original = inodeOf(tree.file('ws/a.txt'));
		const storage = tree.file('storage');
		const h = makeHarness(tree.file('ws'), { storageDir: storage, settings: { approval: 'never' } });
		await h.text('write_file', { path: 'a.txt', content: 'new\n' });
		const backup = await backupOf(storage, 'a.txt');
		assert.notEqual(inodeOf(backup), original);
		assert.equal(fs.statSync(tree.file('elsewhere.txt')).nlink, 1, 'no name of the original left in the backup set');
		fs.writeFileSync(tree.file('elsewhere.txt'), 'changed through the other link\n');
		assert.equal(fs.readFileSync(backup, 'utf8'), ORIGINAL);
		assert.equal(modeOf(backup), 0o600);
		// Not even for the while of the commit: the shared file is never linked.
		const change = fileChange(tree, 'ws/b.txt', 'bee\n', 'new\n');
		fs.linkSync(tree.file('ws/b.txt'), tree.file('elsewhere-b.txt'));
		const direct = await backupOriginals(tree.file('storage2'), 'Edit b.txt', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, sourceOf('ws/b.txt')]]) });
		assert.deepEqual([direct.linked.length, fs.statSync(tree.file('ws/b.txt')).nlink], [0, 2]);
	});

	it('a link that fails (another file system, a refusal) is replaced by a copy of the checked bytes, with nothing else in the set', async () => {
		const storage = tree.file('storage');
		const attempts: string[] = [];
		const crossDevice = (existing: string) => {
			attempts.push(existing);
			throw Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' });
		};
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(storage, 'Edit a.txt', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, sourceOf('ws/a.txt')]]), link: crossDevice });
		assert.deepEqual(attempts, [tree.file('ws/a.txt')]);
		assert.deepEqual(backup.linked, []);
		assert.deepEqual(fs.readdirSync(backup.set.dir).sort(), ['0-a.txt', 'manifest.json']);
		assert.notEqual(inodeOf(backup.copies[0]), inodeOf(tree.file('ws/a.txt')));
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
		assert.equal(modeOf(backup.copies[0]), 0o600);
	});

	it('a path that no longer leads to the file checked (replaced since) gets a copy, and no link to the newcomer stays', async () => {
		const storage = tree.file('storage');
		const checked = sourceOf('ws/a.txt');
		// Same bytes, another file: renamed over the checked one after the check.
		fs.writeFileSync(tree.file('ws/other.txt'), ORIGINAL);
		fs.renameSync(tree.file('ws/other.txt'), tree.file('ws/a.txt'));
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(storage, 'Edit a.txt', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, checked]]) });
		assert.deepEqual(backup.linked, []);
		assert.equal(fs.statSync(tree.file('ws/a.txt')).nlink, 1, 'the newcomer has no second name in the set');
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
		assert.equal(modeOf(backup.copies[0]), 0o600);
	});

	it('a symlink put at the real path is never linked: the backup is a copy of the checked bytes', async () => {
		const storage = tree.file('storage');
		const checked = sourceOf('ws/a.txt');
		fs.renameSync(tree.file('ws/a.txt'), tree.file('ws/moved.txt'));
		fs.symlinkSync(tree.file('ws/moved.txt'), tree.file('ws/a.txt'));
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(storage, 'Edit a.txt', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, checked]]) });
		assert.deepEqual(backup.linked, []);
		assert.ok(fs.lstatSync(backup.copies[0]).isFile());
		assert.equal(fs.statSync(tree.file('ws/moved.txt')).nlink, 1);
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
	});

	it('a file of the same inode number on another device is another file: a copy, not a link', async () => {
		// A folder on the path swapped for a mount (tmpfs numbers its inodes from small integers too):
		// the number alone matches; the device says it is not the file checked.
		const storage = tree.file('storage');
		const here = sourceOf('ws/a.txt');
		const elsewhere: LinkSource = { real: here.real, identity: { ...here.identity, dev: here.identity.dev + 1 } };
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(storage, 'Edit a.txt', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, elsewhere]]) });
		assert.deepEqual(backup.linked, []);
		assert.equal(fs.statSync(tree.file('ws/a.txt')).nlink, 1, 'no link to it stays in the set');
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
	});

	it('a file rewritten in place since the check (same file, another size) gets a copy of the bytes checked, not a link', async () => {
		const storage = tree.file('storage');
		const checked = sourceOf('ws/a.txt');
		fs.writeFileSync(tree.file('ws/a.txt'), 'rewritten in place meanwhile\n');
		assert.equal(inodeOf(tree.file('ws/a.txt')), checked.identity.ino, 'the same file');
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(storage, 'Edit a.txt', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, checked]]) });
		assert.deepEqual(backup.linked, []);
		assert.equal(fs.statSync(tree.file('ws/a.txt')).nlink, 1);
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
	});

	it('a file whose checked bytes are not given is copied from disk, never linked, even with its identity given', async () => {
		const storage = tree.file('storage');
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(storage, 'Edit a.txt', [change], { replaced: new Map([[change.path, sourceOf('ws/a.txt')]]) });
		assert.deepEqual(backup.linked, []);
		assert.notEqual(inodeOf(backup.copies[0]), inodeOf(tree.file('ws/a.txt')));
		assert.equal(fs.statSync(tree.file('ws/a.txt')).nlink, 1);
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
	});

	it('sealing a link whose original is still at its path (the change was not written) makes it a copy of its own', async () => {
		const storage = tree.file('storage');
		const change = fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n');
		const backup = await backupOriginals(storage, 'Edit a.txt', [change], { onDisk: new Map([[change.path, change.before as Uint8Array]]), replaced: new Map([[change.path, sourceOf('ws/a.txt')]]) });
		assert.equal(backup.linked.length, 1);
		assert.equal(inodeOf(backup.copies[0]), inodeOf(tree.file('ws/a.txt')), 'linked until sealed');
		await sealBackups(backup.linked);
		assert.notEqual(inodeOf(backup.copies[0]), inodeOf(tree.file('ws/a.txt')));
		assert.equal(fs.statSync(tree.file('ws/a.txt')).nlink, 1);
		assert.equal(modeOf(backup.copies[0]), 0o600);
		assert.deepEqual(fs.readdirSync(backup.set.dir).sort(), ['0-a.txt', 'manifest.json']);
		fs.writeFileSync(tree.file('ws/a.txt'), 'LINE ONE\nLINE TWO\n');
		assert.equal(fs.readFileSync(backup.copies[0], 'utf8'), ORIGINAL);
	});

	it('a commit that fails leaves backups that are not the workspace files: editing them in place later changes no backup', async () => {
		const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage') });
		const failing = async () => { throw new Error('disk full'); };
		const ctx: ChangeContext = {
			tool: 'apply_patch',
			boundary: await env.boundary(),
			host: { ...env.host, applyChanges: failing, replacesFiles: true },
			state: createChangeState(),
			signal: new AbortController().signal,
			settings: { showDiffs: 'never' },
			note: () => undefined,
		};
		const changes: FileChange[] = [fileChange(tree, 'ws/a.txt', ORIGINAL, 'new a\n'), fileChange(tree, 'ws/b.txt', 'bee\n', 'new b\n')];
		const plan = await planChange(ctx, 'Edit two', changes);
		await assert.rejects(commitPlan(ctx, plan, true), { code: 'io', message: /disk full/ });
		for (const [rel, bytes] of [['a.txt', ORIGINAL], ['b.txt', 'bee\n']]) {
			const backup = await backupOf(tree.file('storage'), `ws/${rel}`);
			assert.notEqual(inodeOf(backup), inodeOf(tree.file(`ws/${rel}`)), rel);
			fs.writeFileSync(tree.file(`ws/${rel}`), 'rewritten in place\n');
			assert.equal(fs.readFileSync(backup, 'utf8'), bytes, rel);
		}
	});

	it('a host that may write in place (replacesFiles unset) gets copies, never links', async () => {
		const original = inodeOf(tree.file('ws/a.txt'));
		const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage'), applyChanges: async changes => {
			// In place, as an editor's save writes.
			for (const change of changes) fs.writeFileSync(change.path, change.after as Uint8Array);
		} });
		assert.equal(env.host.replacesFiles, false);
		const ctx: ChangeContext = { tool: 'write_file', boundary: await env.boundary(), host: env.host, state: createChangeState(), signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined };
		const plan = await planChange(ctx, 'Edit a', [fileChange(tree, 'ws/a.txt', ORIGINAL, 'new\n')]);
		await commitPlan(ctx, plan, true);
		assert.equal(inodeOf(tree.file('ws/a.txt')), original, 'written in place');
		const backup = await backupOf(tree.file('storage'), 'ws/a.txt');
		assert.notEqual(inodeOf(backup), original);
		assert.equal(fs.readFileSync(backup, 'utf8'), ORIGINAL);
	});

	it('a moved and a deleted file are backed up by their originals too, and restore their exact bytes', async () => {
		const moved = inodeOf(tree.file('ws/a.txt'));
		const deleted = inodeOf(tree.file('ws/b.txt'));
		const storage = tree.file('storage');
		const h = makeHarness(tree.file('ws'), { storageDir: storage, settings: { approval: 'never' } });
		await h.text('apply_patch', { patch: '*** Begin Patch\n*** Update File: a.txt\n*** Move to: c.txt\n@@\n line one\n-line two\n+line 2\n*** Delete File: b.txt\n*** End Patch' });
		const a = await backupOf(storage, 'a.txt');
		const b = await backupOf(storage, 'b.txt');
		assert.deepEqual([inodeOf(a), inodeOf(b)], [moved, deleted]);
		assert.deepEqual([fs.statSync(a).nlink, fs.statSync(b).nlink, modeOf(a), modeOf(b)], [1, 1, 0o600, 0o600]);
		assert.deepEqual([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')], [ORIGINAL, 'bee\n']);
	});
});
