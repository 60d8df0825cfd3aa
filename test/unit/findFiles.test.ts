import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { comparePaths, pathSortKey, rgPath } from '../../src/core/search/ripgrep';
import { TopK } from '../../src/tools/findFiles';
import { makeHarness, makeTree } from './helpers';

const pathsOf = (text: string) => text.split('\n').slice(1).filter(line => line && !line.startsWith('[') && !line.startsWith('('));

describe('find_files', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => {
		tree = makeTree({
			'src/a.ts': 'a',
			'src/b.ts': 'b',
			'src/sub/c.ts': 'c',
			'src/sub/c.test.ts': 'c',
			'src/readme.md': 'r',
			'lib/d.js': 'd',
			'.github/workflow.ts': 'w',
			'.hidden.ts': 'h',
			'.gitignore': 'gen/\n*.log\n',
			'gen/out.ts': 'o',
			'debug.log': 'l',
			'node_modules/pkg/index.ts': 'i',
			'Z.ts': 'z',
		});
	});
	afterEach(() => tree.cleanup());

	it('finds files by name at any depth, sorted by path, with the total', async () => {
		const text = await makeHarness(tree.root).text('find_files', { pattern: '*.ts' });
		assert.equal(text.split('\n')[0], '5 files match "*.ts" (showing 1–5, sorted by path):');
		// Code point order, as ripgrep sorts: upper case before lower case.
		assert.deepEqual(pathsOf(text), ['Z.ts', 'src/a.ts', 'src/b.ts', 'src/sub/c.test.ts', 'src/sub/c.ts']);
	});

	it('says how to find the files of a folder given as the pattern', async () => {
		const text = await makeHarness(tree.root).text('find_files', { pattern: 'src' });
		assert.match(text, /^No files match "src"\. src is a folder: to find the files in it use the pattern "src\/\*\*", or list it with list_dir\./);
		const files = await makeHarness(tree.root).text('find_files', { pattern: 'src/**' });
		assert.match(files, /^5 files match "src\/\*\*"/);
		assert.doesNotMatch(await makeHarness(tree.root).text('find_files', { pattern: 'nothing-here' }), /is a folder/);
	});

	it('treats **/x and x alike', async () => {
		const h = makeHarness(tree.root);
		assert.deepEqual(pathsOf(await h.text('find_files', { pattern: '**/*.ts' })), pathsOf(await h.text('find_files', { pattern: '*.ts' })));
	});

	it('matches globs with a slash against workspace-relative paths', async () => {
		const text = await makeHarness(tree.root).text('find_files', { pattern: 'src/**/*.test.ts' });
		assert.deepEqual(pathsOf(text), ['src/sub/c.test.ts']);
	});

	it('searches under path', async () => {
		const text = await makeHarness(tree.root).text('find_files', { pattern: '*.ts', path: 'src/sub' });
		assert.deepEqual(pathsOf(text), ['src/sub/c.test.ts', 'src/sub/c.ts']);
	});

	it('honours .gitignore even for a pattern that names ignored files', async () => {
		const text = await makeHarness(tree.root).text('find_files', { pattern: '*.log' });
		assert.match(text, /^No files match "\*\.log"\. Ignored files/);
	});

	it('skips hidden files, even those a pattern names, unless includeHidden', async () => {
		const h = makeHarness(tree.root);
		assert.doesNotMatch(await h.text('find_files', { pattern: '*.ts' }), /hidden|github/);
		const all = pathsOf(await h.text('find_files', { pattern: '*.ts', includeHidden: true }));
		assert.ok(all.includes('.hidden.ts') && all.includes('.github/workflow.ts'));
		assert.ok(!all.some(p => p.startsWith('node_modules')));
	});

	it('includes ignored files, node_modules and .git with includeIgnored (+ includeHidden for .git)', async () => {
		fs.mkdirSync(tree.file('.git'));
		fs.writeFileSync(tree.file('.git/config.ts'), 'g');
		const h = makeHarness(tree.root);
		const ignored = pathsOf(await h.text('find_files', { pattern: '*.ts', includeIgnored: true }));
		assert.ok(ignored.includes('gen/out.ts') && ignored.includes('node_modules/pkg/index.ts'));
		assert.ok(!ignored.includes('.git/config.ts'));
		const everything = pathsOf(await h.text('find_files', { pattern: '*.ts', includeIgnored: true, includeHidden: true }));
		assert.ok(everything.includes('.git/config.ts'));
		const notIgnored = pathsOf(await h.text('find_files', { pattern: '*.ts', includeHidden: true }));
		assert.ok(!notIgnored.includes('.git/config.ts'));
	});

	it('honours the editor\'s excludes', async () => {
		const text = await makeHarness(tree.root, { settings: { searchExcludes: ['**/sub'] } }).text('find_files', { pattern: '*.ts' });
		assert.deepEqual(pathsOf(text), ['Z.ts', 'src/a.ts', 'src/b.ts']);
	});

	it('pages with limit and offset, without overlap, and says how to continue', async () => {
		const h = makeHarness(tree.root);
		const first = await h.invoke('find_files', { pattern: '*.ts', limit: 2 });
		const firstText = (first.content[0] as { text: string }).text;
		assert.match(firstText, /\[… 3 more files omitted; use offset=2 to continue, or narrow pattern or path …\]/);
		assert.equal(first.metadata.truncated, true);
		assert.equal(first.metadata.total, 5);
		const second = await h.text('find_files', { pattern: '*.ts', limit: 2, offset: 2 });
		const third = await h.text('find_files', { pattern: '*.ts', limit: 2, offset: 4 });
		assert.deepEqual([...pathsOf(firstText), ...pathsOf(second), ...pathsOf(third)], ['Z.ts', 'src/a.ts', 'src/b.ts', 'src/sub/c.test.ts', 'src/sub/c.ts']);
	});

	it('qualifies paths with the folder name in a multi-root workspace', async () => {
		const other = makeTree({ 'x.ts': 'x', 'y/z.ts': 'z' });
		try {
			const h = makeHarness([tree.root, other.root]);
			const name = path.basename(other.root);
			const text = await h.text('find_files', { pattern: '*.ts' });
			const first = path.basename(tree.root);
			assert.deepEqual(pathsOf(text), [`${first}/Z.ts`, `${first}/src/a.ts`, `${first}/src/b.ts`, `${first}/src/sub/c.test.ts`, `${first}/src/sub/c.ts`, `${name}/x.ts`, `${name}/y/z.ts`]);
			assert.deepEqual(pathsOf(await h.text('find_files', { pattern: '*.ts', path: `${name}/y` })), [`${name}/y/z.ts`]);
		} finally {
			other.cleanup();
		}
	});

	describe('bad input', () => {
		it('returns ripgrep\'s explanation of an invalid glob', async () => {
			const error = await makeHarness(tree.root).error('find_files', { pattern: 'src/[a' });
			assert.equal(error.code, 'invalid_input');
			assert.match(error.message, /not a valid glob: error parsing glob 'src\/\[a': unclosed character class; missing '\]'/);
		});

		it('refuses a file as path', async () => {
			const error = await makeHarness(tree.root).error('find_files', { pattern: '*', path: 'src/a.ts' });
			assert.equal(error.code, 'not_directory');
		});

		it('refuses a missing path', async () => {
			const error = await makeHarness(tree.root).error('find_files', { pattern: '*', path: 'nowhere' });
			assert.equal(error.code, 'not_found');
		});

		it('refuses a symlinked folder leading outside, and does not follow such links in a walk', async function () {
			if (process.platform === 'win32') this.skip();
			const outside = makeTree({ 'secret.ts': 's' });
			try {
				fs.symlinkSync(outside.root, tree.file('out'));
				const h = makeHarness(tree.root);
				assert.equal((await h.error('find_files', { pattern: '*', path: 'out' })).code, 'outside_boundary');
				assert.doesNotMatch(await h.text('find_files', { pattern: '*.ts' }), /secret/);
			} finally {
				outside.cleanup();
			}
		});
	});
});

describe('comparePaths', () => {
	it('orders paths as `rg --sort path` walks them', () => {
		const tree = makeTree({ 'a/b': '', 'a-c': '', 'a.d': '', 'a/b.c/d': '', 'B': '', 'é': '', 'z/😀': '', 'z/\uffee': '', 'ab': '' });
		try {
			const sorted = execFileSync(rgPath(), ['--files', '--sort', 'path', '--no-config'], { cwd: tree.root, encoding: 'utf8' }).trim().split('\n');
			const mine = [...sorted].reverse().sort(comparePaths);
			assert.deepEqual(mine, sorted);
			assert.deepEqual(byKey([...sorted].reverse()), sorted);
		} finally {
			tree.cleanup();
		}
	});

	it('agrees with rg over a real tree (this repository\'s node_modules)', function () {
		const modules = path.resolve(__dirname, '../../../node_modules/@sinclair');
		if (!fs.existsSync(modules)) this.skip();
		const sorted = execFileSync(rgPath(), ['--files', '--sort', 'path', '--no-config', '--no-ignore'], { cwd: modules, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim().split('\n');
		const mine = [...sorted].sort(() => Math.random() - 0.5).sort(comparePaths);
		assert.deepEqual(mine, sorted);
		assert.deepEqual(byKey([...sorted].sort(() => Math.random() - 0.5)), sorted);
	});

	/** Sorted by pathSortKey with the plain string order, as find_files sorts. */
	function byKey(paths: string[]): string[] {
		return paths.map(relative => ({ relative, key: pathSortKey(relative) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map(entry => entry.relative);
	}
});

describe('TopK', () => {
	it('keeps the first k of a stream as a stable sort of all of it would, ties to the earlier item', () => {
		let seed = 11;
		const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
		for (const k of [1, 3, 100, 1500]) {
			const items = Array.from({ length: 6000 }, (_, order) => ({ key: Math.floor(random() * 500), order }));
			const top = new TopK<{ key: number; order: number }>(k, (a, b) => a.key - b.key);
			for (const item of items) top.push(item);
			assert.deepEqual(top.sorted(), [...items].sort((a, b) => a.key - b.key).slice(0, k), `k=${k}`);
			assert.equal(top.count, items.length);
		}
	});
});
