// Bundles the extension and the CLI. Type checking is its own step (`npm run typecheck`).
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** Native or binary-carrying packages stay outside the bundle and ship in node_modules. */
const external = ['vscode', '@vscode/ripgrep', '@lydell/node-pty'];

const common = {
	bundle: true,
	format: 'cjs',
	platform: 'node',
	target: 'node20',
	external,
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

const builds = [
	{ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js' },
	// `toolbelt`: a small launcher that loads the CLI itself through a code cache (see src/cli/launch.ts).
	{ ...common, entryPoints: ['src/cli/launch.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
	// A require, not import(): the launcher compiles the bundle itself, without an ES module loader.
	{ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cliMain.js', plugins: [mcpApart], supported: { 'dynamic-import': false } },
	{ ...common, entryPoints: ['src/mcp/server.ts'], outfile: 'dist/mcp.js' },
];

if (watch) {
	for (const options of builds) {
		const ctx = await esbuild.context(options);
		await ctx.watch();
	}
} else {
	await Promise.all(builds.map(options => esbuild.build(options)));
}
