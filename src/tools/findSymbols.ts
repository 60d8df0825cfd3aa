import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { statOrExplain } from '../core/files/files';
import type { SymbolInfo, SymbolKindName } from '../core/languages';
import { contains } from '../core/files/paths';
import { textResult, ToolResult } from '../core/results/result';
import { formatCount, plural } from '../core/results/truncate';
import { askLanguageServer, languageServices, moreMarker, openSource, SourceLines } from './codeSupport';
import { stringEnum } from '../core/schema/stringEnum';
import { defineTool } from './tool';

/** The kinds a model filters by (VS Code has 26; the rest are rare in outlines). */
const FILTER_KINDS: readonly SymbolKindName[] = [
	'module', 'namespace', 'class', 'interface', 'struct', 'enum', 'enum_member', 'function', 'method', 'constructor', 'property', 'field', 'variable', 'constant',
];

const schema = Type.Object({
	query: Type.Optional(Type.String({ minLength: 1, description: 'Name or part of it (non-empty), e.g. "parseConf"; matched loosely, exact names first.' })),
	path: Type.Optional(Type.String({ minLength: 1, description: 'A file (non-empty): its outline, which query filters. A folder: search there only.' })),
	kind: Type.Optional(stringEnum(FILTER_KINDS, { description: 'Only symbols of this kind.' })),
	limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Most symbols (1–500, default 100).' })),
	offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Symbols to skip, for paging (≥ 0, default 0).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

export const findSymbolsTool = defineTool({
	name: 'find_symbols',
	referenceName: 'tbSymbols',
	displayName: 'Find Symbols',
	group: 'code',
	needsVscode: true,
	mutating: false,
	icon: 'symbol-class',
	tags: ['code', 'symbols', 'outline', 'read'],
	userDescription: 'Find classes, functions and other symbols by name across the workspace, or list a file\'s outline with line ranges.',
	modelDescription: [
		'Find declarations by name in the language servers\' symbol index, or list a file\'s outline (classes, functions, methods, fields) as a tree with line ranges.',
		'Returns `path:line: kind name`. The index covers languages whose server has started: if a search finds nothing, give a file of that language as path, or use grep.',
	].join(' '),
	schema,
	describe: input => (input.query ? `Finding symbols matching ${JSON.stringify(input.query)}${input.path ? ` in ${input.path}` : ''}` : `Listing the symbols of ${input.path ?? 'the workspace'}`),
	run,
});

interface Row {
	readonly symbol: SymbolInfo;
	readonly depth: number;
	/** The enclosing symbol, named when the row is not shown under it. */
	readonly container?: string;
}

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	const services = languageServices(ctx);
	const target = input.path === undefined ? undefined : await ctx.boundary.resolve(input.path, 'read');
	const folder = target ? (await statOrExplain(target.absolute, target.display)).isDirectory() : false;
	if (!input.query && (!target || folder)) {
		throw new ToolError('invalid_input', `Give query (a name to search for)${folder ? ' with that folder' : ''}, or path of a file for its outline. Nothing was searched.`);
	}
	const lines = new SourceLines(ctx);
	if (target && !folder) {
		const file = await openSource(ctx, services, target.input);
		const outline = await askLanguageServer(ctx, services, file, () => services.documentSymbols(file.absolute));
		const rows = flatten(outline, 0).filter(row => matches(row.symbol, input));
		const filtered = input.query !== undefined || input.kind !== undefined;
		// A filtered outline is flat: the rows name their container instead of being indented under it.
		return render(input, filtered ? rows.map(row => ({ ...row, depth: 0 })) : rows, `${filtered ? 'Symbols' : 'Outline'} of ${file.display}${filterWords(input)}`, async row => {
			const { start, end } = row.symbol.location.extent ?? row.symbol.location.range;
			const span = end.line > start.line ? `lines ${start.line + 1}–${end.line + 1}` : `line ${start.line + 1}`;
			return `${'  '.repeat(row.depth)}${describe(row.symbol, filtered ? row.container : undefined)} — ${span}`;
		});
	}
	const found = await services.workspaceSymbols(input.query!);
	const inScope = found.filter(symbol => matches(symbol, input) && (!target || contains(target.absolute, symbol.location.path)));
	const places = await Promise.all(inScope.map(async symbol => ({ symbol, place: await lines.place(symbol.location.path) })));
	places.sort((a, b) => rank(a.symbol, input.query!) - rank(b.symbol, input.query!)
		|| Number(b.place.readable) - Number(a.place.readable)
		|| (a.place.display < b.place.display ? -1 : a.place.display > b.place.display ? 1 : 0)
		|| a.symbol.location.range.start.line - b.symbol.location.range.start.line);
	const where = target ? ` in ${target.display}` : '';
	if (places.length === 0) {
		return textResult(`No symbol matching ${JSON.stringify(input.query)}${where}${kindWords(input)} in the language servers' index. The index covers only languages whose server has started, so this does not prove the name is unused: give path of a file in that language to start its server, or search the text with grep.`, { total: 0 });
	}
	return render(input, places.map(({ symbol }) => ({ symbol, depth: 0, container: symbol.container })), `Symbols matching ${JSON.stringify(input.query)}${where}${kindWords(input)}`, async row => {
		const place = await lines.place(row.symbol.location.path);
		return `${place.display}:${row.symbol.location.range.start.line + 1}: ${describe(row.symbol, row.container)}`;
	});
}

async function render(input: Input, rows: readonly Row[], title: string, format: (row: Row) => Promise<string>): Promise<ToolResult> {
	const limit = input.limit ?? 100;
	const offset = input.offset ?? 0;
	if (rows.length === 0) return textResult(`${title}: none.`, { total: 0 });
	const page = rows.slice(offset, offset + limit);
	if (page.length === 0) return textResult(`${title}: ${plural(rows.length, 'symbol')}; offset ${offset} is past the end. Use a smaller offset.`, { total: rows.length });
	const out = [`${title}: ${plural(rows.length, 'symbol')}${page.length < rows.length ? `; showing ${formatCount(offset + 1)}–${formatCount(offset + page.length)}` : ''}:`, ''];
	for (const row of page) out.push(await format(row));
	const next = offset + page.length;
	if (next < rows.length) out.push('', moreMarker(rows.length - next, next, 'symbol'));
	return textResult(out.join('\n'), { truncated: next < rows.length, total: rows.length, offset, ...(next < rows.length ? { nextOffset: next } : {}) });
}

function flatten(symbols: readonly SymbolInfo[], depth: number, container?: string): Row[] {
	const ordered = [...symbols].sort((a, b) => a.location.range.start.line - b.location.range.start.line || a.location.range.start.character - b.location.range.start.character);
	return ordered.flatMap(symbol => [{ symbol, depth, container }, ...flatten(symbol.children ?? [], depth + 1, symbol.name)]);
}

function matches(symbol: SymbolInfo, input: Input): boolean {
	if (input.kind && symbol.kind !== input.kind) return false;
	return !input.query || looseMatch(symbol.name, input.query);
}

/** Every character of the query in order, case ignored (as the editor's symbol search matches). */
function looseMatch(name: string, query: string): boolean {
	const lower = name.toLowerCase();
	let at = 0;
	for (const char of query.toLowerCase()) {
		at = lower.indexOf(char, at);
		if (at === -1) return false;
		at++;
	}
	return true;
}

/** Exact names first, then the same name in another case, then prefixes, then the rest. */
function rank(symbol: SymbolInfo, query: string): number {
	if (symbol.name === query) return 0;
	const name = symbol.name.toLowerCase();
	const wanted = query.toLowerCase();
	if (name === wanted) return 1;
	if (name.startsWith(wanted)) return 2;
	return name.includes(wanted) ? 3 : 4;
}

function describe(symbol: SymbolInfo, container: string | undefined): string {
	const detail = symbol.detail && symbol.detail.length <= 120 ? ` ${symbol.detail}` : '';
	return `${symbol.kind.replace('_', ' ')} ${symbol.name}${detail}${container ? ` (in ${container})` : ''}`;
}

function filterWords(input: Input): string {
	return `${input.query ? ` matching ${JSON.stringify(input.query)}` : ''}${kindWords(input)}`;
}

function kindWords(input: Input): string {
	return input.kind ? ` (kind ${input.kind})` : '';
}
