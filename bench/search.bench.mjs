// grep and find_files over a ~207 MB source tree beside ripgrep run by hand, whole work in a fresh
// Node process each, the tool's first call there (median of several runs):
//   grep for a rare pattern vs `rg --json` with the flags grep passes (the issue's primitive), and vs
//   the search grep runs (the pattern wrapped so a line's first match holds its window), in the OS
//   sandbox (the default) and with it off, since each rg starts inside a read-only sandbox of its own;
//   find_files for every *.ts (first page of 100) vs `rg --files` with the same glob;
//   each also after a first call in the same process, as VS Code's long-lived host makes them.
// The tree is text files copied from this repository's node_modules (folders named node_modules
// renamed, since grep skips those), generated once into bench/.data.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { dataFile, interleaved, measure, primitive, registrySource, repo, table } from './lib/measure.mjs';

const RUNS = 5;
const TREE_BYTES = 207 * 1024 * 1024;
const TEXT = /\.(js|cjs|mjs|ts|mts|cts|json|md|map|txt|d\.ts)$/;
const require = createRequire(import.meta.url);
const rg = require('@vscode/ripgrep').rgPath;
/** Appears in a handful of lines of the tree (the diff package's API). */
const RARE = 'createTwoFilesPatch';
/** What grep adds to every search (tools/grep.ts and core/search filterArgs). */
const GREP_FLAGS = ['--no-config', '--no-require-git', '--glob', '!.git', '--glob', '!node_modules', '--case-sensitive'];
const shellQuote = arg => `'${arg.replace(/'/g, `'\\''`)}'`;

function copyTextFiles(from, to, budget) {
	let copied = 0;
	const walk = (dir, target) => {
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			if (copied >= budget) return;
			const source = path.join(dir, entry.name);
			const name = entry.name === 'node_modules' ? 'packages' : entry.name;
			if (entry.isDirectory()) walk(source, path.join(target, name));
			else if (entry.isFile() && TEXT.test(entry.name)) {
				fs.mkdirSync(target, { recursive: true });
				fs.copyFileSync(source, path.join(target, name));
				copied += fs.statSync(source).size;
			}
		}
	};
	walk(from, to);
	return copied;
}

/** Copies of node_modules' text files, one folder per copy, until the tree holds TREE_BYTES. */
function sourceTree() {
	return dataFile('tree-207mb', dir => {
		let total = 0;
		for (let copy = 0; total < TREE_BYTES; copy++) {
			const added = copyTextFiles(path.join(repo, 'node_modules'), path.join(dir, `copy${copy}`), TREE_BYTES - total);
			if (added === 0) throw new Error('node_modules holds no text files to copy: run npm ci first.');
			total += added;
		}
	});
}

/**
 * The first call in a fresh process, as the CLI makes it: everything it does is timed (a sandbox
 * probe, were one made first, lazy loads, validation), all but loading the modules.
 */
function tool(name, input, setup, { afterFirstCall = false } = {}) {
	const call = `
		const result = await registry.invoke(${JSON.stringify(name)}, ${JSON.stringify(input)});
		if (result.error) throw new Error(result.content[0].text);
		return result.metadata;`;
	return measure(call, { setup, warmup: afterFirstCall ? call : '' });
}

export default async function () {
	const tree = sourceTree();
	const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-search-storage-'));
	try {
		const setup = registrySource(tree, {}, { storageDir });
		const open = registrySource(tree, { sandbox: { mode: 'off' } }, { storageDir });
		const rgRun = args => () => primitive([rg, ...args].map(shellQuote).join(' '), { cwd: tree });
		const search = [...GREP_FLAGS, '--regexp', RARE, '--', '.'];
		const grep = (registry, options) => () => tool('grep', { pattern: RARE }, registry, options);
		const { regex } = require(path.join(repo, 'out/src/tools/grepWindows.js')).windowPattern({ pattern: RARE, fixedStrings: false, pcre2: false });
		const [ours, oursOpen, oursWarm, json, wrapped] = interleaved(RUNS, grep(setup), grep(open), grep(setup, { afterFirstCall: true }), rgRun(['--json', ...search]),
			rgRun(['--json', ...GREP_FLAGS, '--max-count', '1001', '--regexp', regex, '--', '.']));
		const find = (registry, options) => () => tool('find_files', { pattern: '**/*.ts', limit: 100 }, registry, options);
		const [files, filesOpen, filesWarm, rgFiles] = interleaved(RUNS, find(setup), find(open), find(setup, { afterFirstCall: true }),
			rgRun(['--no-config', '--no-require-git', '--glob', '!.git', '--glob', '!node_modules', '--glob', '**/*.ts', '--files', '--', '.']));
		console.log(`tree: ${tree}, ${ours.value.matches ?? '?'} matches of "${RARE}"; median of ${RUNS} runs each, taken in turns`);
		table([
			{ name: `grep, rare pattern, 207 MB tree`, ours, base: json, primitive: 'rg --json', target: 1.1 },
			{ name: '  the same, sandbox off', ours: oursOpen, base: json, primitive: 'rg --json', target: 1.1 },
			{ name: '  the same, vs the search grep runs', ours, base: wrapped, primitive: 'rg --json, wrapped' },
			{ name: '  the same, after a first call (a long-lived host)', ours: oursWarm, base: json, primitive: 'rg --json' },
			{ name: 'find_files **/*.ts, 207 MB tree', ours: files, base: rgFiles, primitive: 'rg --files', target: 1.1 },
			{ name: '  the same, sandbox off', ours: filesOpen, base: rgFiles, primitive: 'rg --files', target: 1.1 },
			{ name: '  the same, after a first call (a long-lived host)', ours: filesWarm, base: rgFiles, primitive: 'rg --files' },
		]);
	} finally {
		fs.rmSync(storageDir, { recursive: true, force: true });
	}
}
