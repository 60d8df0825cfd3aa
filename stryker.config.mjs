// Mutation testing of the safety core: plants small bugs in the files below, one at a time, and
// checks that the unit tests catch each. Not part of `npm test`. `npm run test:mutation` runs these
// settings one group of files at a time, each with the tests that exercise it (scripts/mutation.mjs,
// where every file below must have a group); `npx stryker run` runs them all against every test,
// which takes far longer. Incremental, so a later run only retests what changed.
// Survivors that are left on purpose are explained in test/MUTATION-SURVIVORS.md.

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
	mutate: [
		// Boundary, path rules and protected-path matching.
		'src/core/policy/boundary.ts',
		'src/core/files/paths.ts',
		// The change pipeline: stale rules, locks, commit and rollback, atomic writes.
		'src/core/changes/pipeline.ts',
		'src/core/changes/stale.ts',
		'src/core/changes/locks.ts',
		// Backups: copies, or hard links to the originals where the host replaces files.
		'src/core/changes/backups.ts',
		'src/core/files/atomic.ts',
		// edit_file's new bytes kept as pieces of the old ones (searched, diffed and written as such),
		// and the gates that bound how many files the checks, staging and commit work on at once.
		'src/core/files/splicedBytes.ts',
		'src/core/files/inParallel.ts',
		// A big file's edit left on disk: read in chunks, copied around the edit, and checked against
		// the SHA-256 of the bytes the change was computed on.
		'src/core/files/diskBytes.ts',
		// Locating text (exact and tolerant), placing and applying patch hunks.
		'src/core/text/match.ts',
		'src/core/patch/hunks.ts',
		'src/core/patch/apply.ts',
		'src/core/results/truncate.ts',
		// Newline counting (WebAssembly, and the JavaScript fallback) that line numbers and cuts rest on.
		'src/core/files/newlines.ts',
		// The process runner: timeouts, tree kill.
		'src/core/commands/process.ts',
		// Its output: bounded buffer, binary sniffing, log files written in pieces, our own sockets.
		'src/core/commands/output.ts',
		// Input validation, approval rules and the trust check.
		'src/core/schema/validate.ts',
		'src/core/policy/approval.ts',
		'src/tools/registry.ts',
		'src/core/plan/planDocument.ts',
		// What a sandboxed command may see and change, and its bubblewrap arguments.
		'src/core/sandbox/policy.ts',
		'src/core/sandbox/bwrap.ts',
	],
	testRunner: 'mocha',
	// The tests are TypeScript compiled by tsc: Stryker instruments the sources in its sandbox,
	// this compiles them (and the tests) there, and mocha runs the compiled tests.
	buildCommand: 'tsc -p . --outDir out',
	mochaOptions: { spec: ['out/test/unit/**/*.test.js'], config: '.mocharc.json' },
	// Mutants that do not type-check are dropped before any test runs.
	checkers: ['typescript'],
	// Only the sources get "// @ts-nocheck" in the sandbox (the default pattern would also add it to
	// the patch fixtures under test/, changing their line numbers).
	disableTypeChecks: 'src/**/*.ts',
	tsconfigFile: 'tsconfig.json',
	// Each mutant runs only the tests that reach it.
	coverageAnalysis: 'perTest',
	// Results are kept in reports/ (gitignored): a later run retests only changed code and tests.
	incremental: true,
	incrementalFile: 'reports/stryker-incremental.json',
	// A small machine, often shared: raise it with --concurrency on a bigger one.
	concurrency: 2,
	// A mutant that stops a process from being killed must time out, not hang the run.
	timeoutMS: 10_000,
	ignorePatterns: ['dist', 'reports', '.toolbelt-test', 'bench/.data', '*.vsix'],
	reporters: ['clear-text', 'progress', 'html', 'json'],
	htmlReporter: { fileName: 'reports/mutation/index.html' },
	jsonReporter: { fileName: 'reports/mutation/mutation.json' },
	clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
	thresholds: { high: 90, low: 80, break: null },
	tempDirName: '.stryker-tmp',
	cleanTempDir: 'always',
};
