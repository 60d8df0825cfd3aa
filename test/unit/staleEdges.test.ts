import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { makeHarness, makeTree } from './helpers';

/**
 * The stale-write rule at its edges: a size change that keeps the time stamp, a big file (no
 * digest, only its size and time stamp), and a file of exactly the digest limit.
 */
describe('stale writes: size, time stamp and the digest limit', () => {
	let tree: ReturnType<typeof makeTree>;
	/** A whole second: utimes sets it exactly. */
	const STAMP = 1_700_000_000;
	const DIGEST_LIMIT = 1024 * 1024;
	afterEach(() => tree.cleanup());

	/** Someone else writes `content` to a.txt and keeps its time stamp. */
	const rewrite = (content: string | Buffer) => {
		fs.writeFileSync(tree.file('a.txt'), content);
		fs.utimesSync(tree.file('a.txt'), STAMP, STAMP);
	};
	async function refusalAfterRewrite(original: string | Buffer, theirs: string | Buffer) {
		tree = makeTree({ 'a.txt': original });
		fs.utimesSync(tree.file('a.txt'), STAMP, STAMP);
		const h = makeHarness(tree.root);
		await h.text('read_file', { path: 'a.txt' });
		rewrite(theirs);
		const error = await h.error('write_file', { path: 'a.txt', content: 'mine\n' });
		assert.equal(error.code, 'stale_write');
		assert.ok(fs.readFileSync(tree.file('a.txt')).equals(Buffer.from(theirs)), 'their content is kept');
		return error.message;
	}

	it('names a size change that kept the time stamp, and only that', async () => {
		const message = await refusalAfterRewrite('alpha\nbeta\n', 'alpha\nbeta\ngamma\n');
		assert.match(message, /^a\.txt changed on disk since you last read it \(size 11 → 17 bytes\)\. Nothing was written/);
	});

	it('refuses a big file (no digest) whose size changed under the same time stamp', async () => {
		const big = Buffer.alloc(DIGEST_LIMIT + 100, 'a');
		const message = await refusalAfterRewrite(big, Buffer.concat([big, Buffer.from('more')]));
		assert.match(message, /\(size 1,048,676 → 1,048,680 bytes\)/);
	});

	it('a file of exactly the digest limit still has its content compared', async () => {
		const original = Buffer.alloc(DIGEST_LIMIT, 'a');
		const theirs = Buffer.from(original);
		theirs[10] = 'b'.charCodeAt(0);
		const message = await refusalAfterRewrite(original, theirs);
		assert.match(message, /\(same size and time stamp, other content\)/);
	});
});
