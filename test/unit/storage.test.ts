import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { main } from '../../src/cli/main';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { cliStorageDir, ensurePrivateFolder, StorageError } from '../../src/core/files/storage';
import { ALL_TOOLS, ToolRegistry } from '../../src/tools';
import { makeHarness, makeTree } from './helpers';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('private storage', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(function () {
		if (process.platform === 'win32') this.skip();
		tree = makeTree({ 'ws/a.txt': 'a\n', 'other/b.txt': 'b\n' });
	});
	afterEach(() => tree?.cleanup());

	it('makes a missing folder (and its parents) mode 700', () => {
		const folder = tree.file('store/deeper');
		ensurePrivateFolder(folder);
		assert.equal(modeOf(folder), 0o700);
		assert.equal(modeOf(tree.file('store')), 0o700);
	});

	it('refuses a folder found open to others, a symlink, or another user\'s folder, saying what to do', () => {
		const open = tree.file('open');
		fs.mkdirSync(open);
		fs.chmodSync(open, 0o755);
		assert.throws(() => ensurePrivateFolder(open), (error: StorageError) => error instanceof StorageError && /open to other users \(mode 755\).*chmod 700/.test(error.message));
		fs.chmodSync(open, 0o777);
		assert.throws(() => ensurePrivateFolder(open, { tighten: true }), /open to other users \(mode 777\)/, 'others may have put something in a world-writable folder');
		fs.symlinkSync(tree.file('private'), tree.file('link'));
		fs.mkdirSync(tree.file('private'), { mode: 0o700 });
		assert.throws(() => ensurePrivateFolder(tree.file('link')), /is a symlink/);
		// Ownership cannot be handed to another user without root; the check is told who "we" are instead.
		assert.throws(() => ensurePrivateFolder(tree.file('private'), { uid: (process.getuid?.() ?? 0) + 4242 }), /belongs to another user .*Remove it/);
	});

	it('tightens its own folder that others could only read (VS Code\'s storage made by older versions)', () => {
		const folder = tree.file('vscode-storage');
		fs.mkdirSync(folder);
		fs.chmodSync(folder, 0o755);
		ensurePrivateFolder(folder, { tighten: true });
		assert.equal(modeOf(folder), 0o700);
	});

	it('gives each set of workspace folders its own folder, whatever their order or the links to them', () => {
		fs.symlinkSync(tree.file('ws'), tree.file('wsLink'));
		const one = cliStorageDir([tree.file('ws'), tree.file('other')], '/base');
		assert.equal(cliStorageDir([tree.file('other'), tree.file('wsLink')], '/base'), one);
		assert.notEqual(cliStorageDir([tree.file('ws')], '/base'), one);
		assert.notEqual(cliStorageDir([tree.file('other')], '/base'), cliStorageDir([tree.file('ws')], '/base'));
		assert.match(path.basename(one), /^(ws|other)-[0-9a-f]{16}$/);
	});

	it('backups are private: folders 700, copies and manifest 600', async () => {
		fs.chmodSync(tree.file('ws/a.txt'), 0o644);
		const storage = tree.file('storage');
		const h = makeHarness(tree.file('ws'), { storageDir: storage, settings: { approval: 'never' } });
		await h.text('write_file', { path: 'a.txt', content: 'changed\n' });
		const backups = path.join(storage, 'backups');
		const [set] = fs.readdirSync(backups);
		assert.equal(modeOf(storage), 0o700);
		assert.equal(modeOf(backups), 0o700);
		assert.equal(modeOf(path.join(backups, set)), 0o700);
		for (const file of fs.readdirSync(path.join(backups, set))) assert.equal(modeOf(path.join(backups, set, file)), 0o600, file);
	});

	it('one workspace cannot read another\'s command logs (default storage); each reads its own', async () => {
		const envA = createNodeEnvironment({ roots: [tree.file('ws')], settings: { approval: 'never' } });
		const envB = createNodeEnvironment({ roots: [tree.file('other')], settings: { approval: 'never' } });
		try {
			assert.notEqual(envA.host.storageDir, envB.host.storageDir);
			assert.equal(modeOf(envA.host.storageDir), 0o700);
			assert.equal(modeOf(path.dirname(envA.host.storageDir)), 0o700);
			// Building the boundary makes each host's log folder, the one its command logs go to.
			await Promise.all([envA.boundary(), envB.boundary()]);
			const logA = path.join(envA.state.commandLogs.dir, 'a.stdout.log');
			const logB = path.join(envB.state.commandLogs.dir, 'b.stdout.log');
			fs.writeFileSync(logA, 'A secret\n');
			fs.writeFileSync(logB, 'B output\n');
			const [a, b] = [new ToolRegistry(ALL_TOOLS, envA), new ToolRegistry(ALL_TOOLS, envB)];
			const own = await b.invoke('read_file', { path: logB });
			assert.equal(own.error, undefined, own.error?.message);
			const other = await b.invoke('read_file', { path: logA });
			assert.equal(other.error?.code, 'outside_boundary', 'B read A\'s log');
			assert.equal((await a.invoke('read_file', { path: logA })).error, undefined);
		} finally {
			for (const env of [envA, envB]) fs.rmSync(env.host.storageDir, { recursive: true, force: true });
		}
	});

	it('the CLI refuses a --storage folder open to others, with what to do (exit 1, nothing written)', async () => {
		const storage = tree.file('shared-storage');
		fs.mkdirSync(storage);
		fs.chmodSync(storage, 0o777);
		let stderr = '';
		const write = process.stderr.write;
		const out = process.stdout.write;
		process.stderr.write = ((chunk: string) => { stderr += chunk; return true; }) as typeof process.stderr.write;
		process.stdout.write = (() => true) as typeof process.stdout.write;
		try {
			const code = await main(['run', 'write_file', '--root', tree.file('ws'), '--input', '{"path":"a.txt","content":"x"}', '--yes', '--storage', storage]);
			assert.equal(code, 1);
		} finally {
			process.stderr.write = write;
			process.stdout.write = out;
		}
		assert.match(stderr, /open to other users \(mode 777\)/);
		assert.equal(fs.readFileSync(tree.file('ws/a.txt'), 'utf8'), 'a\n');
		assert.deepEqual(fs.readdirSync(storage), []);
	});
});
