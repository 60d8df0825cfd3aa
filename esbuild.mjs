// Bundles the extension and the CLI. Type checking is its own step (`npm run typecheck`).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** Native or binary-carrying packages stay outside the bundle and ship in node_modules. */
const external = ['vscode', '@vscode/ripgrep', '@lydell/node-pty'];

/**
 * `import * as fs from 'node:fs'` in a CommonJS bundle copies every export of the module into a
 * fresh namespace object, once per importing file (path: 27 times, fs: 19). Those imports go
 * through one shared module per builtin instead, so the copy is made once: a few milliseconds of
 * every start of the CLI and of the extension.
 */
const SHARED_NAMESPACES = /^node:(fs|path|os|fs\/promises)$/;
const sharedBuiltinNamespaces = {
	name: 'shared-builtin-namespaces',
	setup(build) {
		build.onResolve({ filter: SHARED_NAMESPACES }, args => (args.namespace === 'shared-builtin' ? { path: args.path, external: true } : { path: args.path, namespace: 'shared-builtin' }));
		build.onLoad({ filter: /.*/, namespace: 'shared-builtin' }, args => ({ contents: `export * from '${args.path}';\n`, loader: 'js' }));
	},
};

const common = {
	bundle: true,
	format: 'cjs',
	platform: 'node',
	target: 'node20',
	external,
	plugins: [sharedBuiltinNamespaces],
	// Prefer ES module builds: some packages' UMD builds (jsonc-parser) hide their requires from the bundler.
	mainFields: ['module', 'main'],
	minify: production,
	sourcemap: !production,
	sourcesContent: false,
	logLevel: 'info',
};

/**
 * The CLI's `import('../mcp/server')` becomes a require of dist/mcp.js, its own bundle: every
 * `toolbelt list` or `run` would otherwise compile the MCP SDK and its schema libraries (half the CLI).
 */
const mcpApart = {
	name: 'mcp-apart',
	setup(build) {
		build.onResolve({ filter: /^\.\.\/mcp\/server$/ }, () => ({ path: './mcp.js', external: true }));
	},
};

/**
 * Likewise `import('./workspaceCommands')` (run, and list with custom tools: the tools themselves)
 * becomes dist/cliWorkspace.js: `toolbelt list` reads, compiles and evaluates only the small rest.
 */
const workspaceApart = {
	name: 'workspace-apart',
	setup(build) {
		build.onResolve({ filter: /^\.\/workspaceCommands$/ }, () => ({ path: './cliWorkspace.js', external: true }));
	},
};

/**
 * `toolbelt list` prints the built-in tools' descriptions: in the CLI's bundle they are data,
 * computed here by bundling src/tools/builtinDescriptions.ts on its own and calling it, so a listing
 * neither compiles nor evaluates the tools (their schemas are built when their modules load).
 */
const BUILTIN_DESCRIPTIONS = /[\\/]src[\\/]tools[\\/]builtinDescriptions\.ts$/;
const builtinDescriptionsAsData = {
	name: 'builtin-descriptions-as-data',
	setup(build) {
		build.onLoad({ filter: BUILTIN_DESCRIPTIONS }, async args => {
			const { outputFiles: [bundle] } = await esbuild.build({ ...common, entryPoints: [args.path], write: false, metafile: true, outfile: 'descriptions.js', minify: false, sourcemap: false, logLevel: 'silent' });
			const module = { exports: {} };
			new Function('module', 'exports', 'require', bundle.text)(module, module.exports, createRequire(args.path));
			const json = JSON.stringify(module.exports.builtinDescriptions());
			return { contents: `export function builtinDescriptions() {\n\treturn JSON.parse(${JSON.stringify(json)});\n}\n`, loader: 'js', watchFiles: Object.keys(bundle.metafile?.inputs ?? {}) };
		});
	},
};

/**
 * The extension's `import('./vscode/workbench')` becomes a require of dist/workbench.js: activation
 * loads only dist/extension.js (registering the entry points, a few kilobytes), and the registry,
 * the tools and the views load when first needed (see src/vscode/entryPoints.ts).
 */
const workbenchApart = {
	name: 'workbench-apart',
	setup(build) {
		build.onResolve({ filter: /^\.\/vscode\/workbench$/ }, () => ({ path: './workbench.js', external: true }));
	},
};

const builds = [
	{ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', plugins: [...common.plugins, workbenchApart], supported: { 'dynamic-import': false } },
	{ ...common, entryPoints: ['src/vscode/workbench.ts'], outfile: 'dist/workbench.js' },
	// `toolbelt`: a small launcher that loads the CLI itself through a code cache (see src/cli/launch.ts).
	{ ...common, entryPoints: ['src/cli/launch.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
	// A require, not import(): the launcher compiles the bundle itself, without an ES module loader.
	{ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cliMain.js', plugins: [...common.plugins, mcpApart, workspaceApart, builtinDescriptionsAsData], supported: { 'dynamic-import': false } },
	{ ...common, entryPoints: ['src/cli/workspaceCommands.ts'], outfile: 'dist/cliWorkspace.js' },
	{ ...common, entryPoints: ['src/mcp/server.ts'], outfile: 'dist/mcp.js' },
];

/**
 * Node looks up the package.json nearest to every CommonJS file it loads (for its "type"), and
 * reads and parses the repository's whole manifest (64 KB: every tool's schema) to learn it: a few
 * milliseconds of each start of the CLI and of loading the extension. This one answers first.
 */
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync('dist/package.json', `${JSON.stringify({ type: 'commonjs' })}\n`);

if (watch) {
	for (const options of builds) {
		const ctx = await esbuild.context(options);
		await ctx.watch();
	}
} else {
	await Promise.all(builds.map(options => esbuild.build(options)));
}
