/**
 * The port to the editor's language services (the code tools: symbols, definitions, references,
 * hover, call hierarchy, rename, code actions). src/vscode/languages.ts implements it on VS Code's
 * provider commands; the CLI has none, and the tools that need it say so. Plain data only: paths
 * are absolute, positions 0-based in UTF-16 code units, as VS Code counts them.
 */

export interface SourcePosition {
	readonly line: number;
	readonly character: number;
}

export interface SourceRange {
	readonly start: SourcePosition;
	readonly end: SourcePosition;
}

export interface SourceLocation {
	readonly path: string;
	/** The name (a reference, or a declaration's identifier). */
	readonly range: SourceRange;
	/** The whole declaration, when the provider gives it (definitions, symbols). */
	readonly extent?: SourceRange;
}

/** VS Code's SymbolKind, in words a model uses (`enum_member`, `type_parameter`). */
export const SYMBOL_KINDS = [
	'file', 'module', 'namespace', 'package', 'class', 'method', 'property', 'field', 'constructor', 'enum',
	'interface', 'function', 'variable', 'constant', 'string', 'number', 'boolean', 'array', 'object', 'key',
	'null', 'enum_member', 'struct', 'event', 'operator', 'type_parameter',
] as const;
export type SymbolKindName = typeof SYMBOL_KINDS[number];

export interface SymbolInfo {
	readonly name: string;
	readonly kind: SymbolKindName;
	/** A signature or type, as the provider words it. */
	readonly detail?: string;
	/** The enclosing symbol's name (workspace search). */
	readonly container?: string;
	readonly location: SourceLocation;
	/** Nested symbols (a file's outline). */
	readonly children?: readonly SymbolInfo[];
}

export type DefinitionKind = 'definition' | 'type_definition' | 'implementation';

/** A function, method or class in a call hierarchy. `handle` is the port's own, passed back as is. */
export interface CallItem {
	readonly name: string;
	readonly kind: SymbolKindName;
	readonly detail?: string;
	readonly location: SourceLocation;
	readonly handle: unknown;
}

/** A caller (incoming) or callee (outgoing), with where the calls are. */
export interface CallEdge {
	readonly item: CallItem;
	/** The call sites: in the caller's file for incoming calls, in the calling item's file for outgoing. */
	readonly sites: readonly SourceRange[];
}

export interface TextEditData {
	readonly range: SourceRange;
	readonly newText: string;
}

/** One step of a provider's WorkspaceEdit, in its order. */
export type EditOperation =
	| { readonly kind: 'text'; readonly path: string; readonly edits: readonly TextEditData[] }
	| { readonly kind: 'create'; readonly path: string; readonly contents?: Uint8Array; readonly overwrite?: boolean; readonly ignoreIfExists?: boolean }
	| { readonly kind: 'rename'; readonly from: string; readonly to: string; readonly overwrite?: boolean; readonly ignoreIfExists?: boolean }
	| { readonly kind: 'delete'; readonly path: string; readonly ignoreIfNotExists?: boolean }
	/** Something that cannot be shown as a diff (a snippet or notebook edit): `what` says which. */
	| { readonly kind: 'unsupported'; readonly what: string };

export interface CodeActionInfo {
	readonly title: string;
	/** `quickfix`, `refactor.extract.function`, `source.organizeImports`, … */
	readonly kind?: string;
	readonly isPreferred: boolean;
	/** What it changes, when it says so up front. */
	readonly edit?: readonly EditOperation[];
	/** The editor command it runs (after its edit, if it has one). */
	readonly command?: string;
}

export interface OpenedDocument {
	readonly languageId: string;
}

/**
 * Whether a document's language services can be asked: `ready`; `loading` (the server answers from
 * a partial view while it loads the project, as TypeScript's does for its first seconds, so answers
 * would be incomplete); `silent` (nothing answers: no extension for the language, or not started).
 */
export type Readiness = 'ready' | 'loading' | 'silent';

/** A provider's refusal (a rename that cannot be done here): the message is its reason. */
export class LanguageServiceRefusal extends Error {
	constructor(reason: string) {
		super(reason);
		this.name = 'LanguageServiceRefusal';
	}
}

/** How long a call waits for a language server to answer (see askLanguageServer in tools/codeSupport.ts). */
export interface LanguageWaits {
	/** A server that may still be starting or loading the project. */
	readonly firstMs: number;
	/** A language whose server already stayed silent for a whole wait. */
	readonly silentMs: number;
}

/**
 * What the editor's language services answer. An empty answer is ambiguous (no provider for the
 * language, a server still starting, or truly nothing): the tools tell them apart with `readiness`.
 */
export interface LanguageServices {
	/**
	 * Opens the document (starting its language's extension) and says which language it is. `inEditor`
	 * also shows it in an editor tab, without taking focus: some servers (TypeScript's) report the
	 * problems, and so offer the quick fixes, of visible files only.
	 */
	open(path: string, options?: { inEditor?: boolean }): Promise<OpenedDocument>;
	/** Whether the document's language services answer, judged from its outline and a hover at `position`. */
	readiness(path: string, position?: SourcePosition): Promise<Readiness>;
	definitions(path: string, position: SourcePosition, kind: DefinitionKind): Promise<SourceLocation[]>;
	/** Every reference, declarations included. */
	references(path: string, position: SourcePosition): Promise<SourceLocation[]>;
	workspaceSymbols(query: string): Promise<SymbolInfo[]>;
	documentSymbols(path: string): Promise<SymbolInfo[]>;
	/** Hover texts (Markdown) at a position. */
	hover(path: string, position: SourcePosition): Promise<string[]>;
	prepareCallHierarchy(path: string, position: SourcePosition): Promise<CallItem[]>;
	incomingCalls(item: CallItem): Promise<CallEdge[]>;
	outgoingCalls(item: CallItem): Promise<CallEdge[]>;
	/** The rename's edit; throws LanguageServiceRefusal with the provider's reason when it refuses. */
	rename(path: string, position: SourcePosition, newName: string): Promise<EditOperation[]>;
	/** Code actions for a range (`kind` narrows, e.g. `quickfix`), their edits resolved. */
	codeActions(path: string, range: SourceRange, kind?: string): Promise<CodeActionInfo[]>;
	/** How long to wait for these servers; default LANGUAGE_WAIT (tests shorten it). */
	readonly waits?: LanguageWaits;
}
