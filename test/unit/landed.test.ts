import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { checkTargetsBeforeWrite, landedOutsideError, removeLandedOutside } from '../../src/core/changes/landed';
import type { FileChange } from '../../src/core/context';
import { Boundary } from '../../src/core/policy/boundary';
import { BoundaryError } from '../../src/core/results/errors';
import { makeTree } from './helpers';

describe('writes VS Code makes, checked around the WorkspaceEdit', () => {
	let ws: ReturnType<typeof makeTree>;
	let outside: ReturnType<typeof makeTree>;
	let boundary: Boundary;
	const bytes = (text: string) => new TextEncoder().encode(text);
	const change = (rel: string, after: string | null, before: string | null = null): FileChange => ({ path: ws.file(rel), displayPath: rel, before: before === null ? null : bytes(before), after: after === null ? null : bytes(after) });
	/** What a swap during the write does: the folder is now a link to the outside, where the file landed. */
	const swapToOutside = (folder: string) => {
		fs.rmSync(ws.file(folder), { recursive: true });
		fs.symlinkSync(outside.root, ws.file(folder));
	};

	beforeEach(async () => {
		ws = makeTree({ 'sub/old.txt': 'old\n', 'keep.txt': 'keep\n' });
		outside = makeTree({ 'theirs.txt': 'THEIRS\n' });
		boundary = await Boundary.create({ roots: [{ name: 'ws', path: ws.root }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] });
	});
	afterEach(() => {
		ws.cleanup();
		outside.cleanup();
	});

	it('before: passes paths inside, refuses one whose folder became a link out', async () => {
		await checkTargetsBeforeWrite([change('sub/new.txt', 'x'), { ...change('keep.txt', 'k', 'keep\n'), movedTo: { path: ws.file('sub/moved.txt'), displayPath: 'sub/moved.txt' } }], boundary);
		swapToOutside('sub');
		await assert.rejects(checkTargetsBeforeWrite([change('sub/new.txt', 'x')], boundary), (error: unknown) => error instanceof BoundaryError && error.rule === 'symlink_escape');
	});

	it('after: removes what landed outside when it holds what was written, keeps what changed since, and leaves the inside alone', async () => {
		fs.writeFileSync(ws.file('keep.txt'), 'changed\n');
		swapToOutside('sub');
		fs.writeFileSync(outside.file('new.txt'), 'NEW\n');
		fs.writeFileSync(outside.file('theirs.txt'), 'someone else\n');
		const changes = [change('keep.txt', 'changed\n', 'keep\n'), change('sub/new.txt', 'NEW\n'), change('sub/theirs.txt', 'mine\n'), change('sub/gone.txt', null, 'x')];
		const landed = await removeLandedOutside(changes, boundary);
		assert.deepEqual(landed, [
			{ displayPath: 'sub/new.txt', real: outside.file('new.txt'), removed: true },
			{ displayPath: 'sub/theirs.txt', real: outside.file('theirs.txt'), removed: false },
		]);
		assert.equal(fs.existsSync(outside.file('new.txt')), false);
		assert.equal(fs.readFileSync(outside.file('theirs.txt'), 'utf8'), 'someone else\n');
		assert.equal(fs.readFileSync(ws.file('keep.txt'), 'utf8'), 'changed\n');
		const error = landedOutsideError(landed, changes);
		assert.equal(error.rule, 'swapped_during_call');
		assert.match(error.message, /^A folder on the way to sub\/new\.txt \(at .*new\.txt, removed\), sub\/theirs\.txt \(at .*theirs\.txt, NOT removed: it changed since\) was swapped for a link out of the workspace while VS Code wrote it \(rule: swapped_during_call\), so the file landed outside\. The other 2 files were changed as planned; the originals are in Toolbelt's backups \(Restore Backup…\)\. Tell the user/);
	});

	it('after: nothing to say when every file is inside', async () => {
		fs.writeFileSync(ws.file('sub/new.txt'), 'NEW\n');
		assert.deepEqual(await removeLandedOutside([change('sub/new.txt', 'NEW\n'), change('sub/old.txt', null, 'old\n')], boundary), []);
	});
});
