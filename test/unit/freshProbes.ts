import type * as Runtime from '../../src/core/sandbox/runtime';

/**
 * Loaded by mocha before any test file (.mocharc.json `require`). Stryker runs mocha once per
 * planted bug, in one process: a sandbox probe made under a bug in bwrap.ts (a mount hiding /usr,
 * say) was kept for every later run, whose sandboxed tests then failed ("Not sandboxed: …") for a
 * bug they did not have, counting as kills. Each run probes afresh.
 *
 * The module is looked up, never loaded, here: loading it before the tests would keep its
 * module-level constants as they were, and Stryker could no longer plant bugs in them.
 */
export const mochaHooks = {
	beforeAll(): void {
		const loaded = require.cache[require.resolve('../../src/core/sandbox/runtime')];
		(loaded?.exports as typeof Runtime | undefined)?.forgetSandboxProbes();
	},
};
