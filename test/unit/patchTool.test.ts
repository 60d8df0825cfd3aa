import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyChangesAtomically } from '../../src/core/files/atomic';
import type { FileChange } from '../../src/core/context';
import { resultText } from '../../src/core/results/result';
import { makeHarness, makeTree } from './helpers';
import { wholeBytes } from '../../src/core/files/splicedBytes';

const codexUpdate = (file: string, ...lines: string[]) => ['*** Begin Patch', `*** Update File: ${file}`, ...lines, '*** End Patch'].join('\n');

describe('apply_patch (tool)', () => {
	let tree: ReturnType<typeof makeTree>;
	afterEach(() => tree?.cleanup());

	it('lists each file with its +/− counts, and reports them in metadata', async () => {
		tree = makeTree({ 'a.txt': 'one\ntwo\n', 'old.txt': 'x\n', 'gone.txt': 'bye\nnow\n' });
		const harness = makeHarness(tree.root);
		const result = await harness.invoke('apply_patch', {
			patch: [
				'*** Begin Patch',
				'*** Update File: a.txt', '@@', ' one', '-two', '+2', '+3',
				'*** Add File: src/new.ts', '+export {};',
				'*** Delete File: gone.txt',
				'*** Update File: old.txt', '*** Move to: moved/new.txt',
				'*** End Patch',
			].join('\n'),
		});
		assert.equal(result.error, undefined, result.error?.message);
		assert.equal(resultText(result), [
			'Applied the patch: 4 files changed, +3 −3.',
			'M a.txt (+2 −1)',
			'A src/new.ts (+1 −0)',
			'D gone.txt (+0 −2)',
			'R old.txt → moved/new.txt (+0 −0)',
		].join('\n'));
		assert.deepEqual(result.metadata.filesTouched, ['a.txt', 'src/new.ts', 'gone.txt', 'old.txt', 'moved/new.txt']);
		assert.deepEqual((result.metadata.files as { status: string }[]).map(file => file.status), ['modified', 'added', 'deleted', 'moved']);
		assert.equal(fs.readFileSync(tree.file('moved/new.txt'), 'utf8'), 'x\n');
		assert.equal(fs.existsSync(tree.file('old.txt')), false);
	});

	it('asks once for the whole patch, showing every file; the preview changes nothing', async () => {
		tree = makeTree({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
		const harness = makeHarness(tree.root);
		const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n';
		const request = await harness.registry.preview('apply_patch', { patch });
		assert.ok(request && request.kind === 'files');
		assert.deepEqual(request.changes.map(change => change.displayPath), ['a.txt', 'b.txt']);
		assert.equal(Buffer.from(wholeBytes(request.changes[1].after!)).toString(), 'B\n');
		assert.match(request.title, /^Apply patch to 2 files: a\.txt, b\.txt$/);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'a\n');

		await harness.text('apply_patch', { patch });
		assert.equal(harness.asked.length, 1);
		assert.equal(fs.readFileSync(tree.file('b.txt'), 'utf8'), 'B\n');
	});

	it('changes nothing when the person declines', async () => {
		tree = makeTree({ 'a.txt': 'a\n' });
		const harness = makeHarness(tree.root, { approve: false });
		const error = await harness.error('apply_patch', { patch: codexUpdate('a.txt', '@@', '-a', '+A') });
		assert.equal(error.code, 'declined');
		assert.match(error.message, /Nothing was changed/);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'a\n');
	});

	it('always asks for protected paths, also as the target of a move, even with approval "never"', async () => {
		tree = makeTree({ 'config.txt': 'x\n', 'plain.txt': 'p\n' });
		const harness = makeHarness(tree.root, { settings: { approval: 'never' } });
		await harness.text('apply_patch', { patch: codexUpdate('plain.txt', '@@', '-p', '+P') });
		assert.equal(harness.asked.length, 0, 'an ordinary change with approval "never" asks nothing');
		await harness.text('apply_patch', { patch: '*** Begin Patch\n*** Update File: config.txt\n*** Move to: .env.local\n*** End Patch' });
		assert.equal(harness.asked.length, 1);
		const request = harness.asked[0];
		assert.ok(request.kind === 'files');
		assert.deepEqual(request.protectedPaths, ['.env.local']);
		assert.match(resultText(await harness.invoke('apply_patch', { patch: codexUpdate('.env.local', '@@', '-x', '+y') })), /\nProtected paths changed \(confirmed by the user\): \.env\.local/);
	});

	it('lists at most 200 files and says how many more changed', async () => {
		tree = makeTree({});
		const harness = makeHarness(tree.root);
		const sections = Array.from({ length: 205 }, (_, index) => `*** Add File: many/f${index}.txt\n+${index}`);
		const result = await harness.invoke('apply_patch', { patch: `*** Begin Patch\n${sections.join('\n')}\n*** End Patch` });
		const lines = resultText(result).split('\n');
		assert.equal(lines[0], 'Applied the patch: 205 files changed, +205 −0.');
		assert.equal(lines.filter(line => line.startsWith('A many/')).length, 200);
		assert.equal(lines[201], '[… text omitted; 5 more files changed; the result\'s metadata.files lists every file …]');
		assert.equal(result.metadata.truncated, true);
		assert.equal((result.metadata.files as unknown[]).length, 205);
	});

	it('patches the unsaved text of an open editor, not the older text on disk', async () => {
		tree = makeTree({ 'open.txt': 'saved\nline\n' });
		const dirty = new Map([[tree.file('open.txt'), 'unsaved\nline\n']]);
		const harness = makeHarness(tree.root, { dirty });
		await harness.text('apply_patch', { patch: codexUpdate('open.txt', '@@', ' unsaved', '-line', '+LINE') });
		assert.equal(fs.readFileSync(tree.file('open.txt'), 'utf8'), 'unsaved\nLINE\n');
	});

	it('keeps one BOM when the unsaved editor text starts with U+FEFF', async () => {
		tree = makeTree({});
		fs.writeFileSync(tree.file('bom.txt'), '\ufeffsaved\n');
		const dirty = new Map([[tree.file('bom.txt'), '\ufeffunsaved\n']]);
		const harness = makeHarness(tree.root, { dirty });
		await harness.text('apply_patch', { patch: codexUpdate('bom.txt', '@@', '-unsaved', '+patched') });
		assert.equal(fs.readFileSync(tree.file('bom.txt'), 'utf8'), '\ufeffpatched\n');
	});

	it('refuses a file changed on disk since it was read before looking at its hunks, and asks nothing', async () => {
		tree = makeTree({ 'seen.txt': 'one\ntwo\n' });
		const harness = makeHarness(tree.root);
		await harness.text('read_file', { path: 'seen.txt' });
		fs.writeFileSync(tree.file('seen.txt'), 'changed\n');
		const error = await harness.error('apply_patch', { patch: codexUpdate('seen.txt', '@@', '-two', '+2') });
		assert.equal(error.code, 'stale_write');
		assert.match(error.message, /changed on disk since you last read it/);
		assert.deepEqual(harness.asked, []);
		assert.equal(fs.readFileSync(tree.file('seen.txt'), 'utf8'), 'changed\n');
	});

	it('edits the target of a symlink inside the workspace and keeps the link', async () => {
		tree = makeTree({ 'real/target.txt': 'old\n' });
		fs.symlinkSync(path.join('real', 'target.txt'), tree.file('link.txt'));
		const harness = makeHarness(tree.root);
		await harness.text('apply_patch', { patch: codexUpdate('link.txt', '@@', '-old', '+new') });
		assert.equal(fs.lstatSync(tree.file('link.txt')).isSymbolicLink(), true);
		assert.equal(fs.readFileSync(tree.file('real/target.txt'), 'utf8'), 'new\n');
	});

	it('works across folders of a multi-root workspace', async () => {
		tree = makeTree({ 'one/a.txt': 'a\n', 'two/b.txt': 'b\n' });
		const harness = makeHarness([tree.file('one'), tree.file('two')]);
		const text = await harness.text('apply_patch', { patch: '*** Begin Patch\n*** Update File: one/a.txt\n@@\n-a\n+A\n*** Add File: two/c.txt\n+c\n*** End Patch' });
		assert.match(text, /M one\/a\.txt \(\+1 −1\)\nA two\/c\.txt \(\+1 −0\)/);
		assert.equal(fs.readFileSync(tree.file('two/c.txt'), 'utf8'), 'c\n');
	});

	it('says so when the patch leaves every file as it was, and writes nothing', async () => {
		tree = makeTree({ 'a.txt': 'a\n' });
		const harness = makeHarness(tree.root);
		const before = fs.statSync(tree.file('a.txt')).mtimeMs;
		const text = await harness.text('apply_patch', { patch: codexUpdate('a.txt', '@@', '-a', '+a') });
		assert.match(text, /^The patch changes nothing/);
		assert.match(text, /a\.txt: the patch leaves its content as it was/);
		assert.equal(harness.asked.length, 0);
		assert.equal(fs.statSync(tree.file('a.txt')).mtimeMs, before);
	});

	it('stops before writing when the call is cancelled', async () => {
		tree = makeTree({ 'a.txt': 'a\n' });
		const harness = makeHarness(tree.root);
		const controller = new AbortController();
		controller.abort();
		const error = await harness.error('apply_patch', { patch: codexUpdate('a.txt', '@@', '-a', '+A') }, { signal: controller.signal });
		assert.equal(error.code, 'cancelled');
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'a\n');
	});

	it('rolls back the files already written when the third one fails during the commit', async () => {
		tree = makeTree({ 'one.txt': '1\n', 'two.txt': '2\n', 'three.txt': '3\n' });
		const seenAtFailure: Record<string, string> = {};
		const harness = makeHarness(tree.root, {
			applyChanges: (changes: readonly FileChange[], signal: AbortSignal) => applyChangesAtomically(changes, signal, {
				beforeCommit: (_change, index) => {
					if (index !== 2) return;
					// The moment the third file is committed, the first two already hold their new text.
					for (const name of ['one.txt', 'two.txt']) seenAtFailure[name] = fs.readFileSync(tree.file(name), 'utf8');
					throw Object.assign(new Error('EIO: i/o error (injected)'), { code: 'EIO' });
				},
			}),
		});
		const error = await harness.error('apply_patch', {
			patch: '*** Begin Patch\n*** Update File: one.txt\n@@\n-1\n+one\n*** Update File: two.txt\n@@\n-2\n+two\n*** Update File: three.txt\n@@\n-3\n+three\n*** End Patch',
		});
		assert.deepEqual(seenAtFailure, { 'one.txt': 'one\n', 'two.txt': 'two\n' });
		assert.match(error.message, /^Could not write three\.txt: .*The files written before it were restored: nothing was changed\./);
		assert.deepEqual(['one.txt', 'two.txt', 'three.txt'].map(name => fs.readFileSync(tree.file(name), 'utf8')), ['1\n', '2\n', '3\n']);
		assert.deepEqual(fs.readdirSync(tree.root).sort(), ['one.txt', 'three.txt', 'two.txt'], 'no temp file is left behind');
	});

	it('describes its progress by the files the patch names', () => {
		tree = makeTree({});
		const tool = makeHarness(tree.root).registry.get('apply_patch')!;
		assert.equal(tool.describe({ patch: '--- a/x.c\t2024-01-01 10:00:00\n+++ b/x.c\t2024-01-02 10:00:00\n@@ -1 +1 @@\n-a\n+b\n' }), 'Applying a patch to x.c');
		assert.equal(tool.describe({ patch: '*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: b\n*** End Patch' }), 'Applying a patch to 2 files');
		assert.equal(tool.describe({ patch: 'garbage' }), 'Applying a patch');
	});

	it('rejects input that is not a string patch through schema validation', async () => {
		tree = makeTree({});
		const harness = makeHarness(tree.root);
		const error = await harness.error('apply_patch', { patch: 42 });
		assert.equal(error.code, 'invalid_input');
		assert.match(error.message, /patch/);
	});
});
