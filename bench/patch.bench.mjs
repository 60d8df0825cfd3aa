// apply_patch on a generated tree of 200 files with a git-style patch of 1,000 hunks (5 per file),
// beside `git apply` of the same patch on a copy of the same tree. Ours runs the whole tool call
// (parse, place, stage, approval, backup, atomic writes with rollback bookkeeping); git's figure
// includes its process start, as a model's shell call would. Each side runs on a fresh copy; the
// median of RUNS is shown. Peak memory: ours is the Node process's maxRSS, git's from /usr/bin/time.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { measure, registrySource, table } from './lib/measure.mjs';

export const FILES = 200;
const LINES = 400;
const HUNKS_PER_FILE = 5;
const RUNS = 5;

function fileName(index) {
	return `src/module${index % 10}/file${index}.ts`;
}

function fileLines(index) {
	const lines = [];
	for (let line = 1; line <= LINES; line++) {
		// Some lines repeat in every file and inside a file, as braces and blank lines do in code.
		if (line % 10 === 0) lines.push('}');
		else if (line % 10 === 1) lines.push('');
		else lines.push(`\tconst value${line} = compute(${index}, ${line}); // file ${index}`);
	}
	return lines;
}

/** A hunk every LINES / HUNKS_PER_FILE lines: 3 context lines, one line replaced by two, 3 context lines. */
function filePatch(index) {
	const lines = fileLines(index);
	const name = fileName(index);
	const out = [`diff --git a/${name} b/${name}`, 'index 0000001..0000002 100644', `--- a/${name}`, `+++ b/${name}`];
	let shift = 0;
	for (let hunk = 0; hunk < HUNKS_PER_FILE; hunk++) {
		const changed = Math.floor((hunk + 0.5) * (LINES / HUNKS_PER_FILE)) + 3; // 1-based, never on a brace
		const start = changed - 3;
		out.push(`@@ -${start},7 +${start + shift},8 @@`);
		for (let line = start; line < changed; line++) out.push(` ${lines[line - 1]}`);
		out.push(`-${lines[changed - 1]}`);
		out.push(`+${lines[changed - 1].replace('compute', 'computeFaster')}`);
		out.push(`+\tcheck(value${changed});`);
		for (let line = changed + 1; line <= changed + 3; line++) out.push(` ${lines[line - 1]}`);
		shift += 1;
	}
	return out.join('\n');
}

function makeTree(root) {
	for (let index = 0; index < FILES; index++) {
		const file = path.join(root, fileName(index));
		fs.mkdirSync(path.dirname(file), { recursive: true });
		fs.writeFileSync(file, `${fileLines(index).join('\n')}\n`);
	}
}

function snapshot(root) {
	return Array.from({ length: FILES }, (_, index) => fs.readFileSync(path.join(root, fileName(index)), 'utf8')).join('\0');
}

function median(values) {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(sorted.length / 2)];
}

function ours(dir, pristine, patchFile, run) {
	const root = path.join(dir, `ours-${run}`);
	fs.cpSync(pristine, root, { recursive: true });
	const storage = path.join(dir, `storage-${run}`);
	const setup = `${registrySource(root, { approval: 'never', showDiffs: 'never' }, { storageDir: storage })}
		const patch = require('node:fs').readFileSync(${JSON.stringify(patchFile)}, 'utf8');`;
	const result = measure(`
		const result = await registry.invoke('apply_patch', { patch });
		if (result.error) throw new Error(result.error.message);
		return result.metadata.files.length;`, { setup });
	if (result.value !== FILES) throw new Error(`apply_patch changed ${result.value} files, not ${FILES}`);
	return { ...result, root };
}

/** Parsing and staging alone: every file read, patched and encoded in memory, nothing written. */
function oursInMemory(dir, pristine, patchFile) {
	const setup = `
		const { createNodeEnvironment } = require(repo + '/out/src/core/nodeHost.js');
		const { parsePatch } = require(repo + '/out/src/core/patch/parse.js');
		const { stagePatch } = require(repo + '/out/src/core/patch/apply.js');
		const env = createNodeEnvironment({ roots: [${JSON.stringify(pristine)}], storageDir: ${JSON.stringify(path.join(dir, 'storage-staging'))} });
		const text = require('node:fs').readFileSync(${JSON.stringify(patchFile)}, 'utf8');`;
	return measure(`
		const ctx = { boundary: await env.boundary(), host: env.host, state: env.state, settings: env.settings(), signal: new AbortController().signal, note() {} };
		const staged = await stagePatch(parsePatch(text), ctx);
		return staged.changes.length;`, { setup });
}

/**
 * The floor of any all-or-nothing write of the same files, bare Node with no checks: the patched
 * bytes (taken from git's result, read before the clock starts) go to a temp beside each file,
 * created exclusively, written and fsync'd, 8 at a time on the I/O threads as ours are; then each
 * temp is renamed over its file in turn and each folder is fsync'd once. `git apply` instead
 * unlinks each file and creates it again, which a reader or a crash can catch half done.
 */
function atomicWritesAlone(dir, pristine, patchedRoot, run) {
	const root = path.join(dir, `floor-${run}`);
	fs.cpSync(pristine, root, { recursive: true });
	const setup = `
		const fs = require('node:fs');
		const path = require('node:path');
		const names = Array.from({ length: ${FILES} }, (_, index) => \`src/module\${index % 10}/file\${index}.ts\`);
		const targets = names.map(name => path.join(${JSON.stringify(root)}, name));
		const bytes = names.map(name => fs.readFileSync(path.join(${JSON.stringify(patchedRoot)}, name)));
		const io = (call, ...args) => new Promise((resolve, reject) => call(...args, (error, value) => (error ? reject(error) : resolve(value))));`;
	const result = measure(`
		const temps = targets.map(target => \`\${target}.\${process.pid}.tmp\`);
		let next = 0;
		const worker = async () => {
			for (let index = next++; index < targets.length; index = next++) {
				const fd = await io(fs.open, temps[index], 'wx', 0o644);
				await io(fs.write, fd, bytes[index], 0, bytes[index].length, null);
				await io(fs.fsync, fd);
				fs.closeSync(fd);
			}
		};
		await Promise.all(Array.from({ length: 8 }, worker));
		targets.forEach((target, index) => fs.renameSync(temps[index], target));
		for (const folder of new Set(targets.map(target => path.dirname(target)))) {
			const fd = fs.openSync(folder, 'r');
			fs.fsyncSync(fd);
			fs.closeSync(fd);
		}
		return targets.length;`, { setup });
	return { ...result, root };
}

function git(dir, pristine, patchFile, run) {
	const root = path.join(dir, `git-${run}`);
	fs.cpSync(pristine, root, { recursive: true });
	const start = process.hrtime.bigint();
	execFileSync('git', ['apply', patchFile], { cwd: root, stdio: 'pipe' });
	const ms = Number(process.hrtime.bigint() - start) / 1e6;
	return { ms, root };
}

/** The bench's inputs in `dir`: the tree as it is before the patch (`pristine`) and the patch file. */
export function writeInputs(dir) {
	const pristine = path.join(dir, 'pristine');
	makeTree(pristine);
	const patchFile = path.join(dir, 'change.patch');
	fs.writeFileSync(patchFile, `${Array.from({ length: FILES }, (_, index) => filePatch(index)).join('\n')}\n`);
	return { pristine, patchFile };
}

export default async function () {
	const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-patch-')));
	try {
		const { pristine, patchFile } = writeInputs(dir);

		const oursRuns = [];
		const stageRuns = [];
		const gitRuns = [];
		const floorRuns = [];
		for (let run = 0; run < RUNS; run++) {
			oursRuns.push(ours(dir, pristine, patchFile, run));
			stageRuns.push(oursInMemory(dir, pristine, patchFile));
			gitRuns.push(git(dir, pristine, patchFile, run));
			floorRuns.push(atomicWritesAlone(dir, pristine, gitRuns[0].root, run));
		}
		if (snapshot(oursRuns[0].root) !== snapshot(gitRuns[0].root)) throw new Error('apply_patch and git apply produced different trees');
		if (snapshot(floorRuns[0].root) !== snapshot(gitRuns[0].root)) throw new Error('the bare atomic writes produced another tree than git apply');

		let gitRss = Number.NaN;
		if (fs.existsSync('/usr/bin/time')) {
			const root = path.join(dir, 'git-rss');
			fs.cpSync(pristine, root, { recursive: true });
			const report = path.join(dir, 'time.txt');
			execFileSync('/usr/bin/time', ['-o', report, '-f', '%M', 'git', 'apply', patchFile], { cwd: root, stdio: 'pipe' });
			gitRss = Number(fs.readFileSync(report, 'utf8').trim().split('\n').pop()) / 1024;
		}
		const patchKB = fs.statSync(patchFile).size / 1024;
		console.log(`${FILES} files × ${LINES} lines, ${FILES * HUNKS_PER_FILE} hunks (${patchKB.toFixed(0)} KB patch); median of ${RUNS} runs; trees verified equal`);
		// What a process that loaded the same modules holds before any patch work: the floor of the peaks above.
		const floor = measure('return 0;', { setup: `require(repo + '/out/src/tools/index.js'); require(repo + '/out/src/core/nodeHost.js');` });
		const gitFigures = { ms: median(gitRuns.map(r => r.ms)), rssMB: gitRss };
		const floorFigures = { ms: median(floorRuns.map(r => r.ms)), rssMB: Math.max(...floorRuns.map(r => r.rssMB)) };
		const oursFigures = { ms: median(oursRuns.map(r => r.ms)), rssMB: Math.max(...oursRuns.map(r => r.rssMB)) };
		table([
			{ name: 'apply_patch, 200 files / 1,000 hunks', primitive: 'git apply', target: 2, ours: oursFigures, base: gitFigures },
			{ name: '  of which parse + stage in memory', primitive: 'git apply', ours: { ms: median(stageRuns.map(r => r.ms)), rssMB: Math.max(...stageRuns.map(r => r.rssMB)) }, base: gitFigures },
			{ name: '  bare atomic writes of the same files', primitive: 'git apply', ours: floorFigures, base: gitFigures },
			{ name: 'apply_patch beside its bare atomic writes', primitive: 'temp + fsync + rename', ours: oursFigures, base: floorFigures },
		]);
		console.log(`Peak RSS of a Node process with the modules loaded and no work: ${floor.rssMB.toFixed(0)} MB (the patch's own share is the difference).`);
		console.log('The rest of the tool call is the shared commit: stale checks (each file read once more, and those bytes kept for the rollback), backup of 200 originals (hard links to them: each is replaced by a rename, so the link is the only name left of its bytes; sealed owner-only after), and an fsync\'d atomic write per file with one fsync per folder (git apply does not fsync); line counts come from the lines staging split (no diff text).');
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

