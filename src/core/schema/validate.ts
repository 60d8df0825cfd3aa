import { Kind, TSchema } from '@sinclair/typebox';
import { Value, ValueError, ValueErrorType } from '@sinclair/typebox/value';
import { FieldIssue } from '../results/errors';

/**
 * Checks input against a tool's schema and words every problem for a model: which field, what
 * was wrong, what was expected. VS Code does not validate tool input, so every call path ends here.
 */
export function validateInput(schema: TSchema, input: unknown): FieldIssue[] {
	if (input === null || typeof input !== 'object' || Array.isArray(input)) {
		return [{ path: '', message: `expected a JSON object, got ${describeValue(input)}` }];
	}
	const issues: FieldIssue[] = [];
	const seen = new Set<string>();
	for (const error of Value.Errors(schema, input)) {
		const issue = toIssue(error);
		// Only the first problem per field is worth reading.
		if (seen.has(issue.path)) continue;
		seen.add(issue.path);
		issues.push(issue);
	}
	return issues;
}

function toIssue(error: ValueError): FieldIssue {
	const schema = error.schema as TSchema & Record<string, any>;
	switch (error.type) {
		case ValueErrorType.ObjectRequiredProperty:
			return { path: error.path, message: `is required (${expected(schema)})` };
		case ValueErrorType.ObjectAdditionalProperties:
			return { path: error.path, message: 'is not a known field; remove it (check the spelling against the schema)' };
		case ValueErrorType.StringMinLength:
			return { path: error.path, message: schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters` };
		case ValueErrorType.StringPattern:
			return { path: error.path, message: `expected text matching /${schema.pattern}/, got ${describeValue(error.value)}` };
		case ValueErrorType.StringMaxLength:
			return { path: error.path, message: `must be at most ${schema.maxLength} characters` };
		case ValueErrorType.IntegerMinimum:
		case ValueErrorType.NumberMinimum:
			return { path: error.path, message: `must be ≥ ${schema.minimum}, got ${describeValue(error.value)}` };
		case ValueErrorType.IntegerMaximum:
		case ValueErrorType.NumberMaximum:
			return { path: error.path, message: `must be ≤ ${schema.maximum}, got ${describeValue(error.value)}` };
		case ValueErrorType.ArrayMinItems:
			return { path: error.path, message: `must hold at least ${schema.minItems} item(s)` };
		case ValueErrorType.ArrayMaxItems:
			return { path: error.path, message: `must hold at most ${schema.maxItems} items` };
		default:
			return { path: error.path, message: `expected ${expected(schema)}, got ${describeValue(error.value)}` };
	}
}

/** A short description of what a schema accepts: `one of "slice", "indentation"`, `an integer`. */
function expected(schema: Record<string | symbol, any>): string {
	if ('const' in schema) return JSON.stringify(schema.const);
	if (schema.enum) return `one of ${schema.enum.map((v: unknown) => JSON.stringify(v)).join(', ')}`;
	// A custom tool's schema may allow several types: `"type": ["string", "null"]`.
	const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
	const words = types.map(type => TYPE_WORDS[String(type)]);
	if (words.every(Boolean)) return words.join(' or ');
	const kind = (schema as any)[Kind];
	return kind ? String(kind).toLowerCase() : 'a valid value';
}

const TYPE_WORDS: Record<string, string> = {
	integer: 'an integer', number: 'a number', string: 'a string', boolean: 'true or false', array: 'an array', object: 'an object', null: 'null',
};

/** What was found instead of what a schema wanted: `an array`, `the string "x"`, `nothing`. */
export function describeValue(value: unknown): string {
	if (value === undefined) return 'nothing';
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'an array';
	if (typeof value === 'string') return value.length > 40 ? `the string "${value.slice(0, 40)}…"` : `the string ${JSON.stringify(value)}`;
	if (typeof value === 'object') return 'an object';
	return `${typeof value} ${String(value)}`;
}
