import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ALL_TOOLS, ToolRegistry } from '../../../src/tools';
import { createVscodeEnvironment } from '../../../src/vscode/environment';
import { createVscodeHost } from '../../../src/vscode/host';
import { prepare } from '../../../src/vscode/lmTools';
import { ChangeDiffs } from '../../../src/vscode/changeDiffs';
import { applyWithWorkspaceEdit } from '../../../src/vscode/mutation';
import { invokeText, waitFor, workspace } from '../helpers';

/** This test's own diff documents (the extension's instance serves the schemes in its window). */
const diffs = new ChangeDiffs();

/** Outside /tmp, which a sandboxed command sees replaced by a private one anyway. */
const OUTSIDE_PARENT = '/var/tmp';

/** Processes running `sleep <marker>` (an odd duration no one else sleeps for). */
function sleepers(marker: string): number[] {
	return fs.readdirSync('/proc').filter(entry => /^\d+$/.test(entry)).filter(entry => {
		try {
			return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8') === `sleep\0${marker}\0` && running(Number(entry));
		} catch {
			return false;
		}
	}).map(Number);
}

/** Sets toolbelt.<key> in the workspace for the length of `work`. */
async function withSetting<T>(key: string, value: unknown, work: () => Promise<T>): Promise<T> {
	const config = vscode.workspace.getConfiguration('toolbelt');
	await config.update(key, value, vscode.ConfigurationTarget.Workspace);
	try {
		return await work();
	} finally {
		await config.update(key, undefined, vscode.ConfigurationTarget.Workspace);
	}
}

/** Running, as opposed to gone or a zombie nobody reaps. */
function running(pid: number): boolean {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
		const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
		return state !== 'Z' && state !== 'X';
	} catch {
		return false;
	}
}

/** Whether any member of a process group is still running. */
function groupRunning(pgid: number): boolean {
	return fs.readdirSync('/proc').filter(entry => /^\d+$/.test(entry)).some(entry => {
		try {
			const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
			const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			return Number(pgrp) === pgid && state !== 'Z' && state !== 'X';
		} catch {
			return false;
		}
	});
}

/** exec_command as chat calls it; the id and pid come from the result's first line. */
async function startSession(input: object): Promise<{ id: number; pid: number; text: string }> {
	const text = await invokeText('toolbelt_exec_command', input);
	const match = /^Session (\d+): .* \((?:pty|pipes), pid (\d+)\)\./.exec(text);
	assert.ok(match, text);
	return { id: Number(match[1]), pid: Number(match[2]), text };
}


describe('commands and sessions inside VS Code', function () {
	this.timeout(30_000);
	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
	});

	it('runs a command through lm.invokeTool, in the workspace, with pagers off', async () => {
		const text = await invokeText('toolbelt_run_command', { command: 'echo "in $(pwd)"; echo "$PAGER $GIT_PAGER $TERM $NO_COLOR"; exit 4' });
		assert.match(text, /^Exit code 4 after [\d.]+ s\./);
		assert.ok(text.includes(`in ${workspace()}`), text);
		assert.match(text, /cat cat dumb 1/);
	});

	it('cuts big output, and read_file can page the log in the extension storage', async () => {
		const text = await invokeText('toolbelt_run_command', { command: 'seq 1 100000' });
		const log = /read all of it with read_file path="([^"]+)"/.exec(text)?.[1];
		assert.ok(log, text.slice(0, 500));
		const page = await invokeText('toolbelt_read_file', { path: log, offset: 77777, limit: 1 });
		assert.match(page, /77777\t77777/);
	});

	it('refuses a cwd outside the workspace without running anything', async () => {
		const text = await invokeText('toolbelt_run_command', { command: 'touch escaped.txt', cwd: '/tmp' });
		assert.match(text, /outside the workspace \(rule: outside_workspace\)/);
		assert.equal(fs.existsSync('/tmp/escaped.txt'), false);
	});

	it('mirrors a session in a terminal named after its command, which also takes the person\'s typing', async () => {
		const { id, text } = await startSession({ command: 'cat', yieldMs: 300 });
		assert.match(text, /Still running/);
		const terminal = await waitFor('the terminal', () => vscode.window.terminals.find(t => t.name === `Toolbelt #${id}: cat`), 10_000);
		const reply = await invokeText('toolbelt_write_stdin', { sessionId: id, chars: 'ping\n', yieldMs: 500 });
		assert.match(reply, /ping\nping/, 'the pty echoes the line and cat prints it');
		terminal.sendText('typed by a person');
		let seen = '';
		for (let i = 0; i < 20 && !seen.includes('typed by a person'); i++) {
			seen += await invokeText('toolbelt_write_stdin', { sessionId: id, yieldMs: 250 });
		}
		assert.match(seen, /typed by a person/);
		assert.match(await invokeText('toolbelt_kill_session', { sessionId: id }), /was stopped with every process it started/);
	});

	it('closing the terminal kills the session and its processes', async () => {
		const { id, pid } = await startSession({ command: 'sleep 1000 & sleep 1000', yieldMs: 200 });
		assert.ok(running(pid));
		const terminal = await waitFor('the terminal', () => vscode.window.terminals.find(t => t.name.startsWith(`Toolbelt #${id}:`)), 10_000);
		terminal.dispose();
		await waitFor('the session to stop', () => !groupRunning(pid), 10_000);
		const list = await invokeText('toolbelt_list_sessions', {});
		assert.match(list, new RegExp(`- ${id}: \`sleep 1000 & sleep 1000\`.*\\(terminal closed\\)`));
	});

	describe('the sandbox', () => {
		let outside: string;
		beforeEach(() => { outside = fs.mkdtempSync(path.join(OUTSIDE_PARENT, 'tb-it-outside-')); });
		afterEach(() => fs.rmSync(outside, { recursive: true, force: true }));

		it('a sandboxed command cannot write outside the workspace, and the result says why', async () => {
			fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep\n');
			const text = await invokeText('toolbelt_run_command', { command: `echo x > ${outside}/new.txt; echo y >> ${outside}/keep.txt; echo inside > sandbox-it.txt` });
			assert.equal(fs.existsSync(path.join(outside, 'new.txt')), false, text);
			assert.equal(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8'), 'keep\n');
			assert.equal(fs.readFileSync(path.join(workspace(), 'sandbox-it.txt'), 'utf8'), 'inside\n', 'the workspace stays writable');
			fs.rmSync(path.join(workspace(), 'sandbox-it.txt'));
			assert.match(text, /Read-only file system/);
			assert.match(text, /Sandbox: a write was blocked/);
		});

		it('a sandboxed command cannot read a path of toolbelt.sandbox.denyRead', async () => {
			fs.mkdirSync(path.join(outside, 'vault'));
			fs.writeFileSync(path.join(outside, 'vault', 'token'), 'SECRET-TOKEN');
			const text = await withSetting('sandbox.denyRead', [path.join(outside, 'vault')], () =>
				invokeText('toolbelt_run_command', { command: `cat ${outside}/vault/token` }));
			assert.doesNotMatch(text, /SECRET-TOKEN/);
			assert.match(text, /is hidden from commands \(toolbelt\.sandbox\.denyRead\)/);
		});

		it('its background children, setsid ones included, are gone when the call returns', async () => {
			const text = await invokeText('toolbelt_run_command', { command: 'setsid sleep 1004.1 & nohup sleep 1004.2 > /dev/null 2>&1 & echo started' });
			assert.match(text, /started/);
			assert.deepEqual([...sleepers('1004.1'), ...sleepers('1004.2')], []);
		});

		it('running outside it asks the person even under approval "never", and chat cannot have allowed it already', async () => {
			const input = { command: `echo out > ${outside}/escaped.txt`, sandbox: false, justification: 'needs to write next to the workspace' };
			await withSetting('approval', 'never', async () => {
				// Through chat's path: Toolbelt asks with its own modal, which extension-test mode refuses (a "no").
				const text = await invokeText('toolbelt_run_command', input);
				assert.match(text, /declined/i);
				assert.equal(fs.existsSync(path.join(outside, 'escaped.txt')), false);
				const subscriptions: vscode.Disposable[] = [];
				try {
					const host = createVscodeHost({ storageDir: path.join(workspace(), '..', 'commands-it-storage'), applyChanges: applyWithWorkspaceEdit, showDiffs: changes => diffs.show(changes) });
					const registry = new ToolRegistry(ALL_TOOLS, createVscodeEnvironment(host, subscriptions));
					const prepared = await prepare(registry, registry.get('run_command')!, input);
					assert.equal(prepared.confirmationMessages, undefined, 'no chat confirmation an allowance could skip');
					const asked: string[] = [];
					const result = await registry.invoke('run_command', input, { approval: 'preconfirmed', decide: async request => {
						asked.push(request.kind === 'command' ? request.unsandboxed?.justification ?? '' : '');
						return true;
					} });
					assert.deepEqual(asked, [input.justification]);
					assert.equal(result.metadata.sandbox, 'none');
					assert.equal(fs.readFileSync(path.join(outside, 'escaped.txt'), 'utf8'), 'out\n');
				} finally {
					for (const subscription of subscriptions) subscription.dispose();
				}
			});
		});
	});

	// Last: it stops the session machinery the way deactivation does.
	it('stops every session when the extension deactivates', async () => {
		const pty = await startSession({ command: 'sleep 1000', yieldMs: 0 });
		const pipes = await startSession({ command: 'sleep 1000', tty: false, yieldMs: 0 });
		// Only an unsandboxed command can leave a process group behind (in the sandbox it ends with the call).
		const background = await withSetting('sandbox.mode', 'off', () => invokeText('toolbelt_run_command', { command: 'sleep 1000 > /dev/null 2>&1 &' }));
		const group = Number(/process group (\d+)/.exec(background)?.[1]);
		const pids = [pty.pid, pipes.pid];
		assert.ok(pids.every(running) && groupRunning(group), background);
		await waitFor('both terminals', () => vscode.window.terminals.filter(t => /^Toolbelt #\d+: sleep 1000$/.test(t.name)).length >= 2, 10_000);
		// The very disposable VS Code disposes on deactivation (context.subscriptions), run on demand.
		await vscode.commands.executeCommand('toolbelt.test.stopSessionsAsOnDeactivate');
		assert.deepEqual(pids.filter(running), []);
		assert.equal(groupRunning(group), false, 'the background group left by run_command is gone too');
		assert.match(await invokeText('toolbelt_list_sessions', {}), /^0 of at most 16 sessions running/);
		await waitFor('the terminals to close', () => !vscode.window.terminals.some(t => /^Toolbelt #\d+: sleep 1000$/.test(t.name)), 10_000);
	});
});
