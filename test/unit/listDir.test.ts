import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { makeHarness, makeTree } from './helpers';

describe('list_dir', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => {
		tree = makeTree({
			'src/a.ts': 'a\n',
			'src/lib/deep/x.ts': 'x\n',
			'src/B.ts': 'bb\n',
			'README.md': '# readme\n',
			'zeta/z.txt': '',
			'.hidden/h.txt': 'h',
			'.env': 'SECRET=1\n',
			'.gitignore': 'build/\n*.log\n!keep.log\n',
			'build/out.js': 'o',
			'debug.log': 'log',
			'keep.log': 'kept',
			'node_modules/pkg/index.js': 'i',
			'docs/generated/api.md': 'api',
		});
		fs.mkdirSync(tree.file('empty'));
	});
	afterEach(() => tree.cleanup());

	it('lists two levels as an indented tree, folders first, with sizes', async () => {
		const text = await makeHarness(tree.root).text('list_dir', {});
		assert.equal(text.split('\n\n')[0], [
			'The workspace folder (2 levels): 11 entries',
			'docs/',
			'  generated/',
			'empty/',
			'src/',
			'  lib/',
			'  a.ts  2 B',
			'  B.ts  3 B',
			'zeta/',
			'  z.txt  0 B',
			'keep.log  4 B',
			'README.md  9 B',
		].join('\n'));
	});

	it('says what was hidden and ignored, naming the ignored entries', async () => {
		const text = await makeHarness(tree.root).text('list_dir', { depth: 1 });
		assert.match(text, /\(3 hidden entries not shown \(includeHidden: true shows them\)\)/);
		assert.match(text, /\(3 ignored entries not shown: build\/, node_modules\/, debug\.log \(includeIgnored: true shows them\)\)/);
		assert.doesNotMatch(text, /^debug\.log/m);
		assert.match(text, /^keep\.log {2}4 B$/m);
	});

	it('shows hidden and ignored entries when asked', async () => {
		const text = await makeHarness(tree.root).text('list_dir', { depth: 1, includeHidden: true, includeIgnored: true });
		for (const name of ['.hidden/', 'build/', 'node_modules/', '.env  9 B', 'debug.log  3 B']) assert.match(text, new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
	});

	it('lists an ignored folder asked for by name (as rg searches a path it is given)', async () => {
		const text = await makeHarness(tree.root).text('list_dir', { path: 'node_modules/pkg' });
		assert.match(text, /^node_modules\/pkg\/ \(2 levels\): 1 entry\nindex\.js {2}1 B$/m);
		assert.match(await makeHarness(tree.root).text('list_dir', { path: 'build' }), /^out\.js {2}1 B$/m);
	});

	it('honours the editor\'s excludes (searchExcludes)', async () => {
		const text = await makeHarness(tree.root, { settings: { searchExcludes: ['**/generated'] } }).text('list_dir', { path: 'docs' });
		assert.equal(text.split('\n\n')[0], 'docs/ (2 levels): 0 entries\n(empty)');
		assert.match(text, /1 ignored entry not shown: generated\//);
	});

	it('marks symlinks and executables, and does not follow symlinked folders', async function () {
		if (process.platform === 'win32') this.skip();
		fs.symlinkSync('src', tree.file('link'));
		fs.writeFileSync(tree.file('run.sh'), '#!/bin/sh\n');
		fs.chmodSync(tree.file('run.sh'), 0o755);
		const text = await makeHarness(tree.root).text('list_dir', { depth: 3 });
		assert.match(text, /^link@ → src$/m);
		assert.match(text, /^run\.sh\* {2}10 B$/m);
		assert.doesNotMatch(text, /^ {2}a\.ts.*\n.*link/m);
	});

	it('descends `depth` levels', async () => {
		const one = await makeHarness(tree.root).text('list_dir', { path: 'src', depth: 1 });
		assert.doesNotMatch(one, /deep/);
		const three = await makeHarness(tree.root).text('list_dir', { path: 'src', depth: 3 });
		assert.match(three, /^ {2}deep\/\n {4}x\.ts {2}2 B$/m);
		assert.match(three.split('\n')[0], /^src\/ \(3 levels\): 5 entries$/);
	});

	it('pages breadth-first: the top level comes whole before deeper entries', async () => {
		const h = makeHarness(tree.root);
		const first = await h.invoke('list_dir', { depth: 2, limit: 6 });
		const text = (first.content[0] as { text: string }).text;
		// The 6 top-level entries fill the first page; no second-level entry is on it.
		assert.doesNotMatch(text, /^ {2}/m);
		assert.equal(first.metadata.nextOffset, 6);
		assert.match(text, /\[… 5 more entries omitted; use offset=6 to continue, or list a subfolder …\]/);
		const second = await h.text('list_dir', { depth: 2, offset: 6 });
		// Entries whose folder is on another page show their whole path.
		assert.match(second, /^ {2}docs\/generated\/$/m);
		assert.match(second, /^ {2}src\/a\.ts {2}2 B$/m);
	});

	it('stops walking a big tree once the page and a margin past it are counted, and says so', async () => {
		const pad = (n: number) => String(n).padStart(2, '0');
		const files: Record<string, string> = {};
		for (let folder = 0; folder < 60; folder++) for (let file = 0; file < 50; file++) files[`d${pad(folder)}/f${pad(file)}.txt`] = 'x';
		const big = makeTree(files);
		try {
			const h = makeHarness(big.root);
			// Breadth-first: the 60 folders, then each folder's 50 files in turn; entry 1,201 is d22/f40.txt.
			// Folders are read 16 at a time: the walk stops after 48 of them (2,460 entries), past 1,205 + 1,000.
			const page = await h.invoke('list_dir', { offset: 1200, limit: 5 });
			const text = (page.content[0] as { text: string }).text;
			assert.equal(text.split('\n').slice(0, 6).join('\n'), [
				'The workspace folder (2 levels): at least 2,460 entries, showing 1,201–1,205',
				...[40, 41, 42, 43, 44].map(file => `  d22/f${file}.txt  1 B`),
			].join('\n'));
			assert.match(text, /\[… at least 1,255 more entries omitted \(not all counted\); use offset=1205 to continue, or list a subfolder …\]/);
			assert.equal(page.metadata.total, undefined);
			assert.equal(page.metadata.nextOffset, 1205);
			// The last page walks to the end and counts it all.
			const last = await h.text('list_dir', { offset: 3055 });
			assert.match(last, /^The workspace folder \(2 levels\): 3,060 entries, showing 3,056–3,060\n {2}d59\/f45\.txt/);
		} finally {
			big.cleanup();
		}
	});

	it('lists every folder of a multi-root workspace', async () => {
		const other = makeTree({ 'o.txt': 'o' });
		try {
			const text = await makeHarness([tree.root, other.root]).text('list_dir', { depth: 2 });
			assert.match(text, /^The 2 workspace folders/);
			assert.match(text, new RegExp(`^${other.root.split('/').pop()}/ {2}\\(${other.root}\\)\\n {2}o\\.txt {2}1 B`, 'm'));
		} finally {
			other.cleanup();
		}
	});

	it('hides the temp files of atomic writes', async () => {
		fs.writeFileSync(tree.file('.a.txt.tb999999-0badf00d.tmp'), 'x');
		fs.writeFileSync(tree.file('a.txt.tb1-0badf00d.tmp.keep'), 'x');
		const text = await makeHarness(tree.root).text('list_dir', { depth: 1, includeHidden: true });
		assert.doesNotMatch(text, /0badf00d\.tmp$/m);
		assert.match(text, /a\.txt\.tb1-0badf00d\.tmp\.keep/);
	});

	it('lists an empty folder', async () => {
		const text = await makeHarness(tree.root).text('list_dir', { path: 'empty' });
		assert.equal(text, 'empty/ (2 levels): 0 entries\n(empty)');
	});

	describe('bad input', () => {
		it('refuses a file with a hint to read it', async () => {
			const error = await makeHarness(tree.root).error('list_dir', { path: 'src/a.ts' });
			assert.equal(error.code, 'not_directory');
			assert.match(error.message, /is a file, not a folder\. Read it with read_file, or list its folder \(src\)/);
		});

		it('refuses a missing folder', async () => {
			const error = await makeHarness(tree.root).error('list_dir', { path: 'nope' });
			assert.equal(error.code, 'not_found');
		});

		it('refuses a symlink that leads outside the workspace', async function () {
			if (process.platform === 'win32') this.skip();
			const outside = makeTree({ 'secret.txt': 's' });
			try {
				fs.symlinkSync(outside.root, tree.file('out'));
				const error = await makeHarness(tree.root).error('list_dir', { path: 'out' });
				assert.equal(error.code, 'outside_boundary');
				// Listed from above, the link shows as a link and is not entered.
				const text = await makeHarness(tree.root).text('list_dir', { depth: 3 });
				assert.doesNotMatch(text, /secret/);
			} finally {
				outside.cleanup();
			}
		});

		it('refuses depth 0 through validation', async () => {
			const error = await makeHarness(tree.root).error('list_dir', { depth: 0 });
			assert.equal(error.code, 'invalid_input');
		});
	});
});
