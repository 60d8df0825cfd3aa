import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeHarness, makeTree } from './helpers';
import { wholeBytes } from '../../src/core/files/splicedBytes';

describe('edit_file', () => {
	let tree: ReturnType<typeof makeTree>;
	const read = (rel: string) => fs.readFileSync(tree.file(rel), 'utf8');
	const bytes = (rel: string) => fs.readFileSync(tree.file(rel));

	beforeEach(() => {
		tree = makeTree({
			'src/a.ts': 'function a() {\n\treturn 1;\n}\n\nfunction b() {\n\treturn 1;\n}\n',
			'crlf.txt': 'one\r\ntwo\r\nthree\r\n',
			'bom.txt': '\uFEFFhéllo wörld 😀\nzweite Zeile\n',
			'nofinal.txt': 'first\nsecond',
			'empty.txt': '',
			'blob.bin': Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]),
			'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
			'dir/inner.txt': 'inner\n',
			'spaces.py': 'def f():\n    x = 1   \n    return x\n',
			'quotes.md': 'He said “hello” — and left.\n',
			'dup.txt': 'x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n',
		});
	});
	afterEach(() => tree.cleanup());

	describe('exact edits', () => {
		it('replaces one unique occurrence and returns a unified diff', async () => {
			const h = makeHarness(tree.root);
			const text = await h.text('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function b() {\n\treturn 1;', newText: 'function b() {\n\treturn 2;' }] });
			assert.equal(read('src/a.ts'), 'function a() {\n\treturn 1;\n}\n\nfunction b() {\n\treturn 2;\n}\n');
			assert.match(text, /^Edited src\/a\.ts: 1 edit, \+1 −1 lines\./);
			assert.match(text, /--- a\/src\/a\.ts\n\+\+\+ b\/src\/a\.ts\n@@ -3,5 \+3,5 @@/);
			assert.match(text, /-\treturn 1;\n\+\treturn 2;/);
		});

		it('applies several edits in order, each to the result of the previous', async () => {
			const h = makeHarness(tree.root);
			await h.text('edit_file', {
				path: 'src/a.ts',
				edits: [
					{ oldText: 'function a()', newText: 'function first()' },
					{ oldText: 'function first() {\n\treturn 1;', newText: 'function first() {\n\treturn 10;' },
				],
			});
			assert.equal(read('src/a.ts'), 'function first() {\n\treturn 10;\n}\n\nfunction b() {\n\treturn 1;\n}\n');
		});

		it('lists the line numbers of every match when oldText is ambiguous, and writes nothing', async () => {
			const h = makeHarness(tree.root);
			const before = bytes('dup.txt');
			const error = await h.error('edit_file', { path: 'dup.txt', edits: [{ oldText: 'x = 1', newText: 'x = 2' }] });
			assert.equal(error.code, 'ambiguous_match');
			assert.match(error.message, /matched 3 times in dup\.txt, at lines 1, 3, 5/);
			assert.match(error.message, /replaceAll/);
			assert.deepEqual(bytes('dup.txt'), before);
		});

		it('names the failing edit by number in a multi-edit call', async () => {
			const h = makeHarness(tree.root);
			const error = await h.error('edit_file', { path: 'dup.txt', edits: [{ oldText: 'y = 2', newText: 'y = 3' }, { oldText: 'x = 1', newText: 'x = 9' }] });
			assert.match(error.message, /^Edit #2: oldText matched 3 times/);
		});

		it('replaces every occurrence with replaceAll', async () => {
			const h = makeHarness(tree.root);
			const text = await h.text('edit_file', { path: 'dup.txt', edits: [{ oldText: 'x = 1', newText: 'x = 2', replaceAll: true }] });
			assert.equal(read('dup.txt'), 'x = 2\ny = 2\nx = 2\nz = 3\nx = 2\n');
			assert.match(text, /replaced 3 occurrences/);
		});

		// Each replacement must land where its occurrence was: applied left to right, a longer or
		// shorter newText would shift the offsets of the occurrences after it.
		it('replaceAll with a longer newText puts every replacement in its place', async () => {
			const h = makeHarness(tree.root);
			await h.text('edit_file', { path: 'dup.txt', edits: [{ oldText: 'x = 1', newText: 'x = 1000000', replaceAll: true }] });
			assert.equal(read('dup.txt'), 'x = 1000000\ny = 2\nx = 1000000\nz = 3\nx = 1000000\n');
		});

		it('replaceAll with a shorter newText puts every replacement in its place', async () => {
			const h = makeHarness(tree.root);
			const result = await h.invoke('edit_file', { path: 'dup.txt', edits: [{ oldText: 'x = 1\n', newText: 'x\n', replaceAll: true }] });
			assert.equal(read('dup.txt'), 'x\ny = 2\nx\nz = 3\nx\n');
			assert.equal(result.metadata.replacements, 3);
		});

		it('replaceAll of occurrences located with tolerance keeps each in its place too', async () => {
			tree = makeTree({ 't.py': 'a = 1  \nkeep\na = 1\t\nkeep\na = 1 \n' });
			const h = makeHarness(tree.root);
			const text = await h.text('edit_file', { path: 't.py', edits: [{ oldText: 'a = 1\n', newText: 'a = 1 + 2 + 3\n', replaceAll: true }] });
			assert.equal(read('t.py'), 'a = 1 + 2 + 3\nkeep\na = 1 + 2 + 3\nkeep\na = 1 + 2 + 3\n');
			assert.match(text, /located ignoring trailing whitespace \(3 occurrences\)/);
			await h.text('edit_file', { path: 't.py', edits: [{ oldText: 'a = 1 + 2 + 3', newText: 'b', replaceAll: true }] });
			assert.equal(read('t.py'), 'b\nkeep\nb\nkeep\nb\n');
		});

		it('is all or nothing: a failing later edit leaves the file untouched', async () => {
			const h = makeHarness(tree.root);
			const before = bytes('src/a.ts');
			const error = await h.error('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a()', newText: 'function z()' }, { oldText: 'no such text', newText: 'x' }] });
			assert.equal(error.code, 'no_match');
			assert.match(error.message, /^Edit #2: oldText was not found in src\/a\.ts \(after the earlier edits/);
			assert.deepEqual(bytes('src/a.ts'), before);
		});

		it('treats $ patterns in newText literally', async () => {
			const h = makeHarness(tree.root);
			await h.text('edit_file', { path: 'dup.txt', edits: [{ oldText: 'z = 3', newText: "z = '$&$1$$'" }] });
			assert.match(read('dup.txt'), /z = '\$&\$1\$\$'/);
		});

		it('deletes text when newText is empty', async () => {
			const h = makeHarness(tree.root);
			await h.text('edit_file', { path: 'dup.txt', edits: [{ oldText: 'y = 2\n', newText: '' }] });
			assert.equal(read('dup.txt'), 'x = 1\nx = 1\nz = 3\nx = 1\n');
		});
	});

	describe('file shape', () => {
		it('keeps CRLF line endings; the model writes \\n', async () => {
			const h = makeHarness(tree.root);
			await h.text('edit_file', { path: 'crlf.txt', edits: [{ oldText: 'one\ntwo', newText: 'uno\ndos\ndos bis' }] });
			assert.equal(read('crlf.txt'), 'uno\r\ndos\r\ndos bis\r\nthree\r\n');
		});

		it('keeps the BOM and multi-byte text around the edit byte for byte', async () => {
			const h = makeHarness(tree.root);
			await h.text('edit_file', { path: 'bom.txt', edits: [{ oldText: 'wörld 😀', newText: 'Welt 🌍' }] });
			assert.deepEqual(bytes('bom.txt'), Buffer.from('\uFEFFhéllo Welt 🌍\nzweite Zeile\n', 'utf8'));
		});

		it('edits a large BOM file in pieces: every other byte kept, a later edit across an earlier one, the diff at the right line', async () => {
			const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} with ünïcödé ✓`);
			fs.writeFileSync(tree.file('big.txt'), `\uFEFF${lines.join('\n')}\n`);
			const h = makeHarness(tree.root);
			const text = await h.text('edit_file', { path: 'big.txt', edits: [
				{ oldText: 'line 30000 with', newText: 'LINE 30000 WITH' },
				{ oldText: 'ünïcödé ✓\nLINE 30000 WITH ünïcödé', newText: 'joined' },
			] });
			lines.splice(29_999, 2, 'line 29999 with joined ✓');
			assert.deepEqual(bytes('big.txt'), Buffer.from(`\uFEFF${lines.join('\n')}\n`, 'utf8'));
			assert.match(text, /: 2 edits, \+1 −2 lines\./);
			assert.match(text, /@@ -29997,8 \+29997,7 @@/);
		});

		it('keeps a missing final newline', async () => {
			const h = makeHarness(tree.root);
			await h.text('edit_file', { path: 'nofinal.txt', edits: [{ oldText: 'second', newText: 'zweite' }] });
			assert.equal(read('nofinal.txt'), 'first\nzweite');
		});

		it('keeps the executable bit of the file', async function () {
			if (process.platform === 'win32') this.skip();
			fs.chmodSync(tree.file('src/a.ts'), 0o755);
			await makeHarness(tree.root).text('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a()', newText: 'function aa()' }] });
			assert.equal(fs.statSync(tree.file('src/a.ts')).mode & 0o777, 0o755);
		});
	});

	describe('tolerant locating', () => {
		it('locates text whose trailing whitespace differs, replacing only those lines', async () => {
			const h = makeHarness(tree.root);
			const text = await h.text('edit_file', { path: 'spaces.py', edits: [{ oldText: '    x = 1\n    return x', newText: '    x = 2\n    return x' }] });
			assert.equal(read('spaces.py'), 'def f():\n    x = 2\n    return x\n');
			assert.match(text, /located ignoring trailing whitespace/);
		});

		it('locates text quoted with the wrong indentation and re-indents the replacement', async () => {
			const h = makeHarness(tree.root);
			const text = await h.text('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function b() {\n  return 1;\n}', newText: 'function b() {\n  const v = 2;\n  return v;\n}' }] });
			// The quoted lines differ from the file only by their indentation: 2 spaces for a tab.
			assert.equal(read('src/a.ts'), 'function a() {\n\treturn 1;\n}\n\nfunction b() {\n\tconst v = 2;\n\treturn v;\n}\n');
			assert.match(text, /ignoring indentation/);
		});

		it('re-indents when the whole block was quoted one level too shallow', async () => {
			tree = makeTree({ 'c.ts': 'class C {\n\tm() {\n\t\treturn 1;\n\t}\n}\n' });
			const h = makeHarness(tree.root);
			const text = await h.text('edit_file', { path: 'c.ts', edits: [{ oldText: 'm() {\n\treturn 1;\n}', newText: 'm() {\n\treturn 2;\n}' }] });
			assert.equal(read('c.ts'), 'class C {\n\tm() {\n\t\treturn 2;\n\t}\n}\n');
			assert.match(text, /re-indented/);
		});

		it('locates text typed with straight quotes and hyphens where the file has curly quotes and dashes', async () => {
			const h = makeHarness(tree.root);
			await h.text('edit_file', { path: 'quotes.md', edits: [{ oldText: '"hello" - and', newText: '“goodbye” — and' }] });
			assert.equal(read('quotes.md'), 'He said “goodbye” — and left.\n');
		});

		it('is exact first: a tolerant match elsewhere does not make an exact match ambiguous', async () => {
			tree = makeTree({ 'w.txt': 'value = 1  \nvalue = 1\n' });
			await makeHarness(tree.root).text('edit_file', { path: 'w.txt', edits: [{ oldText: 'value = 1\n', newText: 'value = 2\n' }] });
			assert.equal(read('w.txt'), 'value = 1  \nvalue = 2\n');
		});

		// Tolerance only locates: when it finds several places, which one was meant is unknown.
		for (const [level, content, oldText, description] of [
			['trailing', 'let a = 1;  \nlet b = 2;\nlet a = 1;\t\n', 'let a = 1;\n', 'ignoring trailing whitespace'],
			['trim', '\tgo();\n\tstop();\nx\n    go();\n    stop();\n', 'go();\n  stop();', 'ignoring indentation and trailing whitespace'],
			['unicode (in a line)', 'say “hi” now\nsay “hi” later\n', 'say "hi"', 'ignoring whitespace and Unicode look-alikes'],
			['unicode (whole lines)', '  a – b  \nc\n\ta — b\t\n', 'a - b\n', 'ignoring whitespace and Unicode look-alikes'],
		] as const) {
			it(`refuses several matches found ${level}, writing nothing`, async () => {
				tree = makeTree({ 'f.txt': content });
				const before = bytes('f.txt');
				const error = await makeHarness(tree.root).error('edit_file', { path: 'f.txt', edits: [{ oldText, newText: 'REPLACED' }] });
				assert.equal(error.code, 'ambiguous_match');
				assert.ok(error.message.startsWith('The edit: oldText matched 2 times in f.txt ('), error.message);
				assert.ok(error.message.includes(description), error.message);
				assert.deepEqual(bytes('f.txt'), before);
			});
		}

		it('shows the most similar lines when nothing matches', async () => {
			const h = makeHarness(tree.root);
			const error = await h.error('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function b() {\n\treturn 42;\n}', newText: 'x' }] });
			assert.equal(error.code, 'no_match');
			assert.match(error.message, /most similar text is at line 5:\n5\tfunction b\(\) \{\n6\t\treturn 1;/);
			assert.match(error.message, /Nothing was written/);
		});

		it('edits that cancel out are a "no change" result: nothing asked, nothing written', async () => {
			const h = makeHarness(tree.root);
			const before = fs.statSync(tree.file('crlf.txt'));
			const result = await h.invoke('edit_file', { path: 'crlf.txt', edits: [{ oldText: 'two', newText: 'TWO' }, { oldText: 'TWO', newText: 'two' }] });
			assert.equal(result.error, undefined);
			assert.equal((result.content[0] as { text: string }).text, 'No change: the edits leave crlf.txt exactly as it was. Nothing was written.');
			assert.equal(h.asked.length, 0);
			assert.deepEqual(bytes('crlf.txt'), Buffer.from('one\r\ntwo\r\nthree\r\n'));
			assert.equal(fs.statSync(tree.file('crlf.txt')).mtimeMs, before.mtimeMs);
			assert.equal(result.metadata.filesTouched, undefined);
		});
	});

	describe('bad input (nothing written)', () => {
		it('refuses an empty oldText', async () => {
			const before = bytes('src/a.ts');
			const error = await makeHarness(tree.root).error('edit_file', { path: 'src/a.ts', edits: [{ oldText: '', newText: 'x' }] });
			assert.equal(error.code, 'invalid_input');
			assert.match(error.message, /oldText is empty/);
			assert.deepEqual(bytes('src/a.ts'), before);
		});

		it('refuses oldText equal to newText', async () => {
			const error = await makeHarness(tree.root).error('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a', newText: 'function a' }] });
			assert.match(error.message, /are the same/);
		});

		it('refuses an empty edit list through schema validation', async () => {
			const error = await makeHarness(tree.root).error('edit_file', { path: 'src/a.ts', edits: [] });
			assert.equal(error.code, 'invalid_input');
			assert.match(error.message, /edits/);
		});

		it('refuses a missing file and says to use write_file', async () => {
			const error = await makeHarness(tree.root).error('edit_file', { path: 'nope.ts', edits: [{ oldText: 'a', newText: 'b' }] });
			assert.equal(error.code, 'not_found');
			assert.match(error.message, /write_file/);
			assert.equal(fs.existsSync(tree.file('nope.ts')), false);
		});

		it('refuses a directory', async () => {
			const error = await makeHarness(tree.root).error('edit_file', { path: 'dir', edits: [{ oldText: 'a', newText: 'b' }] });
			assert.equal(error.code, 'is_directory');
		});

		it('refuses a binary file', async () => {
			const before = bytes('blob.bin');
			const error = await makeHarness(tree.root).error('edit_file', { path: 'blob.bin', edits: [{ oldText: 'a', newText: 'b' }] });
			assert.equal(error.code, 'binary_file');
			assert.deepEqual(bytes('blob.bin'), before);
		});

		it('refuses a file that is not valid UTF-8 rather than corrupt its other bytes', async () => {
			const before = bytes('latin1.txt');
			const error = await makeHarness(tree.root).error('edit_file', { path: 'latin1.txt', edits: [{ oldText: 'caf', newText: 'CAF' }] });
			assert.equal(error.code, 'binary_file');
			assert.match(error.message, /not valid UTF-8/);
			assert.deepEqual(bytes('latin1.txt'), before);
		});

		it('says oldText was not found in an empty file', async () => {
			const error = await makeHarness(tree.root).error('edit_file', { path: 'empty.txt', edits: [{ oldText: 'a', newText: 'b' }] });
			assert.equal(error.code, 'no_match');
			assert.equal(read('empty.txt'), '');
		});

		it('refuses a symlink that leads outside the workspace', async function () {
			if (process.platform === 'win32') this.skip();
			const outside = makeTree({ 'secret.txt': 'secret\n' });
			try {
				fs.symlinkSync(outside.file('secret.txt'), tree.file('link.txt'));
				const error = await makeHarness(tree.root).error('edit_file', { path: 'link.txt', edits: [{ oldText: 'secret', newText: 'public' }] });
				assert.equal(error.code, 'outside_boundary');
				assert.match(error.message, /symlink_escape/);
				assert.equal(fs.readFileSync(outside.file('secret.txt'), 'utf8'), 'secret\n');
			} finally {
				outside.cleanup();
			}
		});

		it('refuses a path that escapes the workspace', async () => {
			const error = await makeHarness(tree.root).error('edit_file', { path: '../x.txt', edits: [{ oldText: 'a', newText: 'b' }] });
			assert.equal(error.code, 'outside_boundary');
		});
	});

	describe('stale writes, unsaved editors and approval', () => {
		it('refuses a file changed on disk since read_file read it, and says what changed', async () => {
			const h = makeHarness(tree.root);
			await h.text('read_file', { path: 'src/a.ts' });
			fs.writeFileSync(tree.file('src/a.ts'), 'function a() {\n\treturn 100;\n}\n');
			const error = await h.error('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a', newText: 'function z' }] });
			assert.equal(error.code, 'stale_write');
			assert.match(error.message, /changed on disk since you last read it \(size 57 → 30 bytes/);
			assert.match(error.message, /Read the file again/);
			assert.equal(read('src/a.ts'), 'function a() {\n\treturn 100;\n}\n');
			// After reading it again, the edit goes through.
			await h.text('read_file', { path: 'src/a.ts' });
			await h.text('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a', newText: 'function z' }] });
			assert.match(read('src/a.ts'), /function z/);
		});

		it('is not stale after its own write: consecutive edits work', async () => {
			const h = makeHarness(tree.root);
			await h.text('read_file', { path: 'dup.txt' });
			await h.text('edit_file', { path: 'dup.txt', edits: [{ oldText: 'y = 2', newText: 'y = 3' }] });
			await h.text('edit_file', { path: 'dup.txt', edits: [{ oldText: 'y = 3', newText: 'y = 4' }] });
			assert.match(read('dup.txt'), /y = 4/);
		});

		it('edits the unsaved editor text instead of the disk content', async () => {
			const file = tree.file('src/a.ts');
			const dirty = new Map([[file, 'function a() {\n\treturn 1;\n}\n// unsaved line\n']]);
			const h = makeHarness(tree.root, { dirty });
			const text = await h.text('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'return 1;', newText: 'return 7;' }] });
			assert.match(text, /its unsaved editor text/);
			assert.equal(read('src/a.ts'), 'function a() {\n\treturn 7;\n}\n// unsaved line\n');
		});

		it('asks for approval with the diff, and a decline changes nothing', async () => {
			const h = makeHarness(tree.root, { approve: false });
			const before = bytes('src/a.ts');
			const error = await h.error('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a', newText: 'function z' }] });
			assert.equal(error.code, 'declined');
			assert.match(error.message, /Nothing was changed/);
			assert.deepEqual(bytes('src/a.ts'), before);
			assert.equal(h.asked.length, 1);
			const request = h.asked[0];
			assert.equal(request.kind, 'files');
			if (request.kind === 'files') {
				assert.equal(request.title, 'Edit src/a.ts');
				assert.equal(request.changes.length, 1);
				assert.equal(Buffer.from(wholeBytes(request.changes[0].after!)).toString(), 'function z() {\n\treturn 1;\n}\n\nfunction b() {\n\treturn 1;\n}\n');
			}
		});

		it('previews the change for prepareInvocation without writing', async () => {
			const h = makeHarness(tree.root);
			const before = bytes('src/a.ts');
			const request = await h.registry.preview('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a', newText: 'function z' }] });
			assert.equal(request?.kind, 'files');
			assert.deepEqual(bytes('src/a.ts'), before);
		});

		it('backs up the original before writing', async () => {
			const storageDir = fs.mkdtempSync(path.join(tree.root, '..', 'tb-store-'));
			try {
				const h = makeHarness(tree.root, { storageDir });
				await h.text('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a', newText: 'function z' }] });
				const sets = fs.readdirSync(path.join(storageDir, 'backups'));
				assert.equal(sets.length, 1);
				const copy = fs.readdirSync(path.join(storageDir, 'backups', sets[0])).find(name => name.endsWith('a.ts'))!;
				assert.match(fs.readFileSync(path.join(storageDir, 'backups', sets[0], copy), 'utf8'), /^function a\(\)/);
			} finally {
				fs.rmSync(storageDir, { recursive: true, force: true });
			}
		});

		it('reports new diagnostics for the file after the change, capped', async () => {
			const file = tree.file('src/a.ts');
			let calls = 0;
			const h = makeHarness(tree.root, {
				diagnostics: async () => {
					calls++;
					if (calls === 1) return [{ path: file, line: 1, column: 1, severity: 'warning', message: 'old warning' }];
					return [
						{ path: file, line: 1, column: 1, severity: 'warning', message: 'old warning' },
						...Array.from({ length: 12 }, (_, i) => ({ path: file, line: i + 2, column: 3, severity: 'error' as const, message: `new error ${i}`, source: 'ts', code: '2304' })),
					];
				},
			});
			const text = await h.text('edit_file', { path: 'src/a.ts', edits: [{ oldText: 'function a', newText: 'function z' }] });
			assert.match(text, /New problems reported after the change:\nsrc\/a\.ts:2:3 error 2304: new error 0 \(ts\)/);
			assert.doesNotMatch(text, /old warning/);
			assert.match(text, /… and 2 more \(see get_diagnostics\)/);
		});
	});
});
