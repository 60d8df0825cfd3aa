// The file tools beside their raw primitives, each measured in a fresh Node process (peak RSS
// is that measurement's own), times the median of several warm runs:
//   grep over this repo's node_modules vs `rg` with the same pattern and flags (target ratio ≤ 1.10);
//   grep limit 100 on a pattern with over a million matching lines (rg is stopped early) vs a full rg;
//   find_files vs `rg --files`;
//   list_dir depth 10 on a generated tree of 22,523 entries vs `find -maxdepth 10`;
//   edit_file of one line in a 50 MB file vs `sed -i` and a naive read + replace + writeFile.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { measure, primitive, registrySource, repo, table } from './lib/measure.mjs';

const RUNS = 5;
const ROUNDS = 3;
const rg = createRequire(import.meta.url)('@vscode/ripgrep').rgPath;

/** A body that runs `once` RUNS times and returns the median (ms) and the last value. */
function median(once) {
	return `
		const times = [];
		let value;
		for (let run = 0; run < ${RUNS}; run++) {
			const start = process.hrtime.bigint();
			value = await (async () => { ${once} })();
			times.push(Number(process.hrtime.bigint() - start) / 1e6);
		}
		times.sort((a, b) => a - b);
		return { median: times[Math.floor(times.length / 2)], value };`;
}

/** measure() with the median of the runs as `ms`. */
function timed(once, options) {
	const result = measure(median(once), options);
	return { ms: result.value.median, rssMB: result.rssMB, value: result.value.value };
}

/**
 * Both sides measured in turns, ROUNDS times each, keeping each side's best median: on a shared
 * 2-core machine other processes come and go, and turns keep that from favouring one side.
 */
function pair(ours, base) {
	let best;
	for (let round = 0; round < ROUNDS; round++) {
		const o = ours();
		const b = base();
		best = best ? { ours: o.ms < best.ours.ms ? o : best.ours, base: b.ms < best.base.ms ? b : best.base } : { ours: o, base: b };
	}
	return best;
}

function tool(name, input, setup) {
	return timed(`
		const result = await registry.invoke(${JSON.stringify(name)}, ${JSON.stringify(input)});
		if (result.error) throw new Error(result.error.message);
		return result.metadata;`, { setup });
}

/** rg as a person would run it in a terminal: output read whole, like a pipe into a file. */
function rawRg(args, cwd) {
	return timed(`
		const { execFileSync } = require('node:child_process');
		let out = '';
		try {
			out = execFileSync(${JSON.stringify(rg)}, ${JSON.stringify(args)}, { cwd: ${JSON.stringify(cwd)}, maxBuffer: 1 << 30, encoding: 'utf8' });
		} catch (error) {
			if (error.status !== 1) throw error;
		}
		return out.length;`);
}

function writeBigText(file, bytes) {
	const line = `${'a line of ordinary source text, with words and numbers 0123456789 '.repeat(2)}\n`;
	const block = line.repeat(Math.ceil((1 << 20) / line.length));
	const fd = fs.openSync(file, 'w');
	for (let written = 0; written < bytes; written += block.length) fs.writeSync(fd, block);
	fs.writeSync(fd, 'THE LINE TO CHANGE\n');
	for (let written = 0; written < bytes; written += block.length) fs.writeSync(fd, block);
	fs.closeSync(fd);
}

/**
 * 1,877 folders ten levels deep, 11 files in each (22,523 entries), and a .gitignore at the top:
 * the shape of a source tree. Kept in bench/.data between runs.
 */
function listTree() {
	const root = path.join(repo, 'bench', '.data', 'tree-22k');
	if (fs.existsSync(path.join(root, '.done'))) return root;
	fs.rmSync(root, { recursive: true, force: true });
	const fill = (folder, depth) => {
		fs.mkdirSync(folder, { recursive: true });
		for (let file = 0; file < 11; file++) fs.writeFileSync(path.join(folder, `file${file}.ts`), 'x');
		if (depth >= 10) return;
		const folders = depth < 4 ? 4 : depth % 2 === 0 ? 2 : 1;
		for (let sub = 0; sub < folders; sub++) fill(path.join(folder, `dir${sub}`), depth + 1);
	};
	fill(root, 1);
	fs.writeFileSync(path.join(root, '.gitignore'), '*.log\nbuild/\n');
	fs.writeFileSync(path.join(root, '.done'), '');
	return root;
}

export default async function () {
	// Backups and command logs of every measured call go here, not into the CLI's shared folder:
	// each edit_file run backs up the whole big file.
	const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-files-storage-'));
	try {
		await measureAll(storageDir);
	} finally {
		fs.rmSync(storageDir, { recursive: true, force: true });
	}
}

/** BENCH_ROWS=list (a regular expression) measures only the rows whose tool it names. */
const wanted = name => new RegExp(process.env.BENCH_ROWS ?? '').test(name);

async function measureAll(storageDir) {
	const setup = registrySource(repo, {}, { storageDir });
	const rows = [];
	if (wanted('grep')) grepRows(setup, rows);
	if (wanted('find_files')) {
		const find = pair(() => tool('find_files', { pattern: '*.js', path: 'node_modules', includeIgnored: true }, setup),
			() => rawRg(['--no-config', '--no-ignore', '--files', '-g', '*.js', '--', 'node_modules'], repo));
		rows.push({ name: `find_files "*.js" in node_modules (${find.ours.value.total} files, 500 shown)`, ...find });
	}
	if (wanted('list_dir')) listRows(storageDir, rows);
	if (wanted('edit_file')) editRows(storageDir, rows);
	table(rows);
	console.log(`(best of ${ROUNDS} alternating medians of ${RUNS} warm runs each; baseline = rg with the same pattern and ignore flags, output read whole; find and sed through sh, their spawn counted)`);
	if (wanted('edit_file')) {
		console.log('durability: edit_file copies the original to a backup (copyFile: a clone or an in-kernel copy; not flushed), writes a temp by copying the file around the edit while checking its SHA-256 against the one the edit was made on,'
			+ ' fsyncs the temp, renames it over the file and fsyncs the folder: after a crash the file is its old bytes or its new ones;'
			+ ' sed -i writes a temp and renames it, with no fsync and no backup (a crash soon after may lose the new content).');
	}
}

function grepRows(setup, rows) {

	// Patterns with a few hundred hits: the whole tree is searched by both. The second one matches
	// inside minified files, so its matching lines are megabytes of JSON to read.
	for (const pattern of ['readFileSync', 'createTwoFilesPatch|hasOwnProperty\\(']) {
		const { ours, base } = pair(() => tool('grep', { pattern, path: 'node_modules', includeIgnored: true, limit: 100 }, setup),
			() => rawRg(['--no-config', '--no-ignore', '--case-sensitive', '-e', pattern, '--', 'node_modules'], repo));
		rows.push({ name: `grep "${pattern}" in node_modules (${ours.value.totalMatches ?? '?'} lines)`, ours, base });
	}

	// Over a million matching lines: ours stops rg once the page is full; the baseline prints them all.
	// The baseline counts every match (rg -c, no output to read): the cost of looking at all of them.
	for (const [label, where, offset] of [['node_modules (>1M lines match)', 'node_modules', 0], ['node_modules/typescript only', 'node_modules/typescript', 0], ['node_modules, offset 10000 (page 101)', 'node_modules', 10000]]) {
		const { ours, base } = pair(() => tool('grep', { pattern: 'e', path: where, includeIgnored: true, limit: 100, offset }, setup),
			() => rawRg(['--no-config', '--no-ignore', '-c', '-e', 'e', '--', where], repo));
		rows.push({ name: `grep "e" limit 100 in ${label}`, ours, base });
	}

}

function listRows(storageDir, rows) {
	const tree = listTree();
	const listSetup = registrySource(tree, {}, { storageDir });
	for (const [label, input] of [['first page', {}], ['page at 20,000 (walks nearly all)', { offset: 20_000 }]]) {
		const list = pair(() => tool('list_dir', { depth: 10, ...input }, listSetup), () => primitive(['find', '.', '-maxdepth', '10'], { cwd: tree, runs: RUNS }));
		rows.push({ name: `list_dir depth 10, 22,523 entries, ${label}`, primitive: 'find -maxdepth 10', ...list, ...(input.offset === undefined ? { target: 3 } : {}) });
	}
}

function editRows(storageDir, rows) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-files-'));
	try {
		writeBigText(path.join(dir, 'big.txt'), 25 << 20);
		const size = fs.statSync(path.join(dir, 'big.txt')).size;
		const editSetup = registrySource(dir, { approval: 'never' }, { storageDir });
		// A backup set per run is part of what is timed; dropping them between measurements keeps
		// the temp folder to one measurement's sets.
		const dropBackups = () => fs.rmSync(path.join(storageDir, 'backups'), { recursive: true, force: true });
		// Each run changes the line back and forth, so every run really writes; a small state file
		// says which way is next, across the measuring processes.
		const state = path.join(dir, 'state.txt');
		const nextDirection = () => {
			const forward = !fs.existsSync(state) || fs.readFileSync(state, 'utf8') === 'back';
			fs.writeFileSync(state, forward ? 'forth' : 'back');
			return forward ? ['THE LINE TO CHANGE', 'THE LINE, CHANGED'] : ['THE LINE, CHANGED', 'THE LINE TO CHANGE'];
		};
		const direction = `
			const fs = require('node:fs');
			const forward = !fs.existsSync(${JSON.stringify(state)}) || fs.readFileSync(${JSON.stringify(state)}, 'utf8') === 'back';
			fs.writeFileSync(${JSON.stringify(state)}, forward ? 'forth' : 'back');
			const [from, to] = forward ? ['THE LINE TO CHANGE', 'THE LINE, CHANGED'] : ['THE LINE, CHANGED', 'THE LINE TO CHANGE'];`;
		const { ours: edit, base: sed } = pair(() => {
			dropBackups();
			return timed(`${direction}
			const result = await registry.invoke('edit_file', { path: 'big.txt', edits: [{ oldText: from, newText: to }] });
			if (result.error) throw new Error(result.error.message);
			return result.metadata.added;`, { setup: editSetup });
		}, () => {
			const runs = Array.from({ length: RUNS }, () => {
				const [from, to] = nextDirection();
				return primitive(['sed', '-i', `s/${from}/${to}/`, path.join(dir, 'big.txt')]);
			});
			runs.sort((a, b) => a.ms - b.ms);
			return { ...runs[Math.floor(RUNS / 2)], rssMB: Math.max(...runs.map(run => run.rssMB)) };
		});
		rows.push({ name: `edit_file one line of a ${(size / (1 << 20)).toFixed(0)} MB file (atomic, fsync, backup, diff)`, primitive: 'sed -i (no fsync)', ours: edit, base: sed, target: 1.5 });
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}
