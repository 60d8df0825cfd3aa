// `npm test`: every check, in order, stopping at the first failure with its exit code.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ensureHost } from './lib/host.mjs';

const root = path.resolve(import.meta.dirname, '..');
// Installing the test host first means a machine that cannot have it fails in seconds, not after the build.
ensureHost();

const steps = [
	['npm', 'run', 'lint'],
	['npm', 'run', 'typecheck'],
	['npm', 'run', 'test:unit'],
	['npm', 'run', 'build'],
	['npm', 'run', 'package'],
	[process.execPath, 'scripts/integration.mjs'],
	[process.execPath, 'scripts/e2e.mjs', '--screenshots', 'out/e2e/screenshots'],
];
for (const [command, ...args] of steps) {
	const label = command === process.execPath ? `node ${args.join(' ')}` : `npm ${args.join(' ')}`;
	console.log(`\n━━ ${label} ━━`);
	const started = Date.now();
	const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
	const code = result.status ?? 1;
	if (code !== 0) {
		console.error(`\n✗ ${label} failed (exit ${result.signal ?? code}) after ${Math.round((Date.now() - started) / 1000)} s`);
		process.exit(code);
	}
}
console.log('\n✓ all checks passed');
