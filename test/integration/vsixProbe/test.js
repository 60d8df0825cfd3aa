// Checks the extension installed from the .vsix, with no development path pointing at the repository.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

exports.run = async () => {
	const extension = vscode.extensions.getExtension('toolbelt-dev.toolbelt');
	assert.ok(extension, 'toolbelt-dev.toolbelt is not installed');
	console.log(`vsix probe: found ${extension.id} ${extension.packageJSON.version} at ${extension.extensionPath}`);
	await extension.activate();

	const contributed = (extension.packageJSON.contributes?.languageModelTools ?? []).map(tool => tool.name);
	assert.ok(contributed.length, 'the packaged package.json contributes no languageModelTools');
	// lm.tools is the extension host's copy of the main thread's list, updated asynchronously
	// after registerTool, so give it a moment.
	const deadline = Date.now() + 10_000;
	let missing;
	while (true) {
		const registered = new Set(vscode.lm.tools.map(tool => tool.name));
		missing = contributed.filter(name => !registered.has(name));
		if (!missing.length || Date.now() > deadline) break;
		await new Promise(resolve => setTimeout(resolve, 100));
	}
	assert.deepStrictEqual(missing, [], `tools contributed but not in vscode.lm.tools: ${missing.join(', ')}`);
	console.log(`vsix probe: all ${contributed.length} contributed tools are registered`);

	// The native packages travel inside the .vsix (scripts/package.mjs): a pty session proves
	// @lydell/node-pty and its platform binary load from the installed extension.
	const text = async (name, input) => (await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }))
		.content.map(part => part.value ?? '').join('');
	const session = await text('toolbelt_exec_command', { command: 'test -t 0 && echo "on a tty"', yieldMs: 5000 });
	assert.match(session, /on a tty/, session);
	const command = await text('toolbelt_run_command', { command: 'echo packaged' });
	assert.match(command, /^Exit code 0[\s\S]*packaged/, command);
	console.log('vsix probe: run_command and a pty session work from the packaged extension');

	// ripgrep (an ES module package and its platform binary) loads too, and results get their language.
	const found = await text('toolbelt_grep', { pattern: 'Toolbelt', limit: 1 });
	assert.match(found, /^1 matching line/, found);
	assert.ok(extension.packageJSON.contributes.languages.some(language => language.id === 'toolbelt-result'));
	const languages = await vscode.languages.getLanguages();
	assert.ok(languages.includes('toolbelt-result'), 'the result language is not known to VS Code');
	console.log('vsix probe: grep works and the result language is there');

	// Custom tools reach chat through dist/cli.js run as an MCP server on the extension host's Node:
	// it must travel in the .vsix and run from there with what was bundled into it.
	const cli = path.join(extension.extensionPath, 'dist', 'cli.js');
	assert.ok(fs.existsSync(cli), 'dist/cli.js is not in the .vsix');
	const listed = spawnSync(process.execPath, [cli, 'list', '--root', vscode.workspace.workspaceFolders[0].uri.fsPath], {
		encoding: 'utf8', timeout: 20_000, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
	});
	assert.strictEqual(listed.status, 0, listed.stderr);
	assert.ok(JSON.parse(listed.stdout).some(tool => tool.name === 'read_file'), listed.stdout.slice(0, 500));
	assert.ok(extension.packageJSON.contributes.mcpServerDefinitionProviders.some(provider => provider.id === 'toolbelt.customTools'));
	console.log('vsix probe: the packaged CLI (the custom tools\' MCP server) runs on the extension host\'s Node');
};
