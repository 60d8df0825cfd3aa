import * as vscode from 'vscode';
import { ToolError } from '../core/results/errors';
import {
	CallEdge, CallItem, CodeActionInfo, DefinitionKind, EditOperation, LanguageServiceRefusal, LanguageServices, SourceLocation,
	SourcePosition, SourceRange, SYMBOL_KINDS, SymbolInfo, TextEditData,
} from '../core/languages';

/**
 * The core's LanguageServices on VS Code's built-in provider commands, which ask every language
 * extension registered for a document (TypeScript's, Python's, …) and merge their answers.
 */
export function createLanguageServices(): LanguageServices {
	return {
		open: async (path, options) => {
			const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
			if (options?.inEditor) await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true });
			return { languageId: document.languageId };
		},
		readiness: async (path, position) => {
			const uri = vscode.Uri.file(path);
			const symbols = await ask<(vscode.SymbolInformation | vscode.DocumentSymbol)[]>('vscode.executeDocumentSymbolProvider', uri) ?? [];
			const hoverAt = async (at: vscode.Position) => (await ask<vscode.Hover[]>('vscode.executeHoverProvider', uri, at) ?? []).flatMap(hover => hover.contents.map(markdownOf));
			let texts = position ? await hoverAt(toPosition(position)) : [];
			// A line's start or a keyword has no hover; a declared name always has one.
			const declared = symbols.length ? fromSymbol(symbols[0], path)[0]?.location.range.start : undefined;
			if (texts.length === 0 && declared) texts = await hoverAt(toPosition(declared));
			// TypeScript answers from a syntax-only server while it loads a project, and marks its hovers so.
			if (texts.some(text => text.includes(TYPESCRIPT_LOADING))) return 'loading';
			return symbols.length > 0 || texts.length > 0 ? 'ready' : 'silent';
		},
		definitions: async (path, position, kind) =>
			(await ask<(vscode.Location | vscode.LocationLink)[]>(DEFINITION_COMMANDS[kind], vscode.Uri.file(path), toPosition(position)) ?? []).flatMap(fromLocation),
		references: async (path, position) =>
			(await ask<vscode.Location[]>('vscode.executeReferenceProvider', vscode.Uri.file(path), toPosition(position)) ?? []).flatMap(fromLocation),
		workspaceSymbols: async query =>
			(await ask<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', query) ?? []).flatMap(symbol => fromSymbol(symbol)),
		documentSymbols: async path =>
			(await ask<(vscode.SymbolInformation | vscode.DocumentSymbol)[]>('vscode.executeDocumentSymbolProvider', vscode.Uri.file(path)) ?? []).flatMap(symbol => fromSymbol(symbol, path)),
		hover: async (path, position) =>
			(await ask<vscode.Hover[]>('vscode.executeHoverProvider', vscode.Uri.file(path), toPosition(position)) ?? []).flatMap(hover => hover.contents.map(markdownOf)),
		prepareCallHierarchy: async (path, position) =>
			(await ask<vscode.CallHierarchyItem[]>('vscode.prepareCallHierarchy', vscode.Uri.file(path), toPosition(position)) ?? []).flatMap(fromCallItem),
		incomingCalls: async item =>
			(await ask<vscode.CallHierarchyIncomingCall[]>('vscode.provideIncomingCalls', item.handle) ?? []).flatMap(call => callEdge(call.from, call.fromRanges)),
		outgoingCalls: async item =>
			(await ask<vscode.CallHierarchyOutgoingCall[]>('vscode.provideOutgoingCalls', item.handle) ?? []).flatMap(call => callEdge(call.to, call.fromRanges)),
		rename: async (path, position, newName) => {
			// VS Code turns a provider's refusal ("You cannot rename this element.") into a rejection.
			const edit = await vscode.commands.executeCommand<vscode.WorkspaceEdit | undefined>('vscode.executeDocumentRenameProvider', vscode.Uri.file(path), toPosition(position), newName)
				.then(value => value, (error: unknown) => { throw new LanguageServiceRefusal(error instanceof Error ? error.message : String(error)); });
			return edit ? fromWorkspaceEdit(edit) : [];
		},
		codeActions: async (path, range, kind) =>
			(await ask<(vscode.CodeAction | vscode.Command)[]>('vscode.executeCodeActionProvider', vscode.Uri.file(path), toRange(range), kind, RESOLVE_ACTIONS) ?? []).map(fromCodeAction),
	};
}

const DEFINITION_COMMANDS: Record<DefinitionKind, string> = {
	definition: 'vscode.executeDefinitionProvider',
	type_definition: 'vscode.executeTypeDefinitionProvider',
	implementation: 'vscode.executeImplementationProvider',
};

/** What VS Code's TypeScript extension puts in a hover answered before the project has loaded. */
const TYPESCRIPT_LOADING = '(loading...)';

/** Code actions whose edits VS Code resolves up front (refactorings compute theirs lazily). */
const RESOLVE_ACTIONS = 50;

async function ask<T>(command: string, ...args: unknown[]): Promise<T | undefined> {
	try {
		return await vscode.commands.executeCommand<T>(command, ...args);
	} catch (error) {
		throw new ToolError('io', `The language server failed to answer (${command}: ${(error as Error)?.message ?? String(error)}). Try again in a moment; if it keeps failing, use grep.`);
	}
}

function toPosition(position: SourcePosition): vscode.Position {
	return new vscode.Position(position.line, position.character);
}

function toRange(range: SourceRange): vscode.Range {
	return new vscode.Range(toPosition(range.start), toPosition(range.end));
}

function fromRange(range: vscode.Range): SourceRange {
	return { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } };
}

/** Locations in files only: a virtual document (a decompiled class, git:) is no path a tool can use. */
function fromLocation(location: vscode.Location | vscode.LocationLink): SourceLocation[] {
	if ('targetUri' in location) {
		if (location.targetUri.scheme !== 'file') return [];
		return [{ path: location.targetUri.fsPath, range: fromRange(location.targetSelectionRange ?? location.targetRange), extent: fromRange(location.targetRange) }];
	}
	return location.uri.scheme === 'file' ? [{ path: location.uri.fsPath, range: fromRange(location.range) }] : [];
}

function kindName(kind: vscode.SymbolKind): SymbolInfo['kind'] {
	return SYMBOL_KINDS[kind] ?? 'variable';
}

/**
 * Workspace symbols are SymbolInformation; a document's are DocumentSymbols (with children) that
 * VS Code also fills in as SymbolInformation.
 */
function fromSymbol(symbol: vscode.SymbolInformation | vscode.DocumentSymbol, path?: string): SymbolInfo[] {
	const info = symbol as Partial<vscode.SymbolInformation> & Partial<vscode.DocumentSymbol> & { name: string; kind: vscode.SymbolKind };
	const uri = info.location?.uri ?? (path ? vscode.Uri.file(path) : undefined);
	if (!uri || uri.scheme !== 'file') return [];
	const extent = info.range ?? info.location!.range;
	return [{
		name: info.name,
		kind: kindName(info.kind),
		...(info.detail ? { detail: info.detail } : {}),
		...(info.containerName ? { container: info.containerName } : {}),
		location: { path: uri.fsPath, range: fromRange(info.selectionRange ?? extent), extent: fromRange(extent) },
		...(info.children?.length ? { children: info.children.flatMap(child => fromSymbol(child, uri.fsPath)) } : {}),
	}];
}

function markdownOf(content: vscode.MarkdownString | vscode.MarkedString): string {
	if (typeof content === 'string') return content;
	if ('language' in content) return `\`\`\`${content.language}\n${content.value}\n\`\`\``;
	return content.value;
}

function fromCallItem(item: vscode.CallHierarchyItem): CallItem[] {
	if (item.uri.scheme !== 'file') return [];
	return [{
		name: item.name,
		kind: kindName(item.kind),
		...(item.detail ? { detail: item.detail } : {}),
		location: { path: item.uri.fsPath, range: fromRange(item.selectionRange), extent: fromRange(item.range) },
		handle: item,
	}];
}

function callEdge(item: vscode.CallHierarchyItem, sites: vscode.Range[]): CallEdge[] {
	return fromCallItem(item).map(call => ({ item: call, sites: sites.map(fromRange) }));
}

function fromCodeAction(action: vscode.CodeAction | vscode.Command): CodeActionInfo {
	// A command-only action comes back as a plain Command, whose `command` is the id.
	if (typeof (action as vscode.Command).command === 'string') return { title: action.title, isPreferred: false, command: (action as vscode.Command).command };
	const codeAction = action as vscode.CodeAction;
	return {
		title: codeAction.title,
		...(codeAction.kind ? { kind: codeAction.kind.value } : {}),
		isPreferred: codeAction.isPreferred ?? false,
		...(codeAction.edit ? { edit: fromWorkspaceEdit(codeAction.edit) } : {}),
		...(codeAction.command ? { command: codeAction.command.command } : {}),
	};
}

/** The ext host's own entry types (`_allEntries`): file operations and text edits in order. */
interface RawEntry {
	readonly _type: number;
	readonly uri?: vscode.Uri;
	readonly edit?: vscode.TextEdit;
	readonly from?: vscode.Uri;
	readonly to?: vscode.Uri;
	readonly options?: { overwrite?: boolean; ignoreIfExists?: boolean; ignoreIfNotExists?: boolean; contents?: Uint8Array };
}
const FILE_OPERATION = 1;
const TEXT_EDIT = 2;
const SNIPPET_EDIT = 6;

/**
 * A WorkspaceEdit in its order. The public API lists text edits only (`entries()`), so file
 * operations are read from the ext host's entries when it has them; text edits between two file
 * operations belong together, as VS Code applies them.
 */
function fromWorkspaceEdit(edit: vscode.WorkspaceEdit): EditOperation[] {
	const raw = (edit as unknown as { _allEntries?(): RawEntry[] })._allEntries?.();
	const entries: RawEntry[] = raw ?? edit.entries().flatMap(([uri, edits]) => edits.map(textEdit => ({ _type: TEXT_EDIT, uri, edit: textEdit })));
	const operations: EditOperation[] = [];
	let run = new Map<string, { kind: 'text'; path: string; edits: TextEditData[] }>();
	for (const entry of entries) {
		if (entry._type === TEXT_EDIT && entry.uri && entry.edit) {
			if (entry.uri.scheme !== 'file') {
				operations.push({ kind: 'unsupported', what: `an edit of ${entry.uri.toString()}, which is not a file` });
				continue;
			}
			let operation = run.get(entry.uri.fsPath);
			if (!operation) {
				operation = { kind: 'text', path: entry.uri.fsPath, edits: [] };
				run.set(entry.uri.fsPath, operation);
				operations.push(operation);
			}
			operation.edits.push({ range: fromRange(entry.edit.range), newText: entry.edit.newText });
		} else if (entry._type === FILE_OPERATION) {
			run = new Map();
			operations.push(fileOperation(entry));
		} else {
			operations.push({ kind: 'unsupported', what: entry._type === SNIPPET_EDIT ? 'a snippet edit (with placeholders to fill in)' : 'a notebook edit' });
		}
	}
	return operations;
}

function fileOperation(entry: RawEntry): EditOperation {
	const options = entry.options ?? {};
	if ((entry.from && entry.from.scheme !== 'file') || (entry.to && entry.to.scheme !== 'file')) return { kind: 'unsupported', what: 'a file operation outside the file system' };
	if (!entry.from) return { kind: 'create', path: entry.to!.fsPath, ...(options.contents ? { contents: options.contents } : {}), overwrite: !!options.overwrite, ignoreIfExists: !!options.ignoreIfExists };
	if (!entry.to) return { kind: 'delete', path: entry.from.fsPath, ignoreIfNotExists: !!options.ignoreIfNotExists };
	return { kind: 'rename', from: entry.from.fsPath, to: entry.to.fsPath, overwrite: !!options.overwrite, ignoreIfExists: !!options.ignoreIfExists };
}
