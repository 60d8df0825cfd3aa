import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { textResult, ToolResult } from '../core/results/result';
import { metadataOf, truncateText } from '../core/results/truncate';
import { askLanguageServer, describeTarget, languageServices, locate, POSITION_FIELDS } from './codeSupport';
import { defineTool } from './tool';

const schema = Type.Object(POSITION_FIELDS, { additionalProperties: false });

type Input = typeof schema.static;

/** Hover text is documentation: a long one is cut, its start is what matters. */
const HOVER_BYTES = 8 * 1024;
const HOVER_LINES = 200;

export const hoverTool = defineTool({
	name: 'hover',
	referenceName: 'tbHover',
	displayName: 'Hover',
	group: 'code',
	needsVscode: true,
	mutating: false,
	icon: 'info',
	tags: ['code', 'hover', 'type', 'documentation', 'read'],
	userDescription: 'What the language server says about a symbol: its type or signature and its documentation.',
	modelDescription: [
		'What the editor shows when hovering a symbol: its inferred type or full signature and its documentation (Markdown, at most 8 KB).',
		'Cheaper than reading the declaration to learn a type; go_to_definition shows the code itself.',
	].join(' '),
	schema,
	describe: input => `Hovering ${describeTarget(input)}`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	const services = languageServices(ctx);
	const { file, at, note } = await locate(ctx, services, input);
	const texts = await askLanguageServer(ctx, services, file, () => services.hover(file.absolute, at.position), at.position);
	const header = `${JSON.stringify(input.symbol)} at ${file.display}:${input.line}`;
	const body = texts.map(text => text.trim()).filter(Boolean).join('\n\n---\n\n');
	if (body === '') return textResult(`The language server has nothing to show for ${header}. ${note ?? ''}`.trim(), { empty: true });
	const cut = truncateText(body, { maxBytes: HOVER_BYTES, maxLines: HOVER_LINES, keep: 'head', hint: () => 'use go_to_definition to read the declaration' });
	return textResult([`${header}:`, ...(note ? [note] : []), '', cut.text].join('\n'), metadataOf(cut.info));
}
