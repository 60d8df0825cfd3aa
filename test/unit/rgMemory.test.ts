import * as assert from 'node:assert/strict';
import { resultText } from '../../src/core/results/result';
import { RG_SAFE_FILE_BYTES } from '../../src/core/search/ripgrep';
import { makeHarness, makeTree } from './helpers';

describe('grep on a line too long for ripgrep\'s memory bound', function () {
	this.timeout(30_000);
	let tree: ReturnType<typeof makeTree>;
	before(function () {
		if (process.platform !== 'linux') this.skip();
		// Two and a half times what a bounded rg can hold in one line: it aborts on it.
		tree = makeTree({ 'dist/bundle.min.js': Buffer.alloc(RG_SAFE_FILE_BYTES * 2.5, 'a'), 'src/a.txt': 'a needle\n', 'src/b.txt': 'needle\n' });
	});
	after(() => tree?.cleanup());

	it('skips the big files, finds the rest, and says what to do', async () => {
		const h = makeHarness(tree.root);
		const result = await h.invoke('grep', { pattern: 'a', limit: 5 });
		const text = resultText(result);
		assert.equal(result.error, undefined, text);
		assert.match(text, /src\/a\.txt/);
		assert.doesNotMatch(text, /bundle\.min\.js/);
		assert.match(text, /files larger than 32 MB were skipped, because one of them has a line too long for grep to search within its memory bound/);
	});

	it('a search that does not meet the long line says nothing of it', async () => {
		const h = makeHarness(tree.root);
		const text = resultText(await h.invoke('grep', { pattern: 'needle', path: 'src' }));
		assert.match(text, /src\/b\.txt/);
		assert.doesNotMatch(text, /skipped/);
	});
});
