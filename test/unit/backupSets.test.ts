import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BackupClock, backupOriginals, BackupSet, listBackups, restoreChanges } from '../../src/core/changes/backups';
import { commitPlan, planChange } from '../../src/core/changes/pipeline';
import { ChangeContext, createChangeState } from '../../src/core/context';
import { DiskBytes } from '../../src/core/files/diskBytes';
import { FileBytes, wholeBytes } from '../../src/core/files/splicedBytes';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { fileChange, makeHarness, makeTree } from './helpers';

/**
 * Backup sets as a whole (backups.ts): their order in time, how many are kept, how a list skips a
 * broken set, and the change set a restore builds from one (moved, created and since-deleted files).
 */
describe('backup sets', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'ws/a.txt': 'alpha\n', 'ws/b.txt': 'beta\n' }); });
	afterEach(() => tree.cleanup());

	const text = (bytes: FileBytes | DiskBytes | null) => (bytes === null ? null : Buffer.from(wholeBytes(bytes)).toString('utf8'));
	const display = (absolute: string) => path.relative(tree.file('ws'), absolute);

	describe('BackupClock', () => {
		it('never repeats or goes back within one host, and follows the wall clock when it moves ahead', () => {
			const clock = new BackupClock();
			assert.deepEqual([clock.next(1000), clock.next(1000), clock.next(1000), clock.next(5000), clock.next(4000)], [1000, 1001, 1002, 5000, 5001]);
		});
	});

	describe('keeping sets', () => {
		it('keeps only the newest sets beyond the limit, whatever order they were made or listed in', async () => {
			const storage = tree.file('storage');
			// Made out of time order: a prune that took the folder's listing order would keep the wrong ones.
			const times = [5, 1, 8, 3, 7, 2, 6, 4].map(hour => Date.UTC(2024, 0, 1, hour));
			for (const createdAt of times) await backupOriginals(storage, `set at ${createdAt}`, [fileChange(tree, 'ws/a.txt', 'alpha\n', 'x\n')], { createdAt, maxSets: 3 });
			const kept = await listBackups(storage);
			assert.deepEqual(kept.map(set => set.createdAt), [8, 7, 6].map(hour => Date.UTC(2024, 0, 1, hour)));
			assert.equal(fs.readdirSync(path.join(storage, 'backups')).length, 3);
			assert.equal(fs.readFileSync(path.join(kept[2].dir, kept[2].files[0].copy!), 'utf8'), 'alpha\n');
		});

		it('at the limit, keeps the newer of two sets made within one second, though its name sorts first', async () => {
			// Names hold the time to the second and a random suffix: within one second only the
			// manifests' times tell which set is older. Suffixes are set here so that name order is wrong.
			const storage = tree.file('storage');
			const second = Date.UTC(2024, 0, 1, 3);
			const older = await backupOriginals(storage, 'older', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'x\n')], { createdAt: second + 100 });
			const newer = await backupOriginals(storage, 'newer', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'y\n')], { createdAt: second + 900 });
			const stem = older.set.id.slice(0, older.set.id.lastIndexOf('-'));
			fs.renameSync(older.set.dir, path.join(storage, 'backups', `${stem}-ffffff`));
			fs.renameSync(newer.set.dir, path.join(storage, 'backups', `${stem}-000000`));
			await backupOriginals(storage, 'latest', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'z\n')], { createdAt: second + 5_000, maxSets: 2 });
			assert.deepEqual((await listBackups(storage)).map(set => set.title), ['latest', 'newer']);
		});

		it('at the limit, orders every set of a crowded second by its manifest, the first and the last by name too', async () => {
			// Four sets in one second, named so that the newest sorts first and the second newest last:
			// a set left out of the manifests read would count as oldest and be removed instead.
			const storage = tree.file('storage');
			const second = Date.UTC(2024, 0, 1, 4);
			const sets: Array<[string, number]> = [['newest', 900], ['oldest', 100], ['middle', 300], ['second newest', 700]];
			const made = [];
			for (const [title, ms] of sets) made.push(await backupOriginals(storage, title, [fileChange(tree, 'ws/a.txt', 'alpha\n', `${title}\n`)], { createdAt: second + ms }));
			const stem = made[0].set.id.slice(0, made[0].set.id.lastIndexOf('-'));
			made.forEach((set, index) => fs.renameSync(set.set.dir, path.join(storage, 'backups', `${stem}-${['000000', '555555', 'aaaaaa', 'ffffff'][index]}`)));
			await backupOriginals(storage, 'latest', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'z\n')], { createdAt: second + 5_000, maxSets: 3 });
			assert.deepEqual((await listBackups(storage)).map(set => set.title), ['latest', 'newest', 'second newest']);
		});

		it('removes nothing while the sets are within the limit', async () => {
			const storage = tree.file('storage');
			for (const hour of [1, 2, 3]) await backupOriginals(storage, 'set', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'x\n')], { createdAt: Date.UTC(2024, 0, 1, hour), maxSets: 3 });
			assert.equal((await listBackups(storage)).length, 3);
		});
	});

	describe('copies from disk', () => {
		it('close every file they open: a change set of many files leaves no descriptor behind', async function () {
			if (process.platform !== 'linux') this.skip();
			const openFiles = () => fs.readdirSync('/proc/self/fd').length;
			const changes = Array.from({ length: 20 }, (_, index) => {
				fs.writeFileSync(tree.file(`ws/f${index}.txt`), `file ${index}\n`);
				return fileChange(tree, `ws/f${index}.txt`, `file ${index}\n`, 'x\n');
			});
			const before = openFiles();
			const backup = await backupOriginals(tree.file('storage'), 'many', changes);
			assert.equal(backup.copies.length, 20);
			assert.equal(fs.readFileSync(backup.copies[7], 'utf8'), 'file 7\n');
			assert.equal(openFiles(), before);
		});
	});

	describe('virtual workspaces', () => {
		it('back up the bytes each change was planned on, and record a created file as one to delete', async () => {
			const storage = tree.file('storage');
			const edited = fileChange(tree, 'ws/a.txt', 'planned on\n', 'x\n');
			const created = fileChange(tree, 'ws/new.txt', null, 'made\n');
			const { set, copies } = await backupOriginals(storage, 'Edit', [edited, created], { fromPlan: true });
			assert.deepEqual(set.files.map(file => [file.displayPath, file.existed, file.copy]), [[edited.displayPath, true, '0-a.txt'], [created.displayPath, false, undefined]]);
			assert.deepEqual(copies.map(copy => fs.readFileSync(copy, 'utf8')), ['planned on\n']);
			assert.equal(fs.statSync(copies[0]).mode & 0o777, 0o600);
		});
	});

	describe('listing sets', () => {
		it('skips a set without a readable manifest, and keeps a tool only when the manifest names one', async () => {
			const storage = tree.file('storage');
			const named = await backupOriginals(storage, 'Edit a', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'x\n')], { tool: 'edit_file', createdAt: Date.UTC(2024, 0, 1, 3) });
			const unnamed = await backupOriginals(storage, 'Edit b', [fileChange(tree, 'ws/b.txt', 'beta\n', 'y\n')], { createdAt: Date.UTC(2024, 0, 1, 2) });
			const odd = await backupOriginals(storage, 'Edit a again', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'z\n')], { createdAt: Date.UTC(2024, 0, 1, 1) });
			const manifest = path.join(odd.set.dir, 'manifest.json');
			fs.writeFileSync(manifest, JSON.stringify({ ...JSON.parse(fs.readFileSync(manifest, 'utf8')), tool: 42 }));
			fs.mkdirSync(path.join(storage, 'backups', '20240101-040000-crashed'));
			fs.writeFileSync(path.join(storage, 'backups', '20240101-040000-crashed', '0-a.txt'), 'half');
			const broken = path.join(storage, 'backups', '20240101-050000-broken');
			fs.mkdirSync(broken);
			fs.writeFileSync(path.join(broken, 'manifest.json'), '{"title": "cut off');
			const sets = await listBackups(storage);
			assert.deepEqual(sets.map(set => set.id), [named.set.id, unnamed.set.id, odd.set.id]);
			assert.equal(sets[0].tool, 'edit_file');
			assert.ok(!('tool' in sets[1]), 'no tool in the manifest');
			assert.ok(!('tool' in sets[2]), 'a tool that is not a string');
			assert.deepEqual(sets[0], named.set);
			assert.equal(fs.statSync(path.join(named.set.dir, 'manifest.json')).mode & 0o777, 0o600, 'the manifest names the user\'s files: owner-only');
		});
		it('lists two sets made within one second newest first, though their names then sort by a random suffix', async () => {
			// A set's name holds its time to the second and a random suffix: within one second the
			// names' order is a coin toss, so only the manifest's time can order the sets.
			const second = Date.UTC(2024, 0, 1, 3);
			for (let attempt = 0; attempt < 40; attempt++) {
				const storage = tree.file(`storage-${attempt}`);
				const older = await backupOriginals(storage, 'older', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'x\n')], { createdAt: second + 100 });
				const newer = await backupOriginals(storage, 'newer', [fileChange(tree, 'ws/a.txt', 'alpha\n', 'y\n')], { createdAt: second + 900 });
				if (newer.set.id.localeCompare(older.set.id) > 0) continue;
				assert.deepEqual((await listBackups(storage)).map(set => set.title), ['newer', 'older']);
				return;
			}
			assert.fail('40 pairs of sets in one second all had names in time order');
		});
	});

	describe('restoring', () => {
		function setWith(files: BackupSet['files'], copies: Record<string, string> = {}): BackupSet {
			const dir = tree.file('storage/backups/set');
			fs.mkdirSync(dir, { recursive: true });
			for (const [name, bytes] of Object.entries(copies)) fs.writeFileSync(path.join(dir, name), bytes);
			return { id: 'set', dir, title: 'a set', createdAt: 1, files };
		}

		it('moves a moved file back with its old bytes', async () => {
			fs.renameSync(tree.file('ws/a.txt'), tree.file('ws/c.txt'));
			fs.writeFileSync(tree.file('ws/c.txt'), 'changed\n');
			const set = setWith([{ path: tree.file('ws/a.txt'), displayPath: 'a.txt', existed: true, copy: '0-a.txt', movedTo: tree.file('ws/c.txt') }], { '0-a.txt': 'alpha\n' });
			const [change, ...rest] = await restoreChanges(set, display);
			assert.deepEqual(rest, []);
			assert.deepEqual([change.path, text(change.before), text(change.after), change.movedTo], [tree.file('ws/c.txt'), 'changed\n', 'alpha\n', { path: tree.file('ws/a.txt'), displayPath: 'a.txt' }]);
		});

		it('recreates a moved file at its old place when its new place was deleted since', async () => {
			fs.rmSync(tree.file('ws/a.txt'));
			const set = setWith([{ path: tree.file('ws/a.txt'), displayPath: 'a.txt', existed: true, copy: '0-a.txt', movedTo: tree.file('ws/c.txt') }], { '0-a.txt': 'alpha\n' });
			const changes = await restoreChanges(set, display);
			assert.deepEqual(changes.map(change => [change.path, change.displayPath, text(change.before), text(change.after), change.movedTo]), [[tree.file('ws/a.txt'), 'a.txt', null, 'alpha\n', undefined]]);
		});

		it('deletes the new place of a moved file that has no copy, and creates nothing', async () => {
			fs.writeFileSync(tree.file('ws/c.txt'), 'made\n');
			const set = setWith([{ path: tree.file('ws/a.txt'), displayPath: 'a.txt', existed: false, movedTo: tree.file('ws/c.txt') }]);
			const changes = await restoreChanges(set, display);
			assert.deepEqual(changes.map(change => [change.path, text(change.before), text(change.after), change.movedTo]), [[tree.file('ws/c.txt'), 'made\n', null, undefined]]);
		});

		it('deletes a file the change created, skips one deleted since, and brings back one deleted since that existed', async () => {
			fs.writeFileSync(tree.file('ws/new.txt'), 'created\n');
			fs.rmSync(tree.file('ws/b.txt'));
			const set = setWith([
				{ path: tree.file('ws/new.txt'), displayPath: 'new.txt', existed: false },
				{ path: tree.file('ws/gone.txt'), displayPath: 'gone.txt', existed: false },
				{ path: tree.file('ws/b.txt'), displayPath: 'b.txt', existed: true, copy: '2-b.txt' },
			], { '2-b.txt': 'beta\n' });
			const changes = await restoreChanges(set, display);
			assert.deepEqual(changes.map(change => [change.displayPath, text(change.before), text(change.after), change.movedTo]), [['new.txt', 'created\n', null, undefined], ['b.txt', null, 'beta\n', undefined]]);
		});

		it('trusts a manifest entry that says the file was created over a stray copy in the set', async () => {
			const set = setWith([{ path: tree.file('ws/a.txt'), displayPath: 'a.txt', existed: false, copy: '0-a.txt' }], { '0-a.txt': 'stray\n' });
			const changes = await restoreChanges(set, display);
			assert.deepEqual(changes.map(change => [text(change.before), text(change.after)]), [['alpha\n', null]]);
		});

		it('a patch that moves, creates and deletes is undone by committing its restore, even after the moved file was deleted', async () => {
			const storage = tree.file('storage');
			const h = makeHarness(tree.file('ws'), { storageDir: storage, settings: { approval: 'never' } });
			await h.text('apply_patch', { patch: '*** Begin Patch\n*** Update File: a.txt\n*** Move to: c.txt\n@@\n-alpha\n+ALPHA\n*** Add File: new.txt\n+created\n*** Delete File: b.txt\n*** End Patch' });
			fs.rmSync(tree.file('ws/c.txt'));
			const [set] = await listBackups(storage);
			const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: storage });
			const ctx: ChangeContext = { tool: 'restore', boundary: await env.boundary(), host: env.host, state: createChangeState(), signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined };
			await commitPlan(ctx, await planChange(ctx, 'Restore', await restoreChanges(set, display)), true);
			assert.deepEqual(fs.readdirSync(tree.file('ws')).sort(), ['a.txt', 'b.txt']);
			assert.deepEqual([fs.readFileSync(tree.file('ws/a.txt'), 'utf8'), fs.readFileSync(tree.file('ws/b.txt'), 'utf8')], ['alpha\n', 'beta\n']);
		});
	});

	describe('a host that writes in place', () => {
		it('gets copies through edit_file: while it writes, no backup is a name of the file it rewrites', async () => {
			const storage = tree.file('storage');
			const seen: { nlink: number; backup: string }[] = [];
			const h = makeHarness(tree.file('ws'), { storageDir: storage, settings: { approval: 'never' }, applyChanges: async changes => {
				for (const change of changes) {
					const nlink = fs.statSync(change.path).nlink;
					fs.writeFileSync(change.path, wholeBytes(change.after!));
					const [set] = await listBackups(storage);
					seen.push({ nlink, backup: fs.readFileSync(path.join(set.dir, set.files[0].copy!), 'utf8') });
				}
			} });
			await h.text('edit_file', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'ALPHA' }] });
			assert.deepEqual(seen, [{ nlink: 1, backup: 'alpha\n' }]);
			assert.equal(fs.readFileSync(tree.file('ws/a.txt'), 'utf8'), 'ALPHA\n');
		});
	});
});
