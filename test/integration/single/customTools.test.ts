import * as assert from 'assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';
import { Boundary } from '../../../src/core/policy/boundary';
import { defaultSettings } from '../../../src/core/policy/settings';
import { createCustomToolsProvider, CustomToolsProvider } from '../../../src/vscode/customTools';
import { waitFor, workspace, writeFiles } from '../helpers';

/** What VS Code receives from the provider (McpStdioServerDefinition, 1.101+). */
interface StdioDefinition {
	label: string;
	command: string;
	args: string[];
	env: Record<string, string | number | null>;
	cwd?: vscode.Uri;
	version?: string;
}

const DEFINITION = JSON.stringify({
	name: 'echo_input',
	description: 'Echoes its input.',
	inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
	execute: 'echo.sh',
	mutating: false,
});

describe('custom tools: the MCP server definition provider', function () {
	// File watchers can lag far behind on a loaded machine: generous waits, which a working run never reaches.
	this.timeout(90_000);
	let provider: CustomToolsProvider | undefined;
	let client: Client | undefined;
	const folder = () => path.join(workspace(), '.toolbelt', 'tools');

	after(async () => {
		await client?.close();
		provider?.dispose();
		fs.rmSync(folder(), { recursive: true, force: true });
	});

	it('offers nothing without custom tools, then the shipped server once a definition appears, and that server runs the tool', async () => {
		const extension = vscode.extensions.getExtension('toolbelt-dev.toolbelt')!;
		await extension.activate();
		const log = vscode.window.createOutputChannel('Toolbelt custom tools test', { log: true });
		const roots = [{ name: path.basename(workspace()), path: workspace() }];
		provider = createCustomToolsProvider({
			boundary: () => Boundary.create({ roots, fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] }),
			settings: defaultSettings,
			cliPath: path.join(extension.extensionPath, 'dist', 'cli.js'),
			log,
		});
		assert.deepStrictEqual(await provider.provideMcpServerDefinitions(), []);

		const changed = new Promise<void>(resolve => provider!.onDidChangeMcpServerDefinitions(() => resolve()));
		writeFiles(folder(), { 'echo.json': DEFINITION, 'echo.sh': '#!/bin/sh\ncat\n' });
		fs.chmodSync(path.join(folder(), 'echo.sh'), 0o755);
		// The file watcher reloads the definitions; the event tells VS Code to ask again.
		await Promise.race([changed, new Promise((_, reject) => setTimeout(() => reject(new Error('no change event within 30 s')), 30_000))]);

		const definitions = await provider.provideMcpServerDefinitions() as StdioDefinition[];
		assert.strictEqual(definitions.length, 1);
		const [definition] = definitions;
		assert.ok(definition instanceof (vscode as any).McpStdioServerDefinition, 'not an McpStdioServerDefinition');
		assert.strictEqual(definition.command, process.execPath);
		assert.deepStrictEqual(definition.args.slice(0, 5), [path.join(extension.extensionPath, 'dist', 'cli.js'), 'mcp', '--only-custom', '--approval', 'never']);
		assert.deepStrictEqual(definition.args.slice(-2), ['--root', workspace()]);
		assert.strictEqual(definition.cwd?.fsPath, workspace());

		// Started as VS Code starts it: the tool is listed and runs.
		const env = Object.fromEntries(Object.entries({ ...process.env, ...definition.env }).filter(([, value]) => typeof value === 'string')) as Record<string, string>;
		client = new Client({ name: 'integration', version: '1' });
		await client.connect(new StdioClientTransport({ command: definition.command, args: definition.args, env, cwd: definition.cwd?.fsPath, stderr: 'ignore' }));
		const { tools } = await client.listTools();
		assert.deepStrictEqual(tools.map(tool => tool.name), ['echo_input']);
		const result = await client.callTool({ name: 'echo_input', arguments: { text: 'from VS Code' } }) as CallToolResult;
		assert.deepStrictEqual(result.content, [{ type: 'text', text: '{"text":"from VS Code"}' }]);

		// A broken definition is left out; the server definition changes version with the set.
		const before = definition.version;
		writeFiles(folder(), { 'echo.json': JSON.stringify({ ...JSON.parse(DEFINITION), execute: '../../../outside.sh' }) });
		await provider.reload();
		assert.deepStrictEqual(await provider.provideMcpServerDefinitions(), []);
		writeFiles(folder(), { 'echo.json': JSON.stringify({ ...JSON.parse(DEFINITION), description: 'Says it back.' }) });
		await provider.reload();
		const [again] = await provider.provideMcpServerDefinitions() as StdioDefinition[];
		assert.notStrictEqual(again.version, before);
	});

	it('the extension\'s own provider: VS Code starts the server and the custom tool is a language model tool', async () => {
		writeFiles(folder(), { 'echo.json': DEFINITION, 'echo.sh': '#!/bin/sh\ncat\n' });
		fs.chmodSync(path.join(folder(), 'echo.sh'), 0o755);
		// VS Code starts MCP servers on its own when chat needs their tools; a test starts it by its
		// id (extension id / label) once the provider's change has reached VS Code.
		const tool = await waitFor('the custom tool is in vscode.lm.tools', async () => {
			await Promise.race([
				vscode.commands.executeCommand('workbench.mcp.startServer', 'toolbelt-dev.toolbelt/Toolbelt custom tools', { waitForLiveTools: true }),
				new Promise(resolve => setTimeout(resolve, 3000)),
			]);
			return vscode.lm.tools.find(candidate => candidate.name.endsWith('echo_input'));
		}, 40_000);
		assert.strictEqual(tool.name, 'mcp_toolbelt_echo_input');
		assert.deepStrictEqual(tool.inputSchema, JSON.parse(DEFINITION).inputSchema);
		const result = await vscode.lm.invokeTool(tool.name, { input: { text: 'through chat' }, toolInvocationToken: undefined });
		const text = result.content.map(part => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
		assert.strictEqual(text, '{"text":"through chat"}');
	});
});
