import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import nodeFs from 'node:fs';
import * as path from 'node:path';
import { bwrapArgs, bwrapProgram } from '../../src/core/sandbox/bwrap';
import { commandPolicy, CommandPolicyInput, findProtected, namedPlaces, ProtectedScanCache, readOnlySearchPolicy, SandboxPolicy, warmProtectedScan } from '../../src/core/sandbox/policy';
import { makeTree } from './helpers';

// The finer points of the sandbox policy (sandbox.test.ts has the main cases and runs commands in it).

type Tree = ReturnType<typeof makeTree>;

/** A policy for `roots` with nothing protected or denied beyond what `extra` says, and a home of its own. */
function policyFor(roots: string[], extra: Partial<CommandPolicyInput> = {}) {
	return commandPolicy({ roots, protectedPaths: [], denyRead: [], network: false, home: '/nonexistent-home', tmpDir: '/tmp/x', ...extra });
}

/** The mounts of one kind, by path. */
function mountsOf(policy: SandboxPolicy, access: string): string[] {
	return policy.mounts.filter(mount => mount.access === access).map(mount => mount.path).sort();
}

/**
 * The folders read (listed) while `run` runs, relative to `root` ('' for the root itself);
 * `refuse` makes the listing of a folder fail, as one the user may not read.
 */
async function foldersRead<T>(root: string, run: () => Promise<T>, refuse?: (relative: string) => boolean): Promise<{ result: T; read: string[] }> {
	// The module object itself (the namespace import's members are read-only): what policy.ts calls.
	const readdirSync = nodeFs.readdirSync;
	const read: string[] = [];
	nodeFs.readdirSync = ((folder: string, options: unknown) => {
		const relative = path.relative(root, folder);
		read.push(relative);
		if (refuse?.(relative)) throw Object.assign(new Error(`EACCES: permission denied, scandir '${folder}'`), { code: 'EACCES' });
		return (readdirSync as (folder: string, options: unknown) => unknown)(folder, options);
	}) as typeof fs.readdirSync;
	try {
		return { result: await run(), read: read.sort() };
	} finally {
		nodeFs.readdirSync = readdirSync;
	}
}

/** The folders looked at (lstat'ed) while `run` runs, relative to `root`: what a walk costs when it reuses every listing. */
async function foldersLooked(root: string, run: () => Promise<unknown>): Promise<string[]> {
	const writable = nodeFs as { lstatSync: typeof nodeFs.lstatSync };
	const lstatSync = writable.lstatSync;
	const looked: string[] = [];
	writable.lstatSync = ((...args: Parameters<typeof lstatSync>) => {
		looked.push(path.relative(root, String(args[0])));
		return lstatSync(...args);
	}) as typeof lstatSync;
	try {
		await run();
		return looked.sort();
	} finally {
		writable.lstatSync = lstatSync;
	}
}

/**
 * Past the file system's clock tick, so that a change gets new stamps; and past the millisecond of
 * a tree just made, whose listing a cache with no settling time would otherwise not keep (a
 * listing read in the same millisecond as the folder's last change is not settled).
 */
const nextTick = () => new Promise(resolve => setTimeout(resolve, 50));

describe('the command policy in detail', () => {
	let tree: Tree;
	let home: Tree;
	beforeEach(() => {
		tree = makeTree({ 'src/a.ts': '', 'keys/SERVER.PEM': 'key' });
		home = makeTree();
	});
	afterEach(() => {
		tree.cleanup();
		home.cleanup();
	});

	it('hides every credential store and browser profile of the default deny list that the home folder holds', async () => {
		const folders = [
			'.ssh', '.aws', '.gnupg', '.config/gh', '.docker', '.kube', '.config/gcloud', '.azure', '.password-store', '.local/share/keyrings',
			'.mozilla', '.config/google-chrome', '.config/chromium', '.config/BraveSoftware', '.config/microsoft-edge', 'snap/firefox', 'snap/chromium',
			'Library/Keychains', 'Library/Cookies', 'Library/Safari', 'Library/Application Support/Google/Chrome', 'Library/Application Support/Firefox',
			'Library/Application Support/Chromium', 'Library/Application Support/BraveSoftware', 'Library/Application Support/Microsoft Edge',
		];
		const files = ['.netrc', '.git-credentials'];
		for (const folder of folders) fs.mkdirSync(home.file(folder), { recursive: true });
		for (const file of files) fs.writeFileSync(home.file(file), 'secret');
		fs.mkdirSync(home.file('.config/Code'));
		const { policy } = await policyFor([tree.root], { home: home.root });
		const hidden = policy.mounts.filter(mount => mount.access === 'hide' && mount.path.startsWith(home.root));
		assert.deepEqual(hidden.map(mount => mount.path).sort(), [...folders, ...files].map(home.file).sort());
		for (const mount of hidden) assert.equal(mount.directory, folders.includes(path.relative(home.root, mount.path)), mount.path);
	});

	it('reads `~` as the home folder, and a `~/` inside an absolute path as part of its name', async () => {
		const odd = makeTree({ 'a~/secret': 's' });
		try {
			const whole = await policyFor([tree.root], { home: home.root, denyRead: ['~'] });
			assert.ok(mountsOf(whole.policy, 'hide').includes(home.root));
			const named = await policyFor([tree.root], { home: home.root, denyRead: [odd.file('a~/secret')] });
			assert.ok(mountsOf(named.policy, 'hide').includes(odd.file('a~/secret')));
		} finally {
			odd.cleanup();
		}
	});

	it('takes an empty or slash-only protected glob (a stray settings entry) as protecting nothing, and applies the others', async () => {
		fs.writeFileSync(tree.file('.env'), 'A=1');
		const { policy, scanComplete } = await policyFor([tree.root], { protectedPaths: ['', '/', '**/.env*'] });
		assert.deepEqual(mountsOf(policy, 'read'), [tree.file('.env')]);
		assert.equal(scanComplete, true);
	});

	it('matches protected globs without regard to case on macOS and Windows only', async () => {
		const pem = tree.file('keys/SERVER.PEM');
		for (const platform of ['darwin', 'win32', 'linux'] as const) {
			const { policy } = await policyFor([tree.root], { protectedPaths: ['**/*.pem'], platform });
			assert.deepEqual(mountsOf(policy, 'read'), platform === 'linux' ? [] : [pem], platform);
		}
	});

	it('leaves out a workspace folder that no longer exists, and mounts the command logs by their real path', async () => {
		const storage = makeTree({ 'ws1/commands/a.log': 'log' });
		try {
			const link = path.join(storage.root, 'logs-link');
			fs.symlinkSync(storage.file('ws1/commands'), link);
			const { policy, scanComplete } = await policyFor([path.join(tree.root, 'gone'), tree.root], { logDir: link, storageRoot: storage.root });
			assert.deepEqual(mountsOf(policy, 'write'), [tree.root]);
			assert.deepEqual(mountsOf(policy, 'read'), [storage.file('ws1/commands')]);
			assert.equal(scanComplete, true);
		} finally {
			storage.cleanup();
		}
	});

	it('says when the walk for protected paths stopped at the bound it was given', async () => {
		assert.equal((await policyFor([tree.root], { protectedPaths: ['**/*.pem'], scanLimit: 2 })).scanComplete, false);
		assert.equal((await policyFor([tree.root], { protectedPaths: ['**/*.pem'], scanLimit: 100 })).scanComplete, true);
	});

	describe('protected paths created by a command', () => {
		it('finds what a pattern glob matches now and did not before', async () => {
			const made = await policyFor([tree.root], { protectedPaths: ['**/*.pem'] });
			fs.writeFileSync(tree.file('src/new.pem'), 'key');
			assert.deepEqual(await made.createdSince(), [tree.file('src/new.pem')]);
		});

		it('finds, with the walks remembering folders, what appeared between two commands and what the second one made', async () => {
			const cache = new ProtectedScanCache(0);
			await nextTick();
			const first = await policyFor([tree.root], { protectedPaths: ['**/*.pem'], scanCache: cache });
			assert.deepEqual(await first.createdSince(), []);
			await nextTick();
			// In a folder both walks of the first command listed and remembered, unchanged since.
			fs.writeFileSync(tree.file('src/between.pem'), 'key');
			const second = await policyFor([tree.root], { protectedPaths: ['**/*.pem'], scanCache: cache });
			assert.deepEqual(mountsOf(second.policy, 'read'), [tree.file('src/between.pem')], 'read-only while the second command runs');
			await nextTick();
			fs.writeFileSync(tree.file('src/made.pem'), 'key');
			fs.writeFileSync(tree.file('src/made.txt'), '');
			assert.deepEqual(await second.createdSince(), [tree.file('src/made.pem')]);
		});

		it('does not walk again when every glob was guarded by a mount before the command ran', async () => {
			const made = await policyFor([tree.root], { protectedPaths: ['.vscode/*.json', '.env'] });
			assert.deepEqual(made.unguarded, []);
			fs.mkdirSync(tree.file('.vscode'));
			fs.writeFileSync(tree.file('.vscode/settings.json'), '{}');
			assert.deepEqual(await made.createdSince(), [], 'a sandboxed command could not have made it; someone else did');
		});

		it('does not compare walks cut at their bound (each may see a different part of the tree)', async () => {
			const made = await policyFor([tree.root], { protectedPaths: ['**/*.pem'], scanLimit: 1 });
			assert.equal(made.scanComplete, false);
			fs.writeFileSync(tree.file('new.pem'), 'key');
			assert.deepEqual(await made.createdSince(), []);
		});
	});

	describe('places guarded before they exist', () => {
		it('guards the first missing folder below an existing one, and not a protected name that is a link', async () => {
			const outside = makeTree({ 'env': 'A=1' });
			try {
				fs.mkdirSync(tree.file('deep'));
				fs.symlinkSync(outside.file('env'), tree.file('.env'));
				const { policy } = await policyFor([tree.root], { protectedPaths: ['.env', 'deep/new/settings.json'] });
				const guarded = policy.mounts.filter(mount => mount.access === 'read');
				assert.deepEqual(guarded, [{ path: tree.file('deep/new'), access: 'read', missing: 'directory' }]);
			} finally {
				outside.cleanup();
			}
		});

		it('names no place for a glob that can match anything, or whose last name is a pattern', () => {
			for (const glob of ['**/*', '**/.env?']) assert.deepEqual(namedPlaces(glob), { glob, places: [], complete: false }, glob);
			assert.deepEqual(namedPlaces('secrets//').places, [{ relative: 'secrets', directory: true }]);
		});
	});
});

describe('the read-only search policy', () => {
	it('shows the searched folders by their real path, the program\'s folder and what programs need to start; nothing else, no network', async () => {
		const tree = makeTree({ 'src/a.txt': '' });
		try {
			fs.symlinkSync(tree.file('src'), tree.file('linked'));
			const policy = await readOnlySearchPolicy([tree.file('linked'), tree.file('gone'), tree.file('src')], [tree.root]);
			assert.equal(policy.base, 'empty');
			assert.equal(policy.network, false);
			assert.equal(policy.tmpDir, undefined);
			const system = ['/usr', '/lib', '/lib64', '/bin', '/etc/ld.so.cache'].filter(entry => fs.existsSync(entry));
			assert.ok(system.includes('/usr'));
			assert.deepEqual(policy.mounts, [tree.file('src'), tree.root, ...system].map(found => ({ path: found, access: 'read' })));
		} finally {
			tree.cleanup();
		}
	});
});

describe('protected-path walks in detail', () => {
	let tree: Tree;
	const globs = ['**/.git/**', '**/.env*', '.vscode/*.json', 'node_modules/**'];
	const initial = ['.env', '.git', '.vscode/settings.json', 'deep/er/.env.local', 'node_modules', 'repo2/.git'];
	/** Every folder the first walk lists: the matched .git and node_modules are not entered. */
	const listed = ['', '.vscode', 'deep', 'deep/er', 'repo2', 'src'];
	beforeEach(() => {
		tree = makeTree({
			'.git/config': '', '.git/hooks/pre-commit': '', 'repo2/.git/HEAD': '', '.env': 'A=1', 'deep/er/.env.local': '', '.vscode/settings.json': '{}',
			'.vscode/notes.md': '', 'src/a.ts': '', 'node_modules/x/index.js': '',
		});
	});
	afterEach(() => tree.cleanup());
	const relative = (found: { paths: string[] }) => found.paths.map(p => path.relative(tree.root, p)).sort();
	const walk = (cache?: ProtectedScanCache, rules = globs, limit = 1000) => findProtected([tree.root], rules, { nocase: false, limit, cache });

	it('lists only the folders a glob could match something in', async () => {
		const vscode = await foldersRead(tree.root, () => walk(undefined, ['.vscode/*.json']));
		assert.deepEqual(relative(vscode.result), ['.vscode/settings.json']);
		assert.deepEqual(vscode.read, ['', '.vscode']);
	});

	it('lists again only the folders whose entries changed since the walk before', async () => {
		const cache = new ProtectedScanCache(0);
		await nextTick();
		const first = await foldersRead(tree.root, () => walk(cache));
		assert.deepEqual(first.read, listed);
		const unchanged = await foldersRead(tree.root, () => walk(cache));
		assert.deepEqual(relative(unchanged.result), initial);
		assert.deepEqual(unchanged.read, [], 'nothing changed: every folder is only looked at');
		await nextTick();
		fs.writeFileSync(tree.file('src/.env.new'), '');
		const changed = await foldersRead(tree.root, () => walk(cache));
		assert.deepEqual(relative(changed.result), [...initial, 'src/.env.new'].sort());
		assert.deepEqual(changed.read, ['src']);
	});

	describe('a walk warmed up while the person reads the request', () => {
		const scanInput = (cache: ProtectedScanCache) => ({ roots: [tree.root], protectedPaths: globs, platform: 'linux' as const, scanCache: cache });
		const policy = (cache: ProtectedScanCache) => policyFor([tree.root], scanInput(cache));

		it('leaves the command\'s walk only what changed since, which it still finds', async () => {
			const cache = new ProtectedScanCache(0);
			await nextTick();
			const warm = await foldersRead(tree.root, () => warmProtectedScan(scanInput(cache)));
			assert.deepEqual(warm.read, listed);
			await nextTick();
			fs.writeFileSync(tree.file('src/.env.late'), '');
			const made = await foldersRead(tree.root, () => policy(cache));
			assert.deepEqual(made.read, ['src']);
			assert.ok(mountsOf(made.result.policy, 'read').includes(tree.file('src/.env.late')), 'read-only in the sandbox');
		});

		it('makes a command that starts meanwhile wait for it instead of reading every folder alongside', async () => {
			const cache = new ProtectedScanCache(0);
			// A matching link is resolved asynchronously: the walk lets others run there, in any tree.
			fs.symlinkSync(tree.file('src/a.ts'), tree.file('.env.link'));
			await nextTick();
			const both = await foldersRead(tree.root, () => Promise.all([warmProtectedScan(scanInput(cache)), policy(cache)]));
			assert.deepEqual(both.read, listed, 'each folder read once');
			const readOnly = mountsOf(both.result[1].policy, 'read');
			assert.deepEqual(initial.filter(each => !readOnly.includes(tree.file(each))), [], 'every protected path read-only');
		});

		it('does not walk when a walk for the same globs has been done or is under way', async () => {
			const cache = new ProtectedScanCache(0);
			await nextTick();
			assert.equal(cache.cold(`false\0${globs.join('\0')}`), true);
			await walk(cache);
			fs.rmSync(tree.file('src'), { recursive: true });
			let looked = 0;
			const writable = nodeFs as { lstatSync: typeof nodeFs.lstatSync };
			const lstat = writable.lstatSync;
			writable.lstatSync = ((...args: Parameters<typeof lstat>) => { looked++; return lstat(...args); }) as typeof lstat;
			try {
				await warmProtectedScan(scanInput(cache));
			} finally {
				writable.lstatSync = lstat;
			}
			assert.equal(looked, 0);
			const other = await foldersRead(tree.root, () => warmProtectedScan({ ...scanInput(cache), protectedPaths: ['.vscode/*.json'] }));
			assert.deepEqual(other.read, ['', '.vscode'], 'other globs: nothing of theirs was remembered');
		});

		it('does not queue a second walk behind one for the same globs that is still under way', async () => {
			const cache = new ProtectedScanCache(0);
			// A matching link is resolved asynchronously: the first walk is still under way when the warm-up asks.
			fs.symlinkSync(tree.file('src/a.ts'), tree.file('.env.link'));
			await nextTick();
			const looked = await foldersLooked(tree.root, () => Promise.all([walk(cache), warmProtectedScan(scanInput(cache))]));
			assert.deepEqual(looked, listed, 'each folder looked at once, by the walk under way alone');
		});

		// A walk for other globs queued since (behind one of its own, not begun yet) has not replaced
		// what these globs' walk left: a warm-up has nothing to do. Once what is left is nothing, it has.
		it('counts what a walk left as warm while a walk for other globs is queued but not begun', async () => {
			const signature = `false\0${globs.join('\0')}`;
			const other = 'false\0.vscode/*.json';
			// Folders changed in the walk's own clock tick are not kept (they may change again unseen): let the tree's age first.
			await nextTick();
			for (const [roots, cold] of [[[tree.root], false], [[], true]] as const) {
				const cache = new ProtectedScanCache(0);
				await findProtected(roots, globs, { nocase: false, limit: 1000, cache });
				let release = () => {};
				const held = new Promise<void>(resolve => release = resolve);
				const queued = cache.queue(other, () => held);
				try {
					assert.equal(cache.cold(signature), cold, roots.length > 0 ? 'its listings are still there to reuse' : 'a walk of no folder left nothing');
					assert.equal(cache.cold(other), false, 'the queued walk is under way');
				} finally {
					release();
					await queued;
				}
			}
		});
	});

	it('lists a folder again after a change even when its mtime was set back (the ctime moves all the same)', async () => {
		const cache = new ProtectedScanCache(0);
		// Whole seconds: a stamp set back is then exactly the one the walk saw.
		const stamp = 1_700_000_000;
		fs.utimesSync(tree.file('src'), stamp, stamp);
		await nextTick();
		await walk(cache);
		await nextTick();
		fs.writeFileSync(tree.file('src/.env.hidden'), '');
		fs.utimesSync(tree.file('src'), stamp, stamp);
		assert.equal(fs.lstatSync(tree.file('src')).mtimeMs, stamp * 1000);
		const after = await foldersRead(tree.root, () => walk(cache));
		assert.deepEqual(relative(after.result), [...initial, 'src/.env.hidden'].sort());
		assert.deepEqual(after.read, ['src']);
	});

	it('lists a folder again when another with the same stamps takes its place (its parent swapped by renames)', async function () {
		// Two folders last changed in the same tick of the file system's clock: made together until
		// they are (a clock finer than the time between two calls never gives that).
		const stamps = (relative: string) => {
			const stat = fs.lstatSync(tree.file(relative));
			return [stat.mtimeMs, stat.ctimeMs];
		};
		let swap: string | undefined;
		for (let attempt = 0; attempt < 20 && !swap; attempt++) {
			const base = `swap${attempt}`;
			fs.mkdirSync(tree.file(`${base}/a/b`), { recursive: true });
			fs.mkdirSync(tree.file(`${base}/c/b`), { recursive: true });
			fs.writeFileSync(tree.file(`${base}/c/b/.env`), '');
			if (stamps(`${base}/a/b`).join() === stamps(`${base}/c/b`).join()) swap = base;
		}
		if (!swap) this.skip();
		const cache = new ProtectedScanCache(0);
		await nextTick();
		assert.ok(relative(await walk(cache, ['**/.env*'])).includes(`${swap}/c/b/.env`));
		fs.renameSync(tree.file(`${swap}/a`), tree.file(`${swap}/old`));
		fs.renameSync(tree.file(`${swap}/c`), tree.file(`${swap}/a`));
		const after = relative(await walk(cache, ['**/.env*'])).filter(found => found.startsWith(`${swap}/`));
		assert.deepEqual(after, [`${swap}/a/b/.env`]);
	});

	it('takes a backslash in a name as part of the name, not as a separator, where it is one (Linux, macOS)', async function () {
		if (process.platform === 'win32') this.skip();
		fs.writeFileSync(tree.file('old\\server.pem'), 'key');
		fs.writeFileSync(tree.file('src/.env\\backup'), '');
		assert.deepEqual(relative(await walk(undefined, ['*.pem', '**/.env*'])), ['.env', 'deep/er/.env.local', 'old\\server.pem', 'src/.env\\backup']);
	});

	it('lists a folder again while it has not been unchanged for the settling time', async () => {
		const state = { dev: 1, ino: 2, mtimeMs: 5_000, ctimeMs: 4_000 };
		assert.equal(new ProtectedScanCache(1_000).settled(state, 6_000), true, 'exactly the settling time after its last change');
		assert.equal(new ProtectedScanCache(1_000).settled(state, 5_999), false);
		const cache = new ProtectedScanCache();
		await walk(cache);
		const again = await foldersRead(tree.root, () => walk(cache));
		assert.deepEqual(again.read, listed, 'every folder was just made');
	});

	it('lists everything again for other globs, even ones that join to the same text', async () => {
		const cache = new ProtectedScanCache(0);
		assert.deepEqual(relative(await walk(cache, ['**/*.t', 's'])), []);
		assert.deepEqual(relative(await walk(cache, ['**/*.ts'])), ['src/a.ts']);
		await walk(cache);
		const back = await foldersRead(tree.root, () => walk(cache, ['.vscode/*.json']));
		assert.deepEqual(back.read, ['', '.vscode']);
	});

	it('keeps what no walk for other globs saw, when walks for two sets of globs overlap', async () => {
		const cache = new ProtectedScanCache(0);
		await nextTick();
		// The walk for the deeper globs ends last (it waits on a matching link's target, and the
		// other walk runs meanwhile); what it saw must not be reused for the others.
		fs.symlinkSync(tree.file('src/a.ts'), tree.file('.env.link'));
		await nextTick();
		await Promise.all([walk(cache), walk(cache, ['.vscode/*.json'])]);
		assert.deepEqual(relative(await walk(cache, ['.vscode/*.json'])), ['.vscode/settings.json']);
		const again = await foldersRead(tree.root, () => walk(cache, ['.vscode/*.json']));
		assert.deepEqual(relative(again.result), ['.vscode/settings.json']);
		assert.deepEqual(again.read, [], 'the later walk kept what it saw');
	});

	it('matches an entry named as the glob\'s own text, as picomatch does, beside what the pattern matches', async () => {
		fs.writeFileSync(tree.file('{a,b}.key'), '');
		fs.writeFileSync(tree.file('a.key'), '');
		fs.writeFileSync(tree.file('c.key'), '');
		assert.deepEqual(relative(await walk(undefined, ['{a,b}.key'])), ['a.key', '{a,b}.key']);
	});

	it('matches without regard to case only when asked to', async () => {
		fs.writeFileSync(tree.file('src/.ENV.Prod'), '');
		fs.mkdirSync(tree.file('NODE_MODULES'));
		const walkCase = (nocase: boolean) => findProtected([tree.root], globs, { nocase, limit: 1000 });
		assert.deepEqual(relative(await walkCase(false)), initial);
		assert.deepEqual(relative(await walkCase(true)), [...initial, 'NODE_MODULES', 'src/.ENV.Prod'].sort());
	});

	it('counts a folder that cannot be listed as empty, and goes on', async () => {
		const { result, read } = await foldersRead(tree.root, () => walk(), folder => folder === 'deep');
		assert.equal(result.complete, true);
		assert.deepEqual(relative(result), initial.filter(p => p !== 'deep/er/.env.local'));
		assert.ok(!read.includes('deep/er'));
	});

	it('counts a workspace folder that is missing, or gone since the walk before, as empty', async () => {
		const other = makeTree({ '.env': '' });
		const cache = new ProtectedScanCache(0);
		const both = () => findProtected([tree.root, other.root], globs, { nocase: false, limit: 1000, cache });
		assert.deepEqual(relative(await both()), [...initial, path.relative(tree.root, other.file('.env'))].sort());
		other.cleanup();
		const after = await both();
		assert.equal(after.complete, true);
		assert.deepEqual(relative(after), initial);
		assert.deepEqual(relative(await findProtected([tree.file('missing'), tree.root], globs, { nocase: false, limit: 1000 })), initial);
	});

	it('counts a matching link by its target inside any of the workspace folders', async () => {
		const other = makeTree({ 'notes.txt': '' });
		try {
			fs.symlinkSync(tree.file('src/a.ts'), other.file('.env.link'));
			const found = await findProtected([tree.root, other.root], ['**/.env*'], { nocase: false, limit: 1000 });
			assert.deepEqual(found.paths.sort(), [tree.file('.env'), tree.file('deep/er/.env.local'), tree.file('src/a.ts')]);
		} finally {
			other.cleanup();
		}
	});

	describe('a walk of hundreds of folders', () => {
		/** 300 folders of one file each: 300 + 300 entries. */
		const wide = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`f${String(i).padStart(3, '0')}/x.txt`, '']));
		let flat: Tree;
		beforeEach(() => { flat = makeTree(wide); });
		afterEach(() => flat.cleanup());

		it('lets other work run while it walks thousands of folders', async () => {
			// Thousands of lstat and readdir calls take tens of ms: the walk must hand the thread back between slices.
			const many = makeTree({});
			try {
				for (let i = 0; i < 5000; i++) fs.mkdirSync(many.file(`g${i % 50}/d${i}`), { recursive: true });
				let done = false;
				const walking = findProtected([many.root], ['**/.env'], { nocase: false, limit: 100_000 }).then(found => { done = true; return found; });
				const ranDuringWalk = await new Promise(resolve => setImmediate(() => resolve(!done)));
				assert.equal(ranDuringWalk, true, 'a callback queued after the walk started ran before it ended');
				assert.deepEqual(await walking, { paths: [], complete: true });
			} finally {
				many.cleanup();
			}
		});

		it('lists each folder once, and stops only past its bound', async () => {
			const { result, read } = await foldersRead(flat.root, () => findProtected([flat.root], ['**/.env'], { nocase: false, limit: 600 }));
			assert.equal(result.complete, true, 'exactly at the bound');
			assert.equal(read.length, 301);
			assert.equal(new Set(read).size, 301);
			assert.equal((await findProtected([flat.root], ['**/.env'], { nocase: false, limit: 599 })).complete, false);
		});
	});
});

describe('bubblewrap arguments in detail', () => {
	const policy: SandboxPolicy = { base: 'host', network: false, mounts: [{ path: '/ws', access: 'write' }] };
	const program = { file: '/bin/sh', args: ['-c', 'make'] };

	it('shields bwrap from the signals a terminal or a timeout sends the group, and gives them back to the program', () => {
		const wrapped = bwrapProgram({ bwrap: '/usr/bin/bwrap', env: '/usr/bin/env' }, policy, '/ws', program);
		assert.equal(wrapped.file, '/usr/bin/env');
		assert.deepEqual(wrapped.args.slice(0, 2), ['--ignore-signal=INT,QUIT,TSTP,TERM', '/usr/bin/bwrap']);
		assert.deepEqual(wrapped.args.slice(2), bwrapArgs(policy, '/ws', { file: '/usr/bin/env', args: ['--default-signal=INT,QUIT,TSTP,TERM', '/bin/sh', '-c', 'make'] }));
		assert.ok(!wrapped.args.some(arg => /signal=.*HUP/.test(arg)), 'SIGHUP still ends the sandbox');
	});

	it('starts bwrap itself where `env` cannot shield it', () => {
		assert.deepEqual(bwrapProgram({ bwrap: '/usr/bin/bwrap' }, policy, '/ws', program), { file: '/usr/bin/bwrap', args: bwrapArgs(policy, '/ws', program) });
	});

	it('shows nothing of the host under an empty base', () => {
		const args = bwrapArgs({ base: 'empty', network: false, mounts: [{ path: '/ws', access: 'read' }] }, '/ws', program);
		assert.ok(!args.includes('/') && !args.includes('--bind'));
		assert.ok(args.join(' ').includes('--ro-bind-try /ws /ws'));
	});
});
