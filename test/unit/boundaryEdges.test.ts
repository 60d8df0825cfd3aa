import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Access, Boundary, BoundaryOptions, probeCaseInsensitive, protectedGlob } from '../../src/core/policy/boundary';
import { BoundaryError, ToolError } from '../../src/core/results/errors';
import { toPosix } from '../../src/core/files/paths';
import { makeTree } from './helpers';
import { MemoryFileSystem } from './support/memoryFileSystem';

/**
 * The boundary's messages, multi-root and read-only rules at their edges:
 *   ws/src/a.ts, ws/sharedLink -> ../shared/doc.md, ws/danglingInside -> missing.txt
 *   two/b.ts, shared/doc.md, shared/escape -> ../outside/secret.txt, sharedAlias -> shared
 */
describe('boundary: messages, nesting and read-only roots', () => {
	let tree: ReturnType<typeof makeTree>;
	let tmp: string;
	let ws: string;
	let two: string;
	let shared: string;
	let outside: string;

	before(() => {
		tree = makeTree({ 'ws/src/a.ts': 'a', 'two/b.ts': 'b', 'shared/doc.md': 'd', 'outside/secret.txt': 's' });
		tmp = tree.root;
		[ws, two, shared, outside] = ['ws', 'two', 'shared', 'outside'].map(name => path.join(tmp, name));
		fs.symlinkSync('shared', path.join(tmp, 'sharedAlias'));
		fs.symlinkSync('../shared/doc.md', path.join(ws, 'sharedLink'));
		fs.symlinkSync('missing.txt', path.join(ws, 'danglingInside'));
		fs.symlinkSync('../outside/secret.txt', path.join(shared, 'escape'));
	});
	after(() => tree.cleanup());

	const boundary = (overrides: Partial<BoundaryOptions> = {}) => Boundary.create({
		roots: [{ name: 'one', path: ws }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [], ...overrides,
	});
	const twoRoots = () => [{ name: 'one', path: ws }, { name: 'two', path: two }];
	async function refusal(b: Boundary, input: string, access: Access): Promise<BoundaryError> {
		try {
			await b.resolve(input, access);
		} catch (error) {
			assert.ok(error instanceof BoundaryError, String(error));
			return error;
		}
		assert.fail(`${input} was accepted`);
	}

	it('names every folder, and the read-only ones for reads only', async () => {
		const one = await boundary();
		const secret = path.join(outside, 'secret.txt');
		assert.equal((await refusal(one, '../x', 'read')).message, `"../x" leaves the workspace through ".." (rule: escapes_workspace). Use a path inside the workspace folder ${ws}.`);
		assert.equal((await refusal(one, secret, 'read')).message, `"${secret}" is outside the workspace (rule: outside_workspace). Only paths inside the workspace folder ${ws} can be used; give a path relative to the workspace folder.`);
		const alias = path.join(tmp, 'sharedAlias');
		const b = await boundary({ roots: twoRoots(), additionalReadPaths: ['', 'relative/dir', shared, alias] });
		assert.equal((await refusal(b, '../x', 'read')).message, `"../x" leaves the workspace through ".." (rule: escapes_workspace). Use a path inside the workspace folders one (${ws}), two (${two}).`);
		assert.equal((await refusal(b, secret, 'read')).message, `"${secret}" is outside the workspace (rule: outside_workspace). Only paths inside the workspace folders one (${ws}), two (${two}) can be used or, for reading, inside ${shared}, ${alias}; give a path relative to the workspace folder.`);
		assert.equal((await refusal(b, secret, 'write')).message, `"${secret}" is outside the workspace (rule: outside_workspace). Only paths inside the workspace folders one (${ws}), two (${two}) can be used; give a path relative to the workspace folder.`);
		// Relative and empty entries are no read-only roots: the process's folder is not one.
		await refusal(b, path.join(process.cwd(), 'package.json'), 'read');
	});

	it('says when a write goes through a symlink into a read-only root, and when a read-only root links outside', async () => {
		const b = await boundary({ additionalReadPaths: [shared] });
		const write = await refusal(b, 'sharedLink', 'write');
		assert.equal(write.message, `"sharedLink" (through a symlink to ${path.join(shared, 'doc.md')}) is in a read-only location from toolbelt.additionalReadPaths (rule: read_only). It can be read but not changed; write inside the workspace instead.`);
		const escape = await refusal(b, path.join(shared, 'escape'), 'read');
		assert.equal(escape.rule, 'symlink_escape');
		assert.ok(escape.message.includes(`goes through a symlink to ${path.join(outside, 'secret.txt')}, outside the read-only folder it is in (rule: symlink_escape)`), escape.message);
	});

	it('takes a read-only root opened through a symlink by its path and its real path', async () => {
		const alias = path.join(tmp, 'sharedAlias');
		const b = await boundary({ additionalReadPaths: [alias] });
		assert.equal((await b.resolve('sharedLink', 'read')).real, path.join(shared, 'doc.md'));
		const write = await refusal(b, path.join(alias, 'doc.md'), 'write');
		assert.equal(write.message, `"${path.join(alias, 'doc.md')}" is in a read-only location from toolbelt.additionalReadPaths (rule: read_only). It can be read but not changed; write inside the workspace instead.`);
	});

	it('reads a first segment as a folder name only in a multi-root workspace', async () => {
		assert.equal((await (await boundary()).resolve('one/x.ts', 'write')).absolute, path.join(ws, 'one', 'x.ts'));
		assert.equal((await (await boundary({ roots: twoRoots() })).resolve('one/x.ts', 'write')).absolute, path.join(ws, 'x.ts'));
	});

	it('keeps the folder a path was given in, even when a symlink leads into another', async () => {
		fs.symlinkSync(path.join(two, 'b.ts'), path.join(ws, 'toTwo'));
		try {
			const r = await (await boundary({ roots: twoRoots() })).resolve('one/toTwo', 'read');
			assert.equal(r.root?.name, 'one');
			assert.equal(r.real, path.join(two, 'b.ts'));
		} finally {
			fs.unlinkSync(path.join(ws, 'toTwo'));
		}
	});

	it('with nested folders, names a path by the innermost and protects it if any folder\'s globs match', async () => {
		const inner = { name: 'inner', path: path.join(ws, 'src') };
		const b = await boundary({ roots: [inner, { name: 'one', path: ws }], protectedPaths: ['src/**'] });
		assert.equal(b.display(path.join(ws, 'src', 'a.ts')), 'inner/a.ts');
		assert.equal(b.display('src/a.ts'), 'inner/src/a.ts', 'a relative path is taken against the first folder');
		assert.equal(b.isProtected(path.join(ws, 'src', 'a.ts')), true, 'src/** matches relative to "one"');
		assert.equal(b.isProtected(path.join(ws, 'other.ts')), false);
		const outerFirst = await boundary({ roots: [{ name: 'one', path: ws }, inner] });
		assert.equal((await outerFirst.resolve(path.join(ws, 'src', 'a.ts'), 'read')).display, 'inner/a.ts', 'whichever comes first');
	});

	it('names the files of a folder open twice (once through a symlink) by the first', async () => {
		const twin = path.join(tmp, 'wz');
		fs.symlinkSync('ws', twin);
		try {
			const b = await boundary({ roots: [{ name: 'one', path: ws }, { name: 'twin', path: twin }] });
			assert.equal(b.display(path.join(ws, 'src', 'a.ts')), 'one/src/a.ts');
		} finally {
			fs.unlinkSync(twin);
		}
	});

	it('displays a path as given when no folder is open', async () => {
		const none = await boundary({ roots: [] });
		assert.equal(none.display('/x/y'), '/x/y');
		assert.equal(none.display('src/a.ts'), 'src/a.ts', 'a relative path has no folder to go against');
	});

	it('says a dangling symlink inside the workspace does not exist', async () => {
		const r = await (await boundary()).resolve('danglingInside', 'write');
		assert.deepEqual([r.exists, r.real], [false, path.join(ws, 'missing.txt')]);
	});

	describe('protected globs', () => {
		const isProtected = async (globs: string[], rel: string) => (await boundary({ protectedPaths: globs })).isProtected(path.join(ws, rel));

		it('match dotfiles and dot folders, case-sensitively where the file system is', async () => {
			assert.equal(await isProtected(['*'], '.hidden'), true);
			assert.equal(await isProtected(['**/*.key'], 'certs/.private.key'), true);
			if (process.platform === 'linux') assert.equal(await isProtected(['.git/**'], '.GIT/config'), false);
		});

		it('protect the folders above their fixed part, and not the workspace folder for a glob without one', async () => {
			assert.equal(await isProtected(['.vscode/*.json'], ''), true);
			assert.equal(await isProtected(['a/b/*.json'], 'a'), true);
			assert.equal(await isProtected(['a/b/*.json'], 'b'), false);
			assert.equal(await isProtected(['**/.env*'], ''), false);
		});

		it('match a path outside every folder by its whole path, a path inside only relative to its folder', async () => {
			const whole = `${toPosix(outside).replace(/^\/+/, '')}/**`;
			const b = await boundary({ fileAccess: 'unrestricted', protectedPaths: [whole, `${toPosix(ws).replace(/^\/+/, '')}/**`] });
			assert.equal(b.isProtected(path.join(outside, 'secret.txt')), true);
			assert.equal(b.isProtected(path.join(ws, 'src', 'a.ts')), false);
		});

		it('read a folder glob with trailing slashes as the folder, and an empty glob as nothing', async () => {
			assert.equal(await isProtected(['secrets//'], 'secrets/key.pem'), true);
			const empty = await boundary({ protectedPaths: ['', '/'] });
			assert.equal(empty.isProtected(path.join(ws, 'src', 'a.ts')), false);
			assert.equal((await empty.resolve('.', 'read')).isProtected, false);
			const none = protectedGlob('/', false);
			assert.deepEqual([none.pattern, none.covers('a'), none.leadsTo(''), none.mayHold('')], ['', false, false, false]);
		});

		it('tell the sandbox\'s walk which folders may hold a match', () => {
			const settings = protectedGlob('.vscode/*.json', false);
			for (const folder of ['', '.vscode', '.vscode/deep']) assert.equal(settings.mayHold(folder), true, folder);
			for (const folder of ['src', '.vscode-old', 'src/.vscode']) assert.equal(settings.mayHold(folder), false, folder);
			assert.equal(protectedGlob('.vscode/*.json', true).mayHold('.VSCode/Deep'), true, 'in any case where the file system ignores it');
			assert.equal(protectedGlob('**/.env*', false).mayHold('any/folder'), true, 'a glob without a fixed part may match anywhere');
		});
	});

	it('keeps Toolbelt\'s storage out of reach, except the command logs it lists for reading', async () => {
		const storage = path.join(ws, '.storage');
		const logs = path.join(storage, 'logs', 'this');
		fs.mkdirSync(logs, { recursive: true });
		fs.writeFileSync(path.join(logs, 'run.log'), 'ok');
		fs.mkdirSync(path.join(storage, 'backups'), { recursive: true });
		try {
			const b = await boundary({ privatePaths: [storage, path.join(tmp, 'no-such-storage')], additionalReadPaths: [shared, logs] });
			assert.equal((await b.resolve('.storage/logs/this/run.log', 'read')).exists, true);
			const backup = await refusal(b, '.storage/backups/b.json', 'read');
			assert.equal(backup.rule, 'private_storage');
			assert.equal(backup.message, `".storage/backups/b.json" is inside Toolbelt's own storage (backups and command logs of workspaces) (rule: private_storage). Tools do not read or change it; only this workspace's command logs can be read, at the paths run_command gives.`);
			assert.equal((await refusal(b, '.storage/logs/this/run.log', 'write')).rule, 'private_storage');
		} finally {
			fs.rmSync(storage, { recursive: true, force: true });
		}
	});

	it('checks where an opened file really is: the workspace, and read-only roots for reads only', async () => {
		const alias = path.join(tmp, 'sharedAlias');
		const b = await boundary({ additionalReadPaths: [alias] });
		const doc = path.join(shared, 'doc.md');
		b.assertReachable(path.join(ws, 'src', 'a.ts'), 'write', 'src/a.ts');
		b.assertReachable(doc, 'read', 'sharedLink');
		b.assertReachable(path.join(alias, 'doc.md'), 'read', 'sharedLink');
		assert.throws(() => b.assertReachable(doc, 'write', 'sharedLink'), (error: unknown) => error instanceof BoundaryError && error.rule === 'swapped_during_call'
			&& error.message === `"sharedLink" led to ${doc} when it was opened, outside the workspace (rule: swapped_during_call): a folder or symlink on its path changed while the call ran. Nothing was read or written there. Check the path with list_dir; use a path inside the workspace folder ${ws}.`);
		assert.throws(() => b.assertReachable(path.join(outside, 'secret.txt'), 'read', 'x'), /swapped_during_call/);
		(await boundary({ fileAccess: 'unrestricted' })).assertReachable(path.join(outside, 'secret.txt'), 'write', 'x');
	});

	it('works from the folders as configured when their real paths are not given', async () => {
		const b = new Boundary({ roots: [{ name: 'one', path: ws }], fileAccess: 'workspace', additionalReadPaths: [shared], protectedPaths: ['.git/**'] });
		assert.equal((await b.resolve('src/a.ts', 'write')).real, path.join(ws, 'src', 'a.ts'));
		assert.equal((await b.resolve(path.join(shared, 'doc.md'), 'read')).exists, true);
		if (process.platform === 'linux') {
			assert.equal(b.isProtected(path.join(ws, '.GIT', 'config')), false, 'the platform\'s case rule');
			const anywhere = await boundary({ fileAccess: 'unrestricted', protectedPaths: ['**/.env'] });
			assert.equal(anywhere.isProtected(path.join(outside, '.ENV')), false, 'outside every folder too');
		}
	});

	it('resolves paths lexically in a folder that does not exist (yet)', async () => {
		const missing = path.join(tmp, 'not-yet');
		const b = await boundary({ roots: [{ name: 'one', path: missing }], additionalReadPaths: [path.join(tmp, 'nor-this')] });
		const r = await b.resolve('src/a.ts', 'write');
		assert.deepEqual([r.real, r.exists, r.display], [path.join(missing, 'src', 'a.ts'), false, 'src/a.ts']);
	});

	it('asks a virtual workspace\'s own file system, never the disk under the same path', async () => {
		// The folder's path is also a folder on disk, where sharedLink leads outside: none of that counts.
		const memory = new MemoryFileSystem('memfs', { [`${ws}/sharedLink`]: 'a plain file', [`${ws}/.git/config`]: '' });
		const b = await boundary({ fileSystem: memory, protectedPaths: ['.git/**'] });
		const link = await b.resolve('sharedLink', 'write');
		assert.deepEqual([link.real, link.exists], [path.join(ws, 'sharedLink'), true]);
		const fresh = await b.resolve('src/a.ts', 'write');
		assert.deepEqual([fresh.real, fresh.exists], [path.join(ws, 'src', 'a.ts'), false], 'on disk it exists, not here');
		assert.equal((await b.resolve('.GIT/config', 'write')).isProtected, false, 'names are matched case-sensitively');
		assert.equal((await b.resolve('.git/config', 'write')).isProtected, true);
		// A folder's path that is a symlink on this disk means nothing to the virtual workspace either.
		const alias = path.join(tmp, 'sharedAlias');
		const aliased = await boundary({ roots: [{ name: 'v', path: alias }], fileSystem: new MemoryFileSystem('memfs', { [`${alias}/doc.md`]: 'd' }) });
		assert.deepEqual(await aliased.resolve('doc.md', 'write').then(r => [r.real, r.exists]), [path.join(alias, 'doc.md'), true]);
	});

	describe('real paths', () => {
		it('takes a path through a file as a new path, and reports other failures', async () => {
			const b = await boundary();
			const under = await b.resolve('src/a.ts/new.txt', 'write');
			assert.deepEqual([under.real, under.exists], [path.join(ws, 'src', 'a.ts', 'new.txt'), false]);
			const long = 'x'.repeat(300);
			// ENAMETOOLONG: not a new path, and worded as input to fix (errors.ts fromNodeError).
			await assert.rejects(b.resolve(long, 'write'), (error: unknown) => error instanceof ToolError && error.code === 'invalid_input'
				&& error.message.startsWith(`${long} is too long for the file system`));
		});
	});

	describe('case probe', function () {
		// Linux's file systems tell case apart; a symlink named like a folder with its case flipped
		// stands in for a file system that does not.
		let probe: string;
		before(function () {
			if (process.platform !== 'linux') this.skip();
			probe = path.join(tmp, 'probe');
			for (const folder of ['Folded/123', 'Strict/456', 'sTRICT', 'Lone']) fs.mkdirSync(path.join(probe, folder), { recursive: true });
			fs.symlinkSync('Folded', path.join(probe, 'fOLDED'));
		});

		it('reads a folder as case-insensitive when its flipped name leads to it', async () => {
			assert.equal(await probeCaseInsensitive(path.join(probe, 'Folded')), true);
			assert.equal(await probeCaseInsensitive(path.join(probe, 'Strict')), false, 'another folder under the flipped name');
			assert.equal(await probeCaseInsensitive(path.join(probe, 'Nothing')), false, 'a folder that is not there: the platform\'s rule');
			assert.equal(await probeCaseInsensitive(path.join(probe, 'lONE')), false, 'even when its flipped name is');
		});

		it('asks the parent for a name without letters', async () => {
			assert.equal(await probeCaseInsensitive(path.join(probe, 'Folded', '123')), true);
			assert.equal(await probeCaseInsensitive(path.join(probe, 'Strict', '456')), false);
		});

		it('matches protected globs by the probe\'s answer', async () => {
			const b = await boundary({ roots: [{ name: 'folded', path: path.join(probe, 'Folded') }], protectedPaths: ['.git/**'] });
			assert.equal((await b.resolve('.GIT/config', 'write')).isProtected, true);
		});
	});
});
