import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import type { SourceLocation } from '../core/languages';
import { textResult, ToolResult } from '../core/results/result';
import { formatCount, plural } from '../core/results/truncate';
import { askLanguageServer, describeTarget, languageServices, locate, moreMarker, Placed, POSITION_FIELDS, sortByPlace, SourceLines, uniqueLocations } from './codeSupport';
import { defineTool } from './tool';

const schema = Type.Object({
	...POSITION_FIELDS,
	includeDeclaration: Type.Optional(Type.Boolean({ description: 'List the declaration too (default true).' })),
	limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Most references (1–500, default 100).' })),
	offset: Type.Optional(Type.Integer({ minimum: 0, description: 'References to skip, for paging (≥ 0, default 0).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

/** Files named with their counts above a result that does not show every reference. */
const MAX_FILE_COUNTS = 20;

export const findReferencesTool = defineTool({
	name: 'find_references',
	referenceName: 'tbReferences',
	displayName: 'Find References',
	group: 'code',
	needsVscode: true,
	mutating: false,
	icon: 'references',
	tags: ['code', 'references', 'usages', 'read'],
	userDescription: 'Every reference to a symbol, from the language server: through imports, re-exports and interfaces, without same-named strangers.',
	modelDescription: [
		'Every reference to a symbol, from the language server: follows imports, re-exports, aliases and interface calls, and skips same-named unrelated code and comments (grep cannot).',
		'Returns `path:line: text` grouped by file, with totals. Waits while the server loads the project; says so if the language has no server (then use grep).',
	].join(' '),
	schema,
	describe: input => `Finding references to ${describeTarget(input)}`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	const services = languageServices(ctx);
	const { file, at, note } = await locate(ctx, services, input);
	let found = await askLanguageServer(ctx, services, file, () => services.references(file.absolute, at.position), at.position);
	if (input.includeDeclaration === false) {
		const declarations = await services.definitions(file.absolute, at.position, 'definition');
		found = found.filter(reference => !declarations.some(declaration => sameStart(declaration, reference)));
	}
	const lines = new SourceLines(ctx);
	const sorted = await sortByPlace(lines, uniqueLocations(found));
	const symbol = JSON.stringify(input.symbol);
	if (sorted.length === 0) {
		return textResult(`The language server knows no references to ${symbol} at ${file.display}:${input.line}${input.includeDeclaration === false ? ' besides its declaration' : ''}. ${note ?? ''}`.trim(), { total: 0, files: 0 });
	}
	const limit = input.limit ?? ctx.settings.limits.grepMatches;
	const offset = input.offset ?? 0;
	const page = sorted.slice(offset, offset + limit);
	const perFile = countByFile(sorted.map(one => one.display));
	const declaration = input.includeDeclaration === false ? 'declaration left out' : 'declaration included';
	const total = `${plural(sorted.length, 'reference')} to ${symbol} in ${plural(perFile.size, 'file')} (${declaration})`;
	if (page.length === 0) return textResult(`${total}; offset ${offset} is past the end. Use a smaller offset.`, { total: sorted.length, files: perFile.size });
	const out = [`${total}; showing ${formatCount(offset + 1)}–${formatCount(offset + page.length)}:`];
	if (note) out.push(note);
	if (page.length < sorted.length && perFile.size > 1) out.push(`By file: ${fileCounts(perFile)}`);
	let previous: Placed | undefined;
	for (const reference of page) {
		// Two references on one line (`f(f(x))`) show the line once.
		if (previous?.display === reference.display && previous.location.range.start.line === reference.location.range.start.line) continue;
		if (reference.display !== previous?.display) out.push('');
		previous = reference;
		out.push(await lines.line(reference.location));
	}
	const next = offset + page.length;
	if (next < sorted.length) out.push('', moreMarker(sorted.length - next, next, 'reference'));
	return textResult(out.join('\n'), {
		truncated: next < sorted.length,
		total: sorted.length,
		files: perFile.size,
		offset,
		...(next < sorted.length ? { nextOffset: next } : {}),
	});
}

function sameStart(a: SourceLocation, b: SourceLocation): boolean {
	return a.path === b.path && a.range.start.line === b.range.start.line && a.range.start.character === b.range.start.character;
}

function countByFile(displays: readonly string[]): Map<string, number> {
	const counts = new Map<string, number>();
	for (const display of displays) counts.set(display, (counts.get(display) ?? 0) + 1);
	return counts;
}

function fileCounts(perFile: Map<string, number>): string {
	const shown = [...perFile].slice(0, MAX_FILE_COUNTS).map(([display, count]) => `${display} (${formatCount(count)})`);
	const more = perFile.size - MAX_FILE_COUNTS;
	return `${shown.join(', ')}${more > 0 ? `, and ${plural(more, 'more file')}` : ''}`;
}
