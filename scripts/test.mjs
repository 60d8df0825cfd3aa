// `npm test`: every check, in order, stopping at the first failure with its exit code.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ensureHost } from './lib/host.mjs';

const root = path.resolve(import.meta.dirname, '..');
// Installing the test host first means a machine that cannot have it fails in seconds, not after the build.
ensureHost();

// The sandbox is the product's promise: on Linux (bubblewrap installed by the README's command) its
// tests fail where it does not work, instead of skipping as a developer's machine without it does.
if (process.platform === 'linux') process.env.TOOLBELT_EXPECT_SANDBOX = '1';

const steps = [
	['npm', 'run', 'lint'],
	['npm', 'run', 'typecheck'],
	['npm', 'run', 'test:unit'],
	['npm', 'run', 'build'],
	['npm', 'run', 'package'],
	[process.execPath, 'scripts/integration.mjs'],
	[process.execPath, 'scripts/e2e.mjs', '--screenshots', 'out/e2e/screenshots'],
];
// Counted from the runners' own summaries, for one closing line over every suite.
const totals = { passed: 0, failed: 0 };
function count(line) {
	let match;
	if ((match = /^\s*(\d+) passing\b/.exec(line))) totals.passed += Number(match[1]);
	else if ((match = /^\s*(\d+) failing\b/.exec(line))) totals.failed += Number(match[1]);
	else if (/^\s+✔ .* \(\d+ ms\)$/.test(line) && currentIsE2e) totals.passed++;
	else if (/^\s+✗ /.test(line) && currentIsE2e) totals.failed++;
}
let currentIsE2e = false;

/** Runs a step with its output shown as it comes and scanned for test counts. */
function run(command, args) {
	return new Promise(resolve => {
		const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
		let pending = '';
		child.stdout.on('data', chunk => {
			process.stdout.write(chunk);
			const lines = (pending + chunk.toString()).split('\n');
			pending = lines.pop();
			lines.forEach(count);
		});
		child.on('close', (code, signal) => {
			count(pending);
			resolve(signal ?? code ?? 1);
		});
	});
}

for (const [command, ...args] of steps) {
	const label = command === process.execPath ? `node ${args.join(' ')}` : `npm ${args.join(' ')}`;
	console.log(`\n━━ ${label} ━━`);
	currentIsE2e = args[0] === 'scripts/e2e.mjs';
	const started = Date.now();
	const code = await run(command, args);
	if (code !== 0) {
		console.error(`\n✗ ${label} failed (exit ${code}) after ${Math.round((Date.now() - started) / 1000)} s`);
		console.log(`\n${totals.passed} passed, ${Math.max(totals.failed, 1)} failed`);
		process.exit(typeof code === 'number' ? code : 1);
	}
}
console.log('\n✓ all checks passed');
console.log(`\n${totals.passed} passed, ${totals.failed} failed`);
