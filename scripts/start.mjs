// `npm start [-- [folder] [--port N]]`: VS Code (the VS Code server; you open it in your own browser)
// with Toolbelt installed from this repository's build, as a person would have it: notifications,
// real dialogs, the Toolbelt views open.
//   no folder   a temporary copy of demo/, trusted, removed when the server stops: try anything,
//               the repository's demo/ stays as it is
//   folder      that folder itself; VS Code asks whether you trust it (Restricted Mode until then)
//   --port N    listen on port N (default: a free one)
// The server listens on 127.0.0.1 only, and the printed URL carries a secret token: the page is a
// shell on this machine. Ctrl-C stops it. `npm run build` (or `npm run watch`) and Reload Window
// pick up changes.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureHost, hostPaths, startServer, tempDir } from './lib/host.mjs';

const root = path.resolve(import.meta.dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const helper = path.join(import.meta.dirname, 'lib', 'startHelper');

const { values: options, positionals } = parseArgs({ options: { port: { type: 'string' } }, allowPositionals: true });
const port = options.port === undefined ? undefined : Number(options.port);
if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
	console.error(`--port needs a port number from 1 to 65535, not "${options.port}".`);
	process.exit(2);
}
if (!fs.existsSync(path.join(root, 'dist', 'extension.js'))) {
	console.error('dist/extension.js is missing: run npm run build first (npm start does).');
	process.exit(1);
}

const profile = tempDir('toolbelt-start-');
// npm runs scripts from the package root; INIT_CWD is where the person typed the command.
const given = positionals[0] && path.resolve(process.env.INIT_CWD || process.cwd(), positionals[0]);
if (given && !fs.statSync(given, { throwIfNoEntry: false })?.isDirectory()) {
	console.error(`${given} is not a folder. Give a folder to open, or nothing for a copy of demo/.`);
	process.exit(2);
}
const folder = given ?? copyDemo();

ensureHost({ browser: false });
const extensionsDir = path.join(profile, 'extensions');
registerExtensions(extensionsDir, [
	{ id: `${manifest.publisher}.${manifest.name}`, version: manifest.version, location: root },
	{ id: 'toolbelt-dev.toolbelt-start-helper', version: '0.0.1', location: helper },
]);
writeUserSettings(path.join(profile, 'user', 'User', 'settings.json'));

const token = randomBytes(16).toString('hex');
const server = await startServer({
	folder,
	port,
	extensionsDir,
	userDataDir: path.join(profile, 'user'),
	serverDataDir: path.join(profile, 'server'),
	// The demo copy is ours and trusted; a folder of yours gets VS Code's own question.
	workspaceTrust: given !== undefined,
	connectionToken: token,
	smokeTestDriver: false,
});

const url = `http://127.0.0.1:${server.port}/?folder=${encodeURI(folder)}&tkn=${token}`;
console.log([
	'',
	`Toolbelt ${manifest.version} (this repository's build) in VS Code ${codeVersion()}, on ${given ? folder : `a temporary copy of demo/ (${folder})`}.`,
	'',
	`  Open in your browser:  ${url}`,
	'',
	'Toolbelt\'s Activity and Plan views open in the side bar; try Toolbelt: Run Tool… from the command palette (F1).',
	'Agent mode needs a chat participant with a model (GitHub Copilot Chat, signed in) in this VS Code.',
	`After npm run build, run "Developer: Reload Window" to load the new build. Ctrl-C stops the server${given ? '' : ' and removes the copy'}.`,
].join('\n'));

const code = await server.exited;
// Null: stopped by a signal (Ctrl-C), which the cleanup in lib/host.mjs answers.
if (code !== null) {
	console.error(`The VS Code server exited unexpectedly (exit code ${code}).`);
	process.exit(1);
}

/** demo/ copied to a temporary folder, so what the tools change there never dirties the repository. */
function copyDemo() {
	const copy = path.join(profile, 'demo');
	fs.cpSync(path.join(root, 'demo'), copy, { recursive: true });
	return copy;
}

/**
 * Installs extensions by reference: the extensions folder's list (extensions.json) points at their
 * folders, so the server loads the repository's build as it is, with no .vsix and no development
 * mode (which needs the smoke-test driver, which hides every notification).
 */
function registerExtensions(dir, extensions) {
	fs.mkdirSync(dir, { recursive: true });
	const entries = extensions.map(({ id, version, location }) => ({
		identifier: { id },
		version,
		location: { $mid: 1, scheme: 'file', path: location },
		metadata: { installedTimestamp: Date.now(), source: 'resource' },
	}));
	fs.writeFileSync(path.join(dir, 'extensions.json'), JSON.stringify(entries));
}

/** A calm first window: the folder's README instead of the welcome page, no walkthrough. */
function writeUserSettings(file) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, JSON.stringify({
		'workbench.startupEditor': 'readme',
		'workbench.tips.enabled': false,
		'telemetry.telemetryLevel': 'off',
		'update.mode': 'none',
	}, null, '\t'));
}

function codeVersion() {
	const vscodeDir = path.dirname(path.dirname(hostPaths().serverMain));
	return JSON.parse(fs.readFileSync(path.join(vscodeDir, 'package.json'), 'utf8')).version;
}
