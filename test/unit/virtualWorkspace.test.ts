import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listBackups, restoreChanges } from '../../src/core/changes/backups';
import { applyThroughFileSystem } from '../../src/core/changes/virtualCommit';
import { nodeFileSystem, readBounded } from '../../src/core/files/fileSystem';
import { searchFile, searchRegex, walkFiles } from '../../src/core/search/walk';
import { defaultSettings } from '../../src/core/policy/settings';
import { workspaceBoundary } from '../../src/core/policy/workspaceBoundary';
import { loadDefinitions } from '../../src/tools/custom/definitions';
import { makeHarness } from './helpers';
import { MemoryFileSystem } from './support/memoryFileSystem';
import { wholeBytes } from '../../src/core/files/splicedBytes';

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function virtualWorkspace(files: Record<string, string | Uint8Array> = {}, dirty?: Map<string, string>) {
	const memory = new MemoryFileSystem('memfs', Object.fromEntries(Object.entries(files).map(([rel, content]) => [`/ws/${rel}`, content])));
	memory.folders.add('/ws');
	const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-virtual-'));
	const harness = makeHarness('/ws', { fileSystem: memory, storageDir, dirty });
	return { memory, harness, storageDir, cleanup: () => fs.rmSync(storageDir, { recursive: true, force: true }) };
}

describe('virtual workspace (file-system port)', () => {
	let cleanups: (() => void)[] = [];
	const open = (files: Record<string, string | Uint8Array> = {}, dirty?: Map<string, string>) => {
		const workspace = virtualWorkspace(files, dirty);
		cleanups.push(workspace.cleanup);
		return workspace;
	};
	afterEach(() => {
		for (const cleanup of cleanups) cleanup();
		cleanups = [];
	});

	it('reads, lists, finds and greps through the port', async () => {
		const { harness } = open({ 'src/a.ts': 'one\ntwo\nthree\n', 'src/b.md': 'two too\n', '.hidden': 'two\n', 'node_modules/x/two.js': 'two\n' });
		assert.match(await harness.text('read_file', { path: 'src/a.ts', offset: 2, limit: 1 }), /^src\/a\.ts: lines 2–2 of 3\n2\ttwo\n/);
		const listing = await harness.text('list_dir', {});
		assert.match(listing, /^src\/\n {2}a\.ts {2}14 B\n {2}b\.md/m);
		assert.doesNotMatch(listing, /node_modules|\.hidden/);
		assert.match(await harness.text('find_files', { pattern: '*.ts' }), /^1 file match "\*\.ts".*\nsrc\/a\.ts$/m);
		const grep = await harness.text('grep', { pattern: 'tw[o]' });
		assert.match(grep, /^2 matching lines/);
		assert.match(grep, /src\/a\.ts:\n {2}2: two\nsrc\/b\.md:\n {2}1: two too/);
		assert.doesNotMatch(grep, /node_modules|hidden/);
	});

	it('lists, finds and writes across the folders of a multi-root virtual workspace', async () => {
		const memory = new MemoryFileSystem('memfs', { '/one/a.txt': 'a\n', '/two/sub/b.txt': 'b\n' });
		const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-virtual-'));
		cleanups.push(() => fs.rmSync(storageDir, { recursive: true, force: true }));
		const harness = makeHarness(['/one', '/two'], { fileSystem: memory, storageDir });
		assert.match(await harness.text('list_dir', {}), /^The 2 workspace folders \(2 levels\): 4 entries\none\/\n {2}a\.txt {2}2 B\ntwo\/\n {2}sub\/$/m);
		assert.match(await harness.text('find_files', { pattern: '*.txt' }), /\none\/a\.txt\ntwo\/sub\/b\.txt\n/);
		await harness.text('write_file', { path: 'two/c.txt', content: 'c' });
		assert.equal(memory.text('/two/c.txt'), 'c');
	});

	it('refuses a file too large to read whole with its size, without loading it', async () => {
		const { memory, harness } = open({ 'big.log': new Uint8Array(17 * 1024 * 1024) });
		const error = await harness.error('read_file', { path: 'big.log' });
		assert.equal(error.code, 'too_large');
		assert.match(error.message, /big\.log is 17(\.0)? MB/);
		assert.equal(memory.reads.get('/ws/big.log'), undefined);
		await assert.rejects(readBounded(memory, '/ws/big.log', 'big.log', 1024), /over the 1(\.0)? KB/);
	});

	it('writes, edits and patches through the change pipeline, with backups on disk', async () => {
		const { memory, harness, storageDir } = open({ 'a.txt': 'alpha\nbeta\n' });
		await harness.text('write_file', { path: 'new/b.txt', content: 'bee\n' });
		assert.equal(memory.text('/ws/new/b.txt'), 'bee\n');
		await harness.text('read_file', { path: 'a.txt' });
		await harness.text('edit_file', { path: 'a.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] });
		assert.equal(memory.text('/ws/a.txt'), 'alpha\nBETA\n');
		await harness.text('apply_patch', { patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Add File: c.txt\n+sea\n*** End Patch' });
		assert.equal(memory.text('/ws/a.txt'), 'ALPHA\nBETA\n');
		assert.equal(memory.text('/ws/c.txt'), 'sea\n');
		await harness.text('write_output', { name: 'report', content: '# Report' });
		assert.equal(memory.text('/ws/outputs/report.md'), '# Report\n');
		assert.equal(harness.asked.length, 4);
		// The backup holds the planned bytes; a restore reads the current file through the port.
		const [latestPatch] = (await listBackups(storageDir)).filter(set => set.tool === 'apply_patch');
		const restore = await restoreChanges(latestPatch, absolute => absolute, memory);
		assert.deepEqual(restore.map(change => [change.path, change.before && decode(wholeBytes(change.before)), change.after && decode(wholeBytes(change.after))]), [
			['/ws/a.txt', 'ALPHA\nBETA\n', 'alpha\nBETA\n'],
			['/ws/c.txt', 'sea\n', null],
		]);
	});

	it('refuses an edit of a file that changed since it was read, and writes nothing', async () => {
		const { memory, harness } = open({ 'a.txt': 'one\n' });
		await harness.text('read_file', { path: 'a.txt' });
		memory.put('/ws/a.txt', 'one, changed elsewhere\n');
		const error = await harness.error('edit_file', { path: 'a.txt', edits: [{ oldText: 'one', newText: 'two' }] });
		assert.equal(error.code, 'stale_write');
		assert.equal(memory.text('/ws/a.txt'), 'one, changed elsewhere\n');
	});

	it('shows unsaved editor text, and refuses to write under it', async () => {
		const { memory, harness } = open({ 'a.txt': 'saved\n' }, new Map([['/ws/a.txt', 'unsaved\n']]));
		assert.match(await harness.text('read_file', { path: 'a.txt' }), /^a\.txt \(unsaved editor text\): lines 1–1 of 1\n1\tunsaved/);
		const error = await harness.error('edit_file', { path: 'a.txt', edits: [{ oldText: 'unsaved', newText: 'x' }] });
		assert.equal(error.code, 'unavailable');
		assert.match(error.message, /^a\.txt has unsaved changes in an editor.*Nothing was written/);
		assert.equal(memory.text('/ws/a.txt'), 'saved\n');
	});

	it('keeps protected paths asking and the boundary closed', async () => {
		const { memory, harness } = open({ '.git/config': 'x\n' });
		memory.put('/etc/passwd', 'root\n');
		await harness.text('write_file', { path: '.git/config', content: 'y\n' }, { settings: { approval: 'never' } });
		assert.deepEqual(harness.asked.map(request => request.kind === 'files' && request.protectedPaths), [['.git/config']]);
		const outside = await harness.error('read_file', { path: '../etc/passwd' });
		assert.equal(outside.code, 'outside_boundary');
		assert.equal(memory.reads.get('/etc/passwd'), undefined);
	});

	it('says in one sentence that commands need a folder on disk', async () => {
		const { harness } = open();
		for (const [tool, input] of [['run_command', { command: 'ls' }], ['exec_command', { command: 'sh' }]] as const) {
			const error = await harness.error(tool, input);
			assert.equal(error.message.split('. ')[0], `${tool} needs a folder on disk (file:), this workspace is memfs:`);
		}
	});

	it('offers no custom tools: their scripts need a folder on disk', async () => {
		const { memory, storageDir } = open({ '.toolbelt/tools/hello.json': JSON.stringify({ name: 'hello', description: 'Says hello', script: 'hello.sh' }) });
		const boundary = await workspaceBoundary({ roots: [{ name: 'ws', path: '/ws' }], settings: defaultSettings(), storageDir, fileSystem: memory });
		assert.deepEqual(await loadDefinitions(boundary, new Set()), { specs: [], problems: [] });
		assert.equal(memory.reads.size, 0);
	});

	it('works the plan through the port', async () => {
		const { memory, harness } = open();
		await harness.text('update_plan', { tasks: [{ title: 'First', status: 'pending' }] });
		assert.match(memory.text('/ws/.toolbelt/plan.json') ?? '', /First/);
		assert.match(await harness.text('get_plan', {}), /First/);
	});
});

describe('bounded walk and JS search', () => {
	const tree = () => new MemoryFileSystem('memfs', { '/r/a/1.txt': 'x', '/r/a/2.txt': 'x', '/r/b/3.txt': 'x', '/r/.git/HEAD': 'x' });
	const options = { signal: new AbortController().signal, includeHidden: false, includeIgnored: false };

	it('visits files in sorted order and stops at its entry cap, saying so', async () => {
		const seen: string[] = [];
		const all = await walkFiles(tree(), '/r', options, file => (seen.push(file.relative), true));
		assert.deepEqual(seen, ['a/1.txt', 'a/2.txt', 'b/3.txt']);
		assert.equal(all.complete, true);
		const capped: string[] = [];
		// Skipped entries count too (.git here): the cap bounds the work, not the results.
		const stopped = await walkFiles(tree(), '/r', { ...options, maxEntries: 4 }, file => (capped.push(file.relative), true));
		assert.equal(stopped.complete, false);
		assert.deepEqual(capped, ['a/1.txt', 'a/2.txt']);
	});

	it('stops when cancelled', async () => {
		const controller = new AbortController();
		controller.abort();
		await assert.rejects(walkFiles(tree(), '/r', { ...options, signal: controller.signal }, () => true), (error: Error & { code?: string }) => error.code === 'cancelled');
	});

	it('counts every matching line but keeps only as many as asked, and skips binary and large files', async () => {
		const memory = new MemoryFileSystem('memfs', { '/f.txt': 'hit\nmiss\nhit\r\nhit', '/bin': new Uint8Array([104, 105, 116, 0, 1]) });
		const regex = searchRegex({ pattern: 'HIT', fixedStrings: false, ignoreCase: true });
		const search = { pattern: 'HIT', fixedStrings: false, ignoreCase: true, signal: options.signal };
		assert.deepEqual(await searchFile(memory, '/f.txt', regex, search, 2), { matches: [{ line: 1, text: 'hit' }, { line: 3, text: 'hit' }], total: 3 });
		assert.deepEqual(await searchFile(memory, '/bin', regex, search, 2), { skipped: 'binary' });
		assert.deepEqual(await searchFile(memory, '/f.txt', regex, { ...search, maxFileBytes: 4 }, 2), { skipped: 'too_large' });
		assert.throws(() => searchRegex({ pattern: '(', fixedStrings: false, ignoreCase: false }), /not a valid regular expression/);
		assert.ok(searchRegex({ pattern: '(', fixedStrings: true, ignoreCase: false }).test('a(b'));
	});

	it('puts back what it changed when a later file of the set fails', async () => {
		const memory = new MemoryFileSystem('memfs', { '/w/a': 'a0', '/w/b': 'b0' });
		memory.failWrites.add('/w/b');
		const changes = [
			{ path: '/w/a', displayPath: 'a', before: encode('a0'), after: encode('a1') },
			{ path: '/w/new', displayPath: 'new', before: null, after: encode('n') },
			{ path: '/w/b', displayPath: 'b', before: encode('b0'), after: encode('b1') },
		];
		await assert.rejects(applyThroughFileSystem(memory, changes, options.signal), /b could not be written .* put back, so nothing changed/);
		assert.equal(memory.text('/w/a'), 'a0');
		assert.equal(memory.text('/w/new'), undefined);
	});

	it('the Node adapter serves the same operations on disk', async () => {
		const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-node-fs-'));
		try {
			const file = path.join(root, 'a', 'b.txt');
			const changes = [
				{ path: file, displayPath: 'a/b.txt', before: null, after: encode('one') },
				{ path: path.join(root, 'c.txt'), displayPath: 'c.txt', before: null, after: encode('two') },
			];
			await applyThroughFileSystem(nodeFileSystem, changes, options.signal);
			assert.deepEqual((await nodeFileSystem.readDirectory(root)).map(entry => [entry.name, entry.kind]).sort(), [['a', 'directory'], ['c.txt', 'file']]);
			await applyThroughFileSystem(nodeFileSystem, [{ path: file, displayPath: 'a/b.txt', before: encode('one'), after: encode('one'), movedTo: { path: path.join(root, 'c.txt'), displayPath: 'c.txt' } }], options.signal)
				.then(() => assert.fail('a move onto an existing file must fail'), (error: Error) => assert.match(error.message, /put back, so nothing changed/));
			assert.equal(decode(await readBounded(nodeFileSystem, file, 'a/b.txt')), 'one');
			await nodeFileSystem.delete(file);
			await assert.rejects(readBounded(nodeFileSystem, file, 'a/b.txt'), (error: Error & { code?: string }) => error.code === 'not_found');
		} finally {
			fs.rmSync(root, { recursive: true, force: true });
		}
	});
});
