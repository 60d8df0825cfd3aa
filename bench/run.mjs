// `npm run bench`: runs every bench/*.bench.mjs (or those named on the command line) in turn.
// Each prints its figures beside the raw primitive it is measured against.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
	.filter(name => name.endsWith('.bench.mjs'))
	.filter(name => wanted.length === 0 || wanted.some(w => name.startsWith(w)))
	.sort();
for (const file of files) {
	console.log(`\n## ${file.replace('.bench.mjs', '')}`);
	const module = await import(pathToFileURL(path.join(here, file)).href);
	await module.default();
}
