import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResult, ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { main } from '../../src/cli/main';
import { commandLineRuns, makeTree, stopProcessesIn, withDeadline } from './helpers';

/** The compiled CLI beside this compiled test: `npm run test:unit` builds both, no bundle needed. */
const CLI = path.join(__dirname, '../../src/cli/main.js');

interface Connection {
	client: Client;
	/** The message the last elicitation showed. */
	asked: string[];
	/** Elicitations the server withdrew (cancelled) before they were answered. */
	withdrawn: string[];
	/** What the server wrote on stderr so far. */
	stderr(): string;
	/** The server's process id. */
	pid: number;
}

/**
 * Starts `toolbelt mcp` on a folder and connects the SDK client, answering elicitations with
 * `answer` when given (`never`: the person never answers; the dialog stays until the server withdraws it).
 */
async function connect(root: string, args: string[] = [], answer?: 'accept' | 'decline' | 'never'): Promise<Connection> {
	const asked: string[] = [];
	const withdrawn: string[] = [];
	const client = new Client({ name: 'test', version: '1' }, { capabilities: answer ? { elicitation: {} } : {} });
	if (answer) {
		client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
			asked.push(request.params.message);
			if (answer === 'never') {
				await new Promise(resolve => extra.signal.addEventListener('abort', resolve, { once: true }));
				withdrawn.push(request.params.message);
				return { action: 'cancel' as const };
			}
			return { action: answer, ...(answer === 'accept' ? { content: {} } : {}) };
		});
	}
	const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--root', root, ...args], stderr: 'pipe' });
	let stderr = '';
	transport.stderr?.on('data', chunk => { stderr += chunk; });
	await client.connect(transport);
	return { client, asked, withdrawn, stderr: () => stderr, pid: transport.pid! };
}

function text(result: unknown): string {
	return (result as CallToolResult).content.map(part => (part.type === 'text' ? part.text : '')).join('');
}

describe('MCP server (stdio, official SDK client)', function () {
	this.timeout(20000);
	let tree: ReturnType<typeof makeTree>;
	let connection: Connection | undefined;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'alpha\nbeta\n' }); });
	afterEach(async () => {
		await connection?.client.close();
		connection = undefined;
		tree.cleanup();
	});

	it('refuses an unknown --approval before serving', async () => {
		const write = process.stderr.write;
		let stderr = '';
		process.stderr.write = ((chunk: string) => { stderr += chunk; return true; }) as typeof process.stderr.write;
		try {
			assert.equal(await main(['mcp', '--approval', 'sometimes']), 2);
		} finally {
			process.stderr.write = write;
		}
		assert.match(stderr, /--approval must be one of never, edits, mutating, always/);
	});

	it('lists the tools that work outside VS Code, with annotations', async () => {
		connection = await connect(tree.root);
		const { tools } = await connection.client.listTools();
		const byName = new Map(tools.map(tool => [tool.name, tool]));
		assert.equal(byName.get('read_file')?.annotations?.readOnlyHint, true);
		assert.equal(byName.get('read_file')?.inputSchema.type, 'object');
		assert.equal(byName.get('write_file')?.annotations?.destructiveHint, true);
		// Sandboxed with the network off (the defaults, bwrap here), a command reaches nothing outside.
		assert.equal(byName.get('run_command')?.annotations?.openWorldHint, false);
		assert.equal(byName.has('go_to_definition'), false, 'tools that need VS Code are not offered');
	});

	it('marks commands open-world when they may reach the network or run unsandboxed', async () => {
		for (const sandbox of [{ network: 'on' }, { mode: 'off' }]) {
			connection = await connect(tree.root, ['--settings', JSON.stringify({ sandbox })]);
			const { tools } = await connection.client.listTools();
			assert.equal(tools.find(tool => tool.name === 'run_command')?.annotations?.openWorldHint, true, JSON.stringify(sandbox));
			assert.equal(tools.find(tool => tool.name === 'read_file')?.annotations?.openWorldHint, false);
			await connection.client.close();
			connection = undefined;
		}
	});

	it('reads a file, refuses an escape with our message, and names the invalid field', async () => {
		connection = await connect(tree.root);
		const read = await connection.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
		assert.equal(read.isError, undefined);
		assert.match(text(read), /alpha/);
		const escape = await connection.client.callTool({ name: 'read_file', arguments: { path: '../x' } });
		assert.equal(escape.isError, true);
		assert.match(text(escape), /leaves the workspace/);
		const invalid = await connection.client.callTool({ name: 'read_file', arguments: { path: 'a.txt', offset: 'two' } });
		assert.equal(invalid.isError, true);
		assert.match(text(invalid), /offset/);
	});

	it('a workspace folder that does not exist is an error result, not a crash', async () => {
		connection = await connect(path.join(tree.root, 'missing'));
		const result = await connection.client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
		assert.equal(result.isError, true);
		assert.match(text(result), /missing does not exist/);
	});

	it('a declined elicitation changes nothing; an accepted one writes', async () => {
		connection = await connect(tree.root, [], 'decline');
		const declined = await connection.client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'changed\n' } });
		assert.equal(declined.isError, true);
		assert.match(text(declined), /declined/i);
		assert.match(connection.asked[0], /changed/, 'the person saw the diff');
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'alpha\nbeta\n');
		await connection.client.close();

		connection = await connect(tree.root, [], 'accept');
		const accepted = await connection.client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'changed\n' } });
		assert.equal(accepted.isError, undefined, text(accepted));
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'changed\n');
	});

	it('a call cancelled while its elicitation is open withdraws the question, and writes nothing', async () => {
		connection = await connect(tree.root, [], 'never');
		const controller = new AbortController();
		const call = connection.client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'changed\n' } }, undefined, { signal: controller.signal });
		const asked = connection.asked;
		const deadline = Date.now() + 10_000;
		while (asked.length === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10));
		assert.equal(asked.length, 1, 'the person was never asked');
		controller.abort();
		await assert.rejects(call);
		const withdrawn = connection.withdrawn;
		while (withdrawn.length === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10));
		assert.deepEqual(withdrawn, asked, 'the dialog stayed open after its call was cancelled');
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'alpha\nbeta\n');
	});

	it('without elicitation, the default approval refuses a write and says how to allow it', async () => {
		connection = await connect(tree.root);
		const refused = await connection.client.callTool({ name: 'write_file', arguments: { path: 'new.txt', content: 'x' } });
		assert.equal(refused.isError, true);
		assert.match(text(refused), /--approval never/);
		assert.equal(fs.existsSync(tree.file('new.txt')), false);
	});

	it('tells a caller that asks for progress when a call starts', async () => {
		connection = await connect(tree.root, ['--approval', 'never']);
		const messages: string[] = [];
		// A call that lasts a moment: a read_file's result could arrive in the same read as 'started',
		// and then the client dropped 'started' too (once in 12 runs here, load average 8 on 2 cores).
		await connection.client.callTool({ name: 'run_command', arguments: { command: 'sleep 0.3' } }, undefined, { onprogress: progress => messages.push(progress.message ?? '') });
		// 'finished' is sent before the result, but the SDK client handles notifications a tick later
		// than responses and may drop it once the result is in: only 'started' is certain.
		assert.equal(messages[0], 'started');
		assert.ok(messages.every(message => /^(started|running \d+ s|finished)$/.test(message)), messages.join());
	});

	it('a protected path is refused without elicitation, even with --approval never', async () => {
		connection = await connect(tree.root, ['--approval', 'never']);
		const refused = await connection.client.callTool({ name: 'write_file', arguments: { path: '.vscode/settings.json', content: '{}' } });
		assert.equal(refused.isError, true);
		assert.match(text(refused), /protected path/);
		assert.equal(fs.existsSync(tree.file('.vscode/settings.json')), false);
	});

	it('cancelling a long command ends the call and the process', async () => {
		connection = await connect(tree.root, ['--approval', 'never']);
		// An odd duration names this very process among whatever else runs.
		const command = 'sleep 30.4242';
		const controller = new AbortController();
		const call = connection.client.callTool({ name: 'run_command', arguments: { command } }, undefined, { signal: controller.signal });
		await waitFor(() => commandLineRuns(command), 10000);
		const cancelledAt = Date.now();
		controller.abort();
		await assert.rejects(call);
		await waitFor(() => !commandLineRuns(command), 5000);
		assert.ok(Date.now() - cancelledAt < 5000);
	});

	it('a client that goes away mid-call (stdin closed) leaves no unsandboxed command running', async () => {
		// Unsandboxed: bwrap's --die-with-parent would end it with the server anyway.
		connection = await connect(tree.root, ['--approval', 'never', '--settings', '{"sandbox":{"mode":"off"}}']);
		const command = 'sleep 30.5151';
		const call = connection.client.callTool({ name: 'run_command', arguments: { command } }).catch(() => undefined);
		try {
			await waitFor(() => commandLineRuns(command), 10000);
			// The SDK's close ends stdin first and waits for the server to exit before it signals it.
			await connection.client.close();
			connection = undefined;
			await call;
			await waitFor(() => !commandLineRuns(command), 5000);
		} finally {
			stopProcessesIn(tree.root);
		}
	});

	it('a server stopped with SIGTERM mid-call ends its commands first, then exits', async () => {
		connection = await connect(tree.root, ['--approval', 'never', '--settings', '{"sandbox":{"mode":"off"}}']);
		const command = 'sleep 30.6262';
		const call = connection.client.callTool({ name: 'run_command', arguments: { command } }).catch(() => undefined);
		const server = connection.pid;
		try {
			await waitFor(() => commandLineRuns(command), 10000);
			process.kill(server, 'SIGTERM');
			await waitFor(() => !fs.existsSync(`/proc/${server}`) || fs.readFileSync(`/proc/${server}/stat`, 'utf8').split(') ')[1].startsWith('Z'), 5000);
			await waitFor(() => !commandLineRuns(command), 2000);
		} finally {
			stopProcessesIn(tree.root);
			await call;
		}
	});

	it('a message beyond the transport\'s 10 MB ends the server cleanly: it says why on stderr and stops its sessions', async () => {
		connection = await connect(tree.root, ['--approval', 'never', '--settings', '{"sandbox":{"mode":"off"}}']);
		const command = 'sleep 30.8383';
		const server = connection.pid;
		// An interactive session outlives its call: only the server's stop ends it.
		const call = connection.client.callTool({ name: 'exec_command', arguments: { command, yieldMs: 100 } }).catch(() => undefined);
		try {
			await waitFor(() => commandLineRuns(command), 10000);
			const huge = connection.client.callTool({ name: 'write_file', arguments: { path: 'big.txt', content: 'x'.repeat(11 * 1024 * 1024) } });
			await assert.rejects(withDeadline(huge, 8000, 'the server lingered after its connection failed'), /Connection closed/);
			await waitFor(() => !commandLineRuns(command), 5000);
			await waitFor(() => !fs.existsSync(`/proc/${server}`) || fs.readFileSync(`/proc/${server}/stat`, 'utf8').split(') ')[1].startsWith('Z'), 5000);
			assert.match(connection.stderr(), /toolbelt: the MCP connection failed: .*maximum size of 10485760 bytes/);
			assert.equal(fs.existsSync(tree.file('big.txt')), false);
		} finally {
			stopProcessesIn(tree.root);
			await call;
		}
	});
});

describe('MCP server: custom tools', function () {
	this.timeout(20000);
	const definition = (name: string, fields: object = {}) => JSON.stringify({
		name, description: `The ${name} tool.`, execute: 'echo.sh', mutating: false,
		inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, ...fields,
	});
	let tree: ReturnType<typeof makeTree>;
	let connection: Connection | undefined;
	beforeEach(() => {
		tree = makeTree({ '.toolbelt/tools/echo.json': definition('echo_input'), '.toolbelt/tools/broken.json': definition('broken', { execute: '../../../x.sh' }), '.toolbelt/tools/echo.sh': '#!/bin/sh\ncat\n' });
		fs.chmodSync(tree.file('.toolbelt/tools/echo.sh'), 0o755);
	});
	afterEach(async () => {
		await connection?.client.close();
		connection = undefined;
		tree.cleanup();
	});

	it('lists a custom tool with its schema, runs it, and reports a broken definition (file and field) instead of listing it', async () => {
		connection = await connect(tree.root);
		const { tools } = await connection.client.listTools();
		const echo = tools.find(tool => tool.name === 'echo_input');
		assert.deepEqual(echo?.inputSchema, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
		assert.equal(echo?.annotations?.readOnlyHint, true);
		assert.equal(tools.some(tool => tool.name === 'broken'), false);
		assert.ok(tools.some(tool => tool.name === 'read_file'));
		const result = await connection.client.callTool({ name: 'echo_input', arguments: { text: 'hi' } });
		assert.equal(result.isError, undefined, text(result));
		assert.equal(text(result), '{"text":"hi"}');
		const invalid = await connection.client.callTool({ name: 'echo_input', arguments: { text: 1 } });
		assert.equal(invalid.isError, true);
		assert.match(text(invalid), /- text: expected a string, got number 1/);
		await waitFor(() => connection!.stderr().includes('broken.json'), 5000);
		assert.match(connection.stderr(), /custom tool not offered: \.toolbelt\/tools\/broken\.json: execute: "\.\.\/\.\.\/\.\.\/x\.sh" is outside the workspace/);
	});

	it('a mutating custom tool is put to the person through elicitation; declined, its script does not run', async () => {
		fs.writeFileSync(tree.file('.toolbelt/tools/touch.json'), definition('touch_file', { execute: 'touch.sh', mutating: true }));
		fs.writeFileSync(tree.file('.toolbelt/tools/touch.sh'), '#!/bin/sh\ntouch ran.txt\n', { mode: 0o755 });
		connection = await connect(tree.root, [], 'decline');
		const { tools } = await connection.client.listTools();
		assert.equal(tools.find(tool => tool.name === 'touch_file')?.annotations?.destructiveHint, true);
		const declined = await connection.client.callTool({ name: 'touch_file', arguments: { text: 'x' } });
		assert.equal(declined.isError, true);
		assert.match(text(declined), /declined/);
		assert.match(connection.asked[0], /^Run custom tool touch_file\?\n\n\.toolbelt\/tools\/touch\.sh\n# stdin: \{"text":"x"\}/);
		assert.equal(fs.existsSync(tree.file('ran.txt')), false);
	});

	it('--only-custom serves the custom tools alone', async () => {
		connection = await connect(tree.root, ['--only-custom']);
		const { tools } = await connection.client.listTools();
		assert.deepEqual(tools.map(tool => tool.name), ['echo_input']);
		const builtIn = await connection.client.callTool({ name: 'read_file', arguments: { path: 'x' } });
		assert.match(text(builtIn), /There is no tool named "read_file"/);
	});

	it('tells the client when the definitions change, and lists the new set', async () => {
		connection = await connect(tree.root, ['--only-custom']);
		await connection.client.listTools();
		const changed = new Promise<void>(resolve => connection!.client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
		fs.writeFileSync(tree.file('.toolbelt/tools/second.json'), definition('second_tool'));
		await withDeadline(changed, 10000, 'no tools/list_changed notification');
		const { tools } = await connection.client.listTools();
		assert.deepEqual(tools.map(tool => tool.name).sort(), ['echo_input', 'second_tool']);
	});
});

async function waitFor(condition: () => boolean, deadlineMs: number): Promise<void> {
	const end = Date.now() + deadlineMs;
	while (!condition()) {
		if (Date.now() > end) throw new Error(`Condition not met within ${deadlineMs} ms.`);
		await new Promise(resolve => setTimeout(resolve, 50));
	}
}
