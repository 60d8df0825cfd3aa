import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pruneBackups } from '../../src/core/changes/backupPruning';
import { BackupClock, backupOriginals, listBackups } from '../../src/core/changes/backups';
import { makeTree } from './helpers';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.UTC(2024, 5, 1);

/** A backup set folder as backups.ts writes it, with a chosen age and size. */
function makeSet(storage: string, id: string, ageDays: number, bytes: number): void {
	const dir = path.join(storage, 'backups', id);
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, '0-a.txt'), Buffer.alloc(bytes, 97));
	fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ id, title: `set ${id}`, createdAt: NOW - ageDays * DAY, files: [] }));
}

function remaining(storage: string): string[] {
	return fs.readdirSync(path.join(storage, 'backups')).sort();
}

describe('backup pruning', () => {
	it('removes sets older than the age limit', async () => {
		const tree = makeTree();
		try {
			makeSet(tree.root, 'a', 30, 10);
			makeSet(tree.root, 'b', 8, 10);
			makeSet(tree.root, 'c', 1, 10);
			const report = await pruneBackups(tree.root, { maxAgeDays: 7, maxTotalBytes: 0, now: NOW });
			assert.deepEqual(remaining(tree.root), ['c']);
			assert.equal(report.removed, 2);
			assert.ok(report.freedBytes >= 20);
		} finally {
			tree.cleanup();
		}
	});

	it('removes the oldest sets until the total fits', async () => {
		const tree = makeTree();
		try {
			makeSet(tree.root, 'a', 3, 1000);
			makeSet(tree.root, 'b', 2, 1000);
			makeSet(tree.root, 'c', 1, 1000);
			await pruneBackups(tree.root, { maxAgeDays: 0, maxTotalBytes: 2500, now: NOW });
			assert.deepEqual(remaining(tree.root), ['b', 'c']);
		} finally {
			tree.cleanup();
		}
	});

	it('always keeps the newest set, even when it alone is over the limits', async () => {
		const tree = makeTree();
		try {
			makeSet(tree.root, 'old', 100, 5000);
			makeSet(tree.root, 'new', 50, 5000);
			const report = await pruneBackups(tree.root, { maxAgeDays: 1, maxTotalBytes: 100, now: NOW });
			assert.deepEqual(remaining(tree.root), ['new']);
			assert.equal(report.kept, 1);
		} finally {
			tree.cleanup();
		}
	});

	it('works on sets written by backupOriginals and on a missing folder', async () => {
		const tree = makeTree({ 'ws/a.txt': 'hello' });
		try {
			const storage = path.join(tree.root, 'storage');
			assert.equal((await pruneBackups(storage, { maxAgeDays: 1, maxTotalBytes: 1, now: NOW })).kept, 0);
			const change = { path: tree.file('ws/a.txt'), displayPath: 'a.txt', before: Buffer.from('hello'), after: Buffer.from('bye') };
			// One clock, as a tool host has: two sets within a millisecond still keep their order.
			const clock = new BackupClock();
			await backupOriginals(storage, 'Write a.txt', [change], { createdAt: clock.next() });
			await backupOriginals(storage, 'Write a.txt again', [change], { createdAt: clock.next() });
			const report = await pruneBackups(storage, { maxAgeDays: 0, maxTotalBytes: 1, now: Date.now() });
			assert.equal(report.kept, 1);
			const sets = await listBackups(storage);
			assert.deepEqual(sets.map(set => set.title), ['Write a.txt again']);
		} finally {
			tree.cleanup();
		}
	});
});
