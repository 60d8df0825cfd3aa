import * as path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { Diagnostic, ToolContext } from '../core/context';
import { statOrExplain } from '../core/files/files';
import { formatDiagnostic } from '../core/changes/diagnostics';
import { contains } from '../core/files/paths';
import { textResult, ToolResult } from '../core/results/result';
import { formatCount, plural } from '../core/results/truncate';
import { defineTool } from './tool';
import { listedName } from '../core/results/listedName';

const schema = Type.Object({
	paths: Type.Optional(Type.Array(Type.String(), { description: 'Files or folders (default: the whole workspace).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

/** Problems listed per call; the header gives the full counts. */
const MAX_DIAGNOSTICS = 100;

export const getDiagnosticsTool = defineTool({
	name: 'get_diagnostics',
	referenceName: 'tbProblems',
	displayName: 'Get Problems',
	group: 'read',
	mutating: false,
	icon: 'warning',
	tags: ['diagnostics', 'problems', 'read'],
	userDescription: 'The errors and warnings VS Code\'s language features report (the Problems view), for files, folders or the workspace.',
	modelDescription: [
		'Errors and warnings VS Code\'s language features report (the Problems view) as `path:line:column severity code: message (source)`, errors first; at most 100, with totals.',
		'Language servers report what they have analysed (usually open files and their dependencies); after an edit, give them a moment. Outside VS Code there are none: run the project\'s checker with run_command.',
	].join(' '),
	schema,
	describe: input => `Getting problems${input.paths?.length ? ` in ${input.paths.join(', ')}` : ''}`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	if (!ctx.host.diagnostics) {
		return textResult('No problems are available here: they come from VS Code\'s language features, and this host (the command line) has none. Run the project\'s own checker with run_command instead (for example `npx tsc --noEmit` or the linter).', { available: false, total: 0 });
	}
	const targets = await Promise.all((input.paths ?? []).map(async input => {
		const resolved = await ctx.boundary.resolve(input, 'read');
		const stat = await statOrExplain(resolved.absolute, resolved.display);
		return { absolute: resolved.absolute, display: resolved.display, folder: stat.isDirectory() };
	}));
	const onlyFiles = targets.length > 0 && targets.every(target => !target.folder);
	const all = await ctx.host.diagnostics(onlyFiles ? targets.map(target => target.absolute) : []);
	const wanted = all.filter(d => (d.severity === 'error' || d.severity === 'warning') && inScope(d, targets, ctx));
	wanted.sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path) || a.line - b.line || a.column - b.column);
	const errors = wanted.filter(d => d.severity === 'error').length;
	const warnings = wanted.length - errors;
	const files = new Set(wanted.map(d => d.path)).size;
	const where = targets.length ? targets.map(target => target.display).join(', ') : 'the workspace';
	if (wanted.length === 0) return textResult(`No errors or warnings in ${where} (as far as VS Code's language features have analysed it).`, { total: 0, errors: 0, warnings: 0 });
	const shown = wanted.slice(0, MAX_DIAGNOSTICS);
	const header = `${plural(errors, 'error')} and ${plural(warnings, 'warning')} in ${plural(files, 'file')} (${where})${shown.length < wanted.length ? `; showing the first ${shown.length}, errors first` : ''}:`;
	const lines = [header, ...shown.map(d => formatDiagnostic(d, listedName(ctx.boundary.display(d.path))))];
	if (shown.length < wanted.length) lines.push(`[… ${formatCount(wanted.length - shown.length)} more omitted; give paths to narrow …]`);
	return textResult(lines.join('\n'), { truncated: shown.length < wanted.length, total: wanted.length, errors, warnings, files });
}

function inScope(d: Diagnostic, targets: { absolute: string; folder: boolean }[], ctx: ToolContext): boolean {
	if (targets.length === 0) return !path.isAbsolute(ctx.boundary.display(d.path));
	return targets.some(target => (target.folder ? contains(target.absolute, d.path) : target.absolute === d.path));
}


function rank(d: Diagnostic): number {
	return d.severity === 'error' ? 0 : 1;
}

