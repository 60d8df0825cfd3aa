import * as assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { checkJsonInput, editorSchema, initialJsonText } from '../../src/ui/jsonInput';
import { exampleValue, fieldPrompt, formFields, issueInWords, needsEditor, parseFieldInput, skeletonInput } from '../../src/ui/schemaForm';
import { stringEnum } from '../../src/core/schema/stringEnum';
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
		assert.equal((parseFieldInput(byName.limit, '0') as any).error, 'limit must be ≥ 1, got number 0.');
		assert.deepEqual(parseFieldInput(byName.limit, ''), { skip: true });
		assert.match((parseFieldInput(byName.path, '') as any).error, /path/);
		assert.deepEqual(parseFieldInput(byName.recursive, 'yes'), { value: true });
		assert.deepEqual(parseFieldInput(byName.mode, 'slice'), { value: 'slice' });
		assert.match((parseFieldInput(byName.mode, 'lines') as any).error, /mode/);
		assert.deepEqual(parseFieldInput(byName.edits, '[{"oldText":"a","newText":"b"}]'), { value: [{ oldText: 'a', newText: 'b' }] });
		assert.equal((parseFieldInput(byName.edits, '[{"oldText":"a"}]') as any).error, 'edit 1 needs newText (a string).');
		assert.match((parseFieldInput(byName.edits, '[{') as any).error, /^edits must be JSON, like \[\{"oldText":"","newText":""\}\] \(/);
		assert.match((parseFieldInput(byName.edits, '') as any).error, /^edits is required: JSON, like \[/);
		assert.equal((parseFieldInput(byName.mode, 'fast') as any).error, 'mode expected one of "slice", "indentation", got the string "fast".');
	});

	it('names the field in words, not as a JSON pointer', () => {
		assert.equal(issueInWords({ path: '/edits/0/oldText', message: 'is required (a string)' }), 'edit 1 needs oldText (a string)');
		assert.equal(issueInWords({ path: '/tasks/1/status', message: 'expected one of "pending", "completed", got the string "x"' }), 'task 2: status expected one of "pending", "completed", got the string "x"');
		assert.equal(issueInWords({ path: '/paths/2', message: 'must not be empty' }), 'path 3 must not be empty');
		assert.equal(issueInWords({ path: '/path', message: 'is required (a string)' }), 'path is required (a string)');
		assert.equal(issueInWords({ path: '', message: 'expected a JSON object, got an array' }), 'The input expected a JSON object, got an array');
	});

	it('builds a starting input: answers so far, then an example of every required field and of the one asked', () => {
		assert.deepEqual(skeletonInput(schema), { path: '', edits: [{ oldText: '', newText: '' }] });
		assert.deepEqual(skeletonInput(schema, { path: 'a.txt' }, ['limit']), { path: 'a.txt', edits: [{ oldText: '', newText: '' }], limit: 500 });
	});

	it('sends lists, objects and text of several lines to the editor, with an example of their shape', () => {
		const field = (tool: string, name: string) => formFields(ALL_TOOLS.find(candidate => candidate.name === tool)!.schema).find(candidate => candidate.name === name)!;
		for (const [tool, name] of [['edit_file', 'edits'], ['write_file', 'content'], ['apply_patch', 'patch'], ['update_plan', 'tasks'], ['run_command', 'env'], ['run_command', 'stdin']]) {
			assert.ok(needsEditor(field(tool, name)), `${tool}.${name}`);
		}
		for (const [tool, name] of [['write_file', 'path'], ['run_command', 'command'], ['grep', 'glob'], ['read_file', 'limit']]) {
			assert.ok(!needsEditor(field(tool, name)), `${tool}.${name}`);
		}
		assert.deepEqual(exampleValue(field('edit_file', 'edits')), [{ oldText: '', newText: '' }]);
		assert.deepEqual((exampleValue(field('update_plan', 'tasks')) as object[]).map(task => Object.keys(task)), [['title', 'status']]);
	});

	it('every prompt of every tool answers bad input with words that name the field', () => {
		for (const tool of ALL_TOOLS) {
			for (const field of formFields(tool.schema).filter(candidate => !needsEditor(candidate))) {
				for (const typed of ['', '   ', 'x', '-1', '1.5', '[', '99999999999']) {
					const parsed = parseFieldInput(field, typed);
					if (!('error' in parsed)) continue;
					assert.match(parsed.error, new RegExp(`^${field.name}\\b`), `${tool.name}.${field.name} given ${JSON.stringify(typed)}: ${parsed.error}`);
					assert.doesNotMatch(parsed.error, /\(at \/|expected required property|\/0\//, `${tool.name}.${field.name}: ${parsed.error}`);
				}
			}
		}
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
		assert.ok(messages.some(([message, span]) => /^edit 1: oldText expected a string/.test(message) && span === '"oldText": 1'), JSON.stringify(messages));
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
