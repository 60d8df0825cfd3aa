import * as assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { checkJsonInput, editorSchema, initialJsonText } from '../../src/core/jsonInput';
import { fieldPrompt, formFields, parseFieldInput, skeletonInput } from '../../src/core/schemaForm';
import { stringEnum } from '../../src/core/stringEnum';
import { ALL_TOOLS } from '../../src/tools';

const schema = Type.Object({
	limit: Type.Optional(Type.Integer({ minimum: 1, default: 500, description: 'How many (`default 500`).' })),
	mode: Type.Optional(stringEnum(['slice', 'indentation'], { description: 'The mode.' })),
	path: Type.String({ minLength: 1, description: 'Where.' }),
	recursive: Type.Optional(Type.Boolean({ description: 'Deep?' })),
	edits: Type.Array(Type.Object({ oldText: Type.String(), newText: Type.String() }, { additionalProperties: false }), { description: 'Edits.' }),
}, { additionalProperties: false });

describe('schema → prompts', () => {
	it('puts required fields first, each with the prompt kind that fits', () => {
		const fields = formFields(schema);
		assert.deepEqual(fields.map(field => [field.name, field.required, field.kind]), [
			['path', true, 'string'],
			['edits', true, 'json'],
			['limit', false, 'integer'],
			['mode', false, 'enum'],
			['recursive', false, 'boolean'],
		]);
		assert.deepEqual(fields.find(field => field.name === 'mode')?.options, ['slice', 'indentation']);
	});

	it('shows defaults and strips Markdown from the prompt', () => {
		const limit = formFields(schema).find(field => field.name === 'limit')!;
		const prompt = fieldPrompt(limit);
		assert.equal(prompt.title, 'limit (optional: leave empty for the default)');
		assert.equal(prompt.prompt, 'How many (default 500).');
		assert.equal(prompt.placeHolder, 'a whole number — default: 500');
	});

	it('turns typed text into values and refuses what the schema refuses', () => {
		const byName = Object.fromEntries(formFields(schema).map(field => [field.name, field]));
		assert.deepEqual(parseFieldInput(byName.limit, '40'), { value: 40 });
		assert.match((parseFieldInput(byName.limit, '4.5') as any).error, /whole number/);
		assert.match((parseFieldInput(byName.limit, '0') as any).error, /limit .*greater or equal to 1/i);
		assert.deepEqual(parseFieldInput(byName.limit, ''), { skip: true });
		assert.match((parseFieldInput(byName.path, '') as any).error, /path/);
		assert.deepEqual(parseFieldInput(byName.recursive, 'yes'), { value: true });
		assert.deepEqual(parseFieldInput(byName.mode, 'slice'), { value: 'slice' });
		assert.match((parseFieldInput(byName.mode, 'lines') as any).error, /mode/);
		assert.deepEqual(parseFieldInput(byName.edits, '[{"oldText":"a","newText":"b"}]'), { value: [{ oldText: 'a', newText: 'b' }] });
		assert.match((parseFieldInput(byName.edits, '[{"oldText":"a"}]') as any).error, /edits .*newText/);
		assert.match((parseFieldInput(byName.edits, '[{') as any).error, /not valid JSON/);
		assert.match((parseFieldInput(byName.edits, '') as any).error, /required/);
	});

	it('builds a skeleton with every required field', () => {
		assert.deepEqual(skeletonInput(schema), { path: '', edits: [] });
	});

	it('has a prompt for every field of every tool', () => {
		for (const tool of ALL_TOOLS) {
			for (const field of formFields(tool.schema)) {
				assert.ok(field.description, `${tool.name}.${field.name} has no description`);
				assert.ok(fieldPrompt(field).title.startsWith(field.name));
			}
		}
	});
});

describe('JSON input editor', () => {
	const uri = 'toolbelt-schema:/x.json';

	it('accepts valid input and leaves out $schema', () => {
		const text = initialJsonText(uri, { path: 'a.txt', edits: [] });
		assert.deepEqual(checkJsonInput(text, schema), { input: { path: 'a.txt', edits: [] } });
	});

	it('places a syntax error where it is', () => {
		const text = '{\n\t"path": "a",\n\t"edits": [}\n';
		const checked = checkJsonInput(text, schema);
		assert.ok('problems' in checked);
		assert.match(checked.problems[0].message, /^Not valid JSON: /);
		assert.equal(text.slice(checked.problems[0].offset, checked.problems[0].offset + 1), '}');
	});

	it('underlines the wrong field, an unknown one, and the object missing a required one', () => {
		const text = '{"path": "", "edits": [{"oldText": 1, "newText": "b"}], "bogus": true}';
		const checked = checkJsonInput(text, schema);
		assert.ok('problems' in checked);
		const at = (problem: { offset: number; length: number }) => text.slice(problem.offset, problem.offset + problem.length);
		const messages = checked.problems.map(problem => [problem.message, at(problem)]);
		assert.ok(messages.some(([message, span]) => /^path must not be empty/.test(message) && span === '"path": ""'), JSON.stringify(messages));
		assert.ok(messages.some(([message, span]) => /^edits\.0\.oldText/.test(message) && span === '"oldText": 1'), JSON.stringify(messages));
		assert.ok(messages.some(([message, span]) => /^bogus is not a known field/.test(message) && span === '"bogus": true'), JSON.stringify(messages));
		const missing = checkJsonInput('{"path": "a"}', schema);
		assert.ok('problems' in missing);
		assert.match(missing.problems[0].message, /^edits is required/);
		assert.equal(missing.problems[0].offset, 0);
	});

	it('refuses an array and an empty document', () => {
		const array = checkJsonInput('[1]', schema);
		assert.ok('problems' in array && /must be a JSON object/.test(array.problems[0].message));
		const empty = checkJsonInput('', schema);
		assert.ok('problems' in empty && /Not valid JSON/.test(empty.problems[0].message));
	});

	it('lets the editor schema accept $schema while the tool schema does not', () => {
		const shown = editorSchema(schema, 'read_file') as any;
		assert.equal(shown.additionalProperties, false);
		assert.ok(shown.properties.$schema);
		assert.ok(!(schema.properties as any).$schema);
	});
});
