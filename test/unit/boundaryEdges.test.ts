import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Access, Boundary, BoundaryOptions } from '../../src/core/policy/boundary';
import { BoundaryError } from '../../src/core/results/errors';
import { toPosix } from '../../src/core/files/paths';
import { makeTree } from './helpers';

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
		assert.equal((await refusal(one, '../x', 'read')).message, `"../x" leaves the workspace through ".." (rule: escapes_workspace). Use a path inside the workspace folder ${ws}.`);
		const b = await boundary({ roots: twoRoots(), additionalReadPaths: ['', 'relative/dir', shared] });
		const secret = path.join(outside, 'secret.txt');
		assert.equal((await refusal(b, '../x', 'read')).message, `"../x" leaves the workspace through ".." (rule: escapes_workspace). Use a path inside the workspace folders one (${ws}), two (${two}).`);
		assert.equal((await refusal(b, secret, 'read')).message, `"${secret}" is outside the workspace (rule: outside_workspace). Only paths inside the workspace folders one (${ws}), two (${two}) can be used or, for reading, inside ${shared}; give a path relative to the workspace folder.`);
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
		const b = await boundary({ roots: [{ name: 'inner', path: path.join(ws, 'src') }, { name: 'one', path: ws }], protectedPaths: ['src/**'] });
		assert.equal(b.display(path.join(ws, 'src', 'a.ts')), 'inner/a.ts');
		assert.equal(b.display('src/a.ts'), 'inner/src/a.ts', 'a relative path is taken against the first folder');
		assert.equal(b.isProtected(path.join(ws, 'src', 'a.ts')), true, 'src/** matches relative to "one"');
		assert.equal(b.isProtected(path.join(ws, 'other.ts')), false);
	});

	it('displays an absolute path as given when no folder is open', async () => {
		assert.equal((await boundary({ roots: [] })).display('/x/y'), '/x/y');
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
	});
});
