import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { forEachNode, GPT4_STRIPPED_KEYWORDS, normalizeForFamily, Schema, toGeminiDeclaration } from './support/copilotSchemas';

/**
 * Every contributed tool, as package.json declares it, through what real clients do to tool
 * schemas (see support/copilotSchemas.ts for where each rule comes from): nothing to fix for any
 * model family, nothing lost on the way to Gemini, every limit GPT-4-class models never see said
 * in words, and definitions small enough to send on every request.
 */

const packageJson = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8'));
const tools: { name: string; modelDescription: string; inputSchema: Schema }[] = packageJson.contributes.languageModelTools;

/** Families whose rules differ in Copilot's normalizer. */
const FAMILIES = ['gpt-4.1', 'gpt-4o', 'gpt-5', 'o4-mini', 'claude-sonnet-4', 'gemini-2.5-pro'];

/**
 * What definitions cost on every request (name, description and schema, in UTF-8 bytes): about
 * as much as Copilot's own tools on average, and no single tool far above (grep has 11 fields).
 */
const MEAN_DEFINITION_BYTES = 1024;
const MAX_DEFINITION_BYTES = 1792;

/** The keywords a schema may use: the ones every client above keeps or states. */
const PLAIN_KEYWORDS = new Set([
	'type', 'description', 'properties', 'required', 'additionalProperties', 'items', 'enum',
	'minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern',
]);

describe('tool schemas every model family accepts', () => {
	it('has contributed tools to check', () => assert.ok(tools.length >= 17));

	it('need no fix from Copilot\'s normalizer for any model family (GPT-4\'s stripped limits aside)', () => {
		const fixed = tools.flatMap(tool => FAMILIES.flatMap(family => {
			const { fixes, parameters } = normalizeForFamily(family, tool.modelDescription, tool.inputSchema);
			return [
				...fixes.filter(fix => !fix.startsWith('object has unsupported schema keyword')),
				...emptyObjects(parameters, 'object'),
			].map(problem => `${tool.name} for ${family}: ${problem}`);
		}));
		assert.deepEqual(fixed, []);
	});

	it('use only plain keywords: no anyOf/oneOf/const/patternProperties/$ref/default', () => {
		const odd = tools.flatMap(tool => {
			const keys: string[] = [];
			forEachNode(tool.inputSchema, node => keys.push(...Object.keys(node).filter(key => !PLAIN_KEYWORDS.has(key))));
			return keys.map(key => `${tool.name}: ${key}`);
		});
		assert.deepEqual(odd, []);
	});

	it('reach Gemini whole: every field keeps its type, description and choices; no object without properties', () => {
		const problems = tools.flatMap(tool => {
			const declaration = toGeminiDeclaration(tool.name, tool.modelDescription, tool.inputSchema);
			return [
				...(declaration.description === tool.modelDescription ? [] : ['description changed']),
				...geminiLosses(tool.inputSchema, declaration.parameters, ''),
				// The Gemini API answers HTTP 400 to these, failing the whole request.
				...emptyObjects(declaration.parameters, 'OBJECT'),
			].map(problem => `${tool.name}: ${problem}`);
		});
		assert.deepEqual(problems, []);
	});

	it('say in words every limit Copilot strips for GPT-4-class models', () => {
		const unsaid = tools.flatMap(tool => {
			const normalized = normalizeForFamily('gpt-4.1', tool.modelDescription, tool.inputSchema).parameters;
			// What the model gets still carries every description, uncut.
			const cut = JSON.stringify(descriptions(normalized)) === JSON.stringify(descriptions(tool.inputSchema)) ? [] : ['a description was cut'];
			return [...unsaidLimits(tool.inputSchema, undefined, ''), ...cut].map(problem => `${tool.name} ${problem}`);
		});
		assert.deepEqual(unsaid, [], 'state these limits in the field\'s description');
	});

	it(`are compact: at most ${MEAN_DEFINITION_BYTES} bytes per tool on average, none above ${MAX_DEFINITION_BYTES}`, () => {
		const sizes = tools.map(tool => ({ name: tool.name, bytes: definitionBytes(tool) }));
		const mean = sizes.reduce((sum, size) => sum + size.bytes, 0) / sizes.length;
		assert.ok(mean <= MEAN_DEFINITION_BYTES, `${Math.round(mean)} bytes per tool on average: ${sizes.map(size => `${size.name} ${size.bytes}`).join(', ')}`);
		const large = sizes.filter(size => size.bytes > MAX_DEFINITION_BYTES).map(size => `${size.name}: ${size.bytes}`);
		assert.deepEqual(large, []);
	});
});

/** Objects a model could fill with nothing, and arrays with no item type. */
function emptyObjects(schema: Schema, objectType: string): string[] {
	const empty: string[] = [];
	forEachNode(schema, node => {
		if (node.type === objectType && Object.keys(node.properties ?? {}).length === 0) empty.push(`an object without properties: ${JSON.stringify(node).slice(0, 100)}`);
		if (String(node.type).toLowerCase() === 'array' && !node.items) empty.push('an array without items');
	});
	return empty;
}

function definitionBytes(tool: { name: string; modelDescription: string; inputSchema: Schema }): number {
	return Buffer.byteLength(tool.name) + Buffer.byteLength(tool.modelDescription) + Buffer.byteLength(JSON.stringify(tool.inputSchema));
}

/** What of a field the Gemini declaration no longer carries: its description, choices, fields or items. */
function geminiLosses(source: Schema, converted: Schema, at: string): string[] {
	const losses: string[] = [];
	if (source.type && converted.type !== String(source.type).toUpperCase()) losses.push(`${at}: type ${source.type} became ${converted.type}`);
	if (source.description && converted.description !== source.description) losses.push(`${at}: description lost`);
	const literals = Array.isArray(source.anyOf) && source.anyOf.every((branch: Schema) => 'const' in branch);
	const choices = source.enum ?? (literals ? source.anyOf.map((branch: Schema) => branch.const) : undefined);
	if (choices && JSON.stringify(converted.enum) !== JSON.stringify(choices)) losses.push(`${at}: choices ${JSON.stringify(choices)} lost`);
	if (source.required?.length && JSON.stringify(converted.required) !== JSON.stringify(source.required)) losses.push(`${at}: required lost`);
	for (const [name, property] of Object.entries<Schema>(source.properties ?? {})) {
		const target = converted.properties?.[name];
		if (!target) losses.push(`${at}/${name}: field lost`);
		else losses.push(...geminiLosses(property, target, `${at}/${name}`));
	}
	if (source.items) {
		if (!converted.items) losses.push(`${at}: items lost`);
		else losses.push(...geminiLosses(source.items, converted.items, `${at}/items`));
	}
	return losses;
}

/**
 * Limits of a node (and its children) that its description does not state. Array items without a
 * description of their own are described by their array's.
 */
function unsaidLimits(node: Schema, inherited: string | undefined, at: string): string[] {
	const text = (node.description ?? inherited ?? '').toLowerCase();
	const unsaid: string[] = [];
	for (const [low, high] of [['minimum', 'maximum'], ['minLength', 'maxLength'], ['minItems', 'maxItems']]) {
		const min: number | undefined = node[low];
		const max: number | undefined = node[high];
		if (min !== undefined && max !== undefined && says(text, numberForms(min).flatMap(a => numberForms(max).map(b => `${a}–${b}`)))) continue;
		if (min !== undefined && !says(text, minimumForms(low, min))) unsaid.push(`${at} ${low} ${min}`);
		if (max !== undefined && !says(text, numberForms(max).flatMap(n => [`≤ ${n}`, `at most ${n}`]))) unsaid.push(`${at} ${high} ${max}`);
	}
	if (node.pattern !== undefined && text === '') unsaid.push(`${at} pattern ${node.pattern}`);
	const handled = new Set(['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern']);
	for (const key of Object.keys(node)) if (GPT4_STRIPPED_KEYWORDS.has(key) && !handled.has(key)) unsaid.push(`${at} ${key}`);
	for (const [name, property] of Object.entries<Schema>(node.properties ?? {})) unsaid.push(...unsaidLimits(property, undefined, `${at}/${name}`));
	if (node.items) unsaid.push(...unsaidLimits(node.items, node.description, `${at}/items`));
	return unsaid;
}

function minimumForms(keyword: string, min: number): string[] {
	const forms = numberForms(min).flatMap(n => [`≥ ${n}`, `at least ${n}`]);
	if (min === 1 && keyword !== 'minimum') forms.push('non-empty');
	return forms;
}

function numberForms(n: number): string[] {
	return [String(n), n.toLocaleString('en-US')];
}

function says(text: string, forms: readonly string[]): boolean {
	return forms.some(form => text.includes(form.toLowerCase()));
}

function descriptions(schema: Schema): string[] {
	const all: string[] = [];
	forEachNode(schema, node => {
		if (node.description) all.push(node.description);
	});
	return all;
}
