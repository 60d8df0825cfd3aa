import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Access, Boundary, BoundaryOptions, probeCaseInsensitive, protectedMatcher, WorkspaceRoot } from '../../src/core/policy/boundary';
import { BoundaryError, BoundaryRule, ToolError } from '../../src/core/results/errors';
import { DEFAULT_PROTECTED_PATHS } from '../../src/core/policy/settings';

/**
 * The tree every test works on:
 *   ws/            the workspace folder ("one")
 *     src/a.ts, .env, .git/config, .vscode/settings.json
 *     inside -> src/a.ts            (symlink within the workspace)
 *     outsideFile -> ../outside/secret.txt
 *     outsideDir -> ../outside
 *     dangling -> ../outside/new.txt (does not exist)
 *     gitLink -> .git/config
 *     sharedLink -> ../shared/doc.md
 *   ws-evil/x.txt  a sibling whose name starts like the workspace's
 *   two/b.ts       a second folder ("two")
 *   outside/secret.txt
 *   shared/doc.md  an additionalReadPath
 *   rootLink -> ws (a workspace folder opened through a symlink)
 */
describe('boundary', () => {
	let tmp: string;
	let ws: string;
	let two: string;
	let shared: string;
	let outside: string;

	before(() => {
		tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-')));
		ws = path.join(tmp, 'ws');
		two = path.join(tmp, 'two');
		shared = path.join(tmp, 'shared');
		outside = path.join(tmp, 'outside');
		const files: Record<string, string> = {
			'ws/src/a.ts': 'export const a = 1;\n',
			'ws/.env': 'SECRET=1\n',
			'ws/.git/config': '[core]\n',
			'ws/.vscode/settings.json': '{}\n',
			'ws-evil/x.txt': 'evil\n',
			'two/b.ts': 'export const b = 2;\n',
			'outside/secret.txt': 'secret\n',
			'shared/doc.md': '# doc\n',
		};
		for (const [file, content] of Object.entries(files)) {
			fs.mkdirSync(path.dirname(path.join(tmp, file)), { recursive: true });
			fs.writeFileSync(path.join(tmp, file), content);
		}
		fs.symlinkSync('src/a.ts', path.join(ws, 'inside'));
		fs.symlinkSync('../outside/secret.txt', path.join(ws, 'outsideFile'));
		fs.symlinkSync('../outside', path.join(ws, 'outsideDir'));
		fs.symlinkSync('../outside/new.txt', path.join(ws, 'dangling'));
		fs.symlinkSync('.git/config', path.join(ws, 'gitLink'));
		fs.symlinkSync('../shared/doc.md', path.join(ws, 'sharedLink'));
		fs.symlinkSync('loopB', path.join(ws, 'loopA'));
		fs.symlinkSync('loopA', path.join(ws, 'loopB'));
		fs.symlinkSync('ws', path.join(tmp, 'rootLink'));
	});

	after(() => {
		fs.rmSync(tmp, { recursive: true, force: true });
	});

	function options(overrides: Partial<BoundaryOptions> = {}): BoundaryOptions {
		return {
			roots: [{ name: 'one', path: ws }],
			fileAccess: 'workspace',
			additionalReadPaths: [],
			protectedPaths: [...DEFAULT_PROTECTED_PATHS],
			...overrides,
		};
	}

	function boundary(overrides: Partial<BoundaryOptions> = {}): Promise<Boundary> {
		return Boundary.create(options(overrides));
	}

	async function refused(b: Boundary, input: string, access: Access, rule: BoundaryRule): Promise<BoundaryError> {
		try {
			const resolved = await b.resolve(input, access);
			assert.fail(`${JSON.stringify(input)} was accepted as ${resolved.absolute}, expected rule ${rule}`);
		} catch (error) {
			assert.ok(error instanceof BoundaryError, `expected a BoundaryError, got ${String(error)}`);
			assert.equal(error.rule, rule);
			assert.ok(error.message.includes(`(rule: ${rule})`), error.message);
			assert.equal(error.code, rule === 'read_only' ? 'read_only' : 'outside_boundary');
			return error;
		}
	}

	describe('relative and absolute paths', () => {
		it('resolves a relative path against the folder', async () => {
			const b = await boundary();
			const r = await b.resolve('src/a.ts', 'read');
			assert.equal(r.absolute, path.join(ws, 'src', 'a.ts'));
			assert.equal(r.real, path.join(ws, 'src', 'a.ts'));
			assert.equal(r.display, 'src/a.ts');
			assert.equal(r.root?.name, 'one');
			assert.equal(r.exists, true);
			assert.equal(r.isProtected, false);
			assert.equal(r.input, 'src/a.ts');
		});

		it('takes "." and "./" as the folder itself', async () => {
			const b = await boundary();
			for (const input of ['.', './', 'src/..']) {
				const r = await b.resolve(input, 'read');
				assert.equal(r.absolute, ws);
				assert.equal(r.display, '.');
			}
		});

		it('allows ".." that stays inside', async () => {
			const b = await boundary();
			const r = await b.resolve('src/../a.ts', 'write');
			assert.equal(r.absolute, path.join(ws, 'a.ts'));
			assert.equal(r.display, 'a.ts');
			assert.equal(r.exists, false);
		});

		it('refuses ".." that leaves the folder', async () => {
			const b = await boundary();
			await refused(b, '../outside/secret.txt', 'read', 'escapes_workspace');
			await refused(b, 'src/../../outside/secret.txt', 'read', 'escapes_workspace');
			await refused(b, '..', 'read', 'escapes_workspace');
			const error = await refused(b, '../ws-evil/x.txt', 'write', 'escapes_workspace');
			assert.ok(error.message.includes(ws), 'the message says where the workspace is');
		});

		it('accepts absolute paths inside and refuses them outside', async () => {
			const b = await boundary();
			const r = await b.resolve(path.join(ws, 'src', 'a.ts'), 'read');
			assert.equal(r.display, 'src/a.ts');
			await refused(b, path.join(outside, 'secret.txt'), 'read', 'outside_workspace');
			await refused(b, '/etc/passwd', 'read', 'outside_workspace');
			await refused(b, tmp, 'read', 'outside_workspace');
		});

		it('compares by path segments, so a sibling named like the folder is outside', async () => {
			const b = await boundary();
			await refused(b, path.join(tmp, 'ws-evil', 'x.txt'), 'read', 'outside_workspace');
			await refused(b, `${ws}-evil/x.txt`, 'write', 'outside_workspace');
			assert.equal(b.display(`${ws}-evil/x.txt`), `${ws}-evil/x.txt`);
		});

		it('accepts a file whose name starts with two dots', async () => {
			const b = await boundary();
			const r = await b.resolve('..hidden', 'write');
			assert.equal(r.absolute, path.join(ws, '..hidden'));
		});

		it('resolves a new file through its nearest existing parent', async () => {
			const b = await boundary();
			const r = await b.resolve('new/dir/file.ts', 'write');
			assert.equal(r.exists, false);
			assert.equal(r.real, path.join(ws, 'new', 'dir', 'file.ts'));
			assert.equal(r.display, 'new/dir/file.ts');
		});
	});

	describe('malformed paths', () => {
		it('refuses empty paths, NUL bytes and "~"', async () => {
			const b = await boundary();
			await refused(b, '', 'read', 'empty');
			await refused(b, '   ', 'read', 'empty');
			await refused(b, 'src/a.ts\0.png', 'read', 'nul_byte');
			await refused(b, '~', 'read', 'home_shorthand');
			await refused(b, '~/.ssh/id_rsa', 'read', 'home_shorthand');
			const error = await refused(b, '~root/x', 'write', 'home_shorthand');
			// A new path ending with a slash names a folder: written, it would have become a file.
			await refused(b, 'newdir/', 'write', 'folder_path');
			const folder = await refused(b, 'src/new/dir//', 'write', 'folder_path');
			assert.match(folder.message, /^"src\/new\/dir\/\/" ends with a slash, so it names a folder.* such as "src\/new\/dir\/index\.ts": folders are created/);
			assert.equal((await b.resolve('newdir/', 'read')).exists, false);
			assert.equal((await b.resolve('src/', 'write')).display, 'src');
			assert.match(error.message, /workspace-relative/);
		});

		it('accepts a file named with a leading "~" written as ./~name', async () => {
			const b = await boundary();
			const r = await b.resolve('./~notes.md', 'write');
			assert.equal(r.display, '~notes.md');
		});

		it('refuses everything relative when no folder is open', async () => {
			const b = await boundary({ roots: [] });
			const error = await refused(b, 'src/a.ts', 'read', 'no_workspace');
			assert.match(error.message, /open a folder/);
			await refused(b, path.join(ws, 'src', 'a.ts'), 'read', 'no_workspace');
			await refused(b, '', 'read', 'empty');
		});
	});

	describe('symlinks', () => {
		it('allows a symlink that points inside the workspace', async () => {
			const b = await boundary();
			const r = await b.resolve('inside', 'write');
			assert.equal(r.absolute, path.join(ws, 'inside'));
			assert.equal(r.real, path.join(ws, 'src', 'a.ts'));
			assert.equal(r.display, 'inside');
			assert.equal(r.exists, true);
		});

		it('refuses a symlinked file that points outside', async () => {
			const b = await boundary();
			const error = await refused(b, 'outsideFile', 'read', 'symlink_escape');
			assert.ok(error.message.startsWith(`"outsideFile" goes through a symlink to ${path.join(outside, 'secret.txt')}, outside the workspace (rule: symlink_escape).`), error.message);
			await refused(b, path.join(ws, 'outsideFile'), 'write', 'symlink_escape');
		});

		it('refuses a path under a symlinked directory that points outside', async () => {
			const b = await boundary();
			await refused(b, 'outsideDir/secret.txt', 'read', 'symlink_escape');
			await refused(b, 'outsideDir', 'read', 'symlink_escape');
		});

		it('refuses a new file under a symlinked-outside parent', async () => {
			const b = await boundary();
			await refused(b, 'outsideDir/new.txt', 'write', 'symlink_escape');
			await refused(b, 'outsideDir/deeper/new.txt', 'write', 'symlink_escape');
		});

		it('refuses a dangling symlink whose target would be created outside', async () => {
			const b = await boundary();
			await refused(b, 'dangling', 'write', 'symlink_escape');
			assert.equal(fs.existsSync(path.join(outside, 'new.txt')), false);
		});

		it('reports a symlink loop as an error, not a hang', async () => {
			const b = await boundary();
			await assert.rejects(b.resolve('loopA', 'read'), (error: unknown) => error instanceof ToolError && error.code === 'io' && /too many symlinks/.test(error.message));
		});

		it('works when the folder itself is opened through a symlink', async () => {
			const link = path.join(tmp, 'rootLink');
			const b = await boundary({ roots: [{ name: 'ws', path: link }] });
			const r = await b.resolve('src/a.ts', 'write');
			assert.equal(r.absolute, path.join(link, 'src', 'a.ts'));
			assert.equal(r.real, path.join(ws, 'src', 'a.ts'));
			assert.equal(r.display, 'src/a.ts');
			assert.equal(r.root?.path, link);
			// The same file by its real absolute path is inside too.
			const real = await b.resolve(path.join(ws, 'src', 'a.ts'), 'read');
			assert.equal(real.display, 'src/a.ts');
			assert.equal((await b.resolve('inside', 'read')).real, path.join(ws, 'src', 'a.ts'));
			await refused(b, 'outsideFile', 'read', 'symlink_escape');
			await refused(b, 'outsideDir/new.txt', 'write', 'symlink_escape');
			await refused(b, '../outside/secret.txt', 'read', 'escapes_workspace');
			assert.equal(b.display(path.join(link, '.git', 'config')), '.git/config');
		});
	});

	describe('multi-root', () => {
		const roots = (): WorkspaceRoot[] => [{ name: 'one', path: ws }, { name: 'two', path: two }];

		it('picks the folder named by the first segment', async () => {
			const b = await boundary({ roots: roots() });
			const r = await b.resolve('two/b.ts', 'write');
			assert.equal(r.absolute, path.join(two, 'b.ts'));
			assert.equal(r.root?.name, 'two');
			assert.equal(r.display, 'two/b.ts');
			const folder = await b.resolve('two', 'read');
			assert.equal(folder.absolute, two);
			assert.equal(folder.display, 'two');
		});

		it('falls back to the first folder for an unknown first segment', async () => {
			const b = await boundary({ roots: roots() });
			const r = await b.resolve('src/a.ts', 'read');
			assert.equal(r.absolute, path.join(ws, 'src', 'a.ts'));
			assert.equal(r.display, 'one/src/a.ts');
			const missing = await b.resolve('nope/x.ts', 'write');
			assert.equal(missing.absolute, path.join(ws, 'nope', 'x.ts'));
			assert.equal((await b.resolve('.', 'read')).display, 'one');
		});

		it('names absolute paths by their folder and still refuses escapes', async () => {
			const b = await boundary({ roots: roots() });
			assert.equal((await b.resolve(path.join(two, 'b.ts'), 'read')).display, 'two/b.ts');
			assert.equal(b.display(path.join(ws, 'src', 'a.ts')), 'one/src/a.ts');
			await refused(b, 'two/../outside/secret.txt', 'read', 'escapes_workspace');
			await refused(b, path.join(tmp, 'ws-evil', 'x.txt'), 'read', 'outside_workspace');
		});

		it('accepts a symlink from one folder into another', async () => {
			const link = path.join(two, 'toOne');
			fs.symlinkSync(path.join(ws, 'src'), link);
			try {
				const b = await boundary({ roots: roots() });
				const r = await b.resolve('two/toOne/a.ts', 'write');
				assert.equal(r.real, path.join(ws, 'src', 'a.ts'));
				assert.equal(r.display, 'two/toOne/a.ts');
			} finally {
				fs.unlinkSync(link);
			}
		});
	});

	describe('protected paths', () => {
		it('matches the default globs, dotfiles included', async () => {
			const b = await boundary();
			for (const input of ['.git/config', '.git', '.env', 'src/.env.local', '.vscode/settings.json', '.vscode', 'node_modules/x/index.js']) {
				assert.equal((await b.resolve(input, 'write')).isProtected, true, input);
			}
			for (const input of ['src/a.ts', '.vscode/notes.md', 'src/environment.ts', 'git/config']) {
				assert.equal((await b.resolve(input, 'write')).isProtected, false, input);
			}
		});

		it('counts a symlink onto a protected file', async () => {
			const b = await boundary();
			const r = await b.resolve('gitLink', 'write');
			assert.equal(r.real, path.join(ws, '.git', 'config'));
			assert.equal(r.isProtected, true);
			assert.equal(b.isProtected(path.join(ws, 'gitLink')), false, 'isProtected alone looks at the path given');
		});

		it('matches relative to each folder in multi-root', async () => {
			const b = await boundary({ roots: [{ name: 'one', path: ws }, { name: 'two', path: two }] });
			assert.equal((await b.resolve('two/.git/config', 'write')).isProtected, true);
			assert.equal(b.isProtected(path.join(two, '.env')), true);
			assert.equal(b.isProtected(path.join(two, 'b.ts')), false);
		});

		it('covers every repository\'s .git by default, nested ones too', async () => {
			const b = await boundary();
			for (const input of ['repo2/.git/hooks/pre-commit', 'a/b/c/.git/config', 'repo2/.git']) {
				assert.equal((await b.resolve(input, 'write')).isProtected, true, input);
			}
			for (const input of ['repo2/.gitignore', 'repo2/git/config', 'repo2/.github/workflows/ci.yml']) {
				assert.equal((await b.resolve(input, 'write')).isProtected, false, input);
			}
		});

		it('a glob that names a folder protects what it holds: foo, foo/ and foo/** alike', async () => {
			for (const glob of ['secrets', 'secrets/', 'secrets/**']) {
				const b = await boundary({ protectedPaths: [glob] });
				for (const input of ['secrets', 'secrets/key.pem', 'secrets/deep/er/key.pem']) {
					assert.equal((await b.resolve(input, 'write')).isProtected, true, `${glob}: ${input}`);
				}
				for (const input of ['secretsx/key.pem', 'src/secrets.ts', 'other/secrets/key.pem']) {
					assert.equal((await b.resolve(input, 'write')).isProtected, false, `${glob}: ${input}`);
				}
			}
			const anywhere = await boundary({ protectedPaths: ['**/.env*'] });
			assert.equal((await anywhere.resolve('config/.env.d/production', 'write')).isProtected, true, 'a folder matching the glob covers its files');
		});

		it('matches regardless of case where the file system does (the flag a folder\'s probe gives)', () => {
			const insensitive = (glob: string) => protectedMatcher(glob, true);
			const sensitive = (glob: string) => protectedMatcher(glob, false);
			for (const [glob, relative] of [['**/.git/**', 'Repo/.GIT/hooks/pre-commit'], ['.vscode/*.json', '.VSCode/Settings.JSON'], ['**/.env*', 'src/.ENV'], ['Secrets', 'secrets/key']]) {
				assert.equal(insensitive(glob)(relative), true, `${glob} ~ ${relative}`);
				assert.equal(sensitive(glob)(relative), false, `${glob} !~ ${relative}`);
			}
			assert.equal(insensitive('.vscode/*.json')('.VSCODE'), true, 'the folder above the fixed part, in any case');
			const b = new Boundary(options(), { realRoots: [ws], caseInsensitive: [true] });
			assert.equal(b.isProtected(path.join(ws, '.GIT', 'config')), true);
			assert.equal(new Boundary(options(), { realRoots: [ws], caseInsensitive: [false] }).isProtected(path.join(ws, '.GIT', 'config')), false);
		});

		it('probes each folder\'s case rule from the file system', async function () {
			if (process.platform !== 'linux') this.skip();
			// Linux's usual file systems (ext4, tmpfs, overlayfs) tell .GIT from .git.
			assert.equal(await probeCaseInsensitive(ws), false);
			assert.equal((await boundary()).isProtected(path.join(ws, '.GIT', 'config')), false);
		});

		it('protects everything inside a folder a glob names, as .gitignore does', async () => {
			const b = await boundary({ protectedPaths: ['secrets', 'build/', '**/certs', 'config/*.d'] });
			for (const input of ['secrets', 'secrets/key.pem', 'secrets/deep/er.txt', 'build/out.js', 'certs/ca.pem', 'pkg/certs/ca.pem', 'config/app.d/a.conf']) {
				assert.equal(b.isProtected(path.join(ws, input)), true, input);
			}
			for (const input of ['secrets.txt', 'src/secrets.ts', 'buildings/x.js', 'pkg/certs-old/ca.pem', 'config/app.conf', 'my/secrets/x']) {
				assert.equal(b.isProtected(path.join(ws, input)), false, input);
			}
			assert.equal((await b.resolve('secrets/new/file.txt', 'write')).isProtected, true, 'a new file in a new folder inside');
		});

		it('uses the configured globs only', async () => {
			const b = await boundary({ protectedPaths: ['src/*.ts'] });
			assert.equal((await b.resolve('src/a.ts', 'write')).isProtected, true);
			assert.equal((await b.resolve('.git/config', 'write')).isProtected, false);
			const none = await boundary({ protectedPaths: [] });
			assert.equal((await none.resolve('.git/config', 'write')).isProtected, false);
		});
	});

	describe('additionalReadPaths', () => {
		it('reads inside an extra root, refuses to write there', async () => {
			const b = await boundary({ additionalReadPaths: [shared] });
			const r = await b.resolve(path.join(shared, 'doc.md'), 'read');
			assert.equal(r.root, undefined);
			assert.equal(r.display, path.join(shared, 'doc.md'));
			assert.equal(r.exists, true);
			const error = await refused(b, path.join(shared, 'doc.md'), 'write', 'read_only');
			assert.match(error.message, /additionalReadPaths/);
			await refused(b, path.join(shared, 'new.md'), 'write', 'read_only');
		});

		it('follows a workspace symlink into an extra root for reads only', async () => {
			const b = await boundary({ additionalReadPaths: [shared] });
			const r = await b.resolve('sharedLink', 'read');
			assert.equal(r.real, path.join(shared, 'doc.md'));
			await refused(b, 'sharedLink', 'write', 'read_only');
		});

		it('refuses reads outside both the workspace and the extra roots', async () => {
			const b = await boundary({ additionalReadPaths: [shared] });
			const error = await refused(b, path.join(outside, 'secret.txt'), 'read', 'outside_workspace');
			assert.ok(error.message.includes(shared), 'the message lists the extra roots for reads');
			await refused(b, `${shared}-evil/doc.md`, 'read', 'outside_workspace');
		});

		it('lets a file opened for reading be in any one of several extra roots', async () => {
			const b = await boundary({ additionalReadPaths: [outside, shared] });
			for (const file of [path.join(shared, 'doc.md'), path.join(outside, 'secret.txt')]) {
				assert.doesNotThrow(() => b.assertReachable(file, 'read', file));
				assert.throws(() => b.assertReachable(file, 'write', file), BoundaryError);
			}
		});

		it('reads an extra root with no folder open', async () => {
			const b = await boundary({ roots: [], additionalReadPaths: [shared] });
			assert.equal((await b.resolve(path.join(shared, 'doc.md'), 'read')).exists, true);
		});
	});

	describe('unrestricted', () => {
		it('allows any absolute path and any escape, with absolute display outside', async () => {
			const b = await boundary({ fileAccess: 'unrestricted' });
			const r = await b.resolve(path.join(outside, 'secret.txt'), 'write');
			assert.equal(r.root, undefined);
			assert.equal(r.display, path.join(outside, 'secret.txt'));
			assert.equal((await b.resolve('../outside/secret.txt', 'read')).absolute, path.join(outside, 'secret.txt'));
			assert.equal((await b.resolve('outsideFile', 'write')).real, path.join(outside, 'secret.txt'));
			assert.equal((await b.resolve('outsideDir/new.txt', 'write')).exists, false);
			assert.equal((await b.resolve('src/a.ts', 'read')).display, 'src/a.ts');
		});

		it('still refuses NUL bytes, "~" and empty paths', async () => {
			const b = await boundary({ fileAccess: 'unrestricted' });
			await refused(b, '/tmp/a\0b', 'read', 'nul_byte');
			await refused(b, '~/x', 'read', 'home_shorthand');
			await refused(b, '', 'read', 'empty');
		});

		it('matches ** globs on paths outside every folder', async () => {
			const b = await boundary({ fileAccess: 'unrestricted' });
			assert.equal((await b.resolve(path.join(outside, '.env'), 'write')).isProtected, true);
			assert.equal((await b.resolve(path.join(outside, 'secret.txt'), 'write')).isProtected, false);
		});
	});

	describe('display and a root of /', () => {
		it('displays paths found elsewhere by the same rules', async () => {
			const b = await boundary();
			assert.equal(b.display(ws), '.');
			assert.equal(b.display(path.join(ws, 'src', 'a.ts')), 'src/a.ts');
			assert.equal(b.display('src/a.ts'), 'src/a.ts');
			assert.equal(b.display(path.join(outside, 'x')), path.join(outside, 'x'));
			assert.deepEqual(b.roots, [{ name: 'one', path: ws }]);
		});

		it('contains everything under a root of "/"', async () => {
			const b = await boundary({ roots: [{ name: 'root', path: path.parse(tmp).root }] });
			const r = await b.resolve(path.join(outside, 'secret.txt'), 'read');
			assert.equal(r.display, path.relative(path.parse(tmp).root, path.join(outside, 'secret.txt')).split(path.sep).join('/'));
			assert.equal((await b.resolve('/', 'read')).display, '.');
			// ".." cannot climb above "/", so it stays inside.
			assert.equal((await b.resolve('../..', 'read')).absolute, path.parse(tmp).root);
		});
	});
});
