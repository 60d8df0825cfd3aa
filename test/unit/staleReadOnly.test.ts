import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { permissionRefusal } from '../../src/core/changes/stale';
import { makeHarness, makeReadOnly, makeTree } from './helpers';

/**
 * A file or folder that cannot be written is refused before anyone is asked, naming it: the write
 * would fail anyway, after the person said yes.
 */
describe('read-only files and folders', () => {
	let tree: ReturnType<typeof makeTree>;
	let undo: (() => void)[];
	beforeEach(() => { undo = []; });
	afterEach(() => {
		for (const step of undo.reverse()) step();
		tree.cleanup();
	});

	function makeReadOnlyOrSkip(context: Mocha.Context, rel: string): void {
		const step = makeReadOnly(tree.file(rel));
		if (!step) context.skip();
		undo.push(step!);
	}

	it('refuses to change a read-only file, and asks no one', async function () {
		tree = makeTree({ 'a.txt': 'alpha\n' });
		makeReadOnlyOrSkip(this, 'a.txt');
		const h = makeHarness(tree.root);
		const error = await h.error('write_file', { path: 'a.txt', content: 'mine\n' });
		assert.equal(error.code, 'io');
		assert.equal(error.message, 'Permission denied: a.txt is read-only for this user. Nothing was written. Ask the user to make it writable.');
		assert.deepEqual(h.asked, []);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'alpha\n');
	});

	it('refuses a new file in a read-only folder, or in a folder still to be made below it', async function () {
		tree = makeTree({ 'locked/keep.txt': 'kept\n' });
		makeReadOnlyOrSkip(this, 'locked');
		const h = makeHarness(tree.root);
		for (const rel of ['locked/new.txt', 'locked/deeper/still/new.txt']) {
			const error = await h.error('write_file', { path: rel, content: 'mine\n' });
			assert.equal(error.code, 'io');
			assert.equal(error.message, `Permission denied: the folder for ${rel} is read-only for this user. Nothing was written. Ask the user to make it writable.`);
		}
		assert.deepEqual(h.asked, []);
		assert.deepEqual(fs.readdirSync(tree.file('locked')), ['keep.txt']);
	});
});

/** Which failed access checks are a refusal, and their wording (EACCES and EROFS cannot be made here as root). */
describe('permission refusals by error code', () => {
	const tail = 'Nothing was written. Ask the user to make it writable.';

	it('refuses for EACCES and EPERM, and names a read-only file system for EROFS', () => {
		for (const code of ['EACCES', 'EPERM']) {
			const refusal = permissionRefusal(code, 'a.txt');
			assert.equal(refusal?.code, 'io', code);
			assert.equal(refusal?.message, `Permission denied: a.txt is read-only for this user. ${tail}`);
		}
		assert.equal(permissionRefusal('EROFS', 'the folder for b.txt')?.message, `Permission denied: the folder for b.txt is read-only for this user (read-only file system). ${tail}`);
	});

	it('leaves any other failure to the write itself', () => {
		for (const code of ['ENOENT', 'EISDIR', 'EIO', undefined]) assert.equal(permissionRefusal(code, 'a.txt'), undefined, String(code));
	});
});
