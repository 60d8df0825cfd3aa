import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { main } from '../../src/cli/main';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { cliStorageDir } from '../../src/core/files/storage';
import { ALL_TOOLS, ToolRegistry } from '../../src/tools';
import { commandLineRuns, makeTree, stopProcessesIn, withDeadline } from './helpers';

/** Runs the CLI in-process and captures what it prints. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
	let stdout = '';
	let stderr = '';
	const out = process.stdout.write;
	const err = process.stderr.write;
	// As in CI, whoever runs the tests: no terminal to put a question to.
	const tty = process.stdin.isTTY;
	process.stdin.isTTY = false;
	process.stdout.write = ((chunk: string) => { stdout += chunk; return true; }) as typeof process.stdout.write;
	process.stderr.write = ((chunk: string) => { stderr += chunk; return true; }) as typeof process.stderr.write;
	try {
		const code = await main(args);
		return { code, stdout, stderr };
	} finally {
		process.stdout.write = out;
		process.stderr.write = err;
		process.stdin.isTTY = tty;
	}
}

describe('CLI', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'alpha\nbeta\n', 'input.json': '{"path":"a.txt","offset":2}' }); });
	afterEach(() => {
		// Runs without --storage keep backups and logs where a person's would be: that folder is this test's to remove.
		fs.rmSync(cliStorageDir([tree.root]), { recursive: true, force: true });
		tree.cleanup();
	});

	it('lists every tool with its schema', async () => {
		const { code, stdout } = await cli(['list']);
		assert.equal(code, 0);
		const tools = JSON.parse(stdout);
		const read = tools.find((tool: any) => tool.name === 'read_file');
		assert.equal(read.mutating, false);
		assert.equal(read.inputSchema.properties.path.type, 'string');
	});

	it('lists the built-in tools from their descriptions alone where no folder defines custom tools, as the registry does', async () => {
		const { code, stdout } = await cli(['list', '--root', tree.root]);
		assert.equal(code, 0);
		const registry = new ToolRegistry(ALL_TOOLS, createNodeEnvironment({ roots: [tree.root], storageDir: tree.file('.storage') }));
		assert.deepEqual(JSON.parse(stdout), JSON.parse(JSON.stringify(registry.listDefinitions())));
		// Listing needs no storage: nothing is made for this workspace.
		assert.equal(fs.existsSync(cliStorageDir([tree.root])), false);
	});

	it('lists and runs the custom tools of --root, and tells each broken definition on stderr', async () => {
		const definition = (name: string, execute: string) => JSON.stringify({ name, description: 'Echo.', inputSchema: { type: 'object', properties: {} }, execute, mutating: false });
		fs.mkdirSync(tree.file('.toolbelt/tools'), { recursive: true });
		fs.writeFileSync(tree.file('.toolbelt/tools/echo.json'), definition('echo_input', 'echo.sh'));
		fs.writeFileSync(tree.file('.toolbelt/tools/broken.json'), definition('broken', 'missing.sh'));
		fs.writeFileSync(tree.file('.toolbelt/tools/echo.sh'), '#!/bin/sh\ncat\n', { mode: 0o755 });
		const listed = await cli(['list', '--root', tree.root]);
		assert.equal(listed.code, 0);
		const custom = JSON.parse(listed.stdout).filter((tool: any) => tool.custom);
		assert.deepEqual(custom.map((tool: any) => tool.name), ['echo_input']);
		assert.equal(listed.stderr, 'toolbelt: custom tool not offered: .toolbelt/tools/broken.json: execute: "missing.sh" does not exist (looked for .toolbelt/tools/missing.sh); create the script or fix the path\n');
		const ran = await cli(['run', 'echo_input', '--root', tree.root, '--input', '{}']);
		assert.equal(ran.code, 0, ran.stdout);
		assert.equal(JSON.parse(ran.stdout).content[0].text, '{}');
	});

	it('runs a tool and prints content, metadata and error as JSON', async () => {
		const { code, stdout } = await cli(['run', 'read_file', '--root', tree.root, '--input', '{"path":"a.txt"}']);
		assert.equal(code, 0);
		const result = JSON.parse(stdout);
		assert.equal(result.content[0].text, 'a.txt: lines 1–2 of 2\n1\talpha\n2\tbeta');
		assert.equal(result.metadata.totalLines, 2);
		assert.equal(result.error, null);
	});

	it('reads the input from a file with @', async () => {
		const { code, stdout } = await cli(['run', 'read_file', '--root', tree.root, '--input', `@${tree.file('input.json')}`]);
		assert.equal(code, 0);
		assert.match(JSON.parse(stdout).content[0].text, /2\tbeta$/);
	});

	it('exits 1 with the error when the tool fails', async () => {
		const { code, stdout } = await cli(['run', 'read_file', '--root', tree.root, '--input', '{"path":"../etc/passwd"}']);
		assert.equal(code, 1);
		assert.equal(JSON.parse(stdout).error.code, 'outside_boundary');
	});

	it('exits 2 on bad usage, saying what was wrong', async () => {
		const cases: [string[], RegExp][] = [
			[[], /No command given/],
			[['frobnicate'], /Unknown command "frobnicate"/],
			[['run'], /run needs a tool name/],
			[['run', 'read_file', '--root', tree.root], /needs --input/],
			[['run', 'read_file', '--input', '{nope'], /--input is not valid JSON/],
			[['run', 'read_file', '--input', '@/no/such/file.json'], /Cannot read \/no\/such\/file\.json/],
			[['run', 'read_file', '--input', '{}', '--bogus'], /Unknown option --bogus/],
			[['run', 'read_file', '--input', '{}', '--root', '/no/such/dir'], /does not exist/],
		];
		for (const [args, message] of cases) {
			const { code, stderr } = await cli(args);
			assert.equal(code, 2, args.join(' '));
			assert.match(stderr, message);
			assert.match(stderr, /Usage:/);
		}
	});

	it('refuses a change when there is no terminal to ask, and makes it with --yes', async () => {
		const input = JSON.stringify({ path: 'a.txt', content: 'changed\n' });
		const refused = await cli(['run', 'write_file', '--root', tree.root, '--input', input]);
		assert.equal(refused.code, 1);
		const { error } = JSON.parse(refused.stdout);
		assert.equal(error.code, 'declined');
		// No one was asked: the result must not say a user declined, and says what would allow it.
		assert.doesNotMatch(error.message, /user declined/i);
		assert.match(error.message, /^Refused to .*a\.txt: it needs a person's confirmation, and there is no terminal to ask on\. Nothing was changed\. .*--yes/);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'alpha\nbeta\n', 'nothing written');
		// Its backup goes to the tree, not the shared folder other CLI runs use.
		const approved = await cli(['run', 'write_file', '--root', tree.root, '--input', input, '--yes', '--storage', tree.file('.storage')]);
		assert.equal(approved.code, 0, approved.stdout);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'changed\n');
	});

	it('merges partial --settings into the defaults and refuses invalid ones', async () => {
		const { code, stdout } = await cli(['run', 'read_file', '--root', tree.root, '--input', '{"path":"a.txt"}', '--settings', '{"limits":{"readLines":1}}']);
		assert.equal(code, 0);
		const result = JSON.parse(stdout);
		assert.equal(result.content[0].text, 'a.txt: lines 1–1 of 2\n1\talpha\n[… 1 line omitted; use offset=2 to continue …]', 'the other limits keep their defaults');
		for (const [settings, named] of [['{"approval":"sometimes"}', 'approval'], ['{"limits":{"readLines":-5}}', 'limits.readLines'], ['{"colour":"red"}', 'colour'], ['[1]', 'JSON object']]) {
			const bad = await cli(['run', 'read_file', '--root', tree.root, '--input', '{"path":"a.txt"}', '--settings', settings]);
			assert.equal(bad.code, 2, settings);
			assert.ok(bad.stderr.includes(named), `${settings}: ${bad.stderr}`);
		}
	});

	it('prunes backups beyond the settings\' limits after a change, keeping the new one', async () => {
		const storage = tree.file('.storage');
		const backups = path.join(storage, 'backups');
		// Storage must be private (a folder found open to others is refused).
		fs.mkdirSync(storage, { mode: 0o700 });
		const HOUR = 60 * 60 * 1000;
		/** A backup set as commitPlan leaves it, `ageMs` old, holding `bytes` of copies. */
		const oldSet = (id: string, ageMs: number, bytes: number) => {
			fs.mkdirSync(path.join(backups, id), { recursive: true });
			fs.writeFileSync(path.join(backups, id, '0-a.txt'), Buffer.alloc(bytes));
			fs.writeFileSync(path.join(backups, id, 'manifest.json'), JSON.stringify({ id, title: 'old', createdAt: Date.now() - ageMs, files: [] }));
		};
		oldSet('three-days-old', 72 * HOUR, 10);
		oldSet('an-hour-old-2mb', HOUR, 2 * 1024 * 1024);
		// Both fit the defaults (14 days, 256 MB); these limits leave no room for either.
		const settings = JSON.stringify({ backups: { maxAgeDays: 1, maxTotalMB: 1 } });
		const common = ['--root', tree.root, '--storage', storage, '--settings', settings];

		const read = await cli(['run', 'read_file', '--input', '{"path":"a.txt"}', ...common]);
		assert.equal(read.code, 0, read.stderr);
		assert.deepEqual(fs.readdirSync(backups).sort(), ['an-hour-old-2mb', 'three-days-old'], 'a call that changes nothing prunes nothing');

		const write = await cli(['run', 'write_file', '--input', JSON.stringify({ path: 'a.txt', content: 'changed\n' }), '--yes', ...common]);
		assert.equal(write.code, 0, write.stdout);
		const left = fs.readdirSync(backups);
		assert.equal(left.length, 1, `only the new set stays: ${left.join(', ')}`);
		assert.equal(fs.readFileSync(path.join(backups, left[0]!, '0-a.txt'), 'utf8'), 'alpha\nbeta\n', 'the new set holds the original');
	});

	it('a reader that stops early (| head -1) is no crash: the exit code stays the call\'s, stderr stays quiet', async () => {
		// More than a pipe holds (64 KiB): the rest is written after the reader has gone.
		const input = JSON.stringify({ command: 'seq 1 200000' });
		// Through a real pipe to head, as a person would type it (Node's own stdio pipes are sockets that hold more); bash hands back the CLI's exit code.
		const cli = [process.execPath, path.join(__dirname, '../../src/cli/main.js'), 'run', 'run_command', '--root', tree.root, '--storage', tree.file('.storage'), '--yes', '--input', input];
		const child = spawn('bash', ['-c', '"$@" | head -1 >/dev/null; exit ${PIPESTATUS[0]}', 'bash', ...cli]);
		let stderr = '';
		child.stderr.on('data', chunk => { stderr += chunk; });
		const code = await withDeadline(new Promise<number | null>(resolve => child.once('close', resolve)), 15_000, 'the CLI did not end').finally(() => child.kill('SIGKILL'));
		assert.equal(stderr, '');
		assert.equal(code, 0);
	});

	for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
		it(`${signal} (a terminal closed, a job runner stopping) cancels the call: its command ends, the result says cancelled`, async () => {
			// Unsandboxed: bwrap would end the command with the CLI anyway. The odd duration names this very process.
			const command = `sleep 31.${signal === 'SIGTERM' ? 7171 : 7272}`;
			const settings = JSON.stringify({ sandbox: { mode: 'off' } });
			const child = spawn(process.execPath, [path.join(__dirname, '../../src/cli/main.js'), 'run', 'run_command', '--root', tree.root, '--storage', tree.file('.storage'), '--settings', settings, '--yes', '--input', JSON.stringify({ command })]);
			let stdout = '';
			child.stdout.on('data', chunk => { stdout += chunk; });
			const closed = new Promise<number | null>(resolve => child.once('close', resolve));
			try {
				await until(() => commandLineRuns(command), 10_000);
				child.kill(signal);
				const code = await withDeadline(closed, 10_000, 'the CLI did not end');
				assert.equal(commandLineRuns(command), false, 'the command outlived the CLI');
				assert.equal(code, 1);
				assert.equal(JSON.parse(stdout).error.code, 'cancelled');
			} finally {
				child.kill('SIGKILL');
				stopProcessesIn(tree.root);
			}
		});
	}

	it('an env entry too long for the system is the input\'s fault, said before anything runs', async () => {
		// Linux refuses any one variable of 128 KiB or more (E2BIG), as it does an argument.
		const input = JSON.stringify({ command: 'touch ran', env: [`LONG=${'x'.repeat(200_000)}`] });
		const result = await cli(['run', 'run_command', '--input', input, '--root', tree.root, '--storage', tree.file('.storage'), '--yes']);
		assert.equal(result.code, 1);
		const { error } = JSON.parse(result.stdout);
		assert.equal(error.code, 'invalid_input', error.message);
		assert.match(error.message, /^The env entry LONG is 195 KB; the system takes variables up to 128 KB\. /);
		assert.equal(fs.existsSync(tree.file('ran')), false);
		// Just under the limit, it is passed on.
		const fits = JSON.stringify({ command: 'printf %s "$LONG" | wc -c', env: [`LONG=${'x'.repeat(128 * 1024 - 6)}`] });
		const passed = await cli(['run', 'run_command', '--input', fits, '--root', tree.root, '--storage', tree.file('.storage'), '--yes']);
		assert.equal(passed.code, 0, passed.stdout);
		assert.match(JSON.parse(passed.stdout).content[0].text, /\b131066\b/);
	});

	it('leaves files alone when reading', async () => {
		await cli(['run', 'read_file', '--root', tree.root, '--input', '{"path":"a.txt"}']);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'alpha\nbeta\n');
	});
});

async function until(condition: () => boolean, ms: number): Promise<void> {
	const end = Date.now() + ms;
	while (!condition()) {
		if (Date.now() > end) throw new Error(`Condition not met within ${ms} ms.`);
		await new Promise(resolve => setTimeout(resolve, 50));
	}
}
