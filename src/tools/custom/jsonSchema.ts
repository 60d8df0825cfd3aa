import { Kind, TSchema, TypeRegistry } from '@sinclair/typebox';
import { isDeepStrictEqual } from 'node:util';
import { describeValue } from '../../core/schema/validate';

/**
 * A custom tool's `inputSchema` is plain JSON Schema, written by a person. TypeBox validates only
 * schemas it marked itself (a `Kind` symbol on every node), so the schema is checked here and
 * copied with those marks: the copy goes through the same validateInput as every built-in tool
 * and its problems read the same way to a model. Only a plain subset is accepted (no `$ref`,
 * `oneOf`, `if`…): a keyword that would be silently ignored is reported instead.
 */

/** One thing wrong with a schema: where (`inputSchema.properties.count.minimum`) and what. */
export interface SchemaProblem {
	readonly field: string;
	readonly message: string;
}

/** Words that describe a value without constraining it: kept, never checked. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'format', '$schema', '$id']);

/** What each JSON type may constrain. */
const KEYWORDS: Record<string, readonly string[]> = {
	object: ['properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties'],
	string: ['minLength', 'maxLength', 'pattern'],
	number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
	integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
	boolean: [],
	null: [],
	array: ['items', 'minItems', 'maxItems', 'uniqueItems'],
};

const KINDS: Record<string, string> = {
	object: 'Object', string: 'String', number: 'Number', integer: 'Integer', boolean: 'Boolean', null: 'Null', array: 'Array',
};

/** `enum` and `const`: any JSON value, compared as JSON. */
const ENUM_KIND = 'ToolbeltJsonEnum';
TypeRegistry.Set<{ enum: unknown[] }>(ENUM_KIND, (schema, value) => schema.enum.some(allowed => isDeepStrictEqual(allowed, value)));

/**
 * The schema marked for TypeBox, or the problems that keep it from being used. The top level must
 * be an object schema: a tool's input is always a JSON object.
 */
export function toValidatingSchema(schema: unknown, field = 'inputSchema'): { schema: TSchema } | { problems: SchemaProblem[] } {
	const problems: SchemaProblem[] = [];
	if (!isPlainObject(schema)) return { problems: [{ field, message: `must be a JSON Schema object such as {"type": "object", "properties": {}}, got ${describeValue(schema)}` }] };
	if (schema.type !== 'object') problems.push({ field: `${field}.type`, message: `must be "object" (a tool's input is a JSON object), got ${JSON.stringify(schema.type) ?? 'nothing'}` });
	const converted = convert(schema, field, problems);
	// The branches of a type list share their keywords: one problem is told once.
	const unique = [...new Map(problems.map(problem => [`${problem.field}\n${problem.message}`, problem])).values()];
	return unique.length ? { problems: unique } : { schema: converted };
}

/** `checkWords` is false for the branches of a type list: which keywords apply was checked for the list. */
function convert(node: unknown, field: string, problems: SchemaProblem[], checkWords = true): TSchema {
	if (!isPlainObject(node)) {
		problems.push({ field, message: `must be a schema object, got ${describeValue(node)}` });
		return unknownSchema();
	}
	const copy: Record<string | symbol, unknown> = {};
	for (const [key, value] of Object.entries(node)) {
		// TypeBox would demand a registered format; for a model it is only a hint.
		if (key !== 'format') copy[key] = value;
	}
	if ('enum' in node || 'const' in node) return enumSchema(node, copy, field, problems);
	const types = node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
	for (const type of types) {
		if (typeof type !== 'string' || !KINDS[type]) problems.push({ field: `${field}.type`, message: `must be one of ${Object.keys(KINDS).map(t => `"${t}"`).join(', ')}, got ${JSON.stringify(type)}` });
	}
	if (checkWords) checkKeywords(node, types.filter(type => typeof type === 'string' && KINDS[type]) as string[], field, problems);
	if (types.length === 0) return marked(copy, 'Unknown');
	if (types.length > 1) {
		const anyOf = types.map(type => convert({ ...node, type }, field, problems, false));
		return marked({ ...copy, anyOf }, 'Union');
	}
	const type = types[0] as string;
	if (type === 'object') convertObject(node, copy, field, problems);
	if (type === 'array' && node.items !== undefined) copy.items = convert(node.items, `${field}.items`, problems);
	if (type === 'string' && node.pattern !== undefined) checkPattern(node.pattern, `${field}.pattern`, problems);
	checkNumbers(node, field, problems);
	return marked(copy, KINDS[type] ?? 'Unknown');
}

function convertObject(node: Record<string, unknown>, copy: Record<string | symbol, unknown>, field: string, problems: SchemaProblem[]): void {
	const properties: Record<string, TSchema> = {};
	if (node.properties !== undefined && !isPlainObject(node.properties)) {
		problems.push({ field: `${field}.properties`, message: `must be an object mapping each input field to its schema, got ${describeValue(node.properties)}` });
	} else {
		for (const [name, property] of Object.entries(node.properties ?? {})) properties[name] = convert(property, `${field}.properties.${name}`, problems);
	}
	copy.properties = properties;
	if (node.required !== undefined) {
		if (!Array.isArray(node.required) || !node.required.every(name => typeof name === 'string')) {
			problems.push({ field: `${field}.required`, message: 'must be an array of property names' });
		} else {
			for (const name of node.required) {
				if (!(name in properties)) problems.push({ field: `${field}.required`, message: `names "${name}", which is not in properties; add it there or remove it here` });
			}
		}
	}
	const extra = node.additionalProperties;
	if (extra !== undefined && typeof extra !== 'boolean') copy.additionalProperties = convert(extra, `${field}.additionalProperties`, problems);
}

function enumSchema(node: Record<string, unknown>, copy: Record<string | symbol, unknown>, field: string, problems: SchemaProblem[]): TSchema {
	if ('enum' in node && (!Array.isArray(node.enum) || node.enum.length === 0)) {
		problems.push({ field: `${field}.enum`, message: 'must be a non-empty array of the allowed values' });
		return unknownSchema();
	}
	const allowed = 'enum' in node ? node.enum as unknown[] : [node.const];
	return marked({ ...copy, enum: allowed }, ENUM_KIND);
}

/** A keyword that constrains nothing here would let through what its author meant to stop. */
function checkKeywords(node: Record<string, unknown>, types: string[], field: string, problems: SchemaProblem[]): void {
	const allowed = new Set(['type', ...types.flatMap(type => KEYWORDS[type] ?? [])]);
	for (const key of Object.keys(node)) {
		if (ANNOTATIONS.has(key) || allowed.has(key)) continue;
		const where = types.length ? `a schema of type ${types.map(t => `"${t}"`).join(' or ')}` : 'a schema without a "type"';
		const known = Object.values(KEYWORDS).some(words => words.includes(key));
		problems.push({
			field: `${field}.${key}`,
			message: known
				? `does not apply to ${where}; remove it or give the matching "type"`
				: `is not supported in custom tool schemas (supported: type, properties, required, additionalProperties, items, enum, const, minimum/maximum, minLength/maxLength, pattern, minItems/maxItems); write the schema without it`,
		});
	}
}

function checkPattern(pattern: unknown, field: string, problems: SchemaProblem[]): void {
	try {
		if (typeof pattern !== 'string') throw new Error(`got ${describeValue(pattern)}`);
		new RegExp(pattern);
	} catch (error) {
		problems.push({ field, message: `must be a valid regular expression: ${(error as Error).message}` });
	}
}

function checkNumbers(node: Record<string, unknown>, field: string, problems: SchemaProblem[]): void {
	for (const key of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties']) {
		if (key in node && (typeof node[key] !== 'number' || !Number.isFinite(node[key]))) problems.push({ field: `${field}.${key}`, message: `must be a number, got ${describeValue(node[key])}` });
	}
}

function unknownSchema(): TSchema {
	return marked({}, 'Unknown');
}

/** A copy of a schema node with TypeBox's mark: TypeBox checks the JSON Schema keywords it holds. */
function marked(node: Record<string | symbol, unknown>, kind: string): TSchema {
	return { ...node, [Kind]: kind } as unknown as TSchema;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
	return value !== null && typeof value === 'object' && !Array.isArray(value);
}
