import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';

const workspace = () => process.env.TOOLBELT_TEST_WORKSPACE ?? vscode.workspace.workspaceFolders![0].uri.fsPath;

/** Calls a tool the way a chat participant does and returns its text. */
async function invoke(name: string, input: object): Promise<string> {
	const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
	return result.content.map(part => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
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
	const text = await invoke('toolbelt_exec_command', input);
	const match = /^Session (\d+): .* \((?:pty|pipes), pid (\d+)\)\./.exec(text);
	assert.ok(match, text);
	return { id: Number(match[1]), pid: Number(match[2]), text };
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, ms = 10_000): Promise<T> {
	const deadline = Date.now() + ms;
	for (;;) {
		const value = probe();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
		await new Promise(resolve => setTimeout(resolve, 50));
	}
}

describe('commands and sessions inside VS Code', function () {
	this.timeout(30_000);
	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
	});

	it('runs a command through lm.invokeTool, in the workspace, with pagers off', async () => {
		const text = await invoke('toolbelt_run_command', { command: 'echo "in $(pwd)"; echo "$PAGER $GIT_PAGER $TERM $NO_COLOR"; exit 4' });
		assert.match(text, /^Exit code 4 after [\d.]+ s\./);
		assert.ok(text.includes(`in ${workspace()}`), text);
		assert.match(text, /cat cat dumb 1/);
	});

	it('cuts big output, and read_file can page the log in the extension storage', async () => {
		const text = await invoke('toolbelt_run_command', { command: 'seq 1 100000' });
		const log = /read all of it with read_file path="([^"]+)"/.exec(text)?.[1];
		assert.ok(log, text.slice(0, 500));
		const page = await invoke('toolbelt_read_file', { path: log, offset: 77777, limit: 1 });
		assert.match(page, /77777\t77777/);
	});

	it('refuses a cwd outside the workspace without running anything', async () => {
		const text = await invoke('toolbelt_run_command', { command: 'touch escaped.txt', cwd: '/tmp' });
		assert.match(text, /outside the workspace \(rule: outside_workspace\)/);
		assert.equal(fs.existsSync('/tmp/escaped.txt'), false);
	});

	it('mirrors a session in a terminal named after its command, which also takes the person\'s typing', async () => {
		const { id, text } = await startSession({ command: 'cat', yieldMs: 300 });
		assert.match(text, /Still running/);
		const terminal = await waitFor('the terminal', () => vscode.window.terminals.find(t => t.name === `Toolbelt #${id}: cat`));
		const reply = await invoke('toolbelt_write_stdin', { sessionId: id, chars: 'ping\n', yieldMs: 500 });
		assert.match(reply, /ping\nping/, 'the pty echoes the line and cat prints it');
		terminal.sendText('typed by a person');
		let seen = '';
		for (let i = 0; i < 20 && !seen.includes('typed by a person'); i++) {
			seen += await invoke('toolbelt_write_stdin', { sessionId: id, yieldMs: 250 });
		}
		assert.match(seen, /typed by a person/);
		assert.match(await invoke('toolbelt_kill_session', { sessionId: id }), /was stopped with every process it started/);
	});

	it('closing the terminal kills the session and its processes', async () => {
		const { id, pid } = await startSession({ command: 'sleep 1000 & sleep 1000', yieldMs: 200 });
		assert.ok(running(pid));
		const terminal = await waitFor('the terminal', () => vscode.window.terminals.find(t => t.name.startsWith(`Toolbelt #${id}:`)));
		terminal.dispose();
		await waitFor('the session to stop', () => !groupRunning(pid));
		const list = await invoke('toolbelt_list_sessions', {});
		assert.match(list, new RegExp(`- ${id}: \`sleep 1000 & sleep 1000\`.*\\(terminal closed\\)`));
	});

	// Last: it stops the session machinery the way deactivation does.
	it('stops every session when the extension deactivates', async () => {
		const pty = await startSession({ command: 'sleep 1000', yieldMs: 0 });
		const pipes = await startSession({ command: 'sleep 1000', tty: false, yieldMs: 0 });
		const background = await invoke('toolbelt_run_command', { command: 'sleep 1000 > /dev/null 2>&1 &' });
		const group = Number(/process group (\d+)/.exec(background)?.[1]);
		const pids = [pty.pid, pipes.pid];
		assert.ok(pids.every(running) && groupRunning(group), background);
		await waitFor('both terminals', () => vscode.window.terminals.filter(t => /^Toolbelt #\d+: sleep 1000$/.test(t.name)).length >= 2);
		// The very disposable VS Code disposes on deactivation (context.subscriptions), run on demand.
		await vscode.commands.executeCommand('toolbelt.test.stopSessionsAsOnDeactivate');
		assert.deepEqual(pids.filter(running), []);
		assert.equal(groupRunning(group), false, 'the background group left by run_command is gone too');
		assert.match(await invoke('toolbelt_list_sessions', {}), /^0 of at most 16 sessions running/);
		await waitFor('the terminals to close', () => !vscode.window.terminals.some(t => /^Toolbelt #\d+: sleep 1000$/.test(t.name)));
	});
});
