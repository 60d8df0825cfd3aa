import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTree, testStorageDir } from './helpers';

const CLI = path.join(__dirname, '..', '..', 'src', 'cli', 'main.js');
const NOBODY = 65534;

/**
 * Permissions do not stop root, and the tests may run as root: these run the CLI as an
 * unprivileged user (uid 65534) when they can, so unreadable and read-only files are real.
 */
describe('unreadable and read-only files (as an unprivileged user)', function () {
	let tree: ReturnType<typeof makeTree>;
	let storage: string;
	const asNobody = (tool: string, input: object) => {
		const run = spawnSync(process.execPath, [CLI, 'run', tool, '--root', tree.root, '--input', JSON.stringify(input), '--yes', '--storage', storage], { uid: NOBODY, gid: NOBODY, encoding: 'utf8' });
		return JSON.parse(run.stdout) as { content: { text: string }[]; error?: { code: string; message: string } };
	};
	const text = (result: { content: { text: string }[] }) => result.content.map(part => part.text).join('\n');

	before(function () {
		if (process.platform === 'win32' || process.getuid?.() !== 0) this.skip();
		// The CLI must be reachable for that user: not so in a private folder (a 0700 home, Stryker's sandbox).
		const probe = spawnSync(process.execPath, ['-e', `require('fs').accessSync(${JSON.stringify(CLI)}, require('fs').constants.R_OK)`], { uid: NOBODY, gid: NOBODY });
		if (probe.status !== 0) this.skip();
		// That user's own private storage, not the default one in the temp folder.
		storage = testStorageDir();
		fs.chownSync(storage, NOBODY, NOBODY);
	});

	beforeEach(() => {
		tree = makeTree({ 'ok.txt': 'needle here\n', 'secret.txt': 'needle secret\n', 'ro.txt': 'read only\n', 'locked/inner.txt': 'needle inner\n' });
		fs.chmodSync(tree.root, 0o777);
		fs.chmodSync(tree.file('ok.txt'), 0o666);
		fs.chmodSync(tree.file('secret.txt'), 0o000);
		fs.chmodSync(tree.file('ro.txt'), 0o444);
		fs.chmodSync(tree.file('locked'), 0o000);
	});
	afterEach(() => {
		fs.chmodSync(tree.file('locked'), 0o755);
		tree.cleanup();
	});

	it('edit_file and write_file say permission denied and change nothing', () => {
		const edit = asNobody('edit_file', { path: 'secret.txt', edits: [{ oldText: 'needle', newText: 'x' }] });
		assert.equal(edit.error?.code, 'io');
		assert.match(edit.error!.message, /Permission denied for secret\.txt/);
		const write = asNobody('write_file', { path: 'ro.txt', content: 'changed\n' });
		assert.equal(write.error?.code, 'io');
		assert.match(write.error!.message, /Permission denied: ro\.txt is read-only for this user/);
		assert.equal(fs.readFileSync(tree.file('ro.txt'), 'utf8'), 'read only\n');
		assert.deepEqual(fs.readdirSync(tree.root).filter(name => name.endsWith('.tmp')), []);
		// A readable, writable file next to them still works.
		assert.ok(!asNobody('edit_file', { path: 'ok.txt', edits: [{ oldText: 'here', newText: 'there' }] }).error);
		assert.equal(fs.readFileSync(tree.file('ok.txt'), 'utf8'), 'needle there\n');
	});

	it('grep and find_files report what they could not read and return the rest', () => {
		const grep = asNobody('grep', { pattern: 'needle' });
		assert.ok(!grep.error);
		assert.match(text(grep), /^1 matching line in 1 file/);
		assert.match(text(grep), /ok\.txt:1: needle here/);
		assert.match(text(grep), /some files could not be searched: .*(secret\.txt|locked)/);
		const found = asNobody('find_files', { pattern: '*.txt' });
		assert.match(text(found), /ok\.txt/);
		assert.match(text(found), /some folders could not be read: .*locked/);
	});

	it('list_dir shows an unreadable folder and says it could not read it', () => {
		const listed = asNobody('list_dir', { depth: 2 });
		assert.ok(!listed.error);
		assert.match(text(listed), /^locked\/$/m);
		assert.match(text(listed), /\(could not read: locked\)/);
		assert.equal(asNobody('list_dir', { path: 'locked' }).error?.code, 'io');
	});
});
