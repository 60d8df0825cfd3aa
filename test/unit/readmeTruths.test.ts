import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ALL_TOOLS } from '../../src/tools';

const root = path.join(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const manifest = JSON.parse(read('package.json'));
const readme = read('README.md');

/** The lowest Node major a semver range accepts: `>= 22` → 22, `^18.18.0 || >=21.1.0` → 18. */
function lowestMajor(range: string): number {
	return Math.min(...range.split('||').map(part => Number(/(\d+)/.exec(part)?.[1] ?? 0)));
}

describe('what the README and the manifest claim', () => {
	it('names the tools as the tool picker shows them: tb… under the extension\'s name', () => {
		assert.ok(ALL_TOOLS.every(tool => tool.referenceName.startsWith('tb')));
		const gettingStarted = readme.slice(readme.indexOf('## Getting started'), readme.indexOf('## Tools'));
		assert.ok(gettingStarted.includes(`**${manifest.displayName}**`), 'the picker groups the tools under the extension\'s display name');
		assert.match(gettingStarted, /`tbRead`/);
		assert.doesNotMatch(gettingStarted, /tool picker[^.]*as `toolbelt_\*`/);
	});

	it('says agent mode needs a chat participant with a model', () => {
		const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('## Getting started'));
		assert.match(install, /chat participant that brings\s+a language model: GitHub Copilot Chat/);
	});

	it('asks for the Node the development tools need', () => {
		const needed = Math.max(...Object.keys(manifest.devDependencies).map(name => {
			const engines = JSON.parse(read(path.join('node_modules', name, 'package.json'))).engines;
			return engines?.node ? lowestMajor(engines.node) : 0;
		}));
		assert.match(readme, new RegExp(`any machine with Node ${needed} or newer`), `the dev tools need Node ${needed}`);
	});

	it('claims the VS Code the tests run on, and npm run test:oldest has a host for it', () => {
		const oldest = /^\^(\d+\.\d+)\.\d+$/.exec(manifest.engines.vscode)?.[1];
		assert.ok(oldest, manifest.engines.vscode);
		assert.match(readme, new RegExp(`Requires VS Code ${oldest.replace('.', '\\.')} or newer`));
		assert.ok(read('scripts/lib/hosts.mjs').includes(`vscode: '${oldest}.`), `scripts/lib/hosts.mjs has no code-server release carrying VS Code ${oldest}`);
		assert.equal(manifest.scripts['test:oldest'], 'npm run build && npm run compile-tests && node scripts/oldest.mjs');
		// @types/vscode may not promise more API than the oldest VS Code has (vsce refuses it too).
		const types = /(\d+\.\d+)/.exec(manifest.devDependencies['@types/vscode'])![1];
		assert.ok(Number(types.split('.')[1]) <= Number(oldest.split('.')[1]), `@types/vscode ${types} is newer than engines.vscode`);
	});

	it('keeps the README\'s screenshots and debug symbols out of the .vsix, which is named for its platform', () => {
		const ignore = read('.vscodeignore').split('\n');
		assert.ok(ignore.includes('media/screenshots/**'));
		const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map(match => match[1]);
		assert.ok(images.every(image => image.startsWith('media/screenshots/')), 'every README image lives in the excluded folder');
		const packaging = read('scripts/package.mjs');
		assert.match(packaging, /removeDebugSymbols\(/);
		assert.match(packaging, /TargetPlatform="\$\{target\}"/);
		assert.match(read('scripts/lib/vsix.mjs'), /`toolbelt-\$\{target\}\.vsix`/);
	});
});
