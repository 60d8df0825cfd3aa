// code-server releases on npm, the VS Code each carries, and the Node to run it on. host.mjs uses
// NEWEST_HOST unless TOOLBELT_CODE_SERVER names another (scripts/oldest.mjs: the oldest VS Code the
// manifest claims). An old one runs on the Node its VS Code shipped, so that what that Node cannot
// do fails here as it would there. (4.96.4, VS Code 1.96 on Node 20.18, which cannot require() an
// ES module such as @vscode/ripgrep 1.18, cannot be installed from npm alone: it has a git
// dependency on GitHub.)
// `ripgrepCache`: the @vscode/ripgrep version and release asset whose postinstall download
// host.mjs satisfies from our own rg (that download needs GitHub).
export const HOSTS = {
	'4.139.1': { vscode: '1.139.1', node: '24' },
	'4.104.0': { vscode: '1.104.0', node: '22.17.0', ripgrepCache: { package: '1.15.14', asset: 'ripgrep-v13.0.0-13-x86_64-unknown-linux-musl.tar.gz' } },
};
export const NEWEST_HOST = '4.139.1';
