import { Type } from '@sinclair/typebox';
import type { ToolContext } from '../core/context';
import { throwIfAborted } from '../core/results/errors';
import type { CallEdge, CallItem, LanguageServices } from '../core/languages';
import { textResult, ToolResult } from '../core/results/result';
import { formatCount, plural } from '../core/results/truncate';
import { askLanguageServer, describeTarget, languageServices, locate, POSITION_FIELDS, SourceLines } from './codeSupport';
import { stringEnum } from '../core/schema/stringEnum';
import { defineTool } from './tool';

const schema = Type.Object({
	...POSITION_FIELDS,
	direction: Type.Optional(stringEnum(['incoming', 'outgoing'] as const, { description: '"incoming": who calls it (default); "outgoing": what it calls.' })),
	depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 4, description: 'Levels to follow, 1–4 (default 1: direct callers or callees).' })),
}, { additionalProperties: false });

type Input = typeof schema.static;

/** Functions listed in one result, over all levels; call sites shown per function. */
const MAX_ITEMS = 100;
const MAX_SITES = 3;

export const callHierarchyTool = defineTool({
	name: 'call_hierarchy',
	referenceName: 'tbCalls',
	displayName: 'Call Hierarchy',
	group: 'code',
	needsVscode: true,
	mutating: false,
	icon: 'call-incoming',
	tags: ['code', 'calls', 'callers', 'read'],
	userDescription: 'Who calls a function (or what it calls), level by level, with the lines of the calls.',
	modelDescription: [
		'Who calls a function or method, or what it calls (direction), from the language server, as a tree depth levels deep: each function at `path:line` with the lines of the calls.',
		'symbol may be its declaration or any call of it. At most 100 functions per result.',
	].join(' '),
	schema,
	describe: input => `Finding ${input.direction === 'outgoing' ? 'the calls made by' : 'the callers of'} ${describeTarget(input)}`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult> {
	const services = languageServices(ctx);
	const { file, at, note } = await locate(ctx, services, input);
	const roots = await askLanguageServer(ctx, services, file, () => services.prepareCallHierarchy(file.absolute, at.position), at.position);
	const symbol = JSON.stringify(input.symbol);
	if (roots.length === 0) {
		return textResult(`The language server has no call hierarchy for ${symbol} at ${file.display}:${input.line}: it is not a function, method or class it knows. Use find_references for other symbols. ${note ?? ''}`.trim(), { total: 0 });
	}
	const outgoing = input.direction === 'outgoing';
	const walk = new Walk(ctx, services, new SourceLines(ctx), outgoing);
	const out: string[] = [];
	for (const root of roots) {
		const place = await walk.lines.place(root.location.path);
		out.push(`${outgoing ? 'Calls made by' : 'Callers of'} ${root.name} (${root.kind}, ${place.display}:${root.location.range.start.line + 1}), ${plural(input.depth ?? 1, 'level')}:`);
		if (note) out.push(note);
		walk.seen.add(keyOf(root));
		const before = out.length;
		await walk.expand(root, input.depth ?? 1, '', out);
		if (out.length === before) out.push(outgoing ? '(it calls nothing the server knows of)' : '(no callers found: nothing in the project calls it, or only through code the server cannot follow — check with find_references)');
		out.push('');
	}
	if (walk.cut) out.push(`[… stopped after ${formatCount(MAX_ITEMS)} functions; ask about one of them to go further …]`);
	return textResult(out.join('\n').trimEnd(), { truncated: walk.cut, total: walk.count });
}

class Walk {
	readonly seen = new Set<string>();
	count = 0;
	cut = false;

	constructor(
		private readonly ctx: ToolContext,
		private readonly services: LanguageServices,
		readonly lines: SourceLines,
		private readonly outgoing: boolean,
	) {}

	async expand(item: CallItem, depth: number, indent: string, out: string[]): Promise<void> {
		throwIfAborted(this.ctx.signal);
		const edges = this.outgoing ? await this.services.outgoingCalls(item) : await this.services.incomingCalls(item);
		for (const edge of edges) {
			if (this.count >= MAX_ITEMS) {
				this.cut = true;
				return;
			}
			this.count++;
			const place = await this.lines.place(edge.item.location.path);
			const again = this.seen.has(keyOf(edge.item));
			out.push(`${indent}- ${edge.item.name} (${edge.item.kind}) ${place.display}:${edge.item.location.range.start.line + 1}${again ? ' (shown above)' : ''}`);
			out.push(...await this.sites(edge, this.outgoing ? item.location.path : edge.item.location.path, `${indent}    `));
			this.seen.add(keyOf(edge.item));
			if (!again && depth > 1) await this.expand(edge.item, depth - 1, `${indent}  `, out);
		}
	}

	/** The lines of the calls: in the caller's file (incoming) or in the calling function's own file (outgoing). */
	private async sites(edge: CallEdge, path: string, indent: string): Promise<string[]> {
		const shown = await Promise.all(edge.sites.slice(0, MAX_SITES).map(range => this.lines.line({ path, range })));
		const more = edge.sites.length - MAX_SITES;
		return [...shown.map(line => indent + line), ...(more > 0 ? [`${indent}(and ${plural(more, 'more call')} there)`] : [])];
	}
}

function keyOf(item: CallItem): string {
	return `${item.location.path}\u0000${item.location.range.start.line}\u0000${item.location.range.start.character}`;
}
