import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LINE_COUNT_LIMIT } from '../../src/core/files/files';
import { makeHarness, makeTree } from './helpers';

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a1c40000000049454e44ae426082', 'hex');

describe('read_file', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => {
		tree = makeTree({
			'src/a.ts': lines(10),
			'crlf.txt': 'one\r\ntwo\r\nthree\r\n',
			'nofinal.txt': 'first\nsecond',
			'bom.txt': '\uFEFFhéllo wörld 😀\nzweite\n',
			'empty.txt': '',
			'long.txt': `${'x'.repeat(5000)}\nshort\n`,
			'image.png': PNG,
			'blob.bin': Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]),
			'dir/inner.txt': 'inner\n',
			'code.py': [
				'import os',
				'',
				'class Greeter:',
				'    """Says hello."""',
				'',
				'    def hello(self, name):',
				'        message = f"hi {name}"',
				'        return message',
				'',
				'    def bye(self):',
				'        return "bye"',
				'',
				'def main():',
				'    Greeter().hello("x")',
			].join('\n') + '\n',
			'code.ts': 'export class A {\n\tm() {\n\t\treturn 1;\n\t}\n}\n\nfunction f() {\n\treturn 2;\n}\n',
		});
	});
	afterEach(() => tree.cleanup());

	describe('slices', () => {
		it('reads a whole small file with numbered lines and a header', async () => {
			const text = await makeHarness(tree.root).text('read_file', { path: 'src/a.ts' });
			assert.equal(text.split('\n')[0], 'src/a.ts: lines 1–10 of 10');
			assert.equal(text.split('\n')[1], ' 1\tline 1');
			assert.equal(text.split('\n')[10], '10\tline 10');
			assert.doesNotMatch(text, /omitted/);
		});

		it('pages with offset and limit and says how to continue', async () => {
			const harness = makeHarness(tree.root);
			const result = await harness.invoke('read_file', { path: 'src/a.ts', offset: 3, limit: 4 });
			const text = (result.content[0] as { text: string }).text;
			assert.equal(text.split('\n')[0], 'src/a.ts: lines 3–6 of 10');
			assert.match(text, /3\tline 3\n4\tline 4\n5\tline 5\n6\tline 6\n\[… 4 lines omitted; use offset=7 to continue …\]$/);
			assert.equal(result.metadata.truncated, true);
			assert.equal(result.metadata.linesOmitted, 4);
			assert.equal(result.metadata.lastLine, 6);
		});

		it('reads the last lines with a negative offset, with their real numbers', async () => {
			const text = await makeHarness(tree.root).text('read_file', { path: 'src/a.ts', offset: -3 });
			assert.match(text, /^src\/a\.ts: lines 8–10 of 10\n\[… 7 lines omitted; use offset=1 with limit=7 for the lines before …\]\n 8\tline 8\n 9\tline 9\n10\tline 10$/);
		});

		it('handles CRLF, a missing final newline, a BOM and multi-byte text', async () => {
			const harness = makeHarness(tree.root);
			assert.match(await harness.text('read_file', { path: 'crlf.txt' }), /1\tone\n2\ttwo\n3\tthree$/);
			assert.match(await harness.text('read_file', { path: 'crlf.txt', offset: -1 }), /3\tthree$/);
			assert.match(await harness.text('read_file', { path: 'nofinal.txt' }), /lines 1–2 of 2\n1\tfirst\n2\tsecond$/);
			assert.match(await harness.text('read_file', { path: 'nofinal.txt', offset: -1 }), /lines 2–2 of 2\n\[…[^\n]*\]\n2\tsecond$/);
			assert.match(await harness.text('read_file', { path: 'bom.txt' }), /\n1\théllo wörld 😀\n2\tzweite$/);
			assert.match(await harness.text('read_file', { path: 'bom.txt', offset: -2 }), /\n1\théllo wörld 😀\n2\tzweite$/);
		});

		it('says when a file is empty', async () => {
			const harness = makeHarness(tree.root);
			assert.match(await harness.text('read_file', { path: 'empty.txt' }), /^empty\.txt\n\(the file is empty\)$/);
			assert.match(await harness.text('read_file', { path: 'empty.txt', offset: -5 }), /^empty\.txt\n\(the file is empty\)$/);
		});

		it('cuts lines over 2,000 characters with a marker', async () => {
			const result = await makeHarness(tree.root).invoke('read_file', { path: 'long.txt' });
			const first = (result.content[0] as { text: string }).text.split('\n')[1];
			assert.ok(first.startsWith(`1\t${'x'.repeat(2000)} [… line cut`));
			assert.match(first, /3,000 more/);
			assert.equal(result.metadata.cutLines, 1);
			assert.equal(result.metadata.truncated, true);
		});

		it('stops at the byte cap at a whole line and gives the offset to continue', async () => {
			fs.writeFileSync(tree.file('wide.txt'), lines(1000, 'y'.repeat(100)));
			const result = await makeHarness(tree.root).invoke('read_file', { path: 'wide.txt' });
			const text = (result.content[0] as { text: string }).text;
			const shown = Number(/lines 1–(\d+) of 1,000/.exec(text)![1]);
			assert.ok(shown > 200 && shown < 400, `shown ${shown}`);
			assert.match(text, new RegExp(`use offset=${shown + 1} to continue`));
			assert.ok(Buffer.byteLength(text) < 32 * 1024 + 200);
		});

		it('refuses offsets past the end or zero, saying the valid range', async () => {
			const harness = makeHarness(tree.root);
			const past = await harness.error('read_file', { path: 'src/a.ts', offset: 11 });
			assert.equal(past.code, 'invalid_input');
			assert.match(past.message, /offset 11 is past the end of the file, which has 10 lines\. Use an offset from 1 to 10/);
			assert.match((await harness.error('read_file', { path: 'src/a.ts', offset: 0 })).message, /1-based/);
		});
	});

	describe('indentation mode', () => {
		it('reads the enclosing function of a line', async () => {
			const text = await makeHarness(tree.root).text('read_file', { path: 'code.py', offset: 7, mode: 'indentation' });
			assert.match(text, /^code\.py: lines 6–8 of 14\n6\t    def hello\(self, name\):\n7\t[^\n]*message = [^\n]*\n8\t        return message/);
		});

		it('reads a whole block from its header line, with the closing brace', async () => {
			const text = await makeHarness(tree.root).text('read_file', { path: 'code.ts', offset: 1, mode: 'indentation' });
			assert.match(text, /lines 1–5 of 9/);
			assert.match(text, /5\t}/);
			assert.doesNotMatch(text, /function f/);
		});

		it('reads the class around a method header', async () => {
			const text = await makeHarness(tree.root).text('read_file', { path: 'code.py', offset: 6, mode: 'indentation' });
			assert.match(text, /lines 6–8/);
			const cls = await makeHarness(tree.root).text('read_file', { path: 'code.py', offset: 3, mode: 'indentation' });
			assert.match(cls, /lines 3–11 of 14/);
		});

		it('refuses an offset below 1 in indentation mode', async () => {
			const h = makeHarness(tree.root);
			for (const offset of [0, -3]) {
				const error = await h.error('read_file', { path: 'code.py', offset, mode: 'indentation' });
				assert.equal(error.code, 'invalid_input');
				assert.match(error.message, /mode "indentation" needs a positive offset/);
			}
		});
	});

	describe('binary, images and base64', () => {
		it('returns an image part for an image', async () => {
			const result = await makeHarness(tree.root).invoke('read_file', { path: 'image.png' });
			assert.equal(result.error, undefined);
			const image = result.content.find(part => part.kind === 'image');
			assert.ok(image && image.kind === 'image');
			assert.equal(image.mimeType, 'image/png');
			assert.deepEqual(Buffer.from(image.data), PNG);
		});

		it('refuses an image over the cap', async () => {
			const error = await makeHarness(tree.root, { settings: { limits: { ...(await import('../../src/core/policy/settings')).DEFAULT_LIMITS, imageBytes: 10 } } })
				.error('read_file', { path: 'image.png' });
			assert.equal(error.code, 'too_large');
		});

		it('refuses other binary files with a hint to use base64', async () => {
			const error = await makeHarness(tree.root).error('read_file', { path: 'blob.bin' });
			assert.equal(error.code, 'binary_file');
			assert.match(error.message, /encoding: "base64"/);
		});

		it('returns raw bytes in base64, paged by byte offset', async () => {
			const harness = makeHarness(tree.root);
			const text = await harness.text('read_file', { path: 'blob.bin', encoding: 'base64' });
			assert.equal(text, `blob.bin: bytes 1–8 of 8, base64\n${Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]).toString('base64')}`);
			const tail = await harness.text('read_file', { path: 'blob.bin', encoding: 'base64', offset: -2 });
			assert.equal(tail.split('\n')[1], Buffer.from([0, 7]).toString('base64'));
		});

		it('refuses a base64 offset past the end, saying the size', async () => {
			const error = await makeHarness(tree.root).error('read_file', { path: 'blob.bin', encoding: 'base64', offset: 9 });
			assert.equal(error.code, 'invalid_input');
			assert.match(error.message, /^offset 9 is past the end of blob\.bin, which has 8 bytes\. Use an offset from 1 to 8/);
		});
	});

	describe('editor text and errors', () => {
		it('prefers the unsaved text of an open editor', async () => {
			const dirty = new Map([[tree.file('src/a.ts'), 'edited in the editor\nnot saved\n']]);
			const result = await makeHarness(tree.root, { dirty }).invoke('read_file', { path: 'src/a.ts' });
			const text = (result.content[0] as { text: string }).text;
			assert.equal(text, 'src/a.ts (unsaved editor text): lines 1–2 of 2\n1\tedited in the editor\n2\tnot saved');
			assert.equal(result.metadata.unsavedChanges, true);
		});

		it('reads the last lines of the unsaved editor text with a negative offset', async () => {
			const dirty = new Map([[tree.file('src/a.ts'), 'e1\ne2\ne3\ne4\n']]);
			const result = await makeHarness(tree.root, { dirty }).invoke('read_file', { path: 'src/a.ts', offset: -2 });
			const text = (result.content[0] as { text: string }).text;
			const shown = text.split('\n');
			assert.equal(shown[0], 'src/a.ts (unsaved editor text): lines 3–4 of 4');
			assert.deepEqual(shown.slice(-2), ['3\te3', '4\te4']);
			assert.match(text, /use offset=1 with limit=2 for the lines before/);
			assert.doesNotMatch(text, /line 10/, 'the disk content is not read');
			assert.deepEqual([result.metadata.firstLine, result.metadata.lastLine, result.metadata.unsavedChanges], [3, 4, true]);
		});

		it('records the version it read, for stale-write detection', async () => {
			const harness = makeHarness(tree.root);
			await harness.text('read_file', { path: 'src/a.ts' });
			const stat = fs.statSync(tree.file('src/a.ts'));
			const env = (harness.registry as any).env;
			const sha256 = createHash('sha256').update(fs.readFileSync(tree.file('src/a.ts'))).digest('hex');
			assert.deepEqual(env.state.fileVersions.get(tree.file('src/a.ts')), { mtimeMs: stat.mtimeMs, size: stat.size, sha256 });
		});

		it('gives one precise message for a missing file, a directory, and paths outside', async () => {
			const harness = makeHarness(tree.root);
			const missing = await harness.error('read_file', { path: 'src/nope.ts' });
			assert.equal(missing.code, 'not_found');
			assert.match(missing.message, /^src\/nope\.ts does not exist/);
			assert.equal((await harness.error('read_file', { path: 'dir' })).code, 'is_directory');
			assert.equal((await harness.error('read_file', { path: '../outside.txt' })).code, 'outside_boundary');
			assert.equal((await harness.error('read_file', { path: '/etc/passwd' })).code, 'outside_boundary');
		});

		it('refuses a symlink that leads outside the workspace', async () => {
			const outside = makeTree({ 'secret.txt': 'secret\n' });
			try {
				fs.symlinkSync(outside.file('secret.txt'), tree.file('link.txt'));
				fs.symlinkSync(outside.root, tree.file('linkdir'));
				const harness = makeHarness(tree.root);
				for (const target of ['link.txt', 'linkdir/secret.txt']) {
					const error = await harness.error('read_file', { path: target });
					assert.equal(error.code, 'outside_boundary');
					assert.doesNotMatch(error.message, /secret\n/);
				}
			} finally {
				outside.cleanup();
			}
		});
	});

	describe('large files', function () {
		this.timeout(60000);
		let big: string;
		before(() => {
			// Just over the counting limit, so the tail read must not count lines.
			big = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'tb-big-')), 'big.log');
			const line = `${'z'.repeat(99)}\n`;
			const block = line.repeat(10000);
			const fd = fs.openSync(big, 'w');
			const blocks = Math.ceil(LINE_COUNT_LIMIT / Buffer.byteLength(block)) + 1;
			for (let i = 0; i < blocks; i++) fs.writeSync(fd, block);
			fs.writeSync(fd, 'the very last line\n');
			fs.closeSync(fd);
		});
		after(() => fs.rmSync(path.dirname(big), { recursive: true, force: true }));

		it('reads the last lines of a file too large to count, without line numbers', async () => {
			const harness = makeHarness(path.dirname(big));
			const text = await harness.text('read_file', { path: 'big.log', offset: -2 });
			assert.match(text, /^big\.log: the last 2 lines \(line numbers are not counted/);
			assert.match(text, /\nz{99}\nthe very last line$/);
		});

		it('reads the first lines without counting the whole file', async () => {
			const text = await makeHarness(path.dirname(big)).text('read_file', { path: 'big.log', limit: 2 });
			assert.match(text, /^big\.log: lines 1–2 \(total not counted/);
		});
	});
});
