import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyChangesAtomically, isAtomicTemp } from '../../src/core/files/atomic';
import { commitPlan, planChange } from '../../src/core/changes/pipeline';
import { ChangeContext, CheckedFiles, createChangeState, FileChange } from '../../src/core/context';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { Boundary } from '../../src/core/policy/boundary';
import { BoundaryError, ToolError } from '../../src/core/results/errors';
import { watchReadOpens } from '../../src/core/files/verifiedOpen';
import { fileChange, makeTree, snapshotTree } from './helpers';

/**
 * A change set committed with what the commit just checked (the disk bytes, the real paths): the
 * writes neither read nor resolve the files again, and a rollback is still exact.
 */
describe('atomic change sets with the files as the commit checked them', () => {
	let tree: ReturnType<typeof makeTree>;
	const restores: (() => void)[] = [];
	afterEach(() => {
		for (const restore of restores.splice(0).reverse()) restore();
		tree.cleanup();
	});

	const modeOf = (file: string) => fs.statSync(file).mode & 0o777;
	const injectedEio = () => Object.assign(new Error('EIO: i/o error (injected)'), { code: 'EIO' });
	const onDiskOf = (changes: readonly FileChange[]) => new Map(changes.flatMap(change => (change.before instanceof Uint8Array ? [[change.path, change.before] as const] : [])));
	/**
	 * The paths opened from now on: with fs.promises.open (folders; the temps are opened through
	 * their folder's descriptor), and files opened to be read (verifiedOpen's own open).
	 */
	function recordOpens(): string[] {
		const opened: string[] = [];
		const original = fs.promises.open;
		fs.promises.open = ((file: fs.PathLike, ...rest: unknown[]) => {
			opened.push(String(file));
			return (original as (...args: unknown[]) => Promise<fs.promises.FileHandle>)(file, ...rest);
		}) as typeof fs.promises.open;
		watchReadOpens((at, open) => {
			opened.push(at);
			return open(at);
		});
		restores.push(() => { fs.promises.open = original; watchReadOpens(undefined); });
		return opened;
	}
	const snapshotWithModes = () => Object.fromEntries(Object.entries(snapshotTree(tree.root)).map(([rel, text]) => [rel, text === '<dir>' ? text : `${modeOf(tree.file(rel)).toString(8)} ${text}`]));

	it('a failure late in a big set staged in parallel puts every file back exactly, bytes and modes, without reading one', async function () {
		if (process.platform === 'win32') this.skip();
		const files: Record<string, string> = {};
		for (let index = 0; index < 40; index++) files[`dir${index % 4}/file${index}.txt`] = `line ${index}\n`.repeat(index + 1);
		tree = makeTree(files);
		for (let index = 0; index < 40; index += 3) fs.chmodSync(tree.file(`dir${index % 4}/file${index}.txt`), index % 2 ? 0o600 : 0o755);
		const changes = Object.entries(files).map(([rel, text]) => fileChange(tree, rel, text, `${text}changed\n`));
		changes.push(fileChange(tree, 'dir1/new/added.txt', null, 'added\n'));
		const before = snapshotWithModes();
		const opened = recordOpens();
		await assert.rejects(
			applyChangesAtomically(changes, undefined, {
				onDisk: onDiskOf(changes),
				beforeCommit: (_change, index) => { if (index === 37) throw injectedEio(); },
			}),
			(error: ToolError) => /^Could not write dir1\/file37\.txt: .* The files written before it were restored: nothing was changed\.$/.test(error.message),
		);
		assert.deepEqual(snapshotWithModes(), before);
		assert.deepEqual(fs.readdirSync(tree.root, { recursive: true }).map(String).filter(name => isAtomicTemp(path.basename(name))), []);
		const changed = new Set(changes.map(change => change.path));
		assert.deepEqual(opened.filter(file => changed.has(file)), [], 'the originals came from the checked bytes; put back, they are written through a temp');
	});

	it('a file gone since it was checked is written anew, and a rollback removes it again, its bytes known or not', async () => {
		tree = makeTree({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
		const changes = [fileChange(tree, 'b.txt', 'b\n', 'B\n'), fileChange(tree, 'a.txt', 'a\n', 'A\n')];
		fs.rmSync(tree.file('b.txt'));
		await assert.rejects(applyChangesAtomically(changes, undefined, {
			onDisk: onDiskOf(changes),
			beforeCommit: (_change, index) => { if (index === 1) throw injectedEio(); },
		}), /The files written before it were restored: nothing was changed\.$/);
		assert.equal(fs.existsSync(tree.file('b.txt')), false);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'a\n');
	});

	it('a deleted or moved file gone since it was checked is not brought back from its checked bytes by a rollback', async () => {
		tree = makeTree({ 'gone.txt': 'gone\n', 'moved.txt': 'moved\n', 'a.txt': 'a\n' });
		const changes = [fileChange(tree, 'gone.txt', 'gone\n', null), fileChange(tree, 'moved.txt', 'moved\n', 'moved\n', 'there.txt'), fileChange(tree, 'a.txt', 'a\n', 'A\n')];
		fs.rmSync(tree.file('gone.txt'));
		fs.rmSync(tree.file('moved.txt'));
		await assert.rejects(applyChangesAtomically(changes, undefined, {
			onDisk: onDiskOf(changes),
			beforeCommit: (_change, index) => { if (index === 2) throw injectedEio(); },
		}), /The files written before it were restored: nothing was changed\.$/);
		assert.deepEqual(snapshotTree(tree.root), { 'a.txt': 'a\n' });
	});

	it('a move whose source is gone since it was checked makes its target with a new file\'s permission bits', async function () {
		if (process.platform === 'win32') this.skip();
		tree = makeTree({ 'moved.txt': 'moved\n', 'made.txt': '' });
		const changes = [fileChange(tree, 'moved.txt', 'moved\n', 'moved\n', 'there.txt')];
		fs.rmSync(tree.file('moved.txt'));
		await applyChangesAtomically(changes, undefined, { onDisk: onDiskOf(changes) });
		assert.equal(fs.readFileSync(tree.file('there.txt'), 'utf8'), 'moved\n');
		assert.equal(modeOf(tree.file('there.txt')), modeOf(tree.file('made.txt')));
	});

	it('a deleted or moved file put back from its checked bytes keeps its permission bits', async function () {
		if (process.platform === 'win32') this.skip();
		tree = makeTree({ 'run.sh': '#!/bin/sh\n', 'tool.sh': '#!/bin/sh\necho\n', 'a.txt': 'a\n' });
		fs.chmodSync(tree.file('run.sh'), 0o750);
		fs.chmodSync(tree.file('tool.sh'), 0o700);
		const changes = [fileChange(tree, 'run.sh', '#!/bin/sh\n', null), fileChange(tree, 'tool.sh', '#!/bin/sh\necho\n', '#!/bin/sh\necho 2\n', 'bin/tool.sh'), fileChange(tree, 'a.txt', 'a\n', 'A\n')];
		await assert.rejects(applyChangesAtomically(changes, undefined, {
			onDisk: onDiskOf(changes),
			beforeCommit: (_change, index) => { if (index === 2) throw injectedEio(); },
		}));
		assert.equal(fs.readFileSync(tree.file('run.sh'), 'utf8'), '#!/bin/sh\n');
		assert.equal(modeOf(tree.file('run.sh')), 0o750);
		assert.equal(fs.readFileSync(tree.file('tool.sh'), 'utf8'), '#!/bin/sh\necho\n');
		assert.equal(modeOf(tree.file('tool.sh')), 0o700);
		assert.equal(fs.existsSync(tree.file('bin/tool.sh')), false);
	});

	it('a real path given for a write is still checked where its folder is opened: one outside is refused, nothing written', async () => {
		tree = makeTree({ 'ws/a.txt': 'a\n', 'ws/b.txt': 'b\n', 'outside/a.txt': 'theirs\n' });
		const boundary = await Boundary.create({ roots: [{ name: 'ws', path: tree.file('ws') }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] });
		const changes = [fileChange(tree, 'ws/b.txt', 'b\n', 'B\n'), fileChange(tree, 'ws/a.txt', 'a\n', 'A\n')];
		await assert.rejects(
			applyChangesAtomically(changes, undefined, { boundary, realPaths: new Map([[tree.file('ws/a.txt'), tree.file('outside/a.txt')]]) }),
			(error: unknown) => error instanceof BoundaryError || (error instanceof ToolError && /Nothing was changed\.$/.test(error.message)),
		);
		assert.equal(fs.readFileSync(tree.file('outside/a.txt'), 'utf8'), 'theirs\n');
		assert.equal(fs.readFileSync(tree.file('ws/a.txt'), 'utf8'), 'a\n');
		assert.equal(fs.readFileSync(tree.file('ws/b.txt'), 'utf8'), 'b\n');
	});

	it('returns the version of every file it wrote, as it landed, by its final path; none for a deletion', async () => {
		tree = makeTree({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
		const written = await applyChangesAtomically([
			fileChange(tree, 'a.txt', 'a\n', 'A longer\n'),
			fileChange(tree, 'b.txt', 'b\n', null),
			fileChange(tree, 'c.txt', 'c\n', 'moved\n', 'sub/c.txt'),
			fileChange(tree, 'new.txt', null, 'new\n'),
		]);
		const versionOf = (rel: string) => {
			const stat = fs.statSync(tree.file(rel));
			return { mtimeMs: stat.mtimeMs, size: stat.size };
		};
		assert.deepEqual([...written].sort(([a], [b]) => a.localeCompare(b)), [
			[tree.file('a.txt'), versionOf('a.txt')],
			[tree.file('new.txt'), versionOf('new.txt')],
			[tree.file('sub/c.txt'), versionOf('sub/c.txt')],
		]);
	});

	it('the commit records the versions the host saw as it wrote, and asks the disk only for the others', async () => {
		tree = makeTree({ 'ws/a.txt': 'one\n', 'ws/b.txt': 'two\n' });
		const seen = { mtimeMs: 1234, size: 8 };
		const env = createNodeEnvironment({
			roots: [tree.file('ws')],
			storageDir: tree.file('storage'),
			applyChanges: async (changes, signal, boundary, checked) => {
				await applyChangesAtomically(changes, signal, { boundary, ...checked });
				// As if the host had seen a.txt so, right after writing it; b.txt it leaves to the disk.
				return new Map([[tree.file('ws/a.txt'), seen]]);
			},
		});
		const state = createChangeState();
		const ctx: ChangeContext = { tool: 'test', boundary: await env.boundary(), host: env.host, state, signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined };
		const changes: FileChange[] = [
			{ path: tree.file('ws/a.txt'), displayPath: 'a.txt', before: Buffer.from('one\n'), after: Buffer.from('ONE ONE\n') },
			{ path: tree.file('ws/b.txt'), displayPath: 'b.txt', before: Buffer.from('two\n'), after: Buffer.from('TWO\n') },
		];
		await commitPlan(ctx, await planChange(ctx, 'Change', changes), false);
		const a = state.fileVersions.get(tree.file('ws/a.txt'))!;
		assert.deepEqual({ mtimeMs: a.mtimeMs, size: a.size }, seen);
		assert.ok(a.sha256, 'a small file written has its digest');
		const b = state.fileVersions.get(tree.file('ws/b.txt'))!;
		assert.equal(b.mtimeMs, fs.statSync(tree.file('ws/b.txt')).mtimeMs);
	});

	it('a file both stale and turned protected by the time of the commit is reported stale, as when the checks ran in turn', async function () {
		if (process.platform === 'win32') this.skip();
		tree = makeTree({ 'ws/sub/a.txt': 'one\n', 'ws/.git/a.txt': 'other\n' });
		const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage') });
		const ctx: ChangeContext = { tool: 'test', boundary: await env.boundary(), host: env.host, state: createChangeState(), signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined };
		const plan = await planChange(ctx, 'Edit', [{ path: tree.file('ws/sub/a.txt'), displayPath: 'sub/a.txt', before: Buffer.from('one\n'), after: Buffer.from('two\n') }]);
		// The folder is swapped for a link into .git: the path now leads to another file, and a protected one.
		fs.rmSync(tree.file('ws/sub'), { recursive: true });
		fs.symlinkSync('.git', tree.file('ws/sub'));
		await assert.rejects(commitPlan(ctx, plan, false), (error: ToolError) => error.code === 'stale_write' && /^sub\/a\.txt changed since you were shown the change/.test(error.message));
		assert.equal(fs.readFileSync(tree.file('ws/.git/a.txt'), 'utf8'), 'other\n');
	});

	it('the commit hands the host the bytes it checked and the real paths it resolved, and the host writes there', async function () {
		if (process.platform === 'win32') this.skip();
		tree = makeTree({ 'ws/real/a.txt': 'one\n', 'ws/b.txt': 'two\n' });
		fs.symlinkSync('real', tree.file('ws/link'));
		let handed: CheckedFiles | undefined;
		const env = createNodeEnvironment({
			roots: [tree.file('ws')],
			storageDir: tree.file('storage'),
			applyChanges: (changes, signal, boundary, checked) => {
				handed = checked;
				return applyChangesAtomically(changes, signal, { boundary, ...checked });
			},
		});
		const ctx: ChangeContext = { tool: 'test', boundary: await env.boundary(), host: env.host, state: createChangeState(), signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined };
		const changes: FileChange[] = [
			{ path: tree.file('ws/link/a.txt'), displayPath: 'link/a.txt', before: Buffer.from('one\n'), after: Buffer.from('ONE\n') },
			{ path: tree.file('ws/b.txt'), displayPath: 'b.txt', before: Buffer.from('two\n'), after: null },
			{ path: tree.file('ws/new.txt'), displayPath: 'new.txt', before: null, after: Buffer.from('new\n') },
		];
		await commitPlan(ctx, await planChange(ctx, 'Change', changes), false);
		assert.deepEqual([...handed!.onDisk!].map(([file, bytes]) => [file, Buffer.from(bytes).toString()]), [[tree.file('ws/link/a.txt'), 'one\n'], [tree.file('ws/b.txt'), 'two\n']]);
		assert.deepEqual([...handed!.realPaths!], [
			[tree.file('ws/link/a.txt'), tree.file('ws/real/a.txt')],
			[tree.file('ws/b.txt'), tree.file('ws/b.txt')],
			[tree.file('ws/new.txt'), tree.file('ws/new.txt')],
		]);
		assert.equal(fs.lstatSync(tree.file('ws/link')).isSymbolicLink(), true);
		assert.equal(fs.readFileSync(tree.file('ws/real/a.txt'), 'utf8'), 'ONE\n');
		assert.equal(fs.existsSync(tree.file('ws/b.txt')), false);
		assert.equal(fs.readFileSync(tree.file('ws/new.txt'), 'utf8'), 'new\n');
	});
});
