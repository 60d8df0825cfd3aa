import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAtomicTemp } from '../../src/core/files/atomic';
import { makeHarness, makeTree } from './helpers';

describe('write_file', () => {
	let tree: ReturnType<typeof makeTree>;
	const read = (rel: string) => fs.readFileSync(tree.file(rel), 'utf8');
	const bytes = (rel: string) => fs.readFileSync(tree.file(rel));

	beforeEach(() => {
		tree = makeTree({
			'a.txt': 'alpha\nbeta\n',
			'crlf.txt': 'one\r\ntwo\r\n',
			'bom.txt': '\uFEFFhéllo\n',
			'nofinal.txt': 'first\nsecond',
			'empty.txt': '',
			'blob.bin': Buffer.from([0, 1, 2, 3, 255]),
			'dir/inner.txt': 'inner\n',
		});
	});
	afterEach(() => tree.cleanup());

	describe('modes', () => {
		it('creates a new file, with missing folders, and reports bytes written', async () => {
			const result = await makeHarness(tree.root).invoke('write_file', { path: 'new/deep/b.ts', content: 'export const b = 1;\n' });
			assert.equal(result.error, undefined);
			assert.equal(read('new/deep/b.ts'), 'export const b = 1;\n');
			const text = (result.content[0] as { text: string }).text;
			assert.match(text, /^Wrote new\/deep\/b\.ts \(created\): 20 B, \+1 −0 lines\./);
			assert.equal(result.metadata.bytesWritten, 20);
			assert.equal(result.metadata.created, true);
			assert.deepEqual(result.metadata.filesTouched, ['new/deep/b.ts']);
		});

		it('overwrites an existing file and shows the diff', async () => {
			const text = await makeHarness(tree.root).text('write_file', { path: 'a.txt', content: 'alpha\ngamma\n' });
			assert.equal(read('a.txt'), 'alpha\ngamma\n');
			assert.match(text, /\(overwritten\)/);
			assert.match(text, /-beta\n\+gamma/);
		});

		it('mode create refuses an existing file and writes nothing', async () => {
			const before = bytes('a.txt');
			const error = await makeHarness(tree.root).error('write_file', { path: 'a.txt', content: 'x', mode: 'create' });
			assert.equal(error.code, 'already_exists');
			assert.match(error.message, /already exists \(11 B\)\. Nothing was written\. Use mode "overwrite"/);
			assert.deepEqual(bytes('a.txt'), before);
		});

		it('mode create writes a file that does not exist', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'c.txt', content: 'c\n', mode: 'create' });
			assert.equal(read('c.txt'), 'c\n');
		});

		it('mode append adds to the end (and creates a missing file)', async () => {
			const h = makeHarness(tree.root);
			const text = await h.text('write_file', { path: 'a.txt', content: 'gamma\n', mode: 'append' });
			assert.equal(read('a.txt'), 'alpha\nbeta\ngamma\n');
			assert.match(text, /\(appended\): 6 B appended, 17 B in all/);
			await h.text('write_file', { path: 'log.txt', content: 'line\n', mode: 'append' });
			assert.equal(read('log.txt'), 'line\n');
		});

		it('createDirs: false refuses a missing folder precisely', async () => {
			const error = await makeHarness(tree.root).error('write_file', { path: 'x/y/z.txt', content: 'z', createDirs: false });
			assert.equal(error.code, 'not_found');
			assert.match(error.message, /missing: x\/y\) and createDirs is false/);
			assert.equal(fs.existsSync(tree.file('x')), false);
		});

		it('ensureFinalNewline adds the missing line ending', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'n.txt', content: 'no newline', ensureFinalNewline: true });
			assert.equal(read('n.txt'), 'no newline\n');
		});

		it('writes base64 bytes exactly', async () => {
			const data = Buffer.from([0, 255, 10, 13, 128, 7]);
			await makeHarness(tree.root).text('write_file', { path: 'out.bin', content: data.toString('base64'), encoding: 'base64' });
			assert.deepEqual(bytes('out.bin'), data);
		});

		it('refuses invalid base64 and writes nothing', async () => {
			const error = await makeHarness(tree.root).error('write_file', { path: 'out.bin', content: 'not base64!', encoding: 'base64' });
			assert.equal(error.code, 'invalid_input');
			assert.equal(fs.existsSync(tree.file('out.bin')), false);
		});

		it('says so when the content is already there, without asking or writing', async () => {
			const h = makeHarness(tree.root);
			const mtime = fs.statSync(tree.file('a.txt')).mtimeMs;
			const text = await h.text('write_file', { path: 'a.txt', content: 'alpha\nbeta\n' });
			assert.match(text, /^No change/);
			assert.equal(h.asked.length, 0);
			assert.equal(fs.statSync(tree.file('a.txt')).mtimeMs, mtime);
		});

		it('writes an empty file', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'a.txt', content: '' });
			assert.equal(read('a.txt'), '');
		});
	});

	describe('keeping the file shape', () => {
		it('keeps CRLF line endings when overwriting with \\n text', async () => {
			const text = await makeHarness(tree.root).text('write_file', { path: 'crlf.txt', content: 'uno\ndos\ntres\n' });
			assert.equal(read('crlf.txt'), 'uno\r\ndos\r\ntres\r\n');
			assert.match(text, /Kept the file's CRLF line endings/);
		});

		it('appends in the file\'s line ending style', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'crlf.txt', content: 'three\nfour\n', mode: 'append' });
			assert.equal(read('crlf.txt'), 'one\r\ntwo\r\nthree\r\nfour\r\n');
		});

		it('keeps the BOM when overwriting', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'bom.txt', content: 'neu 😀\n' });
			assert.deepEqual(bytes('bom.txt'), Buffer.from('\uFEFFneu 😀\n', 'utf8'));
		});

		it('keeps the final newline of a file that had one', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'a.txt', content: 'only' });
			assert.equal(read('a.txt'), 'only\n');
		});

		it('does not add a final newline to a file that had none', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'nofinal.txt', content: 'x\ny' });
			assert.equal(read('nofinal.txt'), 'x\ny');
		});

		it('overwrites a 0-byte file with the text as given', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'empty.txt', content: 'a\r\nb' });
			assert.equal(read('empty.txt'), 'a\r\nb');
		});

		it('refuses to append text to a file that is not UTF-8, saying so', async () => {
			fs.writeFileSync(tree.file('latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
			const error = await makeHarness(tree.root).error('write_file', { path: 'latin1.txt', content: 'more', mode: 'append' });
			assert.equal(error.code, 'binary_file');
			assert.match(error.message, /not valid UTF-8 text .* cannot be appended to as text/);
			assert.deepEqual(bytes('latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
		});

		it('refuses to append text to a binary file', async () => {
			const before = bytes('blob.bin');
			const error = await makeHarness(tree.root).error('write_file', { path: 'blob.bin', content: 'text', mode: 'append' });
			assert.equal(error.code, 'binary_file');
			assert.deepEqual(bytes('blob.bin'), before);
		});

		it('appends base64 bytes after the existing bytes of a binary file', async () => {
			const result = await makeHarness(tree.root).invoke('write_file', { path: 'blob.bin', content: Buffer.from([4, 0, 5]).toString('base64'), encoding: 'base64', mode: 'append' });
			assert.equal(result.error, undefined);
			assert.deepEqual(bytes('blob.bin'), Buffer.from([0, 1, 2, 3, 255, 4, 0, 5]));
			assert.match((result.content[0] as { text: string }).text, /^Wrote blob\.bin \(appended\): 3 B appended, 8 B in all/);
			assert.equal(result.metadata.bytesWritten, 3);
			assert.equal(result.metadata.totalBytes, 8);
		});

		it('append with ensureFinalNewline ends the file with its own line ending', async () => {
			await makeHarness(tree.root).text('write_file', { path: 'crlf.txt', content: 'three\nfour', mode: 'append', ensureFinalNewline: true });
			assert.equal(read('crlf.txt'), 'one\r\ntwo\r\nthree\r\nfour\r\n');
			await makeHarness(tree.root).text('write_file', { path: 'a.txt', content: 'gamma', mode: 'append' });
			assert.equal(read('a.txt'), 'alpha\nbeta\ngamma', 'without ensureFinalNewline nothing is added');
		});

		it('says it kept the UTF-8 BOM when overwriting a BOM file with text that has none', async () => {
			const h = makeHarness(tree.root);
			const text = await h.text('write_file', { path: 'bom.txt', content: 'neu\n' });
			assert.deepEqual(bytes('bom.txt'), Buffer.from('\uFEFFneu\n', 'utf8'));
			assert.match(text, /^Kept the file's .*UTF-8 BOM\.$/m);
			const again = await h.text('write_file', { path: 'bom.txt', content: '\uFEFFanders\n' });
			assert.deepEqual(bytes('bom.txt'), Buffer.from('\uFEFFanders\n', 'utf8'));
			assert.doesNotMatch(again, /BOM/, 'content that brings its own BOM needs no note');
		});

		it('replaces a binary file with text as given on overwrite', async () => {
			const h = makeHarness(tree.root);
			const result = await h.invoke('write_file', { path: 'blob.bin', content: 'now text\r\nline two' });
			assert.equal(result.error, undefined);
			assert.match((result.content[0] as { text: string }).text, /^Wrote blob\.bin \(overwritten\): 18 B/);
			assert.deepEqual(bytes('blob.bin'), Buffer.from('now text\r\nline two'), 'no BOM, no line-ending change, no final newline added');
			// NUL bytes are valid UTF-8: binary by its content, yet it would decode as text with a final newline.
			fs.writeFileSync(tree.file('nul.bin'), Buffer.from([0, 0, 1, 2, 0x0a]));
			await h.text('write_file', { path: 'nul.bin', content: 'a\r\nb' });
			assert.equal(read('nul.bin'), 'a\r\nb', 'the old bytes give the text no shape');
			fs.writeFileSync(tree.file('nul.bin'), Buffer.from([0, 1, 2]));
			await makeHarness(tree.root).text('write_file', { path: 'nul.bin', content: 'x', ensureFinalNewline: true });
			assert.equal(read('nul.bin'), 'x\n');
		});
	});

	describe('bad paths (nothing written)', () => {
		it('refuses a directory', async () => {
			const error = await makeHarness(tree.root).error('write_file', { path: 'dir', content: 'x' });
			assert.equal(error.code, 'is_directory');
			assert.ok(fs.statSync(tree.file('dir')).isDirectory());
		});

		it('refuses a path under a file', async () => {
			const error = await makeHarness(tree.root).error('write_file', { path: 'a.txt/child.txt', content: 'x' });
			assert.equal(error.code, 'not_directory');
			assert.match(error.message, /a\.txt in its path is a file/);
			assert.equal(read('a.txt'), 'alpha\nbeta\n');
		});

		it('refuses a symlinked folder that leads outside', async function () {
			if (process.platform === 'win32') this.skip();
			const outside = makeTree();
			try {
				fs.symlinkSync(outside.root, tree.file('out'));
				const error = await makeHarness(tree.root).error('write_file', { path: 'out/evil.txt', content: 'x' });
				assert.equal(error.code, 'outside_boundary');
				assert.deepEqual(fs.readdirSync(outside.root), []);
			} finally {
				outside.cleanup();
			}
		});

		it('writes through a symlink that stays inside, keeping the link', async function () {
			if (process.platform === 'win32') this.skip();
			fs.symlinkSync('a.txt', tree.file('alias.txt'));
			await makeHarness(tree.root).text('write_file', { path: 'alias.txt', content: 'via link\n' });
			assert.ok(fs.lstatSync(tree.file('alias.txt')).isSymbolicLink());
			assert.equal(read('a.txt'), 'via link\n');
		});

		it('refuses an absolute path outside the workspace', async () => {
			const error = await makeHarness(tree.root).error('write_file', { path: path.join(path.dirname(tree.root), 'escape.txt'), content: 'x' });
			assert.equal(error.code, 'outside_boundary');
		});
	});

	describe('pipeline', () => {
		it('asks before writing under the default policy and not with approval: never', async () => {
			const asking = makeHarness(tree.root);
			await asking.text('write_file', { path: 'q.txt', content: 'q' });
			assert.equal(asking.asked.length, 1);
			assert.equal(asking.asked[0].title, 'Create q.txt');
			const silent = makeHarness(tree.root, { settings: { approval: 'never' } });
			await silent.text('write_file', { path: 'r.txt', content: 'r' });
			assert.equal(silent.asked.length, 0);
		});

		it('always asks for a protected path, even with approval: never', async () => {
			const h = makeHarness(tree.root, { settings: { approval: 'never' }, approve: false });
			const error = await h.error('write_file', { path: '.env.local', content: 'SECRET=1' });
			assert.equal(error.code, 'declined');
			assert.equal(h.asked.length, 1);
			assert.deepEqual(h.asked[0].kind === 'files' && h.asked[0].protectedPaths, ['.env.local']);
			assert.equal(fs.existsSync(tree.file('.env.local')), false);
		});

		it('approval: always asks before reads too, and a declined read does nothing', async () => {
			const h = makeHarness(tree.root, { settings: { approval: 'always' } });
			const asked: string[] = [];
			const declined = await h.invoke('grep', { pattern: 'alpha' }, { decide: async request => { asked.push(request.kind); return false; } });
			assert.equal(declined.error?.code, 'declined');
			const allowed = await h.invoke('write_file', { path: 'z.txt', content: 'z' }, { decide: async request => { asked.push(request.kind); return true; } });
			assert.equal(allowed.error, undefined);
			assert.deepEqual(asked, ['call', 'files']);
		});

		it('approval: never asks nothing for ordinary files, under every tool', async () => {
			const h = makeHarness(tree.root, { settings: { approval: 'never' }, approve: false });
			await h.text('write_file', { path: 'n1.txt', content: '1' });
			await h.text('edit_file', { path: 'a.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] });
			await h.text('write_output', { name: 'note', content: 'n' });
			assert.equal(h.asked.length, 0);
		});

		it('uses an injected decision (InvokeOptions.decide) over the host', async () => {
			const h = makeHarness(tree.root);
			const error = await h.error('write_file', { path: 'a.txt', content: 'x' }, { decide: async () => false });
			assert.equal(error.code, 'declined');
			assert.equal(h.asked.length, 0);
			assert.equal(read('a.txt'), 'alpha\nbeta\n');
		});

		it('refuses in an untrusted workspace', async () => {
			const error = await makeHarness(tree.root, { trusted: false }).error('write_file', { path: 'a.txt', content: 'x' });
			assert.equal(error.code, 'untrusted');
		});

		it('leaves no temp file behind', async () => {
			const h = makeHarness(tree.root);
			await h.text('write_file', { path: 'a.txt', content: 'one\n' });
			await h.text('write_file', { path: 'dir/inner.txt', content: 'two\n' });
			const all = [...fs.readdirSync(tree.root), ...fs.readdirSync(tree.file('dir'))];
			assert.deepEqual(all.filter(isAtomicTemp), []);
		});

		it('does not overwrite a file changed since it was read', async () => {
			const h = makeHarness(tree.root);
			await h.text('read_file', { path: 'a.txt' });
			fs.appendFileSync(tree.file('a.txt'), 'someone else\n');
			const error = await h.error('write_file', { path: 'a.txt', content: 'mine\n' });
			assert.equal(error.code, 'stale_write');
			assert.equal(read('a.txt'), 'alpha\nbeta\nsomeone else\n');
		});

		it('shows diffs per toolbelt.showDiffs', async () => {
			const shown: string[] = [];
			const showDiffs = async (changes: readonly { displayPath: string }[]) => { shown.push(...changes.map(c => c.displayPath)); };
			await makeHarness(tree.root, { showDiffs, settings: { showDiffs: 'onConfirm' } }).text('write_file', { path: 'a.txt', content: '1\n' });
			await makeHarness(tree.root, { showDiffs, settings: { showDiffs: 'onConfirm', approval: 'never' } }).text('write_file', { path: 'a.txt', content: '2\n' });
			await makeHarness(tree.root, { showDiffs, settings: { showDiffs: 'always', approval: 'never' } }).text('write_file', { path: 'a.txt', content: '3\n' });
			await makeHarness(tree.root, { showDiffs, settings: { showDiffs: 'never' } }).text('write_file', { path: 'a.txt', content: '4\n' });
			// In chat, VS Code asked (the preview needed a confirmation): that counts as confirmed.
			await makeHarness(tree.root, { showDiffs, settings: { showDiffs: 'onConfirm' } }).text('write_file', { path: 'a.txt', content: '5\n' }, { approval: 'preconfirmed' });
			await makeHarness(tree.root, { showDiffs, settings: { showDiffs: 'onConfirm', approval: 'never' } }).text('write_file', { path: 'a.txt', content: '6\n' }, { approval: 'preconfirmed' });
			assert.deepEqual(shown, ['a.txt', 'a.txt', 'a.txt']);
		});
	});
});

describe('write_output', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'README.md': '# r\n' }); });
	afterEach(() => tree.cleanup());

	it('writes <outputs>/<name>.md and numbers collisions', async () => {
		const h = makeHarness(tree.root);
		const first = await h.invoke('write_output', { name: 'review', content: '# Review' });
		assert.equal(first.metadata.path, 'outputs/review.md');
		assert.equal(fs.readFileSync(tree.file('outputs/review.md'), 'utf8'), '# Review\n');
		const second = await h.invoke('write_output', { name: 'review', content: '# Again\n' });
		assert.equal(second.metadata.path, 'outputs/review (1).md');
		assert.match((second.content[0] as { text: string }).text, /review\.md was taken/);
		const third = await h.invoke('write_output', { name: 'review.md', content: '# Third\n' });
		assert.equal(third.metadata.path, 'outputs/review (2).md');
		assert.equal(fs.readFileSync(tree.file('outputs/review.md'), 'utf8'), '# Review\n');
	});

	it('follows toolbelt.outputsDirectory', async () => {
		const h = makeHarness(tree.root, { settings: { outputsDirectory: 'docs/generated' } });
		const result = await h.invoke('write_output', { name: 'notes', content: 'n' });
		assert.equal(result.metadata.path, 'docs/generated/notes.md');
	});

	it('refuses names with folders or a leading dot', async () => {
		const h = makeHarness(tree.root);
		for (const name of ['../x', 'a/b', '.hidden', 'a\\b']) {
			const error = await h.error('write_output', { name, content: 'x' });
			assert.equal(error.code, 'invalid_input', name);
		}
		assert.equal(fs.existsSync(tree.file('outputs')), false);
	});

	it('refuses an outputs folder that is a symlink leading outside', async function () {
		if (process.platform === 'win32') this.skip();
		const outside = makeTree();
		try {
			fs.symlinkSync(outside.root, tree.file('outputs'));
			const error = await makeHarness(tree.root).error('write_output', { name: 'x', content: 'x' });
			assert.equal(error.code, 'outside_boundary');
			assert.deepEqual(fs.readdirSync(outside.root), []);
		} finally {
			outside.cleanup();
		}
	});

	it('refuses an outputs directory outside the workspace', async () => {
		const h = makeHarness(tree.root, { settings: { outputsDirectory: '../elsewhere' } });
		const error = await h.error('write_output', { name: 'x', content: 'x' });
		assert.equal(error.code, 'outside_boundary');
	});

	it('picks distinct names for concurrent outputs of the same name', async () => {
		const h = makeHarness(tree.root, { settings: { approval: 'never' } });
		const results = await Promise.all(Array.from({ length: 5 }, (_, i) => h.invoke('write_output', { name: 'same', content: `${i}` })));
		const paths = results.map(r => r.metadata.path).sort();
		assert.deepEqual(paths, ['outputs/same (1).md', 'outputs/same (2).md', 'outputs/same (3).md', 'outputs/same (4).md', 'outputs/same.md']);
	});
});
