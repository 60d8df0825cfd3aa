import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Type } from '@sinclair/typebox';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { parsePatch } from '../../src/core/patch/parse';
import { preparePatch, type StagedPatch } from '../../src/core/patch/apply';
import { textResult } from '../../src/core/results/result';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/tool';
import { makeHarness, makeTree, testStorageDir } from './helpers';

const envelope = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

/**
 * Staging a patch on its own (what it locks, what it reports), and sequences of operations on one
 * file within a patch: each must end with the files the patch describes, and say what it did.
 */
describe('apply_patch: staging sequences and what a patch locks', () => {
	let tree: ReturnType<typeof makeTree>;
	afterEach(() => tree?.cleanup());

	/** Prepares and stages `patch` inside a tool call (for a real ToolContext); the locked paths come back relative. */
	async function stage(files: Record<string, string>, patch: string): Promise<{ paths: string[]; staged: StagedPatch }> {
		tree = makeTree(files);
		let outcome: { paths: string[]; staged: StagedPatch } | undefined;
		const probe = defineTool({
			name: 'stage_probe', referenceName: 'tbStageProbe', displayName: 'Stage Probe', group: 'edit', mutating: false, icon: 'edit', tags: [],
			userDescription: 'test', modelDescription: 'test', schema: Type.Object({}), describe: () => 'Staging',
			run: async (_input, ctx) => {
				const prepared = await preparePatch(parsePatch(patch), ctx);
				const staged = await prepared.stage();
				outcome = { paths: prepared.paths.map(absolute => absolute.slice(tree.root.length + 1)).sort(), staged };
				return textResult('staged');
			},
		});
		const registry = new ToolRegistry([probe], createNodeEnvironment({ roots: [tree.root], storageDir: testStorageDir(), confirm: async () => true }));
		const result = await registry.invoke('stage_probe', {});
		if (result.error) throw Object.assign(new Error(result.error.message), { code: result.error.code });
		return outcome!;
	}

	async function apply(files: Record<string, string>, patch: string): Promise<string> {
		tree = makeTree(files);
		return makeHarness(tree.root).text('apply_patch', { patch });
	}
	const exists = (name: string) => fs.existsSync(tree.file(name));
	const read = (name: string) => fs.readFileSync(tree.file(name), 'utf8');

	it('locks every path the patch names: sources, move targets and a plain diff\'s other name', async () => {
		const { paths } = await stage({ 'a.txt': 'a\n', 'old.c': 'int x;\n' }, envelope('*** Update File: a.txt', '*** Move to: b/c.txt', '@@', '-a', '+A'));
		assert.deepEqual(paths, ['a.txt', 'b/c.txt']);
		const plain = await stage({ 'old.c': 'int x;\n' }, '--- old.c\n+++ new.c\n@@ -1 +1 @@\n-int x;\n+int y;\n');
		assert.deepEqual(plain.paths, ['new.c', 'old.c']);
	});

	it('reports protected paths of a move, and the tolerances it used', async () => {
		const { staged } = await stage({ '.env': 'S=1   \n' }, envelope('*** Update File: .env', '*** Move to: env.txt', '@@', '-S=1', '+S=2'));
		assert.deepEqual(staged.files, [{ status: 'moved', path: '.env', movedTo: 'env.txt' }]);
		assert.deepEqual(staged.protectedPaths, ['.env']);
		assert.equal(staged.notes.length, 1);
		assert.match(staged.notes[0], /trailing whitespace/i);
		const into = await stage({ 'env.txt': 'S=1\n' }, envelope('*** Update File: env.txt', '*** Move to: .env'));
		assert.deepEqual(into.staged.protectedPaths, ['.env'], 'the target of a move is protected too');
	});

	it('a move of a file onto its own name with no hunks changes nothing', async () => {
		const { staged } = await stage({ 'a.txt': 'a\n' }, envelope('*** Update File: a.txt', '*** Move to: a.txt'));
		assert.deepEqual(staged.changes, []);
		assert.deepEqual(staged.unchanged, ['a.txt']);
	});

	it('a file moved and then deleted is one deletion of the source', async () => {
		const text = await apply({ 'a.txt': 'a\n' }, envelope('*** Update File: a.txt', '*** Move to: b.txt', '*** Delete File: b.txt'));
		assert.match(text, /^D a\.txt/m);
		assert.equal(exists('a.txt'), false);
		assert.equal(exists('b.txt'), false);
	});

	it('a move onto a name the patch deleted first replaces that file', async () => {
		const text = await apply({ 'a.txt': 'from a\n', 'b.txt': 'old b\n' }, envelope('*** Delete File: b.txt', '*** Update File: a.txt', '*** Move to: b.txt'));
		assert.match(text, /^D a\.txt/m);
		assert.match(text, /^M b\.txt/m);
		assert.equal(exists('a.txt'), false);
		assert.equal(read('b.txt'), 'from a\n');
	});

	it('a file moved away and then added again keeps both: the moved one and the new one', async () => {
		await apply({ 'a.txt': 'first\n' }, envelope('*** Update File: a.txt', '*** Move to: b.txt', '*** Add File: a.txt', '+second'));
		assert.equal(read('b.txt'), 'first\n');
		assert.equal(read('a.txt'), 'second\n');
	});

	it('a file added and then moved is added under its last name only', async () => {
		const text = await apply({}, envelope('*** Add File: x.txt', '+x', '*** Update File: x.txt', '*** Move to: y.txt'));
		assert.match(text, /^A y\.txt/m);
		assert.equal(exists('x.txt'), false);
		assert.equal(read('y.txt'), 'x\n');
	});

	it('names the patch line of a path the boundary refuses, and changes nothing', async () => {
		tree = makeTree({ 'a.txt': 'a\n' });
		const error = await makeHarness(tree.root).error('apply_patch', { patch: envelope('*** Update File: a.txt', '@@', '-a', '+A', '*** Add File: ../outside.txt', '+x') });
		assert.match(error.message, /\(path at patch line 6; nothing was changed\)$/);
		assert.equal(read('a.txt'), 'a\n');
	});

	it('refuses to change a file in a folder given only for reading', async () => {
		const shared = makeTree({ 'lib.txt': 'lib\n' });
		try {
			tree = makeTree({ 'a.txt': 'a\n' });
			const harness = makeHarness(tree.root, { settings: { additionalReadPaths: [shared.root] } });
			const error = await harness.error('apply_patch', { patch: envelope(`*** Update File: ${shared.file('lib.txt')}`, '@@', '-lib', '+LIB') });
			assert.match(error.message, /\(rule: read_only\).[^]*\(path at patch line 2; nothing was changed\)$/);
			assert.equal(fs.readFileSync(shared.file('lib.txt'), 'utf8'), 'lib\n');
		} finally {
			shared.cleanup();
		}
	});

	it('refuses a new file two folders below a file', async () => {
		tree = makeTree({ 'a.txt': 'a\n' });
		const error = await makeHarness(tree.root).error('apply_patch', { patch: envelope('*** Add File: a.txt/sub/b.txt', '+x') });
		assert.equal(error.message, 'a.txt/sub/b.txt (patch line 2) cannot be created: a.txt is a file, not a folder. Nothing was changed.');
		assert.equal(read('a.txt'), 'a\n');
	});

	it('a name a plain diff did not create is no file in the way of a folder of that name', async () => {
		await apply({ 'old.c': 'int x;\n' }, '--- old.c\n+++ new.c\n@@ -1 +1 @@\n-int x;\n+int y;\n--- /dev/null\n+++ new.c/inner.txt\n@@ -0,0 +1 @@\n+hi\n');
		assert.equal(read('old.c'), 'int y;\n');
		assert.equal(read('new.c/inner.txt'), 'hi\n');
	});

	it('patches a file of exactly 32 MB (the limit is above it)', async function () {
		this.timeout(60_000);
		tree = makeTree({});
		const big = Buffer.alloc(32 * 1024 * 1024, 'x');
		big.write('a\n', 0);
		fs.writeFileSync(tree.file('big.txt'), big);
		await makeHarness(tree.root).text('apply_patch', { patch: envelope('*** Update File: big.txt', '@@', '-a', '+b') });
		const fd = fs.openSync(tree.file('big.txt'), 'r');
		const head = Buffer.alloc(2);
		fs.readSync(fd, head, 0, 2, 0);
		fs.closeSync(fd);
		assert.equal(head.toString(), 'b\n');
	});
});
