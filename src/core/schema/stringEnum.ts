import { Kind, SchemaOptions, TUnsafe, Type, TypeRegistry } from '@sinclair/typebox';
import { DefaultErrorFunction, SetErrorFunction } from '@sinclair/typebox/errors';

/**
 * A choice among fixed strings, emitted as `{ type: 'string', enum: [...] }`. TypeBox's own
 * unions of literals become `anyOf` of `const`s, which model clients flatten: Copilot Chat's
 * Gemini converter keeps only each branch's type, so the model no longer sees the choices. The
 * handler still gets the exact TypeScript union, and the validator still enforces the choice
 * (its message lists the allowed values).
 */
export function stringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
	return Type.Unsafe<T[number]>({ ...options, [Kind]: STRING_ENUM, type: 'string', enum: [...values] });
}

const STRING_ENUM = 'StringEnum';

if (!TypeRegistry.Has(STRING_ENUM)) {
	TypeRegistry.Set(STRING_ENUM, (schema: { enum: readonly string[] }, value) => typeof value === 'string' && schema.enum.includes(value));
	// TypeBox's own message for a custom kind ("Expected kind 'StringEnum'") means nothing to a person.
	SetErrorFunction(parameter => parameter.schema[Kind] === STRING_ENUM
		? `Expected one of ${parameter.schema.enum.map((value: string) => JSON.stringify(value)).join(', ')}`
		: DefaultErrorFunction(parameter));
}
