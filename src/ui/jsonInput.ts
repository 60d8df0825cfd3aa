import type { TSchema } from '@sinclair/typebox';
import { findNodeAtLocation, Node, ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
import { issueInWords } from './schemaForm';
import { validateInput } from '../core/schema/validate';

/**
 * Tool input typed as JSON in an editor (Run Tool… → Edit as JSON): parsed and checked against
 * the tool's schema, with every problem placed at the text it is about, so the editor can
 * underline it. Pure: offsets in, offsets out.
 */

/** The key that ties the document to its schema for completion; not part of the input. */
export const SCHEMA_KEY = '$schema';

export interface InputProblem {
	readonly offset: number;
	readonly length: number;
	readonly message: string;
}

export type CheckedJson = { readonly input: Record<string, unknown> } | { readonly problems: readonly InputProblem[] };

export function checkJsonInput(text: string, schema: TSchema): CheckedJson {
	const errors: ParseError[] = [];
	const root = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
	if (errors.length || !root) {
		const problems = errors.map(error => ({ offset: error.offset, length: Math.max(1, error.length), message: `Not valid JSON: ${syntaxMessage(error)}.` }));
		return { problems: problems.length ? problems : [{ offset: 0, length: 1, message: 'Not valid JSON: the document is empty.' }] };
	}
	if (root.type !== 'object') return { problems: [{ offset: root.offset, length: root.length, message: 'The input must be a JSON object: { "field": value, … }.' }] };
	const { [SCHEMA_KEY]: _schema, ...input } = JSON.parse(text) as Record<string, unknown>;
	const issues = validateInput(schema, input);
	if (!issues.length) return { input };
	return {
		problems: issues.map(issue => {
			const node = nodeOf(root, issue.path);
			return { offset: node.offset, length: node.length, message: issueInWords(issue) };
		}),
	};
}

/** The node an issue is about: the value if present, else its parent object (a missing field). */
function nodeOf(root: Node, pointer: string): Node {
	const parts: (string | number)[] = pointer.split('/').filter(Boolean).map(part => (/^\d+$/.test(part) ? Number(part) : part));
	while (parts.length) {
		const node = findNodeAtLocation(root, parts);
		if (node) {
			// Underline "key": value rather than only the value, so an unknown field is easy to spot.
			return node.parent?.type === 'property' ? node.parent : node;
		}
		parts.pop();
	}
	// Missing fields: the opening brace of the object that lacks them.
	return { ...root, length: 1 };
}

function syntaxMessage(error: ParseError): string {
	const words = printParseErrorCode(error.error).replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
	return words;
}

/** The text a JSON input editor starts with. */
export function initialJsonText(schemaUri: string, skeleton: Record<string, unknown>): string {
	return `${JSON.stringify({ [SCHEMA_KEY]: schemaUri, ...skeleton }, null, '\t')}\n`;
}

/** The tool's schema as the JSON language service should see it: `$schema` allowed. */
export function editorSchema(schema: TSchema, title: string): object {
	const plain = JSON.parse(JSON.stringify(schema));
	return { ...plain, title, properties: { [SCHEMA_KEY]: { type: 'string', description: 'Links this document to the tool\'s schema (completion and checks); not sent to the tool.' }, ...plain.properties } };
}
