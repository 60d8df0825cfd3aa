import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyPatch, createTwoFilesPatch } from 'diff';
import { applyChangesAtomically, isAtomicTemp, removeDeadTemps, writeFileAtomic } from '../../src/core/files/atomic';
import { listBackups, restoreChanges, backupOriginals } from '../../src/core/changes/backups';
import type { FileChange } from '../../src/core/context';
import { lineCounts, unifiedDiff } from '../../src/core/changes/diff';
import { fileChange, makeTree } from './helpers';

const bytes = (text: string) => new Uint8Array(Buffer.from(text));

/** A pid no process has (Linux pids stay below 2^22). */
function deadPid(): number {
	for (let pid = 4_194_000; ; pid++) {
		try {
			process.kill(pid, 0);
		} catch {
			return pid;
		}
	}
}

describe('atomic writes', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'old\n', 'dir/b.txt': 'b\n' }); });
	afterEach(() => tree.cleanup());

	it('replaces a file and leaves no temp behind', async () => {
		await writeFileAtomic(tree.file('a.txt'), bytes('new\n'));
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'new\n');
		assert.deepEqual(fs.readdirSync(tree.root).filter(isAtomicTemp), []);
	});

	it('keeps the permission bits of the file it replaces', async function () {
		if (process.platform === 'win32') this.skip();
		fs.chmodSync(tree.file('a.txt'), 0o751);
		await writeFileAtomic(tree.file('a.txt'), bytes('x'));
		assert.equal(fs.statSync(tree.file('a.txt')).mode & 0o777, 0o751);
	});

	it('writes through a symlink, keeping the link', async function () {
		if (process.platform === 'win32') this.skip();
		fs.symlinkSync('a.txt', tree.file('link.txt'));
		await writeFileAtomic(tree.file('link.txt'), bytes('via link'));
		assert.ok(fs.lstatSync(tree.file('link.txt')).isSymbolicLink());
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'via link');
	});

	it('removes its temp when the write fails or is cancelled', async () => {
		await assert.rejects(writeFileAtomic(tree.file('dir'), bytes('x')), /EISDIR/);
		const controller = new AbortController();
		controller.abort();
		await assert.rejects(writeFileAtomic(tree.file('a.txt'), bytes('x'), { signal: controller.signal }), /cancelled/);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'old\n');
		assert.deepEqual([...fs.readdirSync(tree.root), ...fs.readdirSync(tree.file('dir'))].filter(isAtomicTemp), []);
	});

	it('removes temps left by dead writers of the same file, not those of live ones or other files', async () => {
		const dead = `.a.txt.tb${deadPid()}-0123abcd.tmp`;
		const live = `.a.txt.tb${process.ppid}-0123abcd.tmp`;
		const otherFile = `.b.txt.tb${deadPid()}-0123abcd.tmp`;
		for (const name of [dead, live, otherFile]) fs.writeFileSync(tree.file(name), 'half');
		assert.deepEqual(await removeDeadTemps(tree.file('a.txt')), [dead]);
		await writeFileAtomic(tree.file('a.txt'), bytes('x'));
		assert.deepEqual(fs.readdirSync(tree.root).filter(isAtomicTemp).sort(), [live, otherFile].sort());
	});
});

describe('applyChangesAtomically', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'keep.txt': 'keep\n', 'mod.txt': 'before\n', 'del.txt': 'delete me\n', 'move.txt': 'moving\n' }); });
	afterEach(() => tree.cleanup());

	const change = (rel: string, before: string | null, after: string | null, movedTo?: string) => fileChange(tree, rel, before, after, movedTo);

	it('creates (with folders), modifies, deletes and moves', async () => {
		await applyChangesAtomically([
			change('new/deep/n.txt', null, 'created\n'),
			change('mod.txt', 'before\n', 'after\n'),
			change('del.txt', 'delete me\n', null),
			change('move.txt', 'moving\n', 'moved\n', 'sub/moved.txt'),
		]);
		assert.equal(fs.readFileSync(tree.file('new/deep/n.txt'), 'utf8'), 'created\n');
		assert.equal(fs.readFileSync(tree.file('mod.txt'), 'utf8'), 'after\n');
		assert.equal(fs.existsSync(tree.file('del.txt')), false);
		assert.equal(fs.existsSync(tree.file('move.txt')), false);
		assert.equal(fs.readFileSync(tree.file('sub/moved.txt'), 'utf8'), 'moved\n');
	});

	const snapshot = () => fs.readdirSync(tree.root).sort().map(name => [name, fs.statSync(tree.file(name)).isFile() ? fs.readFileSync(tree.file(name), 'utf8') : 'dir']);
	/** A create, a modification, a deletion and a move, then `last`. */
	const mixedChangesThen = (last: FileChange) => [
		change('new/deep/n.txt', null, 'created\n'),
		change('mod.txt', 'before\n', 'after\n'),
		change('del.txt', 'delete me\n', null),
		change('move.txt', 'moving\n', 'moved\n', 'sub/moved.txt'),
		last,
	];

	it('changes nothing when a file cannot be staged, and leaves no temp', async () => {
		fs.mkdirSync(tree.file('blocker'));
		const before = snapshot();
		await assert.rejects(
			applyChangesAtomically(mixedChangesThen(change('blocker', 'x', 'cannot write a folder'))),
			(error: Error) => /^Could not write blocker: .* Nothing was changed\.$/.test(error.message),
		);
		assert.deepEqual(snapshot(), before);
		assert.deepEqual(fs.readdirSync(tree.root).filter(isAtomicTemp), []);
	});

	it('rolls back every file already committed when a later commit fails, and says so', async () => {
		const before = snapshot();
		let committedBeforeFailure: unknown[] = [];
		await assert.rejects(
			applyChangesAtomically(mixedChangesThen(change('keep.txt', 'keep\n', 'never written\n')), undefined, {
				beforeCommit: (_change, index) => {
					if (index < 4) return;
					committedBeforeFailure = snapshot();
					throw Object.assign(new Error('EIO: i/o error (injected)'), { code: 'EIO' });
				},
			}),
			(error: Error) => /^Could not write keep\.txt: .* The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.notDeepEqual(committedBeforeFailure, before, 'four files were committed before the failure');
		assert.deepEqual(snapshot(), before);
		assert.deepEqual(fs.readdirSync(tree.root).filter(isAtomicTemp), []);
	});

	it('rolls back when cancelled between files', async () => {
		// Cancelled once the first file is written.
		const signal = { get aborted() { return fs.readFileSync(tree.file('mod.txt'), 'utf8') === 'after\n'; } } as AbortSignal;
		await assert.rejects(applyChangesAtomically([change('mod.txt', 'before\n', 'after\n'), change('keep.txt', 'keep\n', 'changed\n')], signal), /cancelled.*were restored: nothing was changed/);
		assert.equal(fs.readFileSync(tree.file('mod.txt'), 'utf8'), 'before\n');
		assert.equal(fs.readFileSync(tree.file('keep.txt'), 'utf8'), 'keep\n');
	});
});

describe('backups', () => {
	it('copies originals with a manifest, lists sets newest first, and builds the restoring change set', async () => {
		const tree = makeTree({ 'a.txt': 'original a\n', 'm.txt': 'original m\n' });
		const storage = makeTree();
		try {
			const changes: FileChange[] = [
				{ path: tree.file('a.txt'), displayPath: 'a.txt', before: bytes('original a\n'), after: bytes('changed a\n') },
				{ path: tree.file('new.txt'), displayPath: 'new.txt', before: null, after: bytes('new\n') },
				{ path: tree.file('m.txt'), displayPath: 'm.txt', before: bytes('original m\n'), after: bytes('original m\n'), movedTo: { path: tree.file('moved/m.txt'), displayPath: 'moved/m.txt' } },
			];
			const { set, copies } = await backupOriginals(storage.root, 'Edit things', changes, { tool: 'apply_patch' });
			assert.equal(copies.length, 2);
			assert.deepEqual(set.files.map(file => file.existed), [true, false, true]);
			await applyChangesAtomically(changes);
			const [listed] = await listBackups(storage.root);
			assert.equal(listed.title, 'Edit things');
			assert.equal(listed.tool, 'apply_patch', 'the set names the tool whose change it precedes');
			const restoring = await restoreChanges(listed, absolute => path.relative(tree.root, absolute));
			await applyChangesAtomically(restoring);
			assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'original a\n');
			assert.equal(fs.existsSync(tree.file('new.txt')), false);
			assert.equal(fs.readFileSync(tree.file('m.txt'), 'utf8'), 'original m\n');
			assert.equal(fs.existsSync(tree.file('moved/m.txt')), false);
		} finally {
			tree.cleanup();
			storage.cleanup();
		}
	});
});

describe('diff of large, barely changed texts', () => {
	const change = (before: string, after: string): FileChange => ({ path: '/x', displayPath: 'x', before: bytes(before), after: bytes(after) });

	it('gives a diff that applies, equal to the full diff, on random edits (headers shifted to the whole file)', () => {
		let seed = 7;
		const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
		for (let round = 0; round < 600; round++) {
			// Half the rounds repeat lines a lot (where alignments are ambiguous), half have unique lines.
			const repetitive = round % 2 === 0;
			const lines = Array.from({ length: 1 + random(80) }, (_, i) => (repetitive ? `l${random(6)}` : `line ${i}`));
			const edited = [...lines];
			for (let k = random(4); k >= 0; k--) {
				const at = random(edited.length + 1);
				if (random(3) === 0) edited.splice(at, 1);
				else if (random(2) === 0) edited.splice(at, 0, `new${random(5)}`);
				else edited[Math.min(at, edited.length - 1)] = `mod${random(5)}`;
			}
			const endA = random(2) ? '\n' : '';
			const endB = random(2) ? endA : random(2) ? '\n' : '';
			const a = lines.join('\n') + endA;
			const b = edited.join('\n') + endB;
			const diff = unifiedDiff(change(a, b));
			assert.equal(applyPatch(a, diff), b, `round ${round}:\n${diff}`);
			const body = diff.split('\n').filter(line => !line.startsWith('--- ') && !line.startsWith('+++ '));
			const counted = { added: body.filter(line => line.startsWith('+')).length, removed: body.filter(line => line.startsWith('-')).length };
			assert.deepEqual(lineCounts(change(a, b)), counted, `round ${round}: the counts are the diff's\n${diff}`);
			for (const hunk of diff.split(/^@@.*\n/m).slice(1)) {
				const lead = /^((?: .*\n)*)/.exec(hunk)![1].split('\n').length - 1;
				assert.ok(lead <= 3, `round ${round}: at most 3 leading context lines`);
			}
			if (repetitive) continue;
			const full = createTwoFilesPatch('a/x', 'b/x', a, b, undefined, undefined, { context: 3 }).replace(/^=+\n/m, '');
			assert.equal(diff, full, `round ${round}`);
		}
	});

	it('diffs a one-line edit of a 20 MB text with the right line numbers', () => {
		const lines = Array.from({ length: 400_000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`);
		const a = lines.join('\n') + '\n';
		lines[200_000] = 'changed';
		const b = lines.join('\n') + '\n';
		assert.match(unifiedDiff(change(a, b)), /^--- a\/x\n\+\+\+ b\/x\n@@ -199998,7 \+199998,7 @@\n/);
		assert.deepEqual(lineCounts(change(a, b)), { added: 1, removed: 1 });
	});

	it('diffs a whole rewrite of a large file in linear time: every old line removed, every new one added, and the diff applies', () => {
		// A shortest edit script here costs (lines)² (the library took 74 s for 20,000 lines); past
		// the work limit the region is shown replaced whole. The mocha timeout is what fails if not.
		const a = Array.from({ length: 20_000 }, (_, i) => `old line ${i}`).join('\n') + '\n';
		const b = Array.from({ length: 20_000 }, (_, i) => `new line ${i}`).join('\n');
		const diff = unifiedDiff(change(a, b));
		assert.match(diff, /^--- a\/x\n\+\+\+ b\/x\n@@ -1,20000 \+1,20000 @@\n-old line 0\n/);
		assert.equal(applyPatch(a, diff), b);
		assert.deepEqual(lineCounts(change(a, b)), { added: 20_000, removed: 20_000 });
		// A rewrite of one middle part keeps the shared ends out of the hunk.
		const c = `head\n${a}tail\n`;
		const d = `head\n${b}\ntail\n`;
		const middle = unifiedDiff(change(c, d));
		assert.equal(applyPatch(c, middle), d);
		assert.deepEqual(lineCounts(change(c, d)), { added: 20_000, removed: 20_000 });
	});

	it('counts added and removed lines as the lines they are, whatever they hold', () => {
		// Lines that look like diff headers ("--- x", "+++ y") must count as the lines they are.
		assert.deepEqual(lineCounts(change('keep\n-- a\n+++ b\nend\n', 'keep\n--- x\n++ y\nnew\nend\n')), { added: 3, removed: 2 });
		assert.deepEqual(lineCounts(change('', 'a\nb')), { added: 2, removed: 0 });
		assert.deepEqual(lineCounts(change('x\n', '')), { added: 0, removed: 1 });
		// A last line that only gains its line break is a different line; CRLF lines count once.
		assert.deepEqual(lineCounts(change('a\nb', 'a\nb\n')), { added: 1, removed: 1 });
		assert.deepEqual(lineCounts(change('a\r\nb\r\n', 'a\r\nc\r\nb\r\n')), { added: 1, removed: 0 });
		assert.deepEqual(lineCounts(change('same\n', 'same\n')), { added: 0, removed: 0 });
	});
});
