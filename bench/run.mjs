// `npm run bench`: runs every bench/*.bench.mjs (or those named on the command line) in turn.
// Each prints its figures beside the raw primitive it is measured against; at the end every row
// that has a target is printed again in one table, the table with this run's figures.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as path from 'node:path';
import { printedRows, printTable } from './lib/measure.mjs';

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
const targeted = printedRows.filter(row => row.target !== undefined);
if (targeted.length > 0) {
	console.log('\n## summary: every row with a target');
	printTable(targeted);
}
