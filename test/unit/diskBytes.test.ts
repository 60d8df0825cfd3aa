import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DiskBytes, DiskSplice, FileShrank, readChunks, STREAM_CHUNK } from '../../src/core/files/diskBytes';
import { CancelledError, ToolError } from '../../src/core/results/errors';
import { wholeBytes } from '../../src/core/files/splicedBytes';
import { lineCounts, unifiedDiff } from '../../src/core/changes/diff';
import { replaceExactBytes, scanExactEdit } from '../../src/core/text/byteEdit';
import { makeHarness, makeTree } from './helpers';

/** Distinct numbered lines, `bytes` of them or a little more. */
function textOf(bytes: number, from = 0): string {
	const lines: string[] = [];
	let length = 0;
	for (let i = from; length < bytes; i++) {
		const line = `line ${i} of some ordinary text\n`;
		lines.push(line);
		length += line.length;
	}
	return lines.join('');
}

describe('edits of a file left on disk (DiskBytes)', () => {
	let dir: string;
	beforeEach(() => {
		dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-diskbytes-'));
	});
	afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

	async function scan(bytes: Buffer, edit: { oldText: string; newText: string; replaceAll?: boolean }) {
		const file = path.join(dir, 'f.txt');
		fs.writeFileSync(file, bytes);
		const handle = await fs.promises.open(file, 'r');
		try {
			return await scanExactEdit({ handle, path: file, display: 'f.txt', size: bytes.length }, edit);
		} finally {
			await handle.close();
		}
	}

	/** The scan must give what the edit in memory gives: the bytes, the diff, the line counts. */
	async function assertLikeInMemory(bytes: Buffer, edit: { oldText: string; newText: string }) {
		const scanned = await scan(bytes, edit);
		assert.ok(scanned, 'made on disk');
		const inMemory = replaceExactBytes(bytes, [edit])!;
		const expected = Buffer.from(wholeBytes(inMemory.after));
		assert.ok(scanned.after.whole().equals(expected), 'same new bytes');
		assert.equal(scanned.after.byteLength, expected.length);
		const onDisk = { path: '/f.txt', displayPath: 'f.txt', before: scanned.before, after: scanned.after };
		const held = { path: '/f.txt', displayPath: 'f.txt', before: bytes, after: inMemory.after };
		assert.equal(unifiedDiff(onDisk), unifiedDiff(held));
		assert.deepEqual(lineCounts(onDisk), lineCounts(held));
		return scanned;
	}

	it('finds text that runs across the join of two chunks, and diffs it at its line', async () => {
		const head = textOf(STREAM_CHUNK - 10);
		const bytes = Buffer.from(`${head.slice(0, STREAM_CHUNK - 10)}NEEDLE-ACROSS-THE-JOIN\n${textOf(300_000, 900_000)}`);
		const scanned = await assertLikeInMemory(bytes, { oldText: 'NEEDLE-ACROSS-THE-JOIN', newText: 'replaced' });
		assert.equal(scanned.after.at, STREAM_CHUNK - 10);
		assert.match(unifiedDiff({ path: '/f.txt', displayPath: 'f.txt', before: scanned.before, after: scanned.after }), /-line \d+ ofNEEDLE-ACROSS-THE-JOIN\n\+line \d+ ofreplaced\n/);
	});

	it('checks a character cut by the join of two chunks as one character', async () => {
		// The 4-byte emoji starts 2 bytes before the join.
		const head = textOf(STREAM_CHUNK).slice(0, STREAM_CHUNK - 2);
		const bytes = Buffer.from(`${head}😀\n${textOf(200_000, 800_000)}`);
		assert.equal(bytes.indexOf(Buffer.from('😀')), STREAM_CHUNK - 2);
		await assertLikeInMemory(bytes, { oldText: 'line 800100 of', newText: 'line 800100, changed, of' });
	});

	it('keeps the BOM, edits the first line, and edits the last line of a file with no final newline', async () => {
		const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(textOf(1_200_000))]);
		const first = await assertLikeInMemory(bom, { oldText: 'line 0 of', newText: 'LINE ZERO of' });
		assert.deepEqual([...first.after.whole().subarray(0, 3)], [0xef, 0xbb, 0xbf]);
		const noFinal = Buffer.from(`${textOf(1_200_000)}the very end`);
		const last = await assertLikeInMemory(noFinal, { oldText: 'very end', newText: 'new end' });
		assert.equal(last.after.at + 'very end'.length, noFinal.length);
	});

	it('is not for the bytes where the edit in memory must decide (undefined): CR, invalid UTF-8, binary, two matches, none, no change', async () => {
		const big = textOf(1_500_000);
		const late = STREAM_CHUNK + 1000;
		assert.equal(await scan(Buffer.from(`${big.slice(0, late)}\r\n${big.slice(late)}`), { oldText: 'line 10 of', newText: 'x' }), undefined);
		const invalid = Buffer.concat([Buffer.from(big.slice(0, late)), Buffer.from([0xc3, 0x28]), Buffer.from(big.slice(late))]);
		assert.equal(await scan(invalid, { oldText: 'line 10 of', newText: 'x' }), undefined);
		assert.equal(await scan(Buffer.concat([Buffer.from([0, 1, 2, 0]), Buffer.from(big)]), { oldText: 'line 10 of', newText: 'x' }), undefined);
		// A second occurrence far away, and one that runs across the join.
		assert.equal(await scan(Buffer.from(`${big}line 10 of\n`), { oldText: 'line 10 of', newText: 'x' }), undefined);
		const across = Buffer.from(`TWICE\n${big.slice(0, STREAM_CHUNK - 8)}TWICE${big}`);
		assert.equal(await scan(across, { oldText: 'TWICE', newText: 'x' }), undefined);
		assert.equal(await scan(across, { oldText: 'TWICE', newText: 'x', replaceAll: true }), undefined);
		assert.equal(await scan(Buffer.from(big), { oldText: 'not in the file', newText: 'x' }), undefined);
		assert.equal(await scan(Buffer.from(big), { oldText: 'line 10 of', newText: 'line 10 of' }), undefined);
	});

	it('copies the file around the edit into exactly the new bytes, wherever the edit falls against the chunks', async () => {
		const big = textOf(2 * STREAM_CHUNK + 5000);
		for (const at of [0, 5, STREAM_CHUNK - 4, STREAM_CHUNK, STREAM_CHUNK + 1, 2 * STREAM_CHUNK - 1, big.length - 3]) {
			const bytes = Buffer.from(`${big.slice(0, at)}<EDIT>${big.slice(at)}`);
			for (const newText of ['', 'x', 'a much longer replacement\nover two lines']) {
				const scanned = (await scan(bytes, { oldText: '<EDIT>', newText }))!;
				const copy = path.join(dir, 'copy.txt');
				const [out, from] = [await fs.promises.open(copy, 'w'), await fs.promises.open(path.join(dir, 'f.txt'), 'r')];
				try {
					await scanned.after.copyTo(async bytes => { await out.write(bytes); }, from, 'f.txt');
				} finally {
					await out.close();
					await from.close();
				}
				assert.ok(fs.readFileSync(copy).equals(Buffer.from(`${big.slice(0, at)}${newText}${big.slice(at)}`)), `edit at ${at}, ${newText.length} bytes`);
			}
		}
	});

	it('whole() reads the bytes again only while they still have the digest', async () => {
		const bytes = Buffer.from(textOf(1_100_000));
		const scanned = (await scan(bytes, { oldText: 'line 5 of', newText: 'line five of' }))!;
		assert.ok(scanned.before instanceof DiskBytes && scanned.after instanceof DiskSplice);
		assert.ok(Buffer.from(wholeBytes(scanned.before)).equals(bytes));
		// Same size, other content.
		const file = path.join(dir, 'f.txt');
		fs.writeFileSync(file, Buffer.from(bytes.toString().replace('line 7 of', 'line 8 of')));
		assert.throws(() => scanned.before.whole(), (error: { code?: string }) => error.code === 'stale_write');
		assert.throws(() => scanned.after.whole(), (error: { code?: string }) => error.code === 'stale_write');
	});
});

describe('reading a file left on disk in chunks (readChunks, copyTo)', () => {
	let dir: string;
	beforeEach(() => {
		dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-chunks-'));
	});
	afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

	async function withHandle<T>(bytes: Buffer, use: (handle: fs.promises.FileHandle, file: string) => Promise<T>): Promise<T> {
		const file = path.join(dir, 'f.txt');
		fs.writeFileSync(file, bytes);
		const handle = await fs.promises.open(file, 'r');
		try {
			return await use(handle, file);
		} finally {
			await handle.close();
		}
	}

	/** The chunks readChunks hands over, copied (its buffers are used again). */
	async function chunksOf(handle: fs.promises.FileHandle, size: number): Promise<{ offset: number; bytes: Buffer }[]> {
		const seen: { offset: number; bytes: Buffer }[] = [];
		await readChunks(handle, size, undefined, (chunk, offset) => {
			seen.push({ offset, bytes: Buffer.from(chunk) });
		});
		return seen;
	}

	it('reads exactly `size` bytes at their offsets, STREAM_CHUNK at a time, wherever the handle stands', async () => {
		const bytes = Buffer.from(textOf(2 * STREAM_CHUNK + 1000));
		const size = 2 * STREAM_CHUNK + 10;
		await withHandle(bytes, async handle => {
			// Moves the handle's own position: readChunks must read at offsets, not from there.
			await handle.read(Buffer.alloc(100), 0, 100, null);
			const seen = await chunksOf(handle, size);
			assert.deepEqual(seen.map(({ offset, bytes }) => [offset, bytes.length]), [[0, STREAM_CHUNK], [STREAM_CHUNK, STREAM_CHUNK], [2 * STREAM_CHUNK, 10]]);
			assert.ok(Buffer.concat(seen.map(chunk => chunk.bytes)).equals(bytes.subarray(0, size)), 'the first `size` bytes, in order');
		});
	});

	it('reads nothing for a size of 0, and fails with FileShrank for a file shorter than its size', async () => {
		await withHandle(Buffer.from(''), async handle => assert.deepEqual(await chunksOf(handle, 0), []));
		await withHandle(Buffer.from(textOf(STREAM_CHUNK + 50)), async handle => {
			await assert.rejects(chunksOf(handle, STREAM_CHUNK + 5000), (error: Error) => error instanceof FileShrank && /became shorter/.test(error.message));
		});
	});

	/** Scans `bytes` for an edit, then lets `meanwhile` change the file before copyTo copies it. */
	async function copyAfter(bytes: Buffer, meanwhile: (file: string) => void, options: { write?: (chunk: Buffer) => Promise<void>; signal?: AbortSignal } = {}) {
		return withHandle(bytes, async (handle, file) => {
			const scanned = (await scanExactEdit({ handle, path: file, display: 'f.txt', size: bytes.length }, { oldText: 'line 5 of', newText: 'line five of' }))!;
			meanwhile(file);
			const from = await fs.promises.open(file, 'r');
			try {
				await scanned.after.copyTo(options.write ?? (async () => undefined), from, 'shown/f.txt', options.signal);
			} finally {
				await from.close();
			}
		});
	}

	it('copyTo refuses a source changed since the scan: shorter, or the same size with other bytes', async () => {
		const bytes = Buffer.from(textOf(STREAM_CHUNK + 100_000));
		const isStale = (error: ToolError) => error.code === 'stale_write' && error.message.startsWith('shown/f.txt changed on disk') && error.details?.path === 'shown/f.txt';
		await assert.rejects(copyAfter(bytes, file => fs.truncateSync(file, bytes.length - 5000)), isStale);
		await assert.rejects(copyAfter(bytes, file => fs.writeFileSync(file, bytes.toString().replace('line 9 of', 'line 8 of'))), isStale);
		await copyAfter(bytes, () => undefined);
	});

	it('copyTo passes a failed write and a cancel on as they are, not as a changed file', async () => {
		const bytes = Buffer.from(textOf(STREAM_CHUNK + 100_000));
		const full = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
		await assert.rejects(copyAfter(bytes, () => undefined, { write: async () => { throw full; } }), error => error === full);
		const controller = new AbortController();
		controller.abort();
		await assert.rejects(copyAfter(bytes, () => undefined, { signal: controller.signal }), (error: Error) => error instanceof CancelledError && error.message === 'Reading the file was cancelled.');
	});
});

describe('edit_file on a file over 1 MB', () => {
	let tree: ReturnType<typeof makeTree>;
	afterEach(() => tree.cleanup());

	it('writes the exact new bytes, backs up the exact old ones, and reports the diff at its line', async () => {
		const original = Buffer.from(`${textOf(1_500_000)}THE LINE TO CHANGE\n${textOf(1_500_000, 500_000)}`);
		tree = makeTree({ 'big.txt': original });
		const storageDir = fs.mkdtempSync(path.join(tree.root, '..', 'tb-store-'));
		try {
			const h = makeHarness(tree.root, { storageDir });
			const text = await h.text('edit_file', { path: 'big.txt', edits: [{ oldText: 'THE LINE TO CHANGE', newText: 'THE LINE, CHANGED' }] });
			// Made on the file left on disk (the person was asked about that very plan).
			const request = h.asked[0];
			assert.ok(request.kind === 'files' && request.changes[0].before instanceof DiskBytes && request.changes[0].after instanceof DiskSplice);
			const expected = Buffer.from(original.toString().replace('THE LINE TO CHANGE', 'THE LINE, CHANGED'));
			assert.ok(fs.readFileSync(tree.file('big.txt')).equals(expected));
			const line = original.subarray(0, original.indexOf('THE LINE')).toString().split('\n').length;
			assert.match(text, /: 1 edit, \+1 −1 lines\./);
			assert.match(text, new RegExp(`@@ -${line - 3},7 \\+${line - 3},7 @@`));
			assert.match(text, /-THE LINE TO CHANGE\n\+THE LINE, CHANGED\n/);
			const [set] = fs.readdirSync(path.join(storageDir, 'backups'));
			const copy = fs.readdirSync(path.join(storageDir, 'backups', set)).find(name => name.endsWith('big.txt'))!;
			assert.ok(fs.readFileSync(path.join(storageDir, 'backups', set, copy)).equals(original), 'the backup is the old bytes');
			// Its own write is not stale: the next edit goes through.
			await h.text('edit_file', { path: 'big.txt', edits: [{ oldText: 'THE LINE, CHANGED', newText: 'AGAIN' }] });
			assert.ok(fs.readFileSync(tree.file('big.txt')).equals(Buffer.from(original.toString().replace('THE LINE TO CHANGE', 'AGAIN'))));
		} finally {
			fs.rmSync(storageDir, { recursive: true, force: true });
		}
	});

	it('edits a file down to 1 MB or less, and the next edit of it is not stale', async () => {
		const original = `${textOf(1024 * 1024 - 500)}CUT${'x'.repeat(2000)}\n`;
		tree = makeTree({ 'big.txt': original });
		const h = makeHarness(tree.root);
		await h.text('edit_file', { path: 'big.txt', edits: [{ oldText: `CUT${'x'.repeat(2000)}`, newText: 'cut' }] });
		assert.ok(fs.statSync(tree.file('big.txt')).size <= 1024 * 1024);
		await h.text('edit_file', { path: 'big.txt', edits: [{ oldText: 'cut', newText: 'CUT' }] });
		assert.equal(fs.readFileSync(tree.file('big.txt'), 'utf8'), original.replace(`CUT${'x'.repeat(2000)}`, 'CUT'));
	});

	it('edits a file of 1 MB or less in memory', async () => {
		tree = makeTree({ 'small.txt': `${textOf(1024 * 1024 - 100)}THE LINE\n` });
		const h = makeHarness(tree.root);
		await h.text('edit_file', { path: 'small.txt', edits: [{ oldText: 'THE LINE', newText: 'OUR LINE' }] });
		const request = h.asked[0];
		assert.ok(request.kind === 'files' && request.changes[0].before instanceof Uint8Array);
		assert.match(fs.readFileSync(tree.file('small.txt'), 'utf8'), /OUR LINE\n$/);
	});

	it('keeps CRLF line endings of a big file (edited in memory)', async () => {
		const original = textOf(1_200_000).replace(/\n/g, '\r\n');
		tree = makeTree({ 'crlf.txt': original });
		const h = makeHarness(tree.root);
		await h.text('edit_file', { path: 'crlf.txt', edits: [{ oldText: 'line 100 of some ordinary text\nline 101', newText: 'line 100 of other text\nline 101' }] });
		assert.equal(fs.readFileSync(tree.file('crlf.txt'), 'utf8'), original.replace('line 100 of some ordinary', 'line 100 of other'));
	});

	for (const [what, change] of [
		['rewritten with the same size', (text: string) => text.replace('line 9 of', 'line 8 of')],
		['made shorter', (text: string) => text.slice(0, -100)],
		['made longer', (text: string) => `${text}more\n`],
	] as const) {
		it(`refuses a file ${what} while the person decided, and leaves it as the other writer left it`, async () => {
			const original = `${textOf(1_300_000)}THE LINE\n`;
			tree = makeTree({ 'big.txt': original });
			const h = makeHarness(tree.root);
			const theirs = change(original);
			const result = await h.invoke('edit_file', { path: 'big.txt', edits: [{ oldText: 'THE LINE', newText: 'OUR LINE' }] }, {
				decide: async () => {
					fs.writeFileSync(tree.file('big.txt'), theirs);
					return true;
				},
			});
			assert.equal(result.error?.code, 'stale_write');
			assert.match(result.error!.message, /Nothing was written/);
			assert.equal(fs.readFileSync(tree.file('big.txt'), 'utf8'), theirs);
			assert.deepEqual(fs.readdirSync(tree.root), ['big.txt'], 'no temp left');
		});
	}
});
