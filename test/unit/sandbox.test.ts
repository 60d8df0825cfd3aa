import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { needsApproval } from '../../src/core/policy/approval';
import type { ApprovalRequest } from '../../src/core/context';
import { procStat } from '../../src/core/commands/process';
import { resultText } from '../../src/core/results/result';
import { runRg } from '../../src/core/search/ripgrep';
import { explainBlocked } from '../../src/core/sandbox/blocked';
import { bwrapArgs } from '../../src/core/sandbox/bwrap';
import { holdPlaceholders } from '../../src/core/sandbox/placeholders';
import { commandPolicy, findProtected, namedPlaces, ProtectedScanCache, SandboxPolicy } from '../../src/core/sandbox/policy';
import { decideSandbox, openSandbox, readOnlySearch, sandboxAvailability, SandboxHostOptions } from '../../src/core/sandbox/runtime';
import { seatbeltProfile } from '../../src/core/sandbox/seatbelt';
import type { SessionManager } from '../../src/core/commands/sessions';
import { defaultSettings, mergeSettings } from '../../src/core/policy/settings';
import { makeHarness, makeTree, needsSandbox, snapshotTree } from './helpers';

const MISSING_BWRAP = '/nonexistent/toolbelt-test/bwrap';
/** Temp folders outside /tmp, which every sandboxed command sees replaced by its own. */
const VAR_TMP = '/var/tmp';

/** Processes running `sleep <marker>` (markers are odd durations no one else sleeps for). */
function sleepers(marker: string): number[] {
	return fs.readdirSync('/proc').filter(entry => /^\d+$/.test(entry)).map(Number).filter(pid => {
		try {
			const alive = procStat(pid)?.state;
			return alive !== undefined && alive !== 'Z' && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
		} catch {
			return false;
		}
	});
}

/**
 * The sandboxes' private temp folders that `work` leaves behind. The OS temp folder is one of the
 * test's own meanwhile: other test runs on the machine make and remove theirs in the shared one.
 */
async function privateTempsLeftBy(work: () => Promise<void>): Promise<string[]> {
	const saved = process.env.TMPDIR;
	const own = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-temps-'));
	process.env.TMPDIR = own;
	try {
		await work();
		return fs.readdirSync(own).filter(name => name.startsWith('toolbelt-sandbox-'));
	} finally {
		if (saved === undefined) delete process.env.TMPDIR;
		else process.env.TMPDIR = saved;
		fs.rmSync(own, { recursive: true, force: true });
	}
}

/** A loopback server on the host that counts the connections it gets. */
async function loopbackServer(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
	let count = 0;
	const sockets = new Set<net.Socket>();
	const server = net.createServer(socket => {
		count++;
		sockets.add(socket);
		socket.end();
	});
	await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
	return {
		port: (server.address() as net.AddressInfo).port,
		connections: () => count,
		close: () => new Promise(resolve => {
			for (const socket of sockets) socket.destroy();
			server.close(() => resolve());
		}),
	};
}

describe('sandbox policy as bwrap arguments and a sandbox-exec profile', () => {
	const policy: SandboxPolicy = {
		base: 'host',
		network: false,
		tmpDir: '/var/tmp/private',
		mounts: [
			{ path: '/home/me/.ssh', access: 'hide', directory: true },
			{ path: '/home/me/ws/.git', access: 'read' },
			{ path: '/home/me/ws', access: 'write' },
			{ path: '/home/me/.netrc', access: 'hide', directory: false },
			{ path: '/home/me/.config/Code/User', access: 'hide', directory: true },
			{ path: '/home/me/.config/Code/User/workspaceStorage/abc/toolbelt/commands', access: 'read' },
		],
	};

	it('starts read-only, mounts shallow before deep, hides last at a path, and turns hidden folders read-only at the end', () => {
		const args = bwrapArgs(policy, '/home/me/ws/src', { file: '/bin/bash', args: ['-c', 'make'] });
		assert.deepEqual(args.slice(0, 11), ['--die-with-parent', '--cap-drop', 'ALL', '--unshare-pid', '--unshare-net', '--ro-bind', '/', '/', '--dev', '/dev', '--proc']);
		/** Where this run of arguments starts (-1 when absent). */
		const at = (...run: string[]) => args.findIndex((_, i) => run.every((arg, j) => args[i + j] === arg));
		const logs = '/home/me/.config/Code/User/workspaceStorage/abc/toolbelt/commands';
		assert.ok(at('--bind', '/var/tmp/private', '/tmp') >= 0 && at('--bind', '/var/tmp/private', '/tmp') < at('--tmpfs', '/home/me/.ssh'), 'the private /tmp (depth 1) comes first');
		assert.ok(at('--bind', '/home/me/ws', '/home/me/ws') < at('--ro-bind-try', '/home/me/ws/.git', '/home/me/ws/.git'), 'the protected .git is read-only inside the writable workspace');
		assert.ok(at('--tmpfs', '/home/me/.config/Code/User') < at('--ro-bind-try', logs, logs), 'the command logs show inside the hidden storage');
		assert.ok(at('--ro-bind', '/dev/null', '/home/me/.netrc') > 0, 'a hidden file is /dev/null');
		const remounts = args.flatMap((arg, i) => (arg === '--remount-ro' ? [args[i + 1]] : []));
		assert.deepEqual(remounts, ['/home/me/.ssh', '/home/me/.config/Code/User']);
		assert.ok(args.lastIndexOf('--remount-ro') > args.lastIndexOf('--ro-bind-try'), 'after the binds made inside them');
		assert.deepEqual(args.slice(-6), ['--chdir', '/home/me/ws/src', '--', '/bin/bash', '-c', 'make']);
		assert.ok(!bwrapArgs({ ...policy, network: true }, '/', { file: 'true', args: [] }).includes('--unshare-net'));
	});

	it('hiding wins over a workspace at the same path; a workspace inside a hidden folder shows again', () => {
		const same = bwrapArgs({ base: 'host', network: false, mounts: [{ path: '/w', access: 'hide', directory: true }, { path: '/w', access: 'write' }] }, '/', { file: 'true', args: [] });
		assert.ok(same.indexOf('--bind') < same.indexOf('--tmpfs'));
		const inside = bwrapArgs({ base: 'host', network: false, mounts: [{ path: '/h/ws', access: 'write' }, { path: '/h', access: 'hide', directory: true }] }, '/', { file: 'true', args: [] });
		assert.ok(inside.indexOf('--tmpfs') < inside.indexOf('--bind'));
	});

	it('writes a sandbox-exec profile that allows by default and denies writes outside, protected writes, hidden reads and the network', () => {
		const { profile, params } = seatbeltProfile(policy);
		assert.equal(profile, [
			'(version 1)',
			'(allow default)',
			'(deny file-write* (require-not (require-any (subpath (param "W0")) (subpath (param "T0")) (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper") (regex #"^/dev/ttys[0-9]+$") (regex #"^/dev/fd/[0-9]+$"))))',
			'(deny file-write* (subpath (param "R0")) (subpath (param "R1")))',
			'(deny file-read* file-write* (subpath (param "H0")))',
			'(deny file-read* file-write* (literal (param "H1")))',
			'(deny file-read* file-write* (require-all (subpath (param "H2")) (require-not (require-any (subpath (param "K0"))))))',
			'(deny network*)',
		].join('\n'));
		assert.deepEqual(params, {
			W0: '/home/me/ws', T0: '/var/tmp/private', R0: '/home/me/ws/.git', R1: '/home/me/.config/Code/User/workspaceStorage/abc/toolbelt/commands',
			H0: '/home/me/.ssh', H1: '/home/me/.netrc', H2: '/home/me/.config/Code/User', K0: '/home/me/.config/Code/User/workspaceStorage/abc/toolbelt/commands',
		});
		assert.doesNotMatch(seatbeltProfile({ ...policy, network: true }).profile, /network/);
	});

	it('denies writes to protected paths that do not exist yet by their names, and leaves the network and /tmp alone when the policy does', () => {
		const { profile, params } = seatbeltProfile({
			base: 'host', network: true, mounts: [
				{ path: '/ws', access: 'write' }, { path: '/ws/.env', access: 'read', missing: 'file' }, { path: '/ws/.git', access: 'read', missing: 'directory' },
			],
		});
		assert.equal(profile, [
			'(version 1)',
			'(allow default)',
			'(deny file-write* (require-not (require-any (subpath (param "W0")) (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper") (regex #"^/dev/ttys[0-9]+$") (regex #"^/dev/fd/[0-9]+$"))))',
			'(deny file-write* (subpath (param "R0")) (subpath (param "R1")))',
		].join('\n'));
		assert.deepEqual(params, { W0: '/ws', R0: '/ws/.env', R1: '/ws/.git' });
	});

	it('writes a deny-by-default profile for a read-only search', () => {
		const { profile, params } = seatbeltProfile({ base: 'empty', network: false, mounts: [{ path: '/ws', access: 'read' }] });
		assert.match(profile, /^\(version 1\)\n\(deny default\)\n/);
		assert.match(profile, /\(allow file-read\* \(subpath \(param "R0"\)\) \(subpath "\/System"\)/);
		assert.doesNotMatch(profile, /allow default|file-write\* \(subpath/);
		assert.deepEqual(params, { R0: '/ws' });
	});
});

describe('protected paths found for the sandbox', () => {
	let tree: ReturnType<typeof makeTree>;
	let outside: ReturnType<typeof makeTree>;
	beforeEach(() => {
		tree = makeTree({
			'.git/config': '', '.git/hooks/pre-commit': '', 'repo2/.git/HEAD': '', '.env': 'A=1', 'deep/er/.env.local': '', '.vscode/settings.json': '{}',
			'.vscode/notes.md': '', 'src/a.ts': '', 'node_modules/x/index.js': '',
		});
		outside = makeTree({ '.env': 'outside' });
		fs.symlinkSync(path.join(outside.root, '.env'), path.join(tree.root, 'src', '.env.linked'));
	});
	afterEach(() => {
		tree.cleanup();
		outside.cleanup();
	});

	it('finds every match, a folder whole, and not what a symlink points at outside', async () => {
		const found = await findProtected([tree.root], ['**/.git/**', '**/.env*', '.vscode/*.json', 'node_modules/**'], { nocase: false, limit: 1000 });
		assert.equal(found.complete, true);
		assert.deepEqual(found.paths.map(p => path.relative(tree.root, p)).sort(), ['.env', '.git', '.vscode/settings.json', 'deep/er/.env.local', 'node_modules', 'repo2/.git']);
	});

	it('reads a folder glob as the boundary does: `repo2/.git/` and `repo2/.git` both protect the folder whole', async () => {
		for (const glob of ['repo2/.git/', 'repo2/.git']) {
			const found = await findProtected([tree.root], [glob], { nocase: false, limit: 1000 });
			assert.deepEqual(found.paths.map(p => path.relative(tree.root, p)), ['repo2/.git'], glob);
		}
	});

	it('finds a file whose name starts with a dot under a glob that does not spell the dot (`**/*.pem` holds `.server.pem`)', async () => {
		fs.writeFileSync(tree.file('src/.server.pem'), 'key');
		const found = await findProtected([tree.root], ['**/*.pem'], { nocase: false, limit: 1000 });
		assert.deepEqual(found.paths.map(p => path.relative(tree.root, p)), ['src/.server.pem']);
	});

	it('says when the walk stopped at its bound', async () => {
		const found = await findProtected([tree.root], ['**/.env*'], { nocase: false, limit: 3 });
		assert.equal(found.complete, false);
	});

	describe('walks that remember the folders they read', () => {
		const globs = ['**/.git/**', '**/.env*', '.vscode/*.json', 'node_modules/**'];
		const found = async (cache: ProtectedScanCache) => (await findProtected([tree.root], globs, { nocase: false, limit: 1000, cache })).paths.map(p => path.relative(tree.root, p)).sort();
		/** Past the file system's clock tick, so that a change after a walk gets new stamps (the case a cache with no settling time relies on). */
		const nextTick = () => new Promise(resolve => setTimeout(resolve, 50));
		const initial = ['.env', '.git', '.vscode/settings.json', 'deep/er/.env.local', 'node_modules', 'repo2/.git'];

		it('finds a protected file created since the last walk, in a folder whose listing it kept', async () => {
			const cache = new ProtectedScanCache(0);
			assert.deepEqual(await found(cache), initial);
			await nextTick();
			fs.writeFileSync(tree.file('deep/er/.env.prod'), 'B=2');
			fs.mkdirSync(tree.file('src/lib'));
			fs.writeFileSync(tree.file('src/lib/.env'), 'C=3');
			assert.deepEqual(await found(cache), [...initial, 'deep/er/.env.prod', 'src/lib/.env'].sort());
			await nextTick();
			fs.rmSync(tree.file('deep/er/.env.local'));
			assert.deepEqual(await found(cache), [...initial, 'deep/er/.env.prod', 'src/lib/.env'].filter(p => p !== 'deep/er/.env.local').sort());
		});

		it('reuses no listing of a folder changed within its settling time, whose stamps a change in the same clock tick would not move', async () => {
			const cache = new ProtectedScanCache();
			const now = Date.now();
			const state = (mtimeMs: number, ctimeMs = mtimeMs) => ({ dev: 1, ino: 2, mtimeMs, ctimeMs });
			assert.equal(cache.settled(state(now - 60_000), now), true);
			assert.equal(cache.settled(state(now - 2_000), now), false, 'FAT stamps are 2 s apart');
			assert.equal(cache.settled(state(now - 60_000, now - 10), now), false, 'a recent ctime counts (the mtime may have been set back)');
			assert.equal(cache.settled(state(now + 5_000), now), false, 'stamps ahead of this clock (another machine\'s) are not trusted');
			assert.deepEqual(await found(cache), initial);
			fs.writeFileSync(tree.file('src/.env.test'), '');
			assert.deepEqual(await found(cache), [...initial, 'src/.env.test'].sort());
		});

		it('is not fooled by a folder\'s mtime set back after a change (its ctime moved)', async () => {
			const cache = new ProtectedScanCache(0);
			const old = fs.statSync(tree.file('src'), { bigint: true });
			assert.deepEqual(await found(cache), initial);
			await nextTick();
			fs.writeFileSync(tree.file('src/server.pem'), 'key');
			fs.writeFileSync(tree.file('src/.env.hidden'), '');
			// To the nanosecond, as a command could (utimes in Node rounds).
			const stamp = `@${old.mtimeNs / 1_000_000_000n}.${String(old.mtimeNs % 1_000_000_000n).padStart(9, '0')}`;
			assert.equal(spawnSync('touch', ['-m', '-d', stamp, tree.file('src')]).status, 0);
			assert.equal(fs.statSync(tree.file('src'), { bigint: true }).mtimeNs, old.mtimeNs);
			assert.deepEqual(await found(cache), [...initial, 'src/.env.hidden'].sort());
		});

		it('follows a renamed folder to its new name', async () => {
			const cache = new ProtectedScanCache(0);
			assert.deepEqual(await found(cache), initial);
			await nextTick();
			fs.renameSync(tree.file('deep'), tree.file('moved'));
			assert.deepEqual(await found(cache), [...initial.filter(p => p !== 'deep/er/.env.local'), 'moved/er/.env.local'].sort());
			await nextTick();
			fs.renameSync(tree.file('moved/er'), tree.file('src/er'));
			assert.deepEqual(await found(cache), [...initial.filter(p => p !== 'deep/er/.env.local'), 'src/er/.env.local'].sort());
		});

		it('enters no folder swapped for a link, and finds a matching link by its new target', async () => {
			const cache = new ProtectedScanCache(0);
			const secrets = makeTree({ '.env': 'S=1', 'inner/.env.x': '' });
			try {
				assert.deepEqual(await found(cache), initial);
				await nextTick();
				fs.rmSync(tree.file('deep/er'), { recursive: true });
				fs.symlinkSync(secrets.root, tree.file('deep/er'));
				fs.rmSync(tree.file('src/.env.linked'));
				fs.symlinkSync(tree.file('.vscode/settings.json'), tree.file('src/.env.linked'));
				assert.deepEqual(await found(cache), initial.filter(p => p !== 'deep/er/.env.local'), 'the link to a folder outside is not walked; the relinked .env counts by its target (already found)');
				await nextTick();
				fs.rmSync(tree.file('src/.env.linked'));
				fs.symlinkSync(tree.file('src/a.ts'), tree.file('src/.env.linked'));
				assert.deepEqual(await found(cache), [...initial.filter(p => p !== 'deep/er/.env.local'), 'src/a.ts'].sort());
			} finally {
				secrets.cleanup();
			}
		});

		it('a walk cut at its bound still finds what was created in the part it reads', async () => {
			const cache = new ProtectedScanCache(0);
			const cut = async () => findProtected([tree.root], globs, { nocase: false, limit: 12, cache });
			const first = await cut();
			assert.equal(first.complete, false);
			await nextTick();
			fs.writeFileSync(tree.file('.env.new'), '');
			const second = await cut();
			assert.equal(second.complete, false);
			assert.deepEqual(second.paths.map(p => path.relative(tree.root, p)).filter(p => !first.paths.includes(tree.file(p))), ['.env.new']);
		});

		it('forgets what it saw when the globs change', async () => {
			const cache = new ProtectedScanCache(0);
			assert.deepEqual(await found(cache), initial);
			const other = await findProtected([tree.root], ['**/*.ts'], { nocase: false, limit: 1000, cache });
			assert.deepEqual(other.paths.map(p => path.relative(tree.root, p)), ['src/a.ts']);
			assert.deepEqual(await found(cache), initial);
		});
	});

	it('builds a policy: workspace writable, protected read-only, deny list and storage hidden, command logs readable', async () => {
		const home = makeTree({ '.ssh/id_rsa': 'secret', '.netrc': 'machine x', 'secrets/key': 'k' });
		const storage = makeTree({ 'ws1/commands/a.log': 'log', 'ws2/commands/b.log': 'other' });
		try {
			const { policy } = await commandPolicy({
				roots: [tree.root], protectedPaths: ['.git/**'], denyRead: ['~/secrets', '/nonexistent/x'], network: false, home: home.root,
				storageRoot: storage.root, logDir: path.join(storage.root, 'ws1', 'commands'), tmpDir: '/tmp/x',
			});
			const byAccess = (access: string) => policy.mounts.filter(m => m.access === access).map(m => m.path).sort();
			assert.deepEqual(byAccess('write'), [tree.root]);
			assert.deepEqual(byAccess('read'), [path.join(tree.root, '.git'), path.join(storage.root, 'ws1', 'commands')].sort());
			const ours = byAccess('hide').filter(hidden => hidden.startsWith(home.root) || hidden.startsWith(storage.root));
			assert.deepEqual(ours, [home.file('.netrc'), home.file('.ssh'), home.file('secrets'), storage.root].sort());
			assert.equal(policy.mounts.find(m => m.path === home.file('.netrc'))?.directory, false);
		} finally {
			home.cleanup();
			storage.cleanup();
		}
	});
});

describe('protected paths that do not exist yet', () => {
	it('names the places a glob can be guarded before it exists, and says which globs remain patterns', () => {
		const places = (glob: string) => namedPlaces(glob);
		assert.deepEqual(places('.env'), { glob: '.env', places: [{ relative: '.env', directory: false }], complete: true });
		assert.deepEqual(places('.vscode/settings.json').places, [{ relative: '.vscode/settings.json', directory: false }]);
		assert.deepEqual(places('**/.git/**'), { glob: '**/.git/**', places: [{ relative: '.git', directory: true }], complete: false });
		assert.deepEqual(places('**/.env*'), { glob: '**/.env*', places: [{ relative: '.env', directory: false }], complete: false });
		assert.deepEqual(places('.vscode/*.json'), { glob: '.vscode/*.json', places: [{ relative: '.vscode', directory: true }], complete: true });
		assert.deepEqual(places('node_modules/**'), { glob: 'node_modules/**', places: [{ relative: 'node_modules', directory: true }], complete: true });
		assert.deepEqual(places('secrets/'), { glob: 'secrets/', places: [{ relative: 'secrets', directory: true }], complete: true });
		for (const pattern of ['*.pem', '**/*.key', 'src/**/.env*', '**/.e?v', '/abs', '../up', '']) {
			assert.deepEqual(places(pattern), { glob: pattern, places: [], complete: false }, pattern);
		}
	});

	it('guards the first missing component of each place, skips places below a file or link, and reuses what exists', async () => {
		const tree = makeTree({ '.vscode/notes.md': '', 'wt/.git': 'gitdir: elsewhere\n', 'src/a.ts': '' });
		try {
			fs.symlinkSync(tree.file('src'), tree.file('linked'));
			const { policy, unguarded } = await commandPolicy({
				roots: [tree.root], protectedPaths: ['**/.git/**', '**/.env*', '.vscode/*.json', 'wt/.git/hooks/**', 'linked/.env', 'x/y/z.json'],
				denyRead: [], network: false, home: '/nonexistent-home', tmpDir: '/tmp/x',
			});
			const readOnly = policy.mounts.filter(m => m.access === 'read').map(m => ({ path: path.relative(tree.root, m.path), missing: m.missing }));
			assert.deepEqual(readOnly.sort((a, b) => a.path.localeCompare(b.path)), [
				{ path: '.env', missing: 'file' }, { path: '.git', missing: 'directory' }, { path: '.vscode', missing: undefined },
				{ path: 'wt/.git', missing: undefined }, { path: 'x', missing: 'directory' },
			]);
			assert.deepEqual(unguarded, ['**/.git/**', '**/.env*']);
		} finally {
			tree.cleanup();
		}
	});

	it('placeholders are shared, removed by their last user, and kept when someone wrote to or replaced them', () => {
		const tree = makeTree({ 'a.txt': '' });
		try {
			const mounts = (name: string, missing: 'file' | 'directory') => [{ path: tree.root, access: 'write' as const }, { path: tree.file(name), access: 'read' as const, missing }];
			const first = holdPlaceholders(mounts('.env', 'file'));
			assert.equal(fs.statSync(tree.file('.env')).size, 0);
			const second = holdPlaceholders([{ path: tree.root, access: 'write' }, { path: tree.file('.env'), access: 'read' }]);
			assert.deepEqual(second.paths, [tree.file('.env')], 'a sandbox that finds our placeholder shares it');
			first.release();
			first.release();
			assert.ok(fs.existsSync(tree.file('.env')), 'still mounted on by the second');
			second.release();
			assert.equal(fs.existsSync(tree.file('.env')), false);

			const vanished = holdPlaceholders([{ path: tree.root, access: 'write' }, { path: tree.file('.git'), access: 'read' }]);
			assert.deepEqual(vanished.paths, [tree.file('.git')], 'a protected path found by the walk and gone since is guarded as missing');
			vanished.release();
			assert.equal(fs.existsSync(tree.file('.git')), false);

			const written = holdPlaceholders(mounts('.env', 'file'));
			fs.writeFileSync(tree.file('.env'), 'MINE=1\n');
			written.release();
			assert.equal(fs.readFileSync(tree.file('.env'), 'utf8'), 'MINE=1\n', 'what the person wrote stays');

			const folder = holdPlaceholders(mounts('.git', 'directory'));
			fs.writeFileSync(tree.file('.git/HEAD'), 'ref\n');
			folder.release();
			assert.ok(fs.existsSync(tree.file('.git/HEAD')), 'a folder someone filled stays');

			const replaced = holdPlaceholders(mounts('.vscode', 'directory'));
			fs.rmdirSync(tree.file('.vscode'));
			fs.writeFileSync(tree.file('.vscode'), '');
			replaced.release();
			assert.ok(fs.existsSync(tree.file('.vscode')), 'a file put in its place by someone else is theirs');
		} finally {
			tree.cleanup();
		}
	});
});

describe('sandbox settings and approval', () => {
	it('names malformed deny-list entries and keeps the valid ones', () => {
		const { settings, ignored } = mergeSettings(defaultSettings(), { sandbox: { mode: 'required', denyRead: ['~/.secrets', '/abs', 'relative/x', '', 'a\0b', 7] } });
		assert.deepEqual(settings.sandbox, { mode: 'required', network: 'off', denyRead: ['~/.secrets', '/abs'] });
		assert.deepEqual(ignored, [
			'sandbox.denyRead entry "relative/x" (not an absolute path: start it with / or ~/)',
			'sandbox.denyRead entry "" (empty)',
			'sandbox.denyRead entry "a\\u0000b" (holds a NUL byte)',
			'sandbox.denyRead entry 7 (not a string)',
		]);
		assert.deepEqual(mergeSettings(defaultSettings(), { sandbox: { mode: 'sometimes', network: 'on', extra: 1 } }).ignored, ['sandbox.mode', 'sandbox.extra']);
		assert.deepEqual(mergeSettings(defaultSettings(), { sandbox: 'off' }).ignored, ['sandbox']);
	});

	it('under approval "edits", sandboxed commands run without asking; file changes and unsandboxed commands ask', () => {
		const settings = { ...defaultSettings(), approval: 'edits' as const };
		const command = (extra: object): ApprovalRequest => ({ kind: 'command', title: 't', command: 'make', cwd: '/ws', ...extra });
		assert.equal(needsApproval(command({ sandboxed: true }), settings), false);
		assert.equal(needsApproval(command({ sandboxed: false }), settings), true);
		assert.equal(needsApproval(command({ sandboxed: false, unsandboxed: { justification: 'x' } }), { ...settings, approval: 'never' }), true);
		assert.equal(needsApproval({ kind: 'files', title: 't', changes: [], protectedPaths: [] }, settings), true);
		assert.equal(needsApproval({ kind: 'call', title: 't', detail: '' }, settings), false);
		assert.equal(needsApproval(command({ sandboxed: true }), defaultSettings()), true, 'the default still asks');
	});
});

describe('sandboxed commands (bubblewrap)', function () {
	this.timeout(30_000);
	let tree: ReturnType<typeof makeTree>;
	let sibling: ReturnType<typeof makeTree>;
	let outside: ReturnType<typeof makeTree>;
	let home: ReturnType<typeof makeTree>;
	let sandbox: SandboxHostOptions;
	let h: ReturnType<typeof makeHarness>;
	const sessions = () => (h.registry as any).env.state.sessions as SessionManager;
	const run = async (command: string, extra: object = {}) => h.invoke('run_command', { command, timeoutMs: 10_000, ...extra });

	before(async function () {
		needsSandbox(this, await sandboxAvailability());
	});

	beforeEach(() => {
		tree = makeTree({ '.git/config': '[core]\n', 'repo2/.git/hooks/pre-commit': '#!/bin/sh\n', '.env': 'KEY=1\n', 'src/a.txt': 'a\n' });
		sibling = makeTree({ 'keep.txt': 'keep\n' });
		// Outside /tmp, which the sandbox replaces anyway: these are hidden or read-only by the policy itself.
		outside = makeTree({ 'keep.txt': 'keep\n' }, VAR_TMP);
		home = makeTree({ '.ssh/id_rsa': 'PRIVATE KEY', 'vault/token': 'TOKEN' }, VAR_TMP);
		sandbox = { homeDir: home.root };
		h = makeHarness(tree.root, { sandbox, settings: { protectedPaths: ['**/.git/**', '**/.env*'] } });
	});
	afterEach(async () => {
		await sessions().dispose();
		for (const t of [tree, sibling, outside, home]) t.cleanup();
	});

	it('cannot write outside the workspace: not the host\'s /tmp, not a sibling folder', async () => {
		const escape = path.join(os.tmpdir(), `tb-escape-${process.pid}-${Date.now()}`);
		const inTmp = await run(`echo x > ${escape}; echo y > ${sibling.file('new.txt')}; echo z >> ${sibling.file('keep.txt')}`);
		assert.equal(inTmp.metadata.sandbox, 'bwrap');
		assert.equal(fs.existsSync(escape), false, 'the command\'s /tmp is its own');
		assert.equal(fs.existsSync(sibling.file('new.txt')), false);
		assert.equal(fs.readFileSync(sibling.file('keep.txt'), 'utf8'), 'keep\n');
		assert.ok(resultText(inTmp).includes(`Sandbox: ${sibling.file('new.txt')} is in the host's /tmp, which commands do not see`), resultText(inTmp));
		const elsewhere = await run(`echo y > ${outside.file('new.txt')}; echo z >> ${outside.file('keep.txt')}`);
		assert.equal(fs.existsSync(outside.file('new.txt')), false);
		assert.equal(fs.readFileSync(outside.file('keep.txt'), 'utf8'), 'keep\n');
		assert.match(resultText(elsewhere), /Read-only file system/);
		assert.match(resultText(elsewhere), /Sandbox: a write was blocked; commands may change only the workspace folders/);
	});

	it('can write inside the workspace and its private TMPDIR, which is gone after the call', async () => {
		const left = await privateTempsLeftBy(async () => {
			const result = await run('echo made > src/new.txt && echo "$TMPDIR" && echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && touch /tmp/also');
			assert.equal(result.metadata.exitCode, 0, resultText(result));
			assert.match(resultText(result), /\/tmp\nt$/m);
		});
		assert.equal(fs.readFileSync(tree.file('src/new.txt'), 'utf8'), 'made\n');
		assert.deepEqual(left, []);
	});

	it('cannot read the deny list: ~/.ssh of the (fake) home and a toolbelt.sandbox.denyRead entry', async () => {
		h = makeHarness(tree.root, { sandbox, settings: { sandbox: { denyRead: [home.file('vault')] } } });
		const result = await run(`cat ${home.file('.ssh/id_rsa')}; ls ${home.file('.ssh')}; cat ${home.file('vault/token')}; exit 1`);
		const text = resultText(result);
		assert.doesNotMatch(text, /PRIVATE KEY|TOKEN|id_rsa\n/);
		assert.match(text, /No such file or directory/);
		assert.match(text, /Sandbox: .* is hidden from commands \(toolbelt.sandbox.denyRead\); if the task truly needs it, run it again with sandbox: false and a justification/);
	});

	it('a long output\'s marker, which names the log in the hidden storage, is not taken for a hidden path', async () => {
		const result = await run('seq 1 100000');
		assert.match(resultText(result), /read all of it with read_file path=/);
		assert.doesNotMatch(resultText(result), /Sandbox:/);
	});

	it('cannot change .git/config, an existing .env, or a nested repository\'s hooks', async () => {
		const result = await run('echo evil >> .git/config; echo EVIL=1 >> .env; echo evil > repo2/.git/hooks/x; echo evil >> repo2/.git/hooks/pre-commit; rm -f .env; mv .git gone; true');
		assert.equal(result.metadata.exitCode, 0);
		assert.equal(fs.readFileSync(tree.file('.git/config'), 'utf8'), '[core]\n');
		assert.equal(fs.readFileSync(tree.file('.env'), 'utf8'), 'KEY=1\n');
		assert.equal(fs.readFileSync(tree.file('repo2/.git/hooks/pre-commit'), 'utf8'), '#!/bin/sh\n');
		assert.equal(fs.existsSync(tree.file('repo2/.git/hooks/x')), false);
		assert.equal(fs.existsSync(tree.file('gone')), false);
	});

	it('cannot create a missing .env, .git hooks or .vscode settings, says why, and leaves nothing behind', async () => {
		const bare = makeTree({ 'src/a.txt': 'a\n' });
		try {
			h = makeHarness(bare.root, { sandbox });
			const listing = () => snapshotTree(bare.root);
			const before = listing();
			for (const command of ['echo x > .env', 'mkdir -p .git/hooks && echo > .git/hooks/pre-commit', 'mkdir .vscode; echo {} > .vscode/settings.json']) {
				const result = await run(command);
				assert.notEqual(result.metadata.exitCode, 0, command);
				assert.match(resultText(result), /Read-only file system/, command);
				assert.match(resultText(result), /Sandbox: a write was blocked; commands may change only the workspace folders \(not protected paths such as \.git or \.env files\)/, command);
				assert.deepEqual(listing(), before, `${command}: nothing left behind`);
			}
			const unprotected = await run('echo ok > src/b.txt && mkdir -p lib && echo {} > lib/settings.json');
			assert.equal(unprotected.metadata.exitCode, 0, resultText(unprotected));
			assert.doesNotMatch(resultText(unprotected), /Sandbox:/);
		} finally {
			bare.cleanup();
		}
	});

	it('names a protected file it could not guard before it existed, and leaves it to the person', async () => {
		const result = await run('echo X=1 > src/.env.local && git init -q repo3 2>/dev/null || mkdir -p repo3/.git');
		assert.equal(result.metadata.exitCode, 0, resultText(result));
		assert.match(resultText(result), /Sandbox: the command created protected paths \(toolbelt.protectedPaths\): (src\/\.env\.local, repo3\/\.git|repo3\/\.git, src\/\.env\.local)\. The sandbox keeps existing protected paths/);
		assert.equal(fs.readFileSync(tree.file('src/.env.local'), 'utf8'), 'X=1\n');
	});

	it('cannot reach the network (a loopback server on the host) unless toolbelt.sandbox.network is on', async () => {
		const server = await loopbackServer();
		try {
			const connect = `exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo connected`;
			const off = await run(connect);
			assert.notEqual(off.metadata.exitCode, 0);
			assert.match(resultText(off), /Connection refused/);
			assert.match(resultText(off), /Sandbox: network access is off for commands/);
			assert.equal(server.connections(), 0);
			h = makeHarness(tree.root, { sandbox, settings: { sandbox: { network: 'on' } } });
			const on = await run(connect);
			assert.match(resultText(on), /connected/);
			assert.equal(server.connections(), 1);
		} finally {
			await server.close();
		}
	});

	it('ends setsid, nohup and double-forked children with the call', async () => {
		const result = await run('setsid sleep 1001.1 & (setsid sleep 1001.2 &); nohup sleep 1001.3 > /dev/null 2>&1 & echo started');
		assert.match(resultText(result), /started/);
		assert.doesNotMatch(resultText(result), /still running/);
		assert.equal(result.metadata.backgroundProcessGroup, undefined);
		assert.deepEqual([...sleepers('1001.1'), ...sleepers('1001.2'), ...sleepers('1001.3')], []);
	});

	it('ends them after a timeout too', async () => {
		const result = await run('setsid sleep 1002.1 & sleep 1002.2', { timeoutMs: 500 });
		assert.equal(result.metadata.timedOut, true);
		assert.deepEqual([...sleepers('1002.1'), ...sleepers('1002.2')], []);
	});

	for (const tty of [true, false]) {
		it(`ends a session's setsid children when it is killed (${tty ? 'pty' : 'pipes'})`, async () => {
			const started = await h.invoke('exec_command', { command: 'setsid sleep 1003.1 & sleep 1003.2', tty, yieldMs: 300 });
			assert.equal(started.metadata.sandbox, 'bwrap');
			assert.equal(sleepers('1003.1').length, 1, 'running while the session runs');
			const killed = await h.invoke('kill_session', { sessionId: started.metadata.sessionId });
			assert.match(resultText(killed), /was stopped/);
			await sessions().get(started.metadata.sessionId as number)!.exited;
			const deadline = Date.now() + 2000;
			while ((sleepers('1003.1').length || sleepers('1003.2').length) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20));
			assert.deepEqual([...sleepers('1003.1'), ...sleepers('1003.2')], []);
		});
	}

	it('Ctrl-C reaches the program in a session, not the sandbox', async () => {
		const started = await h.invoke('exec_command', { command: 'trap "echo caught" INT; sleep 0.4; sleep 0.4; echo finished', yieldMs: 100 });
		const reply = await h.invoke('write_stdin', { sessionId: started.metadata.sessionId, chars: '\u0003', yieldMs: 3000 });
		assert.match(resultText(reply), /caught[\s\S]*finished/);
	});

	it('a call cancelled while its sandbox is prepared starts nothing', async () => {
		const left = await privateTempsLeftBy(async () => {
			const controller = new AbortController();
			controller.abort();
			const result = await h.invoke('run_command', { command: 'touch ran' }, { signal: controller.signal });
			assert.equal(result.error?.code, 'cancelled');
			await new Promise(resolve => setTimeout(resolve, 500));
		});
		assert.equal(fs.existsSync(tree.file('ran')), false);
		assert.deepEqual(left, []);
	});

	it('reports a program killed by a signal as such, although bwrap passes it on as 128+N', async () => {
		const result = await run('kill -TERM $$');
		assert.equal(result.metadata.signal, 'SIGTERM');
		assert.equal(result.metadata.exitCode, null);
	});

	it('escalation (sandbox: false) asks the person even under approval "never", and runs outside only when allowed', async () => {
		h = makeHarness(tree.root, { sandbox, settings: { approval: 'never' } });
		const asked: ApprovalRequest[] = [];
		const input = { command: `echo out > ${sibling.file('out.txt')}`, sandbox: false, justification: 'writes the build output next to the workspace' };
		const declined = await h.invoke('run_command', input, { decide: async request => { asked.push(request); return false; } });
		assert.equal(declined.error?.code, 'declined');
		assert.equal(fs.existsSync(sibling.file('out.txt')), false);
		const allowed = await h.invoke('run_command', input, { approval: 'preconfirmed', decide: async request => { asked.push(request); return true; } });
		assert.equal(allowed.error, undefined, resultText(allowed));
		assert.equal(fs.readFileSync(sibling.file('out.txt'), 'utf8'), 'out\n');
		assert.equal(allowed.metadata.sandbox, 'none');
		assert.match(String(allowed.metadata.sandboxReason), /sandbox: false/);
		assert.equal(asked.length, 2, 'asked both times, also when chat had "already confirmed"');
		assert.deepEqual(asked.map(r => r.kind === 'command' && r.unsandboxed?.justification), [input.justification, input.justification]);
		const plain = await h.invoke('run_command', { command: 'true' }, { decide: async request => { asked.push(request); return true; } });
		assert.equal(plain.metadata.sandbox, 'bwrap');
		assert.equal(asked.length, 2, 'a sandboxed command under "never" is not asked');
	});

	it('sandbox: false without a justification is refused, naming the field, and nothing runs', async () => {
		const result = await h.invoke('run_command', { command: 'touch ran', sandbox: false });
		assert.equal(result.error?.code, 'invalid_input');
		assert.match(result.error!.message, /justification: required when sandbox is false/);
		assert.equal(fs.existsSync(tree.file('ran')), false);
		assert.equal(h.asked.length, 0);
	});

	it('approval "edits": a sandboxed command runs without asking, file changes still ask', async () => {
		h = makeHarness(tree.root, { sandbox, settings: { approval: 'edits' } });
		assert.equal((await run('true')).error, undefined);
		await h.invoke('exec_command', { command: 'true', yieldMs: 2000 });
		assert.equal(h.asked.length, 0);
		await h.invoke('write_file', { path: 'src/b.txt', content: 'b' });
		assert.equal(h.asked.length, 1);
		assert.equal(h.asked[0].kind, 'files');
		const request = (await h.registry.preview('run_command', { command: 'make' }));
		assert.equal(request, undefined, 'chat gets no confirmation for it');
	});

	it('the request and confirmation say the command runs in the sandbox', async () => {
		await run('true');
		const request = h.asked[0];
		assert.equal(request.kind === 'command' && request.sandboxed, true);
	});
});

describe('without a sandbox', function () {
	this.timeout(20_000);
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'a\n' }); });
	afterEach(() => tree.cleanup());

	it('mode "required" refuses when bubblewrap is missing, saying what to install, and runs nothing', async () => {
		const h = makeHarness(tree.root, { sandbox: { bwrapPath: MISSING_BWRAP, platform: 'linux' }, settings: { sandbox: { mode: 'required' } } });
		for (const tool of ['run_command', 'exec_command']) {
			const result = await h.invoke(tool, { command: 'touch ran' });
			assert.equal(result.error?.code, 'sandbox_unavailable');
			assert.match(result.error!.message, /toolbelt.sandbox.mode is "required"\), but bubblewrap \(\/nonexistent\/toolbelt-test\/bwrap\) is not installed\. Nothing was run\. Tell the user to install bubblewrap \(Debian\/Ubuntu: apt-get install bubblewrap/);
		}
		assert.equal(fs.existsSync(tree.file('ran')), false);
		assert.equal(h.asked.length, 0);
	});

	it('mode "auto" runs without one and says so in every result; the log is told once', async () => {
		const warnings: string[] = [];
		const h = makeHarness(tree.root, { sandbox: { bwrapPath: MISSING_BWRAP, platform: 'linux', warn: message => warnings.push(message) } });
		for (let i = 0; i < 2; i++) {
			const result = await h.invoke('run_command', { command: 'echo hi' });
			assert.match(resultText(result), /Not sandboxed: bubblewrap \(\/nonexistent\/toolbelt-test\/bwrap\) is not installed, so it ran with the user's full permissions/);
			assert.equal(result.metadata.sandbox, 'none');
			assert.match(String(result.metadata.sandboxReason), /not installed/);
		}
		assert.equal(h.asked.length, 2);
		assert.equal(h.asked.every(request => request.kind === 'command' && request.sandboxed === false), true);
		assert.equal(warnings.length, 1);
		assert.match(warnings[0], /^Commands run without a sandbox: bubblewrap .* is not installed\. To confine them, install bubblewrap/);
	});

	it('on Windows there is none: said in the metadata and once in the log, and "required" refuses', async () => {
		const warnings: string[] = [];
		const host = { platform: 'win32' as const, warn: (message: string) => warnings.push(message) };
		const decision = await decideSandbox({ mode: 'auto', network: 'off', denyRead: [] }, host);
		assert.deepEqual(decision, { kind: 'none', why: 'unsupported', detail: 'Windows has no sandbox Toolbelt can use' });
		await decideSandbox({ mode: 'auto', network: 'off', denyRead: [] }, host);
		assert.equal(warnings.length, 1);
		await assert.rejects(decideSandbox({ mode: 'required', network: 'off', denyRead: [] }, host), /Windows has no sandbox Toolbelt can use\. Nothing was run/);
		const h = makeHarness(tree.root, { sandbox: host });
		const result = await h.invoke('run_command', { command: 'echo hi' });
		assert.equal(result.metadata.sandbox, 'none');
		assert.equal(result.metadata.sandboxReason, 'Windows has no sandbox Toolbelt can use');
		assert.deepEqual(warnings, ['Commands run without a sandbox: Windows has no sandbox Toolbelt can use.'], 'the log is told once, in one sentence');
		assert.doesNotMatch(resultText(result), /Not sandboxed/, 'a platform fact, not repeated to the model each time');
	});

	it('mode "off" runs as before', async () => {
		const h = makeHarness(tree.root, { settings: { sandbox: { mode: 'off' } } });
		const result = await h.invoke('run_command', { command: 'echo hi' });
		assert.equal(result.metadata.sandbox, 'none');
		assert.equal(result.metadata.sandboxReason, 'toolbelt.sandbox.mode is "off"');
	});
});

describe('the read-only search profile', function () {
	this.timeout(20_000);
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'src/a.txt': 'needle\n' }); });
	afterEach(() => tree.cleanup());

	it('shows only the searched folders, read-only, with no network', async function () {
		const script = `cat src/a.txt; cat /etc/hostname; ls ${os.homedir()}; touch src/b.txt`;
		const program = await readOnlySearch({ file: '/bin/sh', args: ['-c', script] }, { folders: [tree.root], cwd: tree.root });
		if (!program) needsSandbox(this, { ok: false, reason: 'readOnlySearch made no sandboxed program' });
		const result = spawnSync(program!.file, program!.args, { cwd: tree.root, encoding: 'utf8', timeout: 10_000 });
		assert.equal(result.stdout, 'needle\n');
		assert.match(result.stderr, /\/etc\/hostname: No such file/);
		assert.match(result.stderr, new RegExp(`${os.homedir()}.*No such file`));
		assert.match(result.stderr, /Read-only file system/);
		assert.equal(fs.existsSync(tree.file('src/b.txt')), false);
		assert.ok(program!.args.includes('--unshare-net') && !program!.args.includes('--bind'), 'no network, nothing writable');
	});

	it('runs ripgrep there: a link to the outside leads nowhere, a parent folder\'s .gitignore still counts', async function () {
		needsSandbox(this, await sandboxAvailability());
		const outside = makeTree({ 'secret.txt': 'TOPSECRET\n' });
		const parent = makeTree({ '.gitignore': 'skipped.txt\n', 'ws/skipped.txt': 'TOPSECRET\n', 'ws/kept.txt': 'TOPSECRET\n' });
		try {
			const ws = parent.file('ws');
			fs.symlinkSync(outside.root, path.join(ws, 'out'));
			const search = async (confine: SandboxHostOptions | undefined, target: string) => {
				const found: string[] = [];
				await runRg(['--no-config', '--no-require-git', '-l', 'TOPSECRET', '--', target], { cwd: ws, confine, line: bytes => { found.push(bytes.toString()); } });
				return found.sort();
			};
			assert.deepEqual(await search(undefined, 'out'), ['out/secret.txt'], 'plain rg follows a link given as its path');
			assert.deepEqual(await search({}, 'out'), [], 'confined, the outside is not there');
			assert.deepEqual(await search({}, '.'), ['./kept.txt'], 'the parent\'s .gitignore is seen');
		} finally {
			outside.cleanup();
			parent.cleanup();
		}
	});
});

/**
 * For a describe whose tests need bubblewrap (skipped where it cannot run): a fresh workspace of
 * `files` and a folder for stand-in tools, per test.
 */
function workspaceAndTools(files: Record<string, string>): { tree: ReturnType<typeof makeTree>; tools: ReturnType<typeof makeTree> } {
	const made = {} as { tree: ReturnType<typeof makeTree>; tools: ReturnType<typeof makeTree> };
	beforeEach(async function () {
		needsSandbox(this, await sandboxAvailability());
		made.tree = makeTree(files);
		made.tools = makeTree();
	});
	afterEach(() => {
		made.tree?.cleanup();
		made.tools?.cleanup();
	});
	return made;
}

describe('a search\'s sandbox, started without waiting for the probe', function () {
	this.timeout(20_000);
	const made = workspaceAndTools({ 'src/a.txt': 'needle\n' });
	/** A bwrap stand-in (a fresh path: probes are kept per path) that logs its calls and then does `body`. */
	const fakeBwrap = (body: string) => {
		const file = path.join(made.tools.root, `bwrap-${Math.random().toString(36).slice(2)}`);
		// printf, not echo: a shell's echo reads the `\n` in a search pattern as a line break.
		fs.writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' "$*" >> ${made.tools.file('calls.log')}\n${body}\n`, { mode: 0o755 });
		return file;
	};
	const calls = () => (fs.existsSync(made.tools.file('calls.log')) ? fs.readFileSync(made.tools.file('calls.log'), 'utf8').trim().split('\n') : []);

	it('runs the search in bubblewrap at once: no probe before it', async () => {
		const h = makeHarness(made.tree.root, { sandbox: { bwrapPath: fakeBwrap('exec bwrap "$@"') } });
		const result = await h.invoke('grep', { pattern: 'needle' });
		assert.match(resultText(result), /src\/a\.txt:1: needle/);
		assert.equal(calls().length, 1);
		assert.match(calls()[0], /--unshare-net .*--ro-bind-try .*rg .*needle/);
	});

	it('searches a workspace opened through a link (the sandbox shows it at its real path)', async () => {
		const link = path.join(made.tools.root, 'linked-workspace');
		fs.symlinkSync(made.tree.root, link);
		const h = makeHarness(link);
		const result = await h.invoke('grep', { pattern: 'needle' });
		assert.equal(result.error, undefined, resultText(result));
		assert.match(resultText(result), /1 matching line in 1 file[\s\S]*src\/a\.txt:1: needle/);
		assert.match(resultText(await h.invoke('find_files', { pattern: '*.txt' })), /src\/a\.txt/);
	});

	it('where bubblewrap cannot start (the probe agrees), searches plainly, as where there is none', async () => {
		const h = makeHarness(made.tree.root, { sandbox: { bwrapPath: fakeBwrap('echo "bwrap: No permissions to create new namespace" >&2; exit 1') } });
		for (const tool of ['grep', 'find_files']) {
			const result = await h.invoke(tool, { pattern: tool === 'grep' ? 'needle' : '*.txt' });
			assert.match(resultText(result), /src\/a\.txt/, tool);
		}
		const [first, ...rest] = calls();
		assert.match(first, /\/rg /, 'the first search tried the sandbox');
		assert.ok(rest.length > 0 && rest.every(call => / true$/.test(call)), 'then the probe ran, and later searches knew there is no sandbox');
	});

	it('where the probe says bubblewrap works but the search\'s sandbox failed, refuses rather than search unconfined', async () => {
		const h = makeHarness(made.tree.root, { sandbox: { bwrapPath: fakeBwrap('case "$*" in *ripgrep*) echo "bwrap: Can\'t bind mount /oldroot/x: Invalid argument" >&2; exit 1;; esac\nexec bwrap "$@"') } });
		const result = await h.invoke('grep', { pattern: 'needle' });
		assert.equal(result.error?.code, 'io');
		assert.match(result.error!.message, /The search sandbox could not be set up \(bwrap: Can't bind mount \/oldroot\/x: Invalid argument\), so nothing was searched/);
		assert.doesNotMatch(resultText(result), /needle\n|a\.txt:1/);
	});
});

describe('a sandbox check that gives no answer in time (a busy machine)', function () {
	this.timeout(20_000);
	const made = workspaceAndTools({ 'a.txt': 'a\n' });

	it('runs nothing, never unconfined, and asks again on the next call', async () => {
		// bubblewrap that hangs on its first call only (the probe), then works.
		const bwrap = path.join(made.tools.root, 'bwrap');
		fs.writeFileSync(bwrap, `#!/bin/sh\nif [ ! -e ${made.tools.file('hung')} ]; then : > ${made.tools.file('hung')}; exec sleep 30; fi\nexec bwrap "$@"\n`, { mode: 0o755 });
		const h = makeHarness(made.tree.root, { sandbox: { bwrapPath: bwrap, probeTimeoutMs: 300 } });
		const first = await h.invoke('run_command', { command: 'touch ran' });
		assert.equal(first.error?.code, 'sandbox_unavailable', resultText(first));
		assert.match(first.error!.message, /the check that bubblewrap works gave no answer within 0\.3 s \(the machine may be busy\)\. Nothing was run\. Try again in a moment/);
		assert.equal(fs.existsSync(made.tree.file('ran')), false);
		assert.equal(h.asked.length, 0);
		const second = await h.invoke('run_command', { command: 'touch ran && echo "$$"' });
		assert.equal(second.error, undefined, resultText(second));
		assert.equal(second.metadata.sandbox, 'bwrap');
		assert.equal(fs.existsSync(made.tree.file('ran')), true);
	});

	it('a call that asked to run outside the sandbox is not held up by it', async () => {
		const bwrap = path.join(made.tools.root, 'bwrap');
		fs.writeFileSync(bwrap, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
		const decision = await decideSandbox({ mode: 'auto', network: 'off', denyRead: [] }, { bwrapPath: bwrap, probeTimeoutMs: 300 }, true);
		assert.deepEqual(decision, { kind: 'none', why: 'escalated', detail: 'the call asked to run outside the sandbox (sandbox: false)' });
	});
});

describe('what the sandbox blocked, read from the output', () => {
	const sandbox = async (network = false) => openSandbox({ kind: 'bwrap', runtime: { kind: 'bwrap', bwrap: '/usr/bin/bwrap' } }, {
		roots: [os.tmpdir()], protectedPaths: [], denyRead: [], network,
	}, { homeDir: '/nonexistent-home' });

	it('names a read-only file system, a denied write outside, a closed network, and bwrap\'s own failure', async () => {
		const box = await sandbox();
		try {
			assert.match(explainBlocked('bash: /usr/x: Read-only file system', box)!, /a write was blocked/);
			assert.match(explainBlocked("touch: cannot touch '/opt/x': Permission denied", box)!, /a write was blocked/);
			assert.equal(explainBlocked(`touch: cannot touch '${path.join(os.tmpdir(), 'x')}': Permission denied`, box), undefined, 'inside the workspace it is not the sandbox');
			assert.match(explainBlocked('curl: (6) Could not resolve host: example.com', box)!, /network access is off/);
			assert.match(explainBlocked('bwrap: Can\'t mount tmpfs on /x: No such file', box)!, /could not be set up \(bwrap: Can't mount/);
			assert.equal(explainBlocked('all good', box), undefined);
			const hidden = box.policy!.mounts.find(mount => mount.access === 'hide');
			assert.ok(hidden, 'the default deny list hides something (/run/user at least)');
			assert.match(explainBlocked(`cat: ${hidden.path}/x: No such file or directory`, box)!, /is hidden from commands/);
			assert.equal(explainBlocked(`  1 /usr/bin/bwrap --tmpfs ${hidden.path}`, box), undefined, 'a listing that names a hidden path is no complaint');
		} finally {
			await box.dispose();
		}
		const open = await sandbox(true);
		assert.equal(explainBlocked('curl: (6) Could not resolve host: example.com', open), undefined, 'with the network on, it is not the sandbox');
		await open.dispose();
	});
});
