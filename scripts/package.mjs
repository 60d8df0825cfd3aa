// `npm run package [-- --target <vsce target>]`: the .vsix for one platform.
//
// Everything is bundled into dist/ except the two packages that ship native binaries
// (@lydell/node-pty, @vscode/ripgrep; see esbuild.mjs). Each picks its binary from a platform
// package (@lydell/node-pty-linux-x64, @vscode/ripgrep-linux-x64, …) that npm installs as an
// optional dependency for the machine it runs on. So a .vsix is platform-specific: it carries the
// two packages plus their platform packages for its target, and nothing else from node_modules.
//
// Every .vsix is made in a staging folder: the manifest files, the production bundle (minified, no
// source maps) built there, and the runtime packages. The repository's dist/ stays the development
// build that the integration and end-to-end tests run.
// Every .vsix is named for its target and declares it (vsce --target), so VS Code refuses it on
// another platform:
// - No --target: the machine's own platform; its runtime packages are copied from the repository's
//   node_modules -> toolbelt-linux-x64.vsix (on Linux x64).
// - --target darwin-arm64 (or win32-x64, linux-arm64, …): the platform packages of that target are
//   installed into the staging folder (`npm ci --os --cpu`), never into the repository
//   -> toolbelt-darwin-arm64.vsix.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { vsixName } from './lib/vsix.mjs';

const root = path.resolve(import.meta.dirname, '..');
const BINARY_PACKAGES = ['@lydell/node-pty', '@vscode/ripgrep'];
/** vsce targets both binary packages have builds for. */
const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'win32-arm64'];

const { values: options } = parseArgs({ options: { target: { type: 'string' }, out: { type: 'string' } } });
const host = `${process.platform}-${process.arch}`;
const target = options.target ?? host;
if (!TARGETS.includes(target)) {
	console.error(`Cannot package for "${target}": @lydell/node-pty and @vscode/ripgrep have binaries for ${TARGETS.join(', ')}.`);
	process.exit(2);
}
const out = path.resolve(options.out ?? path.join(root, vsixName(target)));

function run(command, args, cwd = root) {
	console.log(`$ ${command} ${args.join(' ')}${cwd === root ? '' : `   (in ${cwd})`}`);
	execFileSync(command, args, { cwd, stdio: 'inherit', shell: process.platform === 'win32' });
}

function output(command, args, cwd = root) {
	return execFileSync(command, args, { cwd, encoding: 'utf8', shell: process.platform === 'win32' });
}

/** .vscodeignore with the "any platform package" globs narrowed to this target's. */
function ignoreFileFor() {
	const lines = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n')
		.map(line => line.replace(/^(!node_modules\/@[\w.-]+\/[\w.-]+)-\*\/\*\*$/, `$1-${target}/**`));
	// Outside the packaged folder, or vsce would pack the ignore file itself.
	const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'toolbelt-vscodeignore-')), '.vscodeignore');
	fs.writeFileSync(file, lines.join('\n'));
	return file;
}

/** Fills the staging folder with what `vsce package` reads: manifest files, runtime packages, production bundle. */
function stage(dir) {
	for (const entry of ['package.json', 'package-lock.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'media', 'syntaxes']) {
		const source = path.join(root, entry);
		if (fs.existsSync(source)) fs.cpSync(source, path.join(dir, entry), { recursive: true });
	}
	if (target === host) {
		copyRuntimePackages(dir);
	} else {
		const [platform, cpu] = target.split('-');
		run('npm', ['ci', '--omit=dev', `--os=${platform}`, `--cpu=${cpu}`, '--ignore-scripts', '--no-audit', '--no-fund'], dir);
	}
	buildProduction(dir);
	removeDebugSymbols(path.join(dir, 'node_modules'));
}

/**
 * The Windows builds of node-pty carry debug symbols (.pdb, megabytes) that nothing loads. Deleted
 * from the staging copy: .vscodeignore cannot exclude them from a package it includes whole.
 */
function removeDebugSymbols(folder) {
	for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
		if (entry.isFile() && /\.pdb$/i.test(entry.name)) fs.rmSync(path.join(entry.parentPath, entry.name));
	}
}

/**
 * The repository's production dependency tree (as `npm ls` sees it, this platform's optional
 * packages included) copied into the staging folder: vsce's own `npm list` needs it whole, and
 * nothing is downloaded.
 */
function copyRuntimePackages(dir) {
	const packages = output('npm', ['ls', '--omit=dev', '--all', '--parseable']).split('\n')
		.map(line => line.trim())
		.filter(line => line && path.resolve(line) !== root);
	for (const folder of packages) {
		const relative = path.relative(root, folder);
		fs.cpSync(folder, path.join(dir, relative), { recursive: true });
	}
}

/**
 * The production bundle, built by esbuild.mjs in the staging folder (its paths are relative to the
 * working folder) from a copy of the sources, so the repository's dist/ is not touched.
 */
function buildProduction(dir) {
	for (const entry of ['src', 'tsconfig.json']) fs.cpSync(path.join(root, entry), path.join(dir, entry), { recursive: true });
	run(process.execPath, [path.join(root, 'esbuild.mjs'), '--production'], dir);
	for (const entry of ['src', 'tsconfig.json']) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
}

/**
 * The .vsix must declare its target, hold each binary package and exactly its platform package for
 * the target, of dist/ the bundles alone, and none of what only the repository needs
 * (debug symbols, the README's screenshots, which the marketplace shows from the repository).
 */
function check(vsix) {
	const listing = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n');
	const manifest = execFileSync('unzip', ['-p', vsix, 'extension.vsixmanifest'], { encoding: 'utf8' });
	if (!manifest.includes(`TargetPlatform="${target}"`)) throw new Error(`${path.basename(vsix)} does not declare TargetPlatform="${target}".`);
	const unwanted = listing.filter(file => /\.pdb$/i.test(file) || file.startsWith('extension/media/screenshots/'));
	if (unwanted.length) throw new Error(`${path.basename(vsix)} carries files it must not: ${unwanted.slice(0, 5).join(', ')}${unwanted.length > 5 ? ', …' : ''}.`);
	const packages = new Set(listing
		.map(file => /^extension\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1])
		.filter(Boolean));
	const wanted = BINARY_PACKAGES.flatMap(name => [name, `${name}-${target}`]);
	const missing = wanted.filter(name => !packages.has(name));
	const extra = [...packages].filter(name => !wanted.includes(name));
	if (missing.length || extra.length) {
		throw new Error(`${path.basename(vsix)} has the wrong runtime packages: missing ${missing.join(', ') || 'none'}; unexpected ${extra.join(', ') || 'none'}.`);
	}
	const dist = listing.filter(file => file.startsWith('extension/dist/')).sort();
	// The extension is its entry points (extension.js) and the workbench they load (workbench.js); the
	// CLI (its launcher, its body, the tools' bundle and the MCP server it loads) is the server VS Code
	// starts for the workspace's custom tools; package.json spares Node reading the whole manifest.
	const shipped = ['cli.js', 'cliMain.js', 'cliWorkspace.js', 'extension.js', 'mcp.js', 'package.json', 'workbench.js'].map(name => `extension/dist/${name}`);
	if (dist.join() !== shipped.join()) {
		throw new Error(`${path.basename(vsix)} must ship ${shipped.map(file => file.slice('extension/'.length)).join(', ')} alone (no source maps), not: ${dist.join(', ') || 'nothing'}.`);
	}
	const size = fs.statSync(vsix).size;
	console.log(`${path.relative(root, vsix)}: ${(size / 1024 / 1024).toFixed(1)} MB, ${listing.filter(Boolean).length} files; node_modules: ${wanted.join(', ')}`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), `toolbelt-package-${target}-`));
const ignoreFile = ignoreFileFor();
try {
	stage(dir);
	const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
	run(process.execPath, [vsce, 'package', '--target', target, '--ignoreFile', ignoreFile, '--out', out], dir);
	try {
		check(out);
	} catch (error) {
		// A .vsix that fails the check is not left where it could be published or installed.
		fs.rmSync(out, { force: true });
		throw error;
	}
} finally {
	fs.rmSync(path.dirname(ignoreFile), { recursive: true, force: true });
	fs.rmSync(dir, { recursive: true, force: true });
}
