import { contributedName, ToolDefinition } from './tool';

/**
 * `contributes.languageModelTools` as package.json must hold it, derived from the tool
 * definitions. `npm run manifest` writes it; a unit test fails when the two disagree.
 */
export function toolContributions(tools: readonly ToolDefinition<any>[]): object[] {
	return tools.map(tool => ({
		name: contributedName(tool),
		toolReferenceName: tool.referenceName,
		displayName: tool.displayName,
		userDescription: tool.userDescription,
		modelDescription: tool.modelDescription,
		canBeReferencedInPrompt: true,
		icon: `$(${tool.icon})`,
		tags: ['toolbelt', ...tool.tags],
		when: whenEnabled(tool),
		inputSchema: jsonSchema(tool.schema),
	}));
}

/**
 * A switched-off tool leaves the model's list. VS Code hands array settings to when clauses as
 * their JSON (`["grep","run_command"]`), so a name is matched with its quotes around it.
 */
function whenEnabled(tool: ToolDefinition<any>): string {
	return `!(config.toolbelt.disabledTools =~ /"${tool.name}"/) && !(config.toolbelt.disabledGroups =~ /"${tool.group}"/)`;
}

/** TypeBox schemas carry symbol keys; JSON round-tripping leaves the plain JSON Schema. */
function jsonSchema(schema: object): object {
	return JSON.parse(JSON.stringify(schema));
}

/** The README's tool reference, generated so it cannot drift from the schemas. */
export function toolsMarkdown(tools: readonly ToolDefinition<any>[]): string {
	const rows = tools.map(tool => {
		const schema = tool.schema as { properties?: Record<string, any>; required?: string[] };
		const required = new Set(schema.required ?? []);
		const params = Object.entries(schema.properties ?? {})
			.map(([name, prop]) => `\`${name}\`${required.has(name) ? '' : '?'}${typeHint(prop)}`)
			.join(', ');
		return `| \`${tool.name}\` | \`#${tool.referenceName}\` | ${tool.group}${(tool.asksByDefault ?? tool.mutating) ? ', asks first' : ''} | ${escapeCell(tool.userDescription)} | ${params || '—'} |`;
	});
	return ['| Tool | In chat | Group | What it does | Parameters (`?` = optional) |', '|---|---|---|---|---|', ...rows].join('\n');
}

function typeHint(prop: Record<string, any>): string {
	if (prop.enum) return `: ${prop.enum.join(' \\| ')}`;
	return prop.type ? `: ${prop.type}` : '';
}

/**
 * The README's per-tool parameter reference: every field with its type, whether it is required,
 * and its description (which states the default), nested fields of lists of objects indented.
 */
export function parametersMarkdown(tools: readonly ToolDefinition<any>[]): string {
	return tools.map(tool => {
		const fields = fieldLines(tool.schema as Record<string, any>, '');
		const body = fields.length ? fields.join('\n') : '- no parameters';
		return `#### \`${tool.name}\` — ${tool.displayName}\n\n${tool.userDescription}\n\n${body}`;
	}).join('\n\n');
}

function fieldLines(schema: Record<string, any>, indent: string): string[] {
	const required = new Set<string>(schema.required ?? []);
	return Object.entries<Record<string, any>>(schema.properties ?? {}).flatMap(([name, prop]) => {
		const line = `${indent}- \`${name}\` (${typeName(prop)}${required.has(name) ? ', required' : ''})${prop.description ? ` — ${prop.description.replace(/\n/g, ' ')}` : ''}`;
		const items = prop.type === 'array' && prop.items?.type === 'object' ? fieldLines(prop.items, `${indent}  `) : [];
		return [line, ...items];
	});
}

function typeName(prop: Record<string, any>): string {
	if (prop.enum) return prop.enum.map((value: unknown) => `\`${JSON.stringify(value)}\``).join(' \\| ');
	if (prop.type === 'array') return prop.items ? `list of ${prop.items.type === 'object' ? 'objects' : typeName(prop.items)}` : 'list';
	return prop.type ?? 'any';
}

/** The README's settings reference, from package.json's configuration block. */
export function settingsMarkdown(properties: Record<string, any>): string {
	const rows = Object.entries(properties).map(([key, prop]) =>
		`| \`${key}\` | \`${JSON.stringify(prop.default)}\` | ${escapeCell(String(prop.markdownDescription ?? prop.description ?? ''))} |`);
	return ['| Setting | Default | What it does |', '|---|---|---|', ...rows].join('\n');
}

function escapeCell(text: string): string {
	return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Replaces the text between `<!-- name:start -->` and `<!-- name:end -->`. */
export function replaceSection(document: string, name: string, content: string): string {
	const start = `<!-- ${name}:start -->`;
	const end = `<!-- ${name}:end -->`;
	const from = document.indexOf(start);
	const to = document.indexOf(end);
	if (from === -1 || to < from) return document;
	return `${document.slice(0, from + start.length)}\n${content}\n${document.slice(to)}`;
}
