// Loaded into Stryker's TypeScript checker process (checkerNodeArgs in scripts/mutation.mjs).
// The checker feeds each mutant to a TypeScript watch build, which waits 250 ms after a file
// changes before building, to gather an editor's keystrokes. The checker changes its in-memory
// files all at once and then waits for that build, so the wait batches nothing: it only added
// 250 ms to every mutant. Type-checking itself is untouched: each mutant still gets a new program.
const ts = require('typescript');

const setTimeoutOfSystem = ts.sys.setTimeout;
ts.sys.setTimeout = (callback, _ms, ...args) => setTimeoutOfSystem(callback, 0, ...args);
