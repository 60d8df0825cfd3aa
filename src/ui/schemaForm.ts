import { Type, type TSchema } from '@sinclair/typebox';
import type { FieldIssue } from '../core/results/errors';
import { validateInput } from '../core/schema/validate';

/**
 * A tool's input schema as a sequence of prompts (the command palette's Run Tool…): one field
 * per top-level property, required ones first, each with the kind of prompt that fits it. Pure,
 * so the VS Code layer only shows what this decides.
 */

export type FieldKind =
	/** Free text. */
	| 'string'
	| 'integer'
	| 'number'
	/** A yes/no pick. */
	| 'boolean'
	/** A pick among fixed values. */
	| 'enum'
	/** Anything else (arrays, objects): typed as JSON in the editor and checked against its schema. */
	| 'json';

export interface FormField {
	readonly name: string;
	readonly description: string;
	readonly required: boolean;
	readonly kind: FieldKind;
	/** For `enum`: the allowed values in order. */
	readonly options?: readonly (string | number)[];
	/** The schema's own `default`, when it declares one. */
	readonly defaultValue?: unknown;
	/**
	 * Text that usually spans lines (file content, a patch, stdin): an input box holds one line and
	 * would keep a typed `\n` as two characters, so it is asked in the editor.
	 */
	readonly multiline?: boolean;
	readonly schema: TSchema;
}

/** String fields whose text usually spans lines, by name (the schemas say "text", not how long). */
const MULTILINE_FIELDS = new Set(['content', 'patch', 'stdin', 'chars']);

/** Fields an input box cannot hold well: lists, objects and text of several lines go to the JSON editor. */
export function needsEditor(field: FormField): boolean {
	return field.kind === 'json' || field.multiline === true;
}

type SchemaObject = Record<string, any>;

export function formFields(schema: TSchema): FormField[] {
	const properties: Record<string, TSchema> = (schema as SchemaObject).properties ?? {};
	const required = new Set<string>((schema as SchemaObject).required ?? []);
	const fields = Object.entries(properties).map(([name, property]) => fieldOf(name, property, required.has(name)));
	return [...fields.filter(field => field.required), ...fields.filter(field => !field.required)];
}

function fieldOf(name: string, schema: SchemaObject, required: boolean): FormField {
	const base = { name, description: schema.description ?? '', required, schema: schema as TSchema, defaultValue: schema.default };
	if (Array.isArray(schema.enum)) return { ...base, kind: 'enum', options: schema.enum };
	switch (schema.type) {
		case 'string': return { ...base, kind: 'string', ...(MULTILINE_FIELDS.has(name) ? { multiline: true } : {}) };
		case 'integer': return { ...base, kind: 'integer' };
		case 'number': return { ...base, kind: 'number' };
		case 'boolean': return { ...base, kind: 'boolean' };
	}
	return { ...base, kind: 'json' };
}

export type FieldValue = { readonly value: unknown } | { readonly skip: true } | { readonly error: string };

/**
 * What the person typed for a field, as the value the tool receives. An empty answer skips an
 * optional field (the tool's default applies) and is an error for a required one. Errors say what
 * is expected in words; the input box keeps what was typed.
 */
export function parseFieldInput(field: FormField, text: string): FieldValue {
	if (text.trim() === '' && field.kind !== 'string') return field.required ? { error: `${field.name} is required: ${fieldPrompt(field).placeHolder || 'type a value'}.` } : { skip: true };
	if (text === '' && field.kind === 'string' && !field.required) return { skip: true };
	let value: unknown;
	switch (field.kind) {
		case 'integer':
			if (!/^\s*-?\d+\s*$/.test(text)) return { error: `${field.name} must be a whole number, like 10.` };
			value = Number.parseInt(text, 10);
			break;
		case 'number':
			value = Number(text);
			if (!Number.isFinite(value)) return { error: `${field.name} must be a number, like 2.5.` };
			break;
		case 'boolean':
			if (!/^\s*(true|false|yes|no)\s*$/i.test(text)) return { error: `${field.name} must be yes or no.` };
			value = /^\s*(true|yes)\s*$/i.test(text);
			break;
		case 'json':
			value = parseJson(text);
			if (value instanceof SyntaxError) return { error: `${field.name} must be JSON, like ${JSON.stringify(exampleValue(field))} (${value.message}).` };
			break;
		default:
			value = text;
	}
	const [issue] = validateInput(Type.Object({ [field.name]: field.schema }), { [field.name]: value });
	return issue ? { error: `${issueInWords(issue)}.` } : { value };
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch (error) {
		return error as SyntaxError;
	}
}

/**
 * A validation issue worded for a person, the field named in words: `/edits/0/oldText` missing is
 * "edit 1 needs oldText (a string)", `/tasks/1/status` wrong is "task 2: status expected …".
 */
export function issueInWords(issue: FieldIssue): string {
	const parts = issue.path.split('/').filter(Boolean);
	if (!parts.length) return `The input ${issue.message}`;
	const required = /^is required \((.*)\)$/.exec(issue.message);
	if (required && parts.length > 1) return `${placeInWords(parts.slice(0, -1))} needs ${parts.at(-1)} (${required[1]})`;
	const last = parts.at(-1)!;
	// An item of a list is named by the list: "edit 1", not "1".
	if (/^\d+$/.test(last)) return `${placeInWords(parts)} ${issue.message}`;
	return parts.length === 1 ? `${last} ${issue.message}` : `${placeInWords(parts.slice(0, -1))}: ${last} ${issue.message}`;
}

/** `["edits", "0"]` → "edit 1"; `["tasks", "2", "notes"]` → "task 3, notes". */
function placeInWords(parts: readonly string[]): string {
	const words: string[] = [];
	for (const [index, part] of parts.entries()) {
		if (/^\d+$/.test(part)) {
			const list = parts[index - 1] ?? 'item';
			const one = list.endsWith('s') && list.length > 1 ? list.slice(0, -1) : `item of ${list}`;
			words[words.length - 1] = `${one} ${Number(part) + 1}`;
		} else {
			words.push(part);
		}
	}
	return words.join(', ');
}

/** The prompt line and the grey placeholder of an input box for a field. */
export function fieldPrompt(field: FormField): { title: string; prompt: string; placeHolder: string } {
	const need = field.required ? 'required' : 'optional: leave empty for the default';
	const hint: Record<FieldKind, string> = {
		string: '',
		integer: 'a whole number',
		number: 'a number',
		boolean: 'yes or no',
		enum: `one of ${(field.options ?? []).join(', ')}`,
		json: `JSON, like ${JSON.stringify(exampleValue(field))}`,
	};
	const shownDefault = field.defaultValue !== undefined ? `default: ${JSON.stringify(field.defaultValue)}` : '';
	return {
		title: `${field.name} (${need})`,
		prompt: stripMarkdown(field.description),
		placeHolder: [hint[field.kind], shownDefault].filter(Boolean).join(' — '),
	};
}

/** Descriptions are written for the model, in Markdown; an input box shows plain text. */
export function stripMarkdown(text: string): string {
	return text.replace(/`([^`]*)`/g, '$1').replace(/\*\*([^*]+)\*\*/g, '$1');
}

/** How a chosen value reads in the list of optional fields. */
export function showValue(value: unknown): string {
	if (value === undefined) return '';
	const text = JSON.stringify(value);
	return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/**
 * A starting document for the JSON editor: the values given so far, and every required field (and
 * `also`, the fields the person is about to fill in) with an example of its type, so the person
 * fills in blanks instead of remembering names and shapes.
 */
export function skeletonInput(schema: TSchema, given: Record<string, unknown> = {}, also: readonly string[] = []): Record<string, unknown> {
	const input: Record<string, unknown> = {};
	for (const field of formFields(schema)) {
		if (field.name in given) input[field.name] = given[field.name];
		else if (field.required || also.includes(field.name)) input[field.name] = field.defaultValue ?? exampleValue(field);
	}
	return input;
}

/** An example of what a field holds: a list gets one item with its required fields, so its shape shows. */
export function exampleValue(field: Pick<FormField, 'options' | 'schema'>): unknown {
	return exampleOf(field.schema as SchemaObject, field.options);
}

function exampleOf(schema: SchemaObject, options: readonly (string | number)[] | undefined = Array.isArray(schema.enum) ? schema.enum : undefined): unknown {
	if (options) return options[0];
	if (schema.default !== undefined) return schema.default;
	switch (schema.type) {
		case 'string': return '';
		case 'integer':
		case 'number': return schema.minimum ?? 0;
		case 'boolean': return false;
		case 'array': return schema.items ? [exampleOf(schema.items)] : [];
		case 'object': {
			const required = new Set<string>(schema.required ?? []);
			return Object.fromEntries(Object.entries<SchemaObject>(schema.properties ?? {})
				.filter(([name]) => required.has(name))
				.map(([name, property]) => [name, exampleOf(property)]));
		}
	}
	const branches: SchemaObject[] = schema.anyOf ?? schema.oneOf ?? [];
	return branches.length ? exampleOf(branches[0]) : null;
}
