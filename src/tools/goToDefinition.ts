import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import type { DefinitionKind } from '../core/languages';
import { textResult, ToolResult } from '../core/results/result';
import { plural } from '../core/results/truncate';
import { askLanguageServer, describeTarget, languageServices, locate, POSITION_FIELDS, sortByPlace, SourceLines, uniqueLocations } from './codeSupport';
import { stringEnum } from '../core/schema/stringEnum';
import { defineTool } from './tool';

const KINDS: readonly DefinitionKind[] = ['definition', 'type_definition', 'implementation'];

const schema = Type.Object({
	...POSITION_FIELDS,
	kind: Type.Optional(stringEnum(KINDS, { description: 'What to find (default "definition").' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

/** Lines of each declaration shown; the rest is a read_file away. */
const DECLARATION_LINES = 8;
/** Places listed; more are counted. */
const MAX_PLACES = 20;

export const goToDefinitionTool = defineTool({
	name: 'go_to_definition',
	referenceName: 'tbDefinition',
	displayName: 'Go to Definition',
	group: 'code',
	needsVscode: true,
	mutating: false,
	icon: 'symbol-method',
	tags: ['code', 'definition', 'implementation', 'read'],
	userDescription: 'Where a symbol is defined (or its type, or its implementations), from the language server, with the first lines of each.',
	modelDescription: [
		'Where a symbol is declared, from the language server, across files and through imports and re-exports: each place as `path:line` with the first lines of the declaration (one line outside the workspace, e.g. in a library\'s .d.ts).',
		'kind "type_definition" finds the declaration of its type, "implementation" what implements an interface or abstract member.',
	].join(' '),
	schema,
	describe: input => `Finding the ${(input.kind ?? 'definition').replace('_', ' ')} of ${describeTarget(input)}`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	const services = languageServices(ctx);
	const kind = input.kind ?? 'definition';
	const { file, at, note } = await locate(ctx, services, input);
	const found = await askLanguageServer(ctx, services, file, () => services.definitions(file.absolute, at.position, kind), at.position);
	const what = kind.replace('_', ' ');
	const symbol = JSON.stringify(input.symbol);
	if (found.length === 0) {
		const hint = kind === 'definition' ? 'it may be a keyword, a literal or a name the server cannot resolve; hover shows what it knows' : 'try kind "definition"';
		return textResult(`The language server knows no ${what} of ${symbol} at ${file.display}:${input.line} (${hint}). ${note ?? ''}`.trim(), { total: 0 });
	}
	const lines = new SourceLines(ctx);
	const places = await sortByPlace(lines, uniqueLocations(found));
	const out = [`${places.length === 1 ? `The ${what}` : `${plural(places.length, `${what}`)}`} of ${symbol} (${file.display}:${input.line}):`];
	if (note) out.push(note);
	for (const place of places.slice(0, MAX_PLACES)) out.push('', ...await lines.block(place.location, DECLARATION_LINES));
	if (places.length > MAX_PLACES) out.push('', `[… ${plural(places.length - MAX_PLACES, 'more place')} not shown; use find_references or find_symbols to narrow …]`);
	return textResult(out.join('\n'), {
		truncated: places.length > MAX_PLACES,
		total: places.length,
		places: places.slice(0, MAX_PLACES).map(place => `${place.display}:${place.location.range.start.line + 1}`),
	});
}
