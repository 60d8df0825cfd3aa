// find_references vs grep on a real, mid-size TypeScript project: rxjs 7.8.2's sources (251 files,
// 21k lines; the npm package ships src/ and its tsconfig). For each identifier: the references
// VS Code's TypeScript server finds, the lines grep finds for the same word, how many of those
// lines hold a reference, and the wall time of each (all pages).
//
// It runs inside the VS Code test host (the one the integration suite uses), because the figures
// that matter are the tool's own: VS Code's TypeScript server, our waiting and paging, the API.
// Driving `typescript`'s LanguageService directly would be simpler, but would measure another path.
// The package is fetched with npm into bench/.data (not a dependency of Toolbelt).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureHost, runExtensionTests, tempDir } from '../scripts/lib/host.mjs';
import { repo } from './lib/measure.mjs';

const PACKAGE = 'rxjs@7.8.2';
const dataDir = path.join(repo, 'bench', '.data');
const projectDir = path.join(dataDir, 'rxjs-7.8.2');

/** The package's files, unpacked once from the npm registry. */
function ensureProject() {
	if (fs.existsSync(path.join(projectDir, 'tsconfig.json'))) return;
	const scratch = tempDir('tb-bench-rxjs-');
	execFileSync('npm', ['pack', PACKAGE, '--silent', '--pack-destination', scratch], { stdio: ['ignore', 'ignore', 'inherit'] });
	const tarball = fs.readdirSync(scratch).find(name => name.endsWith('.tgz'));
	execFileSync('tar', ['xzf', path.join(scratch, tarball), '-C', scratch]);
	fs.mkdirSync(dataDir, { recursive: true });
	fs.renameSync(path.join(scratch, 'package'), projectDir);
}

export default async function () {
	ensureProject();
	ensureHost();
	const scratch = tempDir('tb-bench-references-');
	const out = path.join(scratch, 'figures.json');
	const code = await runExtensionTests({
		folder: projectDir,
		extensionDevelopmentPath: repo,
		extensionTestsPath: path.join(repo, 'out', 'bench', 'referencesInHost.js'),
		env: { TOOLBELT_BENCH_OUT: out },
		timeoutMs: 10 * 60_000,
	});
	if (code !== 0 || !fs.existsSync(out)) throw new Error(`the references bench failed in the VS Code host (exit code ${code})`);
	const { firstAnswerMs, coldOk, rows } = JSON.parse(fs.readFileSync(out, 'utf8'));
	console.log(`${PACKAGE} sources in VS Code's TypeScript server; first answer after ${(firstAnswerMs / 1000).toFixed(1)} s (server start and project load)${coldOk ? '' : ' — it never answered'}`);
	const header = ['identifier', 'references', 'ref. lines', 'files', 'time', 'grep lines', 'files', 'time', 'grep lines with a ref.', 'ref. lines grep missed'];
	const lines = rows.map(row => [
		row.symbol, String(row.references.total), String(row.references.lines), String(row.references.files), `${row.references.ms} ms`,
		String(row.grep.lines), String(row.grep.files), `${row.grep.ms} ms`,
		`${row.grepLinesWithReference} (${Math.round((100 * row.grepLinesWithReference) / Math.max(1, row.grep.lines))} %)`, String(row.referenceLinesGrepMissed),
	]);
	const widths = header.map((h, i) => Math.max(h.length, ...lines.map(l => l[i].length)));
	const format = cells => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ');
	console.log(format(header));
	for (const line of lines) console.log(format(line));
}
