// CLI start-up: `toolbelt list` (dist/cli.js, as installed) beside `node -e 0`, both whole
// processes started directly (no shell), median of RUNS taken in turns. The first run fills the
// CLI's code cache (untimed).
import * as path from 'node:path';
import { interleaved, primitive, repo, table } from './lib/measure.mjs';

const RUNS = 21;

export default async function () {
	const list = [process.execPath, path.join(repo, 'dist/cli.js'), 'list'];
	primitive(list);
	const [ours, bare] = interleaved(RUNS, () => primitive(list), () => primitive([process.execPath, '-e', '0']));
	// CPU time (GNU time's user + system) says more than wall time when the neighbours are busy.
	console.log(`Node ${process.version}; median of ${RUNS} runs each, taken in turns; mean CPU ${ours.cpuMs.toFixed(0)} ms vs ${bare.cpuMs.toFixed(0)} ms (${(ours.cpuMs / bare.cpuMs).toFixed(2)}×)`);
	table([{ name: 'CLI start-up (toolbelt list)', ours, base: bare, primitive: 'node -e 0', target: 1.3 }]);
}
