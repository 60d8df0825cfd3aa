import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { resultText } from '../../src/core/results/result';
import { makeHarness, makeTree } from './helpers';

const envelope = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

/** apply_patch through the registry on a fresh tree: every file operation's refusals and outcomes. */
describe('apply_patch: staging file operations', () => {
	let tree: ReturnType<typeof makeTree>;
	let trees: ReturnType<typeof makeTree>[] = [];
	const fresh = (files: Record<string, string> = {}) => {
		tree = makeTree(files);
		trees.push(tree);
		return tree;
	};
	afterEach(() => {
		for (const made of trees) made.cleanup();
		trees = [];
	});

	/** The error (message and details) of a patch that must fail, checking the tree did not change. */
	async function refusal(files: Record<string, string>, patch: string, folders: string[] = []) {
		fresh(files);
		for (const folder of folders) fs.mkdirSync(tree.file(folder), { recursive: true });
		const before = fs.readdirSync(tree.root).sort();
		const result = await makeHarness(tree.root).invoke('apply_patch', { patch });
		assert.ok(result.error, `expected a refusal, got:\n${resultText(result)}`);
		assert.deepEqual(fs.readdirSync(tree.root).sort(), before);
		return { message: result.error.message, details: result.metadata.errorDetails };
	}
	async function applied(files: Record<string, string>, patch: string, settings = {}) {
		fresh(files);
		const harness = makeHarness(tree.root, { settings });
		const text = await harness.text('apply_patch', { patch });
		return { text, asked: harness.asked };
	}

	it('refuses to add a file in place of a folder or of a file that exists', async () => {
		assert.deepEqual(await refusal({}, envelope('*** Add File: dir', '+x'), ['dir']), {
			message: 'dir (patch line 2) is a directory; a file cannot be added in its place. Nothing was changed.', details: { path: 'dir' },
		});
		assert.deepEqual(await refusal({ 'a.txt': 'a\n' }, envelope('*** Add File: a.txt', '+x')), {
			message: 'a.txt (patch line 2) already exists, so it cannot be added. To change it, send an update of it (a \'--- a/a.txt\' diff or \'*** Update File: a.txt\'); to replace it whole, delete it first in the same patch. Nothing was changed.',
			details: { path: 'a.txt' },
		});
	});

	it('refuses a new file under a file, on disk or added earlier in the patch, for adds and moves', async () => {
		assert.deepEqual(await refusal({ 'a.txt': 'a\n' }, envelope('*** Add File: a.txt/b.txt', '+x')), {
			message: 'a.txt/b.txt (patch line 2) cannot be created: a.txt is a file, not a folder. Nothing was changed.', details: { path: 'a.txt/b.txt' },
		});
		assert.deepEqual(await refusal({}, envelope('*** Add File: x', '+x', '*** Add File: x/y.txt', '+y')), {
			message: 'x/y.txt (patch line 4) cannot be created: x is a file in this patch, not a folder. Nothing was changed.', details: { path: 'x/y.txt' },
		});
		assert.deepEqual(await refusal({ 'a.txt': 'a\n', 'f.txt': 'f\n' }, envelope('*** Update File: a.txt', '*** Move to: f.txt/y')), {
			message: 'f.txt/y (patch line 2) cannot be created: f.txt is a file, not a folder. Nothing was changed.', details: { path: 'f.txt/y' },
		});
	});

	it('refuses a move onto a folder', async () => {
		assert.deepEqual(await refusal({ 'a.txt': 'a\n' }, envelope('*** Update File: a.txt', '*** Move to: dir'), ['dir']), {
			message: 'a.txt cannot be moved to dir (patch line 2): dir is a directory. Choose another name, or delete dir first in the same patch. Nothing was changed.',
			details: { path: 'a.txt', movedTo: 'dir' },
		});
	});

	it('refuses to update or delete a folder, a missing file, or a file the patch already moved or deleted', async () => {
		assert.deepEqual(await refusal({}, envelope('*** Update File: dir', '@@', '-a', '+b'), ['dir']), {
			message: 'dir (patch line 2) is a directory, not a file; apply_patch can only update files. Nothing was changed.', details: { path: 'dir' },
		});
		assert.equal((await refusal({}, envelope('*** Delete File: dir'), ['dir'])).message, 'dir (patch line 2) is a directory, not a file; apply_patch can only delete files. Nothing was changed.');
		assert.deepEqual(await refusal({}, envelope('*** Update File: nope.txt', '@@', '-a', '+b')), {
			message: 'nope.txt (patch line 2) does not exist, so it cannot be updated. Check the path with find_files or list_dir. To create it, send it as a new file (\'*** Add File: nope.txt\' or a diff from \'--- /dev/null\'). Nothing was changed.',
			details: { path: 'nope.txt' },
		});
		assert.equal((await refusal({}, envelope('*** Delete File: nope.txt'))).message, 'nope.txt (patch line 2) does not exist, so it cannot be deleted. Check the path with find_files or list_dir. Nothing was changed.');
		assert.deepEqual(await refusal({ 'a.txt': 'a\n' }, envelope('*** Update File: a.txt', '*** Move to: b.txt', '*** Delete File: a.txt')), {
			message: 'a.txt (patch line 4) was already moved by this patch at line 2, so it cannot be deleted afterwards. Nothing was changed.', details: { path: 'a.txt' },
		});
		assert.equal((await refusal({ 'a.txt': 'a\n' }, envelope('*** Delete File: a.txt', '*** Update File: a.txt', '@@', '-a', '+b'))).message,
			'a.txt (patch line 3) was already deleted by this patch at line 2, so it cannot be updated afterwards. Nothing was changed.');
	});

	it('a unified deletion must remove the whole file, blank lines aside', async () => {
		assert.deepEqual(await refusal({ 'f.txt': 'a\n\n\nc\n' }, '--- a/f.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-a\n'), {
			message: 'f.txt: the patch deletes this file (patch line 1) but its removed lines are not the whole file: line 3 of what would remain is "c". Read the file again and send its current content as the removed lines, or use \'*** Delete File: f.txt\'. Nothing was changed.',
			details: { path: 'f.txt' },
		});
		const { text } = await applied({ 'f.txt': 'a\n\n' }, '--- a/f.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-a\n');
		assert.match(text, /^D f\.txt/m);
		assert.equal(fs.existsSync(tree.file('f.txt')), false);
	});

	it('a plain diff between two names updates the old one in place when the new one does not exist', async () => {
		const patch = '--- old.c\n+++ new.c\n@@ -1 +1 @@\n-int x;\n+int y;\n';
		assert.match((await applied({ 'old.c': 'int x;\n' }, patch)).text, /^M old\.c /m);
		assert.equal(fs.readFileSync(tree.file('old.c'), 'utf8'), 'int y;\n');
		assert.match((await applied({ 'old.c': 'int x;\n', 'new.c': 'int x;\n' }, patch)).text, /^M new\.c /m);
		assert.equal(fs.readFileSync(tree.file('old.c'), 'utf8'), 'int x;\n');
	});

	it('a chain of moves is one move, a protected source asks, an added-then-deleted file is no change', async () => {
		const chain = await applied({ 'a.txt': 'a\n' }, envelope('*** Update File: a.txt', '*** Move to: b.txt', '*** Update File: b.txt', '*** Move to: c.txt'));
		assert.match(chain.text, /^Applied the patch: 1 file changed, \+0 −0\.\nR a\.txt → c\.txt \(\+0 −0\)$/);
		const moved = await applied({ '.env': 'S=1\n' }, envelope('*** Update File: .env', '*** Move to: env.txt'), { approval: 'never' });
		assert.deepEqual(moved.asked.map(request => request.kind === 'files' && request.protectedPaths), [['.env']]);
		const addDelete = await applied({ 'k.txt': 'k\n' }, envelope('*** Add File: t.txt', '+t', '*** Delete File: t.txt', '*** Update File: k.txt', '@@', '-k', '+K'));
		assert.equal(addDelete.text, 'Applied the patch: 1 file changed, +1 −1.\nM k.txt (+1 −1)');
	});

	it('refuses files over 32 MB before reading them', async () => {
		fresh();
		fs.writeFileSync(tree.file('big.txt'), Buffer.alloc(32 * 1024 * 1024 + 1, 'x'));
		const result = await makeHarness(tree.root).invoke('apply_patch', { patch: envelope('*** Update File: big.txt', '@@', '-x', '+y') });
		assert.equal(result.error?.code, 'too_large');
		assert.equal(result.error?.message, 'big.txt is 32 MB, over the 32 MB apply_patch handles. Nothing was changed; edit it with edit_file or a command instead.');
	});
});
