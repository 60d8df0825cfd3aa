// Loaded into Stryker's TypeScript checker process (checkerNodeArgs in scripts/mutation.mjs). The
// checker feeds each mutant to a TypeScript watch build (a solution builder). Two costs of that
// build do nothing for a mutation run, and are cut here; type-checking itself is untouched.
// 1. The watch waits 250 ms after a file changes before building, to gather an editor's keystrokes.
// The checker changes its in-memory files all at once and then waits for that build, so the wait
// batches nothing: it only added 250 ms to every mutant.
function withoutWatchDelay(sys) {
	const setTimeoutOfSystem = sys.setTimeout;
	sys.setTimeout = (callback, _ms, ...args) => setTimeoutOfSystem(callback, 0, ...args);
}

// 2. The solution builder parses every file again for each build (its source file cache lives for
// one build), so each mutant paid for parsing lib.*.d.ts, @types/node and every unchanged source,
// and for binding them again in the new program. Here the compiler host each build creates gets a
// cache that outlives the build: a file whose text and parse options are those of its last parse
// gets that same SourceFile, as TypeScript's own watch mode and language service reuse them (a
// SourceFile is not changed by a program that uses it; the options of the checker's program never
// change within a run). The mutated file has new text, so it is parsed again, and so is the file
// when the mutant is undone. One entry per file: memory stays that of one program.
const parsed = new Map();
/** Counts for TOOLBELT_CHECKER_STATS (a file the checker appends them to, every 50 builds). */
const reuse = { builds: 0, reused: 0, parsed: 0 };

function parseKey(languageVersionOrOptions) {
	if (typeof languageVersionOrOptions !== 'object' || languageVersionOrOptions === null) return String(languageVersionOrOptions);
	const { languageVersion, impliedNodeFormat, jsDocParsingMode } = languageVersionOrOptions;
	return `${languageVersion}/${impliedNodeFormat}/${jsDocParsingMode}`;
}

function reusingSourceFiles(host) {
	const getSourceFile = host.getSourceFile;
	if (!getSourceFile || getSourceFile.reusesParsedFiles) return;
	const cached = (fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) => {
		const text = shouldCreateNewSourceFile ? undefined : host.readFile(fileName);
		const key = parseKey(languageVersionOrOptions);
		const known = parsed.get(fileName);
		if (text !== undefined && known && known.key === key && known.text === text) {
			reuse.reused++;
			return known.sourceFile;
		}
		reuse.parsed++;
		const sourceFile = getSourceFile.call(host, fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile);
		if (sourceFile && text !== undefined && sourceFile.text === text) parsed.set(fileName, { key, text, sourceFile });
		return sourceFile;
	};
	cached.reusesParsedFiles = true;
	host.getSourceFile = cached;
}

// TypeScript's exports are getters that cannot be reassigned, and an import of it made later sees
// the exports object as it was when it was loaded. So typescript is loaded here, before the checker
// imports it, as an object whose one own member wraps the builder program the solution builder
// creates for each build, and which reads everything else from TypeScript's own exports.
const Module = require('node:module');
const typescriptFile = require.resolve('typescript');
const loadJavaScript = Module._extensions['.js'];
Module._extensions['.js'] = function (module, filename) {
	loadJavaScript.call(this, module, filename);
	if (filename !== typescriptFile) return;
	const createBuilderProgram = module.exports.createEmitAndSemanticDiagnosticsBuilderProgram;
	module.exports = Object.create(module.exports, {
		createEmitAndSemanticDiagnosticsBuilderProgram: {
			value: (rootNames, options, host, ...rest) => {
				if (host) reusingSourceFiles(host);
				if (++reuse.builds % 50 === 0 && process.env.TOOLBELT_CHECKER_STATS) require('node:fs').appendFileSync(process.env.TOOLBELT_CHECKER_STATS, `${JSON.stringify(reuse)}\n`);
				return createBuilderProgram(rootNames, options, host, ...rest);
			},
		},
	});
};
const ts = require('typescript');
withoutWatchDelay(ts.sys);
