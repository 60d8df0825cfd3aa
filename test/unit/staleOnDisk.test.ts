import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { openLargeOnDisk } from '../../src/core/changes/stale';
import { ApprovalRequest, ChangeContext, createChangeState } from '../../src/core/context';
import { DiskBytes } from '../../src/core/files/diskBytes';
import { watchReadOpens } from '../../src/core/files/verifiedOpen';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { makeHarness, makeTree } from './helpers';

/**
 * The stale-write rules for a file over 1 MB whose edit is made on disk (DiskBytes): when the file
 * may be left there (openLargeOnDisk), and what the commit checks before writing over it
 * (checkDiskStillAsShown: still there, same size, no editor's unsaved text).
 */
describe('stale writes of a big file edited on disk', () => {
	let tree: ReturnType<typeof makeTree>;
	afterEach(() => tree.cleanup());

	const BIG = `${'an ordinary line of text\n'.repeat(50_000)}THE LINE\n`;
	const edit = { path: 'big.txt', edits: [{ oldText: 'THE LINE', newText: 'OUR LINE' }] };

	it('is made on disk for a file over 1 MB, and in memory when an editor has unsaved text over it', async () => {
		tree = makeTree({ 'big.txt': BIG });
		const onDisk = makeHarness(tree.root);
		await onDisk.text('edit_file', edit);
		assert.ok(fs.readFileSync(tree.file('big.txt'), 'utf8').endsWith('OUR LINE\n'));
		assert.ok(onDisk.asked[0].kind === 'files' && onDisk.asked[0].changes[0].before instanceof DiskBytes);

		// The same line is in the editor's text and on disk: only the editor's text may be edited.
		fs.writeFileSync(tree.file('big.txt'), BIG);
		const withEditor = makeHarness(tree.root, { dirty: new Map([[tree.file('big.txt'), `${BIG}typed in the editor\n`]]) });
		const text = await withEditor.text('edit_file', edit);
		assert.match(text, /\(its unsaved editor text\)/);
		const request = withEditor.asked[0];
		assert.ok(request.kind === 'files' && request.changes[0].before instanceof Uint8Array, 'the editor\'s text is edited in memory');
	});

	it('refuses a big file read, then changed by someone else, before anyone is asked', async () => {
		tree = makeTree({ 'big.txt': BIG });
		const h = makeHarness(tree.root);
		await h.text('read_file', { path: 'big.txt', limit: 1 });
		fs.appendFileSync(tree.file('big.txt'), 'their line\n');
		const error = await h.error('edit_file', edit);
		assert.equal(error.code, 'stale_write');
		assert.equal(h.asked.length, 0, 'no one is asked about a change on an old version');
		assert.ok(fs.readFileSync(tree.file('big.txt'), 'utf8').endsWith('THE LINE\ntheir line\n'), 'their bytes are kept');
	});

	it('refuses a big file deleted while the person decided, and names it deleted', async () => {
		tree = makeTree({ 'big.txt': BIG });
		const h = makeHarness(tree.root);
		const result = await h.invoke('edit_file', edit, {
			decide: async () => {
				fs.rmSync(tree.file('big.txt'));
				return true;
			},
		});
		assert.equal(result.error?.code, 'stale_write');
		assert.match(result.error!.message, /^big\.txt was deleted or moved since you were shown the change.*Nothing was written/);
		assert.deepEqual(fs.readdirSync(tree.root), [], 'nothing is written, no temp is left');
	});

	it('refuses a big file over which an editor got unsaved text while the person decided', async () => {
		tree = makeTree({ 'big.txt': BIG });
		const dirty = new Map<string, string>();
		const h = makeHarness(tree.root, { dirty });
		const result = await h.invoke('edit_file', edit, {
			decide: async () => {
				dirty.set(tree.file('big.txt'), `${BIG}typed in the editor\n`);
				return true;
			},
		});
		assert.equal(result.error?.code, 'stale_write');
		assert.match(result.error!.message, /^big\.txt got unsaved changes in an editor since you were shown the change/);
		assert.equal(fs.readFileSync(tree.file('big.txt'), 'utf8'), BIG, 'the file is as it was');
	});

	/** edit_file on `rel`, with `meanwhile` done to the tree while the person decides. */
	async function editWhileDeciding(rel: string, meanwhile: () => void) {
		const h = makeHarness(tree.root);
		const result = await h.invoke('edit_file', { ...edit, path: rel }, {
			decide: async (request: ApprovalRequest) => {
				assert.ok(request.kind === 'files' && request.changes[0].before instanceof DiskBytes, 'planned on disk');
				meanwhile();
				return true;
			},
		});
		assert.ok(result.error, 'refused');
		return { ...result.error, details: result.metadata?.errorDetails as { path?: string } | undefined };
	}

	it('names a big file whose size changed while the person decided as changed, with its path', async () => {
		tree = makeTree({ 'big.txt': BIG });
		const error = await editWhileDeciding('big.txt', () => fs.appendFileSync(tree.file('big.txt'), 'more\n'));
		assert.equal(error.code, 'stale_write');
		assert.match(error.message, /^big\.txt changed since you were shown the change/);
		assert.equal(error.details?.path, 'big.txt');
	});

	it('names a big file whose folder was replaced by a file while the person decided as deleted or moved', async () => {
		tree = makeTree({ 'dir/big.txt': BIG });
		const error = await editWhileDeciding('dir/big.txt', () => {
			fs.rmSync(tree.file('dir'), { recursive: true });
			fs.writeFileSync(tree.file('dir'), 'a file now\n');
		});
		assert.equal(error.code, 'stale_write');
		assert.match(error.message, /^dir\/big\.txt was deleted or moved since you were shown the change/);
		assert.equal(fs.readFileSync(tree.file('dir'), 'utf8'), 'a file now\n');
	});

	it('passes on other refusals of the file as they are: a big file replaced by a folder is not called changed', async () => {
		tree = makeTree({ 'big.txt': BIG });
		const error = await editWhileDeciding('big.txt', () => {
			fs.rmSync(tree.file('big.txt'));
			fs.mkdirSync(tree.file('big.txt'));
		});
		assert.equal(error.code, 'is_directory');
		assert.ok(fs.statSync(tree.file('big.txt')).isDirectory());
	});

	it('leaves a big file on disk only in the Node host: VS Code takes the new bytes whole', async () => {
		tree = makeTree({ 'ws/big.txt': BIG });
		const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage') });
		const context = async (kind: 'node' | 'vscode'): Promise<ChangeContext> => ({
			tool: 'test', boundary: await env.boundary(), host: { ...env.host, kind }, state: createChangeState(), signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined,
		});
		const big = tree.file('ws/big.txt');
		const inNode = await openLargeOnDisk(await context('node'), big, 'big.txt');
		assert.ok(inNode, 'opened in the Node host');
		await inNode.handle.close();
		assert.equal(await openLargeOnDisk(await context('vscode'), big, 'big.txt'), undefined);
	});

	describe('a big file that changes between the plain stat and the checked open', () => {
		afterEach(() => watchReadOpens(undefined));

		/** openLargeOnDisk on ws/dir/big.txt, with `meanwhile` done to the tree just before its open. */
		async function openAfter(meanwhile: () => void, state = createChangeState()) {
			tree = makeTree({ 'ws/dir/big.txt': BIG });
			const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage') });
			const ctx: ChangeContext = { tool: 'test', boundary: await env.boundary(), host: env.host, state, signal: new AbortController().signal, settings: { showDiffs: 'never' }, note: () => undefined };
			// The race, set up: the stat has found a big file, and it is gone when the open comes.
			watchReadOpens((at, open) => {
				watchReadOpens(undefined);
				meanwhile();
				return open(at);
			});
			return openLargeOnDisk(ctx, tree.file('ws/dir/big.txt'), 'dir/big.txt');
		}

		it('leaves a file deleted, or whose folder became a file, to the read in memory (which says it is missing)', async () => {
			assert.equal(await openAfter(() => fs.rmSync(tree.file('ws/dir/big.txt'))), undefined);
			tree.cleanup();
			assert.equal(await openAfter(() => {
				fs.rmSync(tree.file('ws/dir'), { recursive: true });
				fs.writeFileSync(tree.file('ws/dir'), 'a file now\n');
			}), undefined);
		});

		it('passes on any other refusal: a folder put in its place', async () => {
			await assert.rejects(openAfter(() => {
				fs.rmSync(tree.file('ws/dir/big.txt'));
				fs.mkdirSync(tree.file('ws/dir/big.txt'));
			}), { code: 'is_directory' });
		});

		it('leaves a file cut to 1 MB or less by then to the read in memory', async () => {
			for (const size of [1024 * 1024, 10]) {
				assert.equal(await openAfter(() => fs.truncateSync(tree.file('ws/dir/big.txt'), size)), undefined, `cut to ${size} bytes`);
				tree.cleanup();
			}
			tree = makeTree();
		});

		it('refuses a big file that is not the version last read, before it is scanned', async () => {
			const state = createChangeState();
			let realPath = '';
			const refusal = openAfter(() => {
				realPath = tree.file('ws/dir/big.txt');
				state.fileVersions.set(realPath, { mtimeMs: 1, size: 5 });
			}, state);
			await assert.rejects(refusal, { code: 'stale_write' });
			assert.ok(realPath, 'the open was reached');
		});
	});
});
