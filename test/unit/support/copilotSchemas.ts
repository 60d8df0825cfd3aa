/**
 * What GitHub Copilot Chat does to a tool's input schema before a model sees it, ported as our own
 * test code from microsoft/vscode-copilot-chat (GitHub.copilot-chat 0.67.0, the build bundled with
 * VS Code 1.139, checked against the repository's main branch):
 *
 * - `normalizeToolSchema` (src/extension/tools/common/toolSchemaNormalizer.ts): rules per model
 *   family that fix or reject a schema before the request; a schema it has to fix is one some
 *   endpoint answered with a blank HTTP 400.
 * - `toGeminiFunction` (src/extension/byok/common/geminiFunctionDeclarationConverter.ts): the
 *   function declaration a Bring-Your-Own-Key Gemini model receives. Older builds took the first
 *   branch of an `anyOf` and dropped the field's description with it.
 *
 * Plus what the Gemini API itself refuses (`… properties: should be non-empty for OBJECT type`).
 */

export type Schema = Record<string, any>;

/** Keywords Copilot deletes for GPT-4-class models (`gpt4oUnsupportedSchemaKeywords`). */
export const GPT4_STRIPPED_KEYWORDS: ReadonlySet<string> = new Set([
	'minLength', 'maxLength', 'pattern', 'default', 'format', 'minimum', 'maximum', 'multipleOf',
	'patternProperties', 'unevaluatedProperties', 'propertyNames', 'minProperties', 'maxProperties',
	'unevaluatedItems', 'contains', 'minContains', 'maxContains', 'minItems', 'maxItems', 'uniqueItems',
]);

/** Longer schema descriptions are cut for GPT-4-class models. */
const GPT4_MAX_DESCRIPTION = 1024;

const TOP_LEVEL_UNSUPPORTED = ['oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else'];
const SIMPLE_TYPES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);

const isGpt4 = (family: string) => family.startsWith('gpt-4');
const isDraft2020 = (family: string) => family.startsWith('gpt-4') || family.startsWith('claude-') || family.startsWith('o4');
const isGemini = (family: string) => family.toLowerCase().includes('gemini');

export interface Normalized {
	readonly description: string;
	readonly parameters: Schema;
	/** What Copilot had to change, as its `onFix` callback words it. */
	readonly fixes: string[];
}

/** The schema as Copilot sends it to a model of `family`; throws where Copilot refuses the tool. */
export function normalizeForFamily(family: string, description: string, parameters: Schema): Normalized {
	const fixes: string[] = [];
	let schema: Schema = structuredClone(parameters);
	if (schema.type !== 'object') {
		schema = { type: 'object', properties: {} };
		fixes.push('schema must be an object if present');
	}
	if (!schema.properties) {
		schema.properties = {};
		fixes.push('schema must have a properties object');
	}
	if (!description) fixes.push('schema description may not be empty');

	const problems = metaSchemaProblems(schema, '');
	if (problems.length) throw new Error(`tool parameters do not match JSON schema: ${problems.join('\n')}`);
	forEachNode(schema, node => {
		if (node.type === 'array' && !node.items) throw new Error('tool parameters array type must have items');
	});
	if (isGpt4(family)) {
		forEachNode(schema, node => {
			if (typeof node.description === 'string' && node.description.length > GPT4_MAX_DESCRIPTION) {
				node.description = node.description.slice(0, GPT4_MAX_DESCRIPTION);
				fixes.push(`object description is too long (truncated to ${GPT4_MAX_DESCRIPTION} chars)`);
			}
		});
		forEachNode(schema, node => {
			for (const key of Object.keys(node)) {
				if (GPT4_STRIPPED_KEYWORDS.has(key)) {
					delete node[key];
					fixes.push(`object has unsupported schema keyword '${key}'`);
				}
			}
		});
	}
	for (const key of TOP_LEVEL_UNSUPPORTED) {
		if (Object.prototype.hasOwnProperty.call(schema, key)) {
			delete schema[key];
			fixes.push(`object has unsupported top-level schema keyword '${key}'`);
		}
	}
	forEachNode(schema, node => {
		if (node.type === 'object' && node.properties && Array.isArray(node.required)) {
			node.required = node.required.filter((key: string) => {
				if (node.properties[key] !== undefined) return true;
				fixes.push(`object has required property '${key}' that is not defined`);
				return false;
			});
		}
	});
	if (isDraft2020(family)) {
		forEachNode(schema, node => {
			if (node.type === 'array' && Array.isArray(node.items)) {
				node.items = { anyOf: node.items };
				fixes.push('array schema has items as an array, which is not supported in Draft 2020-12');
			}
		});
	}
	if (isGemini(family)) {
		forEachNode(schema, node => {
			if (Array.isArray(node.type) && node.type.includes('null')) {
				const others = node.type.filter((type: string) => type !== 'null');
				node.type = others.length === 1 ? others[0] : others;
				if (others.length === 1) node.nullable = true;
				fixes.push('converted a nullable type array for Gemini');
			}
		});
	}
	return { description: description || 'No description provided', parameters: schema, fixes };
}

/**
 * Copilot validates the schema against JSON Schema draft 7 with Ajv. This checks the parts of
 * that meta-schema a tool schema can get wrong (types, property maps, required lists, enums,
 * counts, regexes), which is all a plain schema uses.
 */
function metaSchemaProblems(node: unknown, at: string): string[] {
	if (typeof node === 'boolean') return [];
	if (node === null || typeof node !== 'object' || Array.isArray(node)) return [`${at} must be object,boolean`];
	const schema = node as Schema;
	const problems: string[] = [];
	const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
	for (const type of types) if (!SIMPLE_TYPES.has(type)) problems.push(`${at}/type must be equal to one of the allowed values`);
	if (schema.properties !== undefined) {
		if (typeof schema.properties !== 'object' || Array.isArray(schema.properties)) problems.push(`${at}/properties must be object`);
		else for (const [name, child] of Object.entries(schema.properties)) problems.push(...metaSchemaProblems(child, `${at}/properties/${name}`));
	}
	if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((key: unknown) => typeof key === 'string') && new Set(schema.required).size === schema.required.length)) {
		problems.push(`${at}/required must be an array of unique strings`);
	}
	if (schema.enum !== undefined && !(Array.isArray(schema.enum) && schema.enum.length > 0 && new Set(schema.enum.map((value: unknown) => JSON.stringify(value))).size === schema.enum.length)) {
		problems.push(`${at}/enum must be a non-empty array of unique values`);
	}
	for (const key of ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties']) {
		if (schema[key] !== undefined && !(Number.isInteger(schema[key]) && schema[key] >= 0)) problems.push(`${at}/${key} must be a non-negative integer`);
	}
	for (const key of ['minimum', 'maximum']) if (schema[key] !== undefined && typeof schema[key] !== 'number') problems.push(`${at}/${key} must be number`);
	if (schema.pattern !== undefined) {
		try {
			new RegExp(schema.pattern, 'u');
		} catch {
			problems.push(`${at}/pattern must match format "regex"`);
		}
	}
	if (schema.items !== undefined) {
		const items = Array.isArray(schema.items) ? schema.items : [schema.items];
		items.forEach((item: unknown, index: number) => problems.push(...metaSchemaProblems(item, `${at}/items${Array.isArray(schema.items) ? `/${index}` : ''}`)));
	}
	if (schema.additionalProperties !== undefined) problems.push(...metaSchemaProblems(schema.additionalProperties, `${at}/additionalProperties`));
	return problems;
}

/** Every schema node, in the order of Copilot's `forEachSchemaNode`. */
export function forEachNode(node: unknown, visit: (node: Schema) => void): void {
	if (!node || typeof node !== 'object') return;
	const schema = node as Schema;
	visit(schema);
	const children: unknown[] = [
		...Object.values(schema.properties ?? {}),
		...(schema.items === undefined ? [] : Array.isArray(schema.items) ? schema.items : [schema.items]),
		...Object.values(schema.dependencies ?? {}),
		...Object.values(schema.patternProperties ?? {}),
		schema.additionalProperties,
		...(schema.anyOf ?? []), ...(schema.allOf ?? []), ...(schema.oneOf ?? []),
		schema.not, schema.if, schema.then, schema.else, schema.contains,
	];
	for (const child of children) forEachNode(child, visit);
}

/** The Gemini function declaration Copilot's BYOK provider builds from a tool's schema. */
export function toGeminiDeclaration(name: string, description: string, schema: Schema): { name: string; description: string; parameters: Schema } {
	const target = schema.type === 'array' && schema.items ? schema.items : schema;
	return {
		name,
		description: description || 'No description provided.',
		parameters: { type: 'OBJECT', properties: geminiProperties(target.properties ?? {}), required: Array.isArray(target.required) ? target.required : [] },
	};
}

function geminiProperties(properties: Record<string, Schema>): Record<string, Schema> {
	return Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, geminiProperty(schema)]));
}

function geminiProperty(schema: Schema): Schema {
	const { alternatives, nullable } = geminiAlternatives(schema);
	if (alternatives.length === 0) return { type: 'NULL', ...(schema.description ? { description: schema.description } : {}) };
	if (alternatives.length === 1) {
		const only = geminiAlternative(alternatives[0]);
		if (nullable) only.nullable = true;
		if (schema.description && !only.description) only.description = schema.description;
		return only;
	}
	return { anyOf: alternatives.map(geminiAlternative), ...(nullable ? { nullable: true } : {}), ...(schema.description ? { description: schema.description } : {}) };
}

function geminiAlternatives(schema: Schema): { alternatives: Schema[]; nullable: boolean } {
	const branches: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
	if (branches) {
		const all = branches.map(geminiAlternatives);
		return { alternatives: all.flatMap(branch => branch.alternatives), nullable: all.some(branch => branch.nullable) };
	}
	if (schema.allOf) return geminiAlternatives(schema.allOf[0]);
	if (Array.isArray(schema.type)) {
		const { description: _description, ...rest } = schema;
		const types = [...new Set<string>(schema.type.filter((type: string) => type !== 'null'))];
		return { alternatives: types.map(type => ({ ...rest, type })), nullable: schema.type.includes('null') };
	}
	return schema.type === 'null' ? { alternatives: [], nullable: true } : { alternatives: [schema], nullable: false };
}

function geminiAlternative(schema: Schema): Schema {
	const type = typeof schema.type === 'string' ? schema.type : 'object';
	const out: Schema = { type: type.toUpperCase() };
	if (schema.description) out.description = schema.description;
	// Only string enums survive; `const` never does.
	if (type === 'string' && schema.enum) {
		const strings = schema.enum.filter((value: unknown) => typeof value === 'string');
		if (strings.length > 0) out.enum = strings;
	}
	if (type === 'object' && schema.properties) {
		out.properties = geminiProperties(schema.properties);
		if (schema.required) out.required = schema.required;
	} else if (type === 'array' && schema.items) {
		out.items = geminiProperty(schema.items);
	}
	return out;
}
