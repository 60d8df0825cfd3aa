import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Diagnostic } from '../../src/core/context';
import { makeHarness, makeTree } from './helpers';

describe('get_diagnostics', () => {
	let tree: ReturnType<typeof makeTree>;
	let reported: Diagnostic[];
	const host = () => ({ diagnostics: async (paths: readonly string[]) => (paths.length ? reported.filter(d => paths.includes(d.path)) : reported) });
	beforeEach(() => {
		tree = makeTree({ 'src/a.ts': 'a', 'src/b.ts': 'b', 'lib/c.ts': 'c' });
		reported = [
			{ path: tree.file('src/b.ts'), line: 3, column: 1, severity: 'warning', message: 'unused x', source: 'ts', code: '6133' },
			{ path: tree.file('src/a.ts'), line: 10, column: 5, severity: 'error', message: "Cannot find name 'y'.", source: 'ts', code: '2304' },
			{ path: tree.file('lib/c.ts'), line: 1, column: 1, severity: 'error', message: 'bad\nsecond line', source: 'eslint' },
			{ path: tree.file('src/a.ts'), line: 2, column: 1, severity: 'info', message: 'just info' },
			{ path: '/elsewhere/lib.d.ts', line: 1, column: 1, severity: 'error', message: 'outside' },
		];
	});
	afterEach(() => tree.cleanup());

	it('lists errors first, then warnings, workspace-relative, with totals', async () => {
		const text = await makeHarness(tree.root, host()).text('get_diagnostics', {});
		assert.deepEqual(text.split('\n'), [
			'2 errors and 1 warning in 3 files (the workspace):',
			'lib/c.ts:1:1 error: bad second line (eslint)',
			"src/a.ts:10:5 error 2304: Cannot find name 'y'. (ts)",
			'src/b.ts:3:1 warning 6133: unused x (ts)',
		]);
	});

	it('narrows to files and folders', async () => {
		const h = makeHarness(tree.root, host());
		assert.match(await h.text('get_diagnostics', { paths: ['src/b.ts'] }), /^0 errors and 1 warning in 1 file \(src\/b\.ts\):\nsrc\/b\.ts:3:1 warning/);
		const folder = await h.text('get_diagnostics', { paths: ['src'] });
		assert.match(folder, /^1 error and 1 warning in 2 files \(src\)/);
		assert.doesNotMatch(folder, /lib\/c\.ts/);
	});

	it('caps the list and says how many were left out', async () => {
		reported = Array.from({ length: 150 }, (_, i) => ({ path: tree.file('src/a.ts'), line: i + 1, column: 1, severity: 'error' as const, message: `e${i}` }));
		const result = await makeHarness(tree.root, host()).invoke('get_diagnostics', {});
		const text = (result.content[0] as { text: string }).text;
		assert.match(text, /^150 errors and 0 warnings in 1 file \(the workspace\); showing the first 100, errors first:/);
		assert.match(text, /\[… 50 more omitted; give paths to narrow …\]$/);
		assert.equal(result.metadata.truncated, true);
	});

	it('says there are none', async () => {
		reported = [];
		assert.match(await makeHarness(tree.root, host()).text('get_diagnostics', {}), /^No errors or warnings in the workspace/);
	});

	it('explains that the command line has no diagnostics', async () => {
		const result = await makeHarness(tree.root).invoke('get_diagnostics', {});
		assert.equal(result.error, undefined);
		assert.match((result.content[0] as { text: string }).text, /run_command/);
	});

	it('refuses paths outside the workspace and missing ones', async () => {
		const h = makeHarness(tree.root, host());
		assert.equal((await h.error('get_diagnostics', { paths: ['../x'] })).code, 'outside_boundary');
		assert.equal((await h.error('get_diagnostics', { paths: ['nope.ts'] })).code, 'not_found');
		if (process.platform === 'win32') return;
		const outside = makeTree({ 'o.ts': 'o' });
		try {
			fs.symlinkSync(outside.root, tree.file('out'));
			assert.equal((await h.error('get_diagnostics', { paths: ['out'] })).code, 'outside_boundary');
		} finally {
			outside.cleanup();
		}
	});
});
