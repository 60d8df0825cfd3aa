// `npm run test:mutation [group …]`: Stryker over the safety core, one group of files at a time,
// each group with only the unit tests that exercise it. A mutant runs only the tests that reach it
// either way, but tests that reach everything (a CLI or MCP round trip, a tool test) would run for
// every mutant that survives the first ones; keeping them out of a group is what makes a cold run
// of the whole core fit well inside an hour on a small machine. Each group keeps its own
// incremental file, so a later run retests only what changed in its files or its tests.
//   npm run test:mutation                     every group
//   npm run test:mutation -- commands files   the groups named
//   npm run test:mutation -- --force          forget earlier results (a run to quote scores from)
//   npm run test:mutation -- --no-check       without the TypeScript checker: faster where the tests
//     are quick (the checker takes ~0.35–0.5 s a mutant here, one mutant at a time per group), but
//     mutants that would not compile are then run too, and mostly killed: a score reads a little higher
//   npm run test:mutation -- --list           the groups, their files and tests
import Stryker from '@stryker-mutator/core';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import base from '../stryker.config.mjs';

/**
 * Each file of stryker.config.mjs's `mutate` belongs to one group (checked below). `tests` are
 * unit test files (test/unit/<name>.test.ts): the ones that import the group's files and the tool
 * tests that kill mutants there through a whole call (the scores in test/MUTATION-SURVIVORS.md
 * were taken with these).
 */
const GROUPS = {
	boundary: {
		files: ['src/core/policy/boundary.ts', 'src/core/files/paths.ts'],
		tests: ['boundary', 'boundaryEdges', 'paths'],
	},
	changes: {
		files: ['src/core/changes/pipeline.ts', 'src/core/changes/stale.ts', 'src/core/changes/locks.ts', 'src/core/changes/backups.ts'],
		tests: ['backupLinks', 'backupLinksAttack', 'backupPruning', 'backupSets', 'atomic', 'staleRules', 'staleReadOnly', 'staleEdges', 'staleOnDisk', 'mutation', 'pipeline', 'locks', 'changeContext',
			'editFile', 'writeFile', 'diskBytes', 'virtualWorkspace', 'patchTool', 'atomicChecked', 'byteEdit', 'cancelDuringCommit'],
	},
	files: {
		files: ['src/core/files/atomic.ts', 'src/core/files/splicedBytes.ts', 'src/core/files/inParallel.ts', 'src/core/files/diskBytes.ts'],
		tests: ['atomic', 'atomicChecked', 'atomicCommit', 'atomicEdges', 'verifiedOpen', 'diskBytes', 'splicedBytes', 'byteEdit',
			'editFile', 'inParallel', 'patchStaging', 'patchStagingLimits', 'staleRules', 'staleEdges', 'staleOnDisk'],
	},
	patch: {
		files: ['src/core/text/match.ts', 'src/core/patch/hunks.ts', 'src/core/patch/apply.ts', 'src/core/results/truncate.ts', 'src/core/files/newlines.ts'],
		tests: ['match', 'editFile', 'patchApply', 'patchPlacement', 'patchParse', 'patchStaging', 'patchStagingEdges',
			'patchStagingLimits', 'patchLineCounts', 'patchTool', 'patchCorpus', 'pipeline', 'virtualWorkspace', 'race', 'atomic',
			'truncate', 'readFile', 'newlines', 'lineIndex', 'cancelDuringCommit'],
	},
	commands: {
		files: ['src/core/commands/process.ts', 'src/core/commands/output.ts'],
		tests: ['process', 'processRunner', 'stubbornProcesses', 'commandOutput', 'hugeInputs', 'commandCancel', 'escapedProcesses'],
	},
	checks: {
		files: ['src/core/schema/validate.ts', 'src/core/policy/approval.ts', 'src/tools/registry.ts', 'src/core/plan/planDocument.ts'],
		tests: ['validate', 'approval', 'confirmationText', 'registry', 'registryEdges', 'trust', 'plan', 'planTools', 'toolSchemas',
			'customTools', 'mutation', 'patchStagingEdges', 'cancelDuringCommit'],
	},
	sandbox: {
		files: ['src/core/sandbox/policy.ts', 'src/core/sandbox/bwrap.ts'],
		tests: ['sandbox', 'sandboxPolicy', 'customTools'],
	},
};

function assertEveryFileInOneGroup() {
	const grouped = Object.values(GROUPS).flatMap(group => group.files);
	const missing = base.mutate.filter(file => !grouped.includes(file));
	const extra = grouped.filter(file => !base.mutate.includes(file));
	const twice = grouped.filter((file, i) => grouped.indexOf(file) !== i);
	if (missing.length + extra.length + twice.length > 0) {
		throw new Error(`scripts/mutation.mjs and stryker.config.mjs disagree: not in a group ${missing.join(', ') || '-'}; `
			+ `not mutated ${extra.join(', ') || '-'}; in two groups ${twice.join(', ') || '-'}.`);
	}
}

/**
 * The checker's program for one group: its mutated files and what they import, with tsconfig.json's
 * compiler options. Against the whole project (tests and benches too) each mutant cost ~1.5 s to
 * check here, most of it re-checking every file that imports the mutated one. The price: a mutant
 * whose type error would show only in a file outside this program (a caller elsewhere in src, a
 * test) is run against the tests instead of being dropped as a compile error.
 */
function checkerTsconfigFor(name) {
	const dir = `reports/mutation/${name}`;
	mkdirSync(dir, { recursive: true });
	const fileName = `${dir}/tsconfig.checker.json`;
	const config = { extends: '../../../tsconfig.json', include: [], files: GROUPS[name].files.map(file => `../../../${file}`) };
	writeFileSync(fileName, JSON.stringify(config, null, '\t') + '\n');
	return fileName;
}

function checkerOptionsFor(name) {
	return {
		tsconfigFile: checkerTsconfigFor(name),
		checkerNodeArgs: ['--require', fileURLToPath(new URL('./typescriptCheckerSpeedups.cjs', import.meta.url))],
	};
}

/** What differs from stryker.config.mjs, which Stryker reads itself and merges these over. */
function optionsFor(name, { force, check }) {
	const group = GROUPS[name];
	return {
		mutate: group.files,
		...(check ? checkerOptionsFor(name) : { checkers: [] }),
		mochaOptions: { ...base.mochaOptions, spec: group.tests.map(test => `out/test/unit/${test}.test.js`) },
		// Results without the checker count mutants that do not compile: not to be reused by a checked run.
		incrementalFile: `reports/mutation/${name}/incremental${check ? '' : '-unchecked'}.json`,
		htmlReporter: { fileName: `reports/mutation/${name}/index.html` },
		jsonReporter: { fileName: `reports/mutation/${name}/mutation.json` },
		force,
	};
}

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** Stryker's mutation score per file: detected over detected and undetected (compile errors and ignored left out). */
function scoresOf(results) {
	const byFile = new Map();
	for (const mutant of results) {
		const tally = byFile.get(mutant.fileName) ?? { detected: 0, undetected: 0 };
		if (DETECTED.has(mutant.status)) tally.detected++;
		if (UNDETECTED.has(mutant.status)) tally.undetected++;
		byFile.set(mutant.fileName, tally);
	}
	return byFile;
}

function parseArguments(argv) {
	const force = argv.includes('--force');
	const names = argv.filter(arg => !arg.startsWith('--'));
	const unknown = names.filter(name => !(name in GROUPS));
	if (unknown.length > 0) throw new Error(`No mutation group named ${unknown.join(', ')}. The groups: ${Object.keys(GROUPS).join(', ')}.`);
	return { force, check: !argv.includes('--no-check'), list: argv.includes('--list'), names: names.length > 0 ? names : Object.keys(GROUPS) };
}

function list() {
	for (const [name, group] of Object.entries(GROUPS)) {
		console.log(`${name}\n  files: ${group.files.join(', ')}\n  tests: ${group.tests.join(', ')}`);
	}
}

async function main() {
	assertEveryFileInOneGroup();
	const { force, check, list: listOnly, names } = parseArguments(process.argv.slice(2));
	if (listOnly) return list();
	execFileSync('npx', ['tsc', '-p', '.', '--outDir', 'out'], { stdio: 'inherit' });
	// A planted bug that breaks bubblewrap's arguments makes the sandbox unavailable: the sandbox
	// tests must then fail, not skip as they do on a machine with no sandbox (test/unit/helpers.ts).
	if (process.platform === 'linux') process.env.TOOLBELT_EXPECT_SANDBOX = '1';
	const rows = [];
	for (const name of names) {
		const started = Date.now();
		const results = await new Stryker(optionsFor(name, { force, check })).runMutationTest();
		const minutes = (Date.now() - started) / 60_000;
		for (const [file, { detected, undetected }] of scoresOf(results)) {
			rows.push({ name, file, detected, undetected, minutes });
		}
	}
	console.log('\ngroup     minutes  score   detected / of  file');
	for (const row of rows) {
		const total = row.detected + row.undetected;
		const score = total === 0 ? 'n/a' : `${(100 * row.detected / total).toFixed(1)}%`;
		console.log(`${row.name.padEnd(9)} ${row.minutes.toFixed(1).padStart(7)}  ${score.padStart(6)}  ${String(row.detected).padStart(8)} / ${String(total).padEnd(4)} ${row.file}`);
	}
}

main().catch(error => {
	console.error(error instanceof Error ? error.message : error);
	process.exitCode = 1;
});
