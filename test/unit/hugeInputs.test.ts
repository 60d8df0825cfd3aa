import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { MAX_COMMAND_BYTES, posixInvocation } from '../../src/core/commands/process';
import { makeHarness, makeTree } from './helpers';

/**
 * Inputs over what the system passes to a program: Linux refuses an argument of 128 KiB or more
 * (E2BIG), and a heredoc writing a big file is a command that long. Before, run_command and
 * exec_command failed with "spawn E2BIG ... a fault in the tool, try again", and grep/find_files
 * the same way for a huge pattern.
 */
describe('inputs longer than one program argument', function () {
	this.timeout(20_000);
	const HEREDOC = `cat > big.txt <<'EOF'\n${`${'z'.repeat(99)}\n`.repeat(3000)}EOF\nwc -c < big.txt`;
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => {
		tree = makeTree({ 'a.txt': 'alpha\n' });
	});
	afterEach(() => tree.cleanup());

	it('a long command runs as the same shell script: $0, $#, line numbers and pipefail as with -c', () => {
		const shell = { file: '/bin/bash', pipefail: true };
		const script = (padding: string) => `#${padding}\necho "$0 $# $LINENO"; false | true; echo "pipefail $?"; nosuchcommand`;
		const short = posixInvocation(shell, script(''));
		const long = posixInvocation(shell, script('c'.repeat(200_000)));
		assert.ok(long.args.length > short.args.length, 'the long one goes in pieces');
		assert.ok(long.args.every(arg => Buffer.byteLength(arg) < 128 * 1024));
		const outcomes = [short, long].map(invocation => spawnSync(invocation.file, invocation.args, { encoding: 'utf8' }));
		assert.equal(outcomes[0].stdout, '/bin/bash 0 2\npipefail 1\n');
		assert.equal(outcomes[1].stdout, outcomes[0].stdout);
		assert.equal(outcomes[1].stderr, outcomes[0].stderr);
		assert.match(outcomes[1].stderr, /line 2: nosuchcommand/);
	});

	it('a command of exactly MAX_COMMAND_BYTES goes in pieces; one byte more is refused', () => {
		const shell = { file: '/bin/bash', pipefail: true };
		const command = `#${'x'.repeat(MAX_COMMAND_BYTES - 1)}`;
		const atLimit = posixInvocation(shell, command);
		// --norc -o pipefail -c <join> $0, then the pieces.
		assert.equal(atLimit.args.slice(6).join(''), command);
		assert.throws(() => posixInvocation(shell, `#${'x'.repeat(MAX_COMMAND_BYTES)}`), /commands up to 1 MB can be started/);
	});

	it('a piece never ends between the halves of a surrogate pair', () => {
		const prefix = "printf %s '";
		// The first piece would end after the high half of the first emoji (pieces are 32 Ki units).
		const text = `${'é'.repeat(32 * 1024 - prefix.length - 1)}${'😀'.repeat(40_000)}`;
		const invocation = posixInvocation({ file: '/bin/bash', pipefail: true }, `${prefix}${text}'`);
		const printed = spawnSync(invocation.file, invocation.args, { encoding: 'utf8' }).stdout;
		assert.equal(printed, text);
	});

	it('a long command ending in a lone high surrogate (JSON allows "\\ud800") still goes in pieces, whole', () => {
		const command = `#${'x'.repeat(40_000)}\ud800`;
		const invocation = posixInvocation({ file: '/bin/bash', pipefail: true }, command);
		assert.equal(invocation.args.slice(6).join(''), command);
	});

	it('run_command runs a 300 KB heredoc, and exec_command a 300 KB command', async () => {
		const harness = makeHarness(tree.root);
		const ran = await harness.text('run_command', { command: HEREDOC });
		assert.match(ran, /Exit code 0/);
		assert.match(ran, /^300000$/m);
		assert.equal(fs.statSync(tree.file('big.txt')).size, 300_000);
		for (const tty of [false, true]) {
			const session = await harness.text('exec_command', { command: `echo ${'q'.repeat(300_000)} | wc -c`, tty, yieldMs: 5_000 });
			assert.match(session, /300001/, `tty ${tty}`);
		}
	});

	it('a command over MAX_COMMAND_BYTES is refused with what to do, and nothing runs', async () => {
		const marker = tree.file('ran');
		const error = await makeHarness(tree.root).error('run_command', { command: `touch ${marker}\n#${'x'.repeat(MAX_COMMAND_BYTES)}` });
		assert.equal(error.code, 'invalid_input');
		assert.match(error.message, /The command is 1(\.0)? MB; commands up to 1 MB can be started\. Write the long part to a file with write_file/);
		assert.equal(fs.existsSync(marker), false);
	});

	it('grep and find_files refuse a 200 KB pattern as bad input, not as a fault of the tool', async () => {
		const harness = makeHarness(tree.root);
		for (const [tool, input] of [['grep', { pattern: 'a'.repeat(200_000) }], ['find_files', { pattern: 'a'.repeat(200_000) }], ['grep', { pattern: 'alpha', glob: 'g'.repeat(200_000) }]] as const) {
			const error = await harness.error(tool, input);
			assert.equal(error.code, 'invalid_input', tool);
			assert.match(error.message, /too long for the system to pass to ripgrep.*Shorten them/, tool);
		}
	});
});

describe('a storage folder that cannot be written', () => {
	let tree: ReturnType<typeof makeTree>;
	let storage: string;
	beforeEach(() => {
		tree = makeTree({ 'ws/a.txt': 'hello\n' });
		// Files where its folders for command logs and backups go: as on a full or read-only disk, they cannot be made.
		storage = tree.file('storage');
		fs.mkdirSync(storage, { mode: 0o700 });
		for (const name of ['commands', 'backups']) fs.writeFileSync(`${storage}/${name}`, 'not a folder');
	});
	afterEach(() => tree.cleanup());

	it('refuses run_command with why, before anything runs, and edits change nothing', async () => {
		const harness = makeHarness(tree.file('ws'), { storageDir: storage });
		const marker = tree.file('ws/ran');
		const error = await harness.error('run_command', { command: `touch ${marker}` });
		assert.match(error.message, /^The command was not run: the folder for its output log, .*storage\/commands.*, could not be made \((ENOTDIR|EEXIST).*Toolbelt's storage folder must be writable/);
		assert.equal(fs.existsSync(marker), false);
		const edit = await harness.error('edit_file', { path: 'a.txt', edits: [{ oldText: 'hello', newText: 'bye' }] });
		assert.match(edit.message, /Could not back up the original files before changing them .*Nothing was changed\./);
		assert.equal(fs.readFileSync(tree.file('ws/a.txt'), 'utf8'), 'hello\n');
	});
});
