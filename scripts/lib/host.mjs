// The test host: the VS Code server shipped in the code-server npm package, driven by headless
// Chromium (see shared/TESTING.md). Everything it needs is installed into a cache outside the
// repository, only when missing.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { format } from 'node:util';
import { HOSTS, NEWEST_HOST } from './hosts.mjs';

export const CODE_SERVER_VERSION = process.env.TOOLBELT_CODE_SERVER || NEWEST_HOST;
if (!HOSTS[CODE_SERVER_VERSION]) {
	console.error(`[host] TOOLBELT_CODE_SERVER=${CODE_SERVER_VERSION} is not one of the known hosts: ${Object.keys(HOSTS).join(', ')}.`);
	process.exit(2);
}
const NODE_VERSION = HOSTS[CODE_SERVER_VERSION].node;
const BUILD_DEPS = ['libkrb5-dev', 'libxkbfile-dev', 'libsecret-1-dev', 'libx11-dev', 'pkg-config', 'build-essential', 'python3'];
const BROWSER_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export const cacheDir = process.env.TOOLBELT_HOST_CACHE || path.join(os.homedir(), '.cache', 'toolbelt-test-host');
const chromiumPath = process.env.TOOLBELT_CHROMIUM || '/usr/bin/chromium';
const verbose = !!process.env.TOOLBELT_TEST_VERBOSE;

const nodePackage = `node-${process.platform}-${process.arch}`;
const nodeDir = path.join(cacheDir, `node-${NODE_VERSION}`);
const nodePackageDir = path.join(nodeDir, 'node_modules', nodePackage);
const codeServerDir = path.join(cacheDir, `code-server-${CODE_SERVER_VERSION}`);

/** Where the host's pieces are (whether or not they are installed yet). */
export function hostPaths() {
	return {
		node: path.join(nodePackageDir, 'bin', 'node'),
		serverMain: path.join(codeServerDir, 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js'),
		chromium: chromiumPath,
	};
}

function log(message) {
	console.log(`[host] ${message}`);
}

function giveUp(lines) {
	console.error(['', '[host] Cannot set up the VS Code test host.', ...lines.map(line => `  ${line}`), ''].join('\n'));
	process.exit(1);
}

/**
 * Installs Chromium, Node and code-server when missing; returns `{ node, serverMain, chromium }`.
 * `browser: false` for a server a person opens in their own browser (npm start): no Chromium.
 */
export function ensureHost({ browser = true } = {}) {
	const paths = hostPaths();
	const needServer = !fs.existsSync(paths.serverMain);
	const needBrowser = browser && !fs.existsSync(paths.chromium);
	// Debian's chromium package only when no browser is where TOOLBELT_CHROMIUM (or the default)
	// points; the build packages only while code-server's native modules are being compiled;
	// bubblewrap, the sandbox every command runs in, whenever it is missing.
	const needBwrap = process.platform === 'linux' && spawnSync('bwrap', ['--version'], { stdio: 'ignore' }).status !== 0;
	ensureSystemPackages([...(needBrowser ? ['chromium'] : []), ...(needBwrap ? ['bubblewrap'] : []), ...(needServer ? BUILD_DEPS : [])], browser);
	if (browser && !fs.existsSync(paths.chromium)) {
		giveUp([`Chromium is not at ${paths.chromium}.`, 'Install Chromium, or point TOOLBELT_CHROMIUM at its binary.']);
	}
	if (!fs.existsSync(paths.node)) {
		log(`installing Node ${NODE_VERSION} (${nodePackage}) into ${nodeDir}`);
		npmInstallInto(nodeDir, `${nodePackage}@${NODE_VERSION}`, npmEnv(), [
			`Install the npm package ${nodePackage}@${NODE_VERSION} into ${nodeDir} (it ships bin/node and include/node).`,
		]);
	}
	if (needServer) {
		log(`installing code-server ${CODE_SERVER_VERSION} into ${codeServerDir} (a cold install takes 1.5 to 3 min)`);
		// With that Node first on PATH and its own headers as nodedir, node-gyp neither uses the
		// system Node nor tries to download headers.
		const env = {
			...npmEnv(),
			PATH: `${path.dirname(paths.node)}${path.delimiter}${process.env.PATH}`,
			npm_config_nodedir: nodePackageDir,
			// Older releases' postinstall refuses to run as root without it, and runs npx node-gyp.
			npm_config_unsafe_perm: 'true',
			npm_config_yes: 'true',
			...seedRipgrepDownload(),
		};
		npmInstallInto(codeServerDir, `code-server@${CODE_SERVER_VERSION}`, env, [
			`Installing code-server ${CODE_SERVER_VERSION} failed; its native modules need: ${BUILD_DEPS.join(' ')}`,
			`(Debian: apt-get install -y ${BUILD_DEPS.join(' ')}), and Node ${NODE_VERSION} first on PATH with npm_config_nodedir=${nodePackageDir}.`,
		]);
	}
	for (const file of [paths.node, paths.serverMain]) {
		if (!fs.existsSync(file)) giveUp([`${file} is missing after the install.`]);
	}
	return paths;
}

/**
 * Older code-server releases carry an @vscode/ripgrep whose postinstall downloads rg from GitHub,
 * which machines that reach only npm cannot. It first looks in its cache folder under the temp
 * folder: put our own rg (from @vscode/ripgrep-<platform>) there, in a temp folder of its own, and
 * return the environment that points the install at it. Linux x64 only; elsewhere nothing changes.
 */
function seedRipgrepDownload() {
	const cache = HOSTS[CODE_SERVER_VERSION].ripgrepCache;
	const rg = path.join(path.dirname(import.meta.dirname), '..', 'node_modules', '@vscode', `ripgrep-${process.platform}-${process.arch}`, 'bin', 'rg');
	if (!cache || process.platform !== 'linux' || process.arch !== 'x64' || !fs.existsSync(rg)) return {};
	const tmp = tempDir('toolbelt-rg-seed-');
	const folder = path.join(tmp, `vscode-ripgrep-cache-${cache.package}`);
	fs.mkdirSync(folder);
	const result = spawnSync('tar', ['-czf', path.join(folder, cache.asset), '-C', path.dirname(rg), 'rg']);
	return result.status === 0 ? { TMPDIR: tmp } : {};
}

/**
 * The environment without what an enclosing `npm run` exported: code-server's postinstall reads
 * the Node version from npm_config_user_agent, which the nested npm would otherwise inherit.
 */
function npmEnv() {
	return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

function ensureSystemPackages(packages, browser = true) {
	const debian = fs.existsSync('/etc/debian_version') && spawnSync('dpkg', ['--version'], { stdio: 'ignore' }).status === 0;
	if (!debian) {
		if (browser && !fs.existsSync(chromiumPath)) {
			giveUp([`This is not Debian, so nothing can be installed for you. Install: ${packages.join(' ')} (or your system's equivalents),`, 'and set TOOLBELT_CHROMIUM if Chromium is not at /usr/bin/chromium.']);
		}
		return;
	}
	if (!packages.length) return;
	const missing = packages.filter(name => !/^Status: install ok installed$/m.test(spawnSync('dpkg', ['-s', name], { encoding: 'utf8' }).stdout ?? ''));
	if (!missing.length) return;
	const command = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
	if (process.getuid?.() !== 0) giveUp([`Missing Debian packages: ${missing.join(' ')}`, `Run: sudo sh -c '${command}'`]);
	log(`apt-get install ${missing.join(' ')}`);
	const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
	for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', ...missing]]) {
		const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
		if (result.status !== 0) giveUp([`apt-get ${args[0]} failed. Install these Debian packages: ${missing.join(' ')}`, `Run: ${command}`]);
	}
}

/**
 * Installs an npm package into `finalDir/node_modules` through a partial folder that is renamed into
 * place only after success, so an interrupted install is never mistaken for a finished one.
 */
function npmInstallInto(finalDir, spec, env, advice) {
	fs.mkdirSync(path.dirname(finalDir), { recursive: true });
	removeStalePartials(finalDir);
	const partial = `${finalDir}.partial-${process.pid}`;
	fs.rmSync(partial, { recursive: true, force: true });
	fs.mkdirSync(partial);
	const logFile = `${partial}.log`;
	const out = fs.openSync(logFile, 'w');
	const started = Date.now();
	const result = spawnSync('npm', ['install', '--prefix', partial, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', spec], {
		cwd: partial, env, stdio: ['ignore', out, out],
	});
	fs.closeSync(out);
	if (result.status !== 0) {
		const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-30);
		fs.rmSync(partial, { recursive: true, force: true });
		giveUp([`npm install ${spec} failed (full log: ${logFile}). Last lines:`, ...tail, '', ...advice]);
	}
	fs.rmSync(logFile, { force: true });
	try {
		fs.renameSync(partial, finalDir);
	} catch (error) {
		// Another run finished the same install first.
		if (!fs.existsSync(finalDir)) throw error;
		fs.rmSync(partial, { recursive: true, force: true });
	}
	log(`installed ${spec} in ${Math.round((Date.now() - started) / 1000)} s`);
}

function removeStalePartials(finalDir) {
	const prefix = `${path.basename(finalDir)}.partial-`;
	for (const name of fs.readdirSync(path.dirname(finalDir))) {
		if (!name.startsWith(prefix)) continue;
		const pid = Number.parseInt(name.slice(prefix.length), 10);
		if (pid && pid !== process.pid && isAlive(pid)) continue;
		fs.rmSync(path.join(path.dirname(finalDir), name), { recursive: true, force: true });
	}
}

function isAlive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return error.code === 'EPERM';
	}
}

export function freePort() {
	return new Promise((resolve, reject) => {
		const server = net.createServer();
		server.unref();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

// Process groups of running servers and temp folders, cleaned up if this process exits or is
// interrupted first.
const liveGroups = new Set();
const tempDirs = new Set();
let cleanupInstalled = false;

function installCleanup() {
	if (cleanupInstalled) return;
	cleanupInstalled = true;
	process.on('exit', () => {
		for (const pgid of liveGroups) killGroup(pgid, 'SIGKILL');
		for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
	});
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
		process.once(signal, async () => {
			await Promise.all([...liveGroups].map(stopGroup));
			process.exit(128 + os.constants.signals[signal]);
		});
	}
}

/** A new folder under the system temp dir (real path), removed when this process exits. */
export function tempDir(prefix) {
	installCleanup();
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
	tempDirs.add(dir);
	return dir;
}

function killGroup(pgid, signal) {
	try {
		process.kill(-pgid, signal);
		return true;
	} catch {
		return false;
	}
}

async function stopGroup(pgid) {
	// The pty host outlives a plain kill of the server by ~10 s, so the whole group goes.
	if (killGroup(pgid, 'SIGTERM')) {
		const deadline = Date.now() + 5000;
		while (killGroup(pgid, 0) && Date.now() < deadline) await sleep(100);
		killGroup(pgid, 'SIGKILL');
	}
	liveGroups.delete(pgid);
}

function sleep(ms) {
	return new Promise(resolve => setTimeout(resolve, ms));
}

/**
 * Starts the VS Code server in its own process group and resolves once it listens.
 * `workspaceTrust: true` keeps workspace trust on (by default it is disabled, as tests want).
 * `folder` / `workspaceFile` become the server's default and the query of the returned `url`.
 * `connectionToken`: only pages that carry it (`?tkn=…`) get in; tests go without, and need the
 * smoke-test driver (`smokeTestDriver`), which also keeps notifications off screen.
 */
export async function startServer({ folder, workspaceFile, extensionsDir, userDataDir, serverDataDir = `${userDataDir}-server`, port, workspaceTrust = false, readyTimeoutMs = 60_000, connectionToken, smokeTestDriver = true, env = {} }) {
	const { node, serverMain } = hostPaths();
	if (!fs.existsSync(serverMain)) throw new Error(`The VS Code server is not installed (${serverMain}); call ensureHost() first.`);
	port ??= await freePort();
	for (const dir of [extensionsDir, userDataDir, serverDataDir]) fs.mkdirSync(dir, { recursive: true });
	const args = [
		serverMain, '--host', '127.0.0.1', '--port', String(port),
		...(connectionToken ? ['--connection-token', connectionToken] : ['--without-connection-token']), '--accept-server-license-terms',
		'--server-data-dir', serverDataDir, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir,
		'--disable-telemetry',
	];
	// Without it a built workbench ignores the `payload` URL parameter (extension development/tests).
	if (smokeTestDriver) args.push('--enable-smoke-test-driver');
	if (!workspaceTrust) args.push('--disable-workspace-trust');
	if (folder) args.push('--default-folder', folder);
	if (workspaceFile) args.push('--default-workspace', workspaceFile);

	installCleanup();
	const child = spawn(node, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
	liveGroups.add(child.pid);
	const exited = new Promise(resolve => child.on('exit', code => resolve(code)));
	const stop = () => stopGroup(child.pid);
	let output = '';
	try {
		await new Promise((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error(`The VS Code server did not start listening within ${readyTimeoutMs / 1000} s.`)), readyTimeoutMs);
			const onData = chunk => {
				output += chunk;
				if (verbose) process.stderr.write(`[server] ${chunk}`);
				if (output.includes(`Extension host agent listening on ${port}`)) {
					clearTimeout(timer);
					resolve();
				}
			};
			child.stdout.setEncoding('utf8').on('data', onData);
			child.stderr.setEncoding('utf8').on('data', onData);
			child.on('error', error => {
				clearTimeout(timer);
				reject(error);
			});
			child.on('exit', code => {
				clearTimeout(timer);
				reject(new Error(`The VS Code server exited with ${code} before listening.`));
			});
		});
	} catch (error) {
		await stop();
		error.message += `\n--- server output ---\n${output.trim()}`;
		throw error;
	}
	const query = new URLSearchParams(folder ? { folder } : workspaceFile ? { workspace: workspaceFile } : {});
	if (connectionToken) query.set('tkn', connectionToken);
	return { port, url: `http://127.0.0.1:${port}/${query.size ? `?${query}` : ''}`, output: () => output, exited, stop };
}

/** Installs a .vsix into `extensionsDir` with the server's own CLI; throws when that fails. */
export function installVsix(vsixPath, extensionsDir) {
	const { node, serverMain } = hostPaths();
	const scratch = tempDir('toolbelt-vsix-install-');
	try {
		fs.mkdirSync(extensionsDir, { recursive: true });
		const result = spawnSync(node, [
			serverMain, '--accept-server-license-terms',
			'--server-data-dir', path.join(scratch, 'server'), '--user-data-dir', path.join(scratch, 'user'),
			'--extensions-dir', extensionsDir, '--install-extension', path.resolve(vsixPath), '--force',
		], { encoding: 'utf8', timeout: 120_000 });
		const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
		if (result.status !== 0 || !/successfully installed/i.test(output)) {
			throw new Error(`Installing ${vsixPath} failed (exit ${result.status ?? result.signal}):\n${output}`);
		}
		return output;
	} finally {
		fs.rmSync(scratch, { recursive: true, force: true });
	}
}

/** Headless Chromium; Playwright gives every launch a fresh temporary profile. */
export async function launchBrowser() {
	const { chromium } = await import('playwright-core');
	return chromium.launch({ executablePath: chromiumPath, headless: true, args: BROWSER_FLAGS });
}

/** `file` on the server as a URI the workbench resolves remotely (a file: URI would mean the browser side). */
export function remoteUri(port, file) {
	return `vscode-remote://127.0.0.1:${port}${path.resolve(file).split(path.sep).map(encodeURIComponent).join('/')}`;
}

/**
 * Runs an extension's tests (`extensionTestsPath` exports `run(): Promise<void>`) in the VS Code
 * server with a fresh temp profile and resolves with the exit code the extension host reports.
 * Pass `extensionsDir` to use extensions installed beforehand (e.g. from a .vsix).
 */
export async function runExtensionTests({ folder, workspaceFile, extensionDevelopmentPath, extensionTestsPath, env = {}, extensionsDir, workspaceTrust = false, timeoutMs = 5 * 60_000 }) {
	const profile = tempDir('toolbelt-profile-');
	let server;
	let browser;
	let timer;
	try {
		server = await startServer({
			folder, workspaceFile, workspaceTrust,
			// The extension host inherits the server's environment: older workbenches ignore the
			// payload's extensionEnvironment.
			env,
			extensionsDir: extensionsDir ?? path.join(profile, 'extensions'),
			userDataDir: path.join(profile, 'user'),
			serverDataDir: path.join(profile, 'server'),
		});
		browser = await launchBrowser();
		const page = await browser.newPage();
		let settle;
		const finished = new Promise((resolve, reject) => settle = { resolve, reject });
		// The workbench forwards the extension host's console here, and its exit code once the tests
		// end; what it logs after that is teardown noise (cancelled requests).
		let exited = false;
		await page.exposeFunction('codeAutomationLog', (level, args) => exited || printHostLog(level, args));
		await page.exposeFunction('codeAutomationExit', code => {
			exited = true;
			settle.resolve(code);
		});
		page.on('crash', () => settle.reject(new Error('The workbench page crashed.')));
		if (verbose) {
			page.on('console', message => console.error(`[page ${message.type()}] ${message.text()}`));
			page.on('pageerror', error => console.error(`[page error] ${error.message}`));
		}
		timer = setTimeout(() => settle.reject(new Error(`Extension tests did not finish within ${timeoutMs / 1000} s.`)), timeoutMs);

		const payload = [
			['extensionDevelopmentPath', remoteUri(server.port, extensionDevelopmentPath)],
			['extensionTestsPath', remoteUri(server.port, extensionTestsPath)],
			['extensionEnvironment', JSON.stringify(env)],
			['skipWelcome', 'true'],
			['skipReleaseNotes', 'true'],
		];
		const query = new URLSearchParams(folder ? { folder: path.resolve(folder) } : workspaceFile ? { workspace: path.resolve(workspaceFile) } : {});
		query.set('payload', JSON.stringify(payload));
		await page.goto(`http://127.0.0.1:${server.port}/?${query}`, { waitUntil: 'domcontentloaded' });
		return await finished;
	} catch (error) {
		if (server && !verbose) error.message += `\n--- server output ---\n${server.output().trim()}`;
		throw error;
	} finally {
		clearTimeout(timer);
		await browser?.close().catch(() => {});
		await server?.stop();
		fs.rmSync(profile, { recursive: true, force: true });
	}
}

// The workbench's own log reaches codeAutomationLog too; these are its routine lines, plus the
// gallery and GitHub sign-in, which CI cannot reach. TOOLBELT_TEST_VERBOSE=1 shows them.
const WORKBENCH_CHATTER = [
	/^\[(AgentHost|AgentHost:remote|ChatModelSelection|AccountPolicyGate|reconnection-grace-time|Service Worker)\]/,
	/^(Resolving|Resolved) connection token|^Creating a socket|^Updating additional builtin extensions cache/,
	/ENOTFOUND open-vsx\.org|authentication provider 'github'/,
];

function printHostLog(level, args) {
	args = Array.isArray(args) ? args : [args];
	if (!verbose && typeof args[0] === 'string' && WORKBENCH_CHATTER.some(pattern => pattern.test(args[0]))) return;
	// The extension host sends console arguments unformatted (mocha's reporters use '%s').
	(level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${format(...args)}\n`);
}
