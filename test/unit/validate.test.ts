import * as assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { stringEnum } from '../../src/core/schema/stringEnum';
import { validateInput } from '../../src/core/schema/validate';
import { toValidatingSchema } from '../../src/tools/custom/jsonSchema';

/** Every kind of mistake validateInput words differently, one field each. */
const schema = Type.Object({
	name: Type.String({ minLength: 1, maxLength: 5 }),
	code: Type.String({ minLength: 3 }),
	count: Type.Integer({ minimum: 1, maximum: 9 }),
	ratio: Type.Number({ minimum: 0.5, maximum: 2.5 }),
	// Tools give choices as string enums (every model family keeps them; see toolSchemas.test.ts).
	mode: stringEnum(['a', 'b']),
	list: Type.Array(Type.String(), { minItems: 1, maxItems: 2 }),
	flag: Type.Boolean(),
	seven: Type.Optional(Type.Literal(7)),
	nothing: Type.Optional(Type.Null()),
	object: Type.Optional(Type.Object({})),
	numbers: Type.Optional(Type.Array(Type.Number())),
}, { additionalProperties: false });

describe('validateInput', () => {
	it('accepts valid input', () => {
		assert.deepEqual(validateInput(schema, { name: 'n', code: 'abc', count: 1, ratio: 2.5, mode: 'b', list: ['x'], flag: false }), []);
	});

	it('words each mistake for a model: the field, what was wrong, what was expected', () => {
		const issues = validateInput(schema, {
			name: '', code: 'ab', count: 0, ratio: 3, mode: 'c', list: [], flag: 1, seven: 8,
			nothing: 'x', object: [], numbers: {}, extra: 1,
		});
		assert.deepEqual(issues, [
			{ path: '/extra', message: 'is not a known field; remove it (check the spelling against the schema)' },
			{ path: '/name', message: 'must not be empty' },
			{ path: '/code', message: 'must be at least 3 characters' },
			{ path: '/count', message: 'must be ≥ 1, got number 0' },
			{ path: '/ratio', message: 'must be ≤ 2.5, got number 3' },
			{ path: '/mode', message: 'expected one of "a", "b", got the string "c"' },
			{ path: '/list', message: 'must hold at least 1 item(s)' },
			{ path: '/flag', message: 'expected true or false, got number 1' },
			{ path: '/seven', message: 'expected 7, got number 8' },
			{ path: '/nothing', message: 'expected null, got the string "x"' },
			{ path: '/object', message: 'expected an object, got an array' },
			{ path: '/numbers', message: 'expected an array, got an object' },
		]);
	});

	it('names missing fields with what they take, and the other bounds', () => {
		const long = 'x'.repeat(45);
		assert.deepEqual(validateInput(schema, { name: long, count: 10, ratio: 0.1, list: ['a', 'b', 'c'], flag: 'yes', numbers: [1, 'two'] }), [
			{ path: '/code', message: 'is required (a string)' },
			{ path: '/mode', message: 'is required (one of "a", "b")' },
			{ path: '/name', message: 'must be at most 5 characters' },
			{ path: '/count', message: 'must be ≤ 9, got number 10' },
			{ path: '/ratio', message: 'must be ≥ 0.5, got number 0.1' },
			{ path: '/list', message: 'must hold at most 2 items' },
			{ path: '/flag', message: 'expected true or false, got the string "yes"' },
			{ path: '/numbers/1', message: 'expected a number, got the string "two"' },
		]);
		assert.deepEqual(validateInput(Type.Object({ count: Type.Integer() }), { count: 1.5 }), [{ path: '/count', message: 'expected an integer, got number 1.5' }]);
	});

	it('shortens long values it quotes, and names what is not a string', () => {
		const value = (input: unknown) => validateInput(Type.Object({ n: Type.Integer() }), { n: input })[0].message;
		assert.equal(value('y'.repeat(41)), `expected an integer, got the string "${'y'.repeat(40)}…"`);
		assert.equal(value('y'.repeat(40)), `expected an integer, got the string "${'y'.repeat(40)}"`);
		assert.equal(value(null), 'expected an integer, got null');
		assert.equal(value([1]), 'expected an integer, got an array');
		assert.equal(value({}), 'expected an integer, got an object');
		assert.equal(value(false), 'expected an integer, got boolean false');
	});

	it('words a pattern, a custom tool\'s list of types, and a union by its kind', () => {
		assert.deepEqual(validateInput(Type.Object({ id: Type.String({ pattern: '^[a-z]+$' }) }), { id: 'A1' }), [{ path: '/id', message: 'expected text matching /^[a-z]+$/, got the string "A1"' }]);
		const custom = toValidatingSchema({ type: 'object', properties: { v: { type: ['string', 'null'] }, w: { type: ['integer', 'string'] } } });
		assert.ok('schema' in custom);
		assert.deepEqual(validateInput(custom.schema, { v: 1, w: true }), [
			{ path: '/v', message: 'expected a string or null, got number 1' },
			{ path: '/w', message: 'expected an integer or a string, got boolean true' },
		]);
		assert.deepEqual(validateInput(Type.Object({ u: Type.Union([Type.String(), Type.Number()]) }), { u: true }), [{ path: '/u', message: 'expected union, got boolean true' }]);
	});

	it('refuses input that is not a JSON object as a whole', () => {
		for (const [input, got] of [[null, 'null'], [[1], 'an array'], ['str', 'the string "str"'], [5, 'number 5'], [undefined, 'nothing']] as const) {
			assert.deepEqual(validateInput(schema, input), [{ path: '', message: `expected a JSON object, got ${got}` }]);
		}
	});
});
