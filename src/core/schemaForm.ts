import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';

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
	/** Anything else (arrays of objects, objects): typed as JSON and checked against its schema. */
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
	readonly schema: TSchema;
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
		case 'string': return { ...base, kind: 'string' };
		case 'integer': return { ...base, kind: 'integer' };
		case 'number': return { ...base, kind: 'number' };
		case 'boolean': return { ...base, kind: 'boolean' };
	}
	return { ...base, kind: 'json' };
}

export type FieldValue = { readonly value: unknown } | { readonly skip: true } | { readonly error: string };

/**
 * What the person typed for a field, as the value the tool receives. An empty answer skips an
 * optional field (the tool's default applies) and is an error for a required one.
 */
export function parseFieldInput(field: FormField, text: string): FieldValue {
	if (text.trim() === '' && field.kind !== 'string') return field.required ? { error: `${field.name} is required.` } : { skip: true };
	if (text === '' && field.kind === 'string' && !field.required) return { skip: true };
	let value: unknown;
	switch (field.kind) {
		case 'integer':
			if (!/^\s*-?\d+\s*$/.test(text)) return { error: `${field.name} must be a whole number.` };
			value = Number.parseInt(text, 10);
			break;
		case 'number':
			value = Number(text);
			if (!Number.isFinite(value)) return { error: `${field.name} must be a number.` };
			break;
		case 'boolean':
			if (!/^\s*(true|false|yes|no)\s*$/i.test(text)) return { error: `${field.name} must be yes or no.` };
			value = /^\s*(true|yes)\s*$/i.test(text);
			break;
		case 'json':
			value = parseJson(text);
			break;
		default:
			value = text;
	}
	if (value instanceof SyntaxError) return { error: `${field.name}: not valid JSON (${value.message}).` };
	const problem = firstProblem(field.schema, value);
	return problem ? { error: `${field.name} ${problem}` } : { value };
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch (error) {
		return error as SyntaxError;
	}
}

function firstProblem(schema: TSchema, value: unknown): string | undefined {
	const error = Value.Errors(schema, value).First();
	if (!error) return undefined;
	return `${error.path ? `(at ${error.path}) ` : ''}${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}.`;
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
		json: 'JSON',
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
 * A starting document for the JSON editor: every required field with a neutral value of its
 * type, so the person fills in blanks instead of remembering names.
 */
export function skeletonInput(schema: TSchema): Record<string, unknown> {
	const input: Record<string, unknown> = {};
	for (const field of formFields(schema)) {
		if (!field.required) continue;
		input[field.name] = field.defaultValue ?? neutralValue(field);
	}
	return input;
}

function neutralValue(field: FormField): unknown {
	const schema = field.schema as SchemaObject;
	switch (field.kind) {
		case 'enum': return field.options?.[0];
		case 'integer':
		case 'number': return schema.minimum ?? 0;
		case 'boolean': return false;
		case 'json': return schema.type === 'array' ? [] : {};
		default: return '';
	}
}
