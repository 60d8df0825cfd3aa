// `npm start [folder] [--port N]`: a VS Code (the VS Code server, used from your browser) with Toolbelt
// loaded from this repository as a development extension, on demo/ or the folder given. Workspace
// trust stays on, so a folder opens in Restricted Mode until you trust it. Ctrl-C stops it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureHost, remoteUri, startServer, tempDir } from './lib/host.mjs';

const root = path.resolve(import.meta.dirname, '..');
const { values: options, positionals } = parseArgs({ options: { port: { type: 'string' } }, allowPositionals: true });
// npm runs scripts from the package root; INIT_CWD is where the person typed the command.
const folder = positionals[0] ? path.resolve(process.env.INIT_CWD || process.cwd(), positionals[0]) : path.join(root, 'demo');
if (!fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) {
	console.error(`${folder} is not a folder.`);
	process.exit(1);
}
if (!fs.existsSync(path.join(root, 'dist', 'extension.js'))) {
	console.error('dist/extension.js is missing: run npm run build first (npm start does).');
	process.exit(1);
}

ensureHost();
const profile = tempDir('toolbelt-start-');
const server = await startServer({
	folder,
	port: options.port ? Number(options.port) : undefined,
	extensionsDir: path.join(profile, 'extensions'),
	userDataDir: path.join(profile, 'user'),
	serverDataDir: path.join(profile, 'server'),
	workspaceTrust: true,
});

// The server was started with --enable-smoke-test-driver, without which the workbench ignores
// `payload`; a development path alone (no tests path) then loads the extension as in F5 debugging.
const payload = [['extensionDevelopmentPath', remoteUri(server.port, root)]];
const query = new URLSearchParams({ folder, payload: JSON.stringify(payload) }).toString()
	// Only for a URL a person can read; all of these are legal in a query.
	.replace(/%(2F|3A|5B|5D|2C)/g, (_, hex) => String.fromCharCode(Number.parseInt(hex, 16)));
console.log(`\nToolbelt (development build from ${root}) on ${folder}\n\n  Open: http://127.0.0.1:${server.port}/?${query}\n\nCtrl-C stops the server.`);

const code = await server.exited;
console.error(`The VS Code server exited (${code}).`);
process.exit(1);
