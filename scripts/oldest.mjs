// `npm run test:oldest`: the integration suites on the oldest VS Code that package.json's
// engines.vscode claims, from the code-server release that carries it (scripts/lib/hosts.mjs),
// installed into the same cache as the newest. Arguments go on to scripts/integration.mjs (e.g.
// --only single). The first run installs that code-server and its Node (a few minutes).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOSTS } from './lib/hosts.mjs';

const root = path.resolve(import.meta.dirname, '..');
const claimed = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.vscode;
const oldest = /^\^?(\d+\.\d+)\./.exec(claimed)?.[1];
const release = Object.keys(HOSTS).find(version => HOSTS[version].vscode.startsWith(`${oldest}.`));
if (!release) {
	console.error(`engines.vscode is ${claimed}, and no code-server release in scripts/lib/hosts.mjs carries VS Code ${oldest}. Add one (npm view code-server versions; its lib/vscode/package.json names the VS Code).`);
	process.exit(2);
}
console.log(`engines.vscode ${claimed}: the integration suites in VS Code ${HOSTS[release].vscode} (code-server ${release}, Node ${HOSTS[release].node})`);
// host.mjs reads it when integration.mjs imports it.
process.env.TOOLBELT_CODE_SERVER = release;
await import('./integration.mjs');
