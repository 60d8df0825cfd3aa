import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { LineIndex, LineIndexes } from '../../src/core/files/lineIndex';
import { makeHarness, makeTree } from './helpers';

const identity = { size: 100, mtimeMs: 1, ctimeMs: 1, ino: 1 };

describe('line index', () => {
	describe('LineIndex', () => {
		it('gives the last checkpoint at or before a line, whatever order they came in', () => {
			const index = new LineIndex(identity);
			index.record(500, 50);
			index.record(100, 10);
			index.record(300, 30);
			index.record(300, 30);
			assert.deepEqual(index.before(1), { byte: 0, newlines: 0 });
			assert.deepEqual(index.before(11), { byte: 100, newlines: 10 });
			assert.deepEqual(index.before(30), { byte: 100, newlines: 10 });
			assert.deepEqual(index.before(31), { byte: 300, newlines: 30 });
			assert.deepEqual(index.before(10_000), { byte: 500, newlines: 50 });
		});

		it('stays bounded on a huge file by keeping every other checkpoint', () => {
			const index = new LineIndex(identity);
			for (let i = 1; i <= 5000; i++) index.record(i * 10, i);
			const reached = index.before(5001);
			assert.ok(reached.newlines <= 5000 && reached.newlines >= 4990, `${reached.newlines}`);
			assert.deepEqual(index.before(1), { byte: 0, newlines: 0 });
		});

		it('keeps one index per file version and forgets the oldest files', () => {
			const indexes = new LineIndexes();
			const first = indexes.forFile('/a', identity);
			assert.equal(indexes.forFile('/a', { ...identity }), first);
			assert.notEqual(indexes.forFile('/a', { ...identity, ctimeMs: 2 }), first);
			const a = indexes.forFile('/a', identity);
			for (let i = 0; i < 16; i++) indexes.forFile(`/other${i}`, identity);
			assert.notEqual(indexes.forFile('/a', identity), a);
		});
	});

	describe('read_file deep in a file', function () {
		this.timeout(30000);
		// Lines of varied length, multi-byte text and CRLF, over several 1 MB skip chunks.
		const lineText = (n: number) => `${n % 7 === 0 ? 'größe ' : ''}line ${n}${'.'.repeat(n % 13)}${n % 5 === 0 ? '\r' : ''}`;
		const LINES = 200_000;
		let tree: ReturnType<typeof makeTree>;
		before(() => {
			tree = makeTree({ 'big.txt': Array.from({ length: LINES }, (_, i) => lineText(i + 1)).join('\n') + '\n', 'nofinal.txt': 'a\nb\nc' });
		});
		after(() => tree.cleanup());

		const firstShown = (text: string) => text.split('\n')[1];

		it('reads the same lines cold and through the index, paging on and back', async () => {
			const warm = makeHarness(tree.root);
			for (const offset of [150_000, 150_001, 199_999, 3, 100_000, 180_000, 1]) {
				const cold = await makeHarness(tree.root).text('read_file', { path: 'big.txt', offset, limit: 5 });
				const again = await warm.text('read_file', { path: 'big.txt', offset, limit: 5 });
				assert.equal(again, cold, `offset ${offset}`);
				assert.equal(firstShown(cold), `${offset}\t${lineText(offset).replace(/\r$/, '')}`);
			}
		});

		it('says where the file ends, cold and warm', async () => {
			const warm = makeHarness(tree.root);
			for (const harness of [makeHarness(tree.root), warm, warm]) {
				assert.match((await harness.error('read_file', { path: 'big.txt', offset: LINES + 1 })).message, /has 200,000 lines/);
				assert.match((await harness.error('read_file', { path: 'nofinal.txt', offset: 4 })).message, /has 3 lines/);
				assert.equal(firstShown(await harness.text('read_file', { path: 'nofinal.txt', offset: 3 })), '3\tc');
			}
		});

		it('forgets what it learnt when the file changes', async () => {
			const harness = makeHarness(tree.root);
			assert.equal(firstShown(await harness.text('read_file', { path: 'big.txt', offset: 190_000, limit: 1 })), `190000\t${lineText(190_000).replace(/\r$/, '')}`);
			const shifted = Array.from({ length: LINES }, (_, i) => lineText(i + 2)).join('\n') + '\n';
			fs.writeFileSync(tree.file('big.txt'), shifted);
			assert.equal(firstShown(await harness.text('read_file', { path: 'big.txt', offset: 190_000, limit: 1 })), `190000\t${lineText(190_001).replace(/\r$/, '')}`);
		});
	});
});
