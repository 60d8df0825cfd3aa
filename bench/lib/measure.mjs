// Shared benchmark plumbing: each measurement runs in a fresh Node process so its peak memory
// (maxRSS) belongs to that measurement alone.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Runs `body` (the source of an async function body; `require` and `repo` are in scope) in a
 * child process and returns { ms, rssMB, value } where value is what the body returned. `setup`
 * (e.g. loading modules) runs first and is not timed, but its memory counts in the peak.
 */
export function measure(body, { setup = '', env = {} } = {}) {
	const script = `
		const repo = ${JSON.stringify(repo)};
		${setup}
		(async () => {
			const start = process.hrtime.bigint();
			const value = await (async () => { ${body} })();
			const ms = Number(process.hrtime.bigint() - start) / 1e6;
			process.stdout.write(JSON.stringify({ ms, rssMB: process.resourceUsage().maxRSS / 1024, value }));
		})().catch(error => { console.error(error); process.exit(1); });`;
	const out = execFileSync(process.execPath, ['-e', script], { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' });
	return JSON.parse(out);
}

/**
 * Source that builds a registry over `root` from the compiled code in out/ (bind it to `registry`).
 * `storageDir` (required) is where its backups and command logs go: a bench makes a temp folder and
 * removes it afterwards, since the CLI's shared default folder is never pruned outside VS Code.
 */
export function registrySource(root, settings = {}, { storageDir } = {}) {
	if (!storageDir) throw new Error('registrySource needs { storageDir }: a temp folder the bench removes afterwards.');
	return `
		const { createNodeEnvironment } = require(repo + '/out/src/core/nodeHost.js');
		const { ALL_TOOLS, ToolRegistry } = require(repo + '/out/src/tools/index.js');
		const registry = new ToolRegistry(ALL_TOOLS, createNodeEnvironment({ roots: [${JSON.stringify(root)}], storageDir: ${JSON.stringify(storageDir)}, settings: ${JSON.stringify(settings)}, confirm: async () => true }));`;
}

export function table(rows) {
	const header = ['case', 'toolbelt', 'baseline', 'ratio', 'toolbelt RSS', 'baseline RSS'];
	const lines = rows.map(r => [r.name, `${r.ours.ms.toFixed(1)} ms`, `${r.base.ms.toFixed(1)} ms`, (r.ours.ms / r.base.ms).toFixed(2),
		`${r.ours.rssMB.toFixed(0)} MB`, `${r.base.rssMB.toFixed(0)} MB`]);
	const widths = header.map((h, i) => Math.max(h.length, ...lines.map(l => l[i].length)));
	const fmt = cells => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
	console.log(fmt(header));
	for (const l of lines) console.log(fmt(l));
}
