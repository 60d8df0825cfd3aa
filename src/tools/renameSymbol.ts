import { Type } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import { ToolError } from '../core/results/errors';
import { EditOperation, LanguageServiceRefusal } from '../core/languages';
import type { ToolResult } from '../core/results/result';
import { plural } from '../core/results/truncate';
import { askLanguageServer, describeTarget, languageServices, locate, POSITION_FIELDS } from './codeSupport';
import { planEdit } from './codeEdits';
import { defineTool } from './tool';

const schema = Type.Object({
	...POSITION_FIELDS,
	newName: Type.String({ minLength: 1, description: 'The new name (non-empty).' }),
}, { additionalProperties: false });

type Input = typeof schema.static;

export const renameSymbolTool = defineTool({
	name: 'rename_symbol',
	referenceName: 'tbRename',
	displayName: 'Rename Symbol',
	group: 'code',
	needsVscode: true,
	mutating: true,
	icon: 'symbol-field',
	tags: ['code', 'rename', 'refactor', 'edit'],
	userDescription: 'Rename a symbol everywhere it is used, as the editor\'s Rename Symbol does: one change across files, shown as a diff first and undone with one Undo.',
	modelDescription: [
		'Rename a symbol and every reference to it across the workspace with the language server (imports, re-exports and interface members included; same-named unrelated code untouched), as one all-or-nothing change the user approves as a diff.',
		'Prefer it to text replacement. symbol may be any occurrence: declaration, import or use. Returns the files changed and any new problems.',
	].join(' '),
	schema,
	describe: input => `Renaming ${describeTarget(input)} to "${input.newName}"`,
	run,
});

async function run(input: Input, ctx: ToolContext): Promise<ToolResult | PendingCall> {
	if (input.newName === input.symbol) throw new ToolError('invalid_input', `newName is "${input.symbol}" already, so there is nothing to rename. Nothing was changed.`);
	const services = languageServices(ctx);
	const { file, at, note } = await locate(ctx, services, input);
	const rename = `"${input.symbol}" to "${input.newName}"`;
	const operations = await askLanguageServer(ctx, services, file, async () => {
		try {
			return await services.rename(file.absolute, at.position, input.newName);
		} catch (error) {
			if (!(error instanceof LanguageServiceRefusal)) throw error;
			throw new ToolError('invalid_input', `The language server refused to rename ${rename}: ${error.message.replace(/\.?$/, '.')} Nothing was changed.`);
		}
	}, at.position);
	if (operations.length === 0) {
		throw new ToolError('no_match', `The language server found nothing to rename for ${rename} at ${file.display}:${input.line} (is it a symbol it knows? hover shows). Nothing was changed.`);
	}
	const invalid = notAnIdentifier(file.languageId, input.symbol, input.newName);
	if (invalid) throw new ToolError('invalid_input', `Cannot rename ${rename}: ${invalid} The language server would accept it and break the code. Nothing was changed.`);
	const edits = countTextEdits(operations);
	return planEdit(ctx, operations, {
		title: files => `Rename ${input.symbol} → ${input.newName} in ${files}`,
		done: (files, stat) => `Renamed ${rename}: ${plural(edits, 'edit')} in ${files}, ${stat}.${note ? ` ${note}` : ''}`,
		metadata: { edits },
	});
}

function countTextEdits(operations: readonly EditOperation[]): number {
	return operations.reduce((sum, operation) => sum + (operation.kind === 'text' ? operation.edits.length : 0), 0);
}

/** The shape of a name in the C family of languages (JavaScript, TypeScript, Java, C#, Go, Python, Rust, …). */
const IDENTIFIER = /^[\p{L}\p{Nl}_$][\p{L}\p{N}\p{Mn}\p{Mc}\p{Pc}$\u200c\u200d]*$/u;
const JS_LANGUAGES = new Set(['javascript', 'javascriptreact', 'typescript', 'typescriptreact']);
const JS_RESERVED = new Set([
	'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum', 'export', 'extends',
	'false', 'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this',
	'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield', 'let', 'static', 'implements', 'interface',
	'package', 'private', 'protected', 'public', 'await',
]);

/**
 * Why the new name cannot be a name, when the old one has the common identifier shape: some servers
 * (TypeScript's among them) rename to anything. Names of another shape (CSS, Lisp, `#private`) are
 * left to the language server.
 */
function notAnIdentifier(languageId: string, oldName: string, newName: string): string | undefined {
	if (!IDENTIFIER.test(oldName)) return undefined;
	if (!IDENTIFIER.test(newName)) return `"${newName}" is not an identifier (a letter, _ or $ first, then letters, digits, _ or $).`;
	if (JS_LANGUAGES.has(languageId) && JS_RESERVED.has(newName)) return `"${newName}" is a reserved word in ${languageId}.`;
	return undefined;
}
