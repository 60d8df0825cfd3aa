import * as vscode from 'vscode';
import { editorSchema } from '../ui/jsonInput';
import { resultText, ToolResult } from '../core/results/result';
import { matchSpans } from '../ui/resultHighlight';
import type { ToolDefinition } from '../tools/tool';

/**
 * The virtual documents of the command palette flow:
 * - `toolbelt-input:/<tool>.json` — tool input typed as JSON (writable, in memory);
 * - `toolbelt-schema:/<tool>.schema.json` — the tool's schema, which the JSON language service
 *   loads through `$schema` for completion and checks;
 * - `toolbelt-result:/<n>/<name>` — results (text, or an image) in read-only editors, in the
 *   `toolbelt-result` language (package.json: its grammar highlights paths, line numbers, diffs and
 *   omission markers; line numbers of the editor are off, results carry their own).
 */
export const INPUT_SCHEME = 'toolbelt-input';
export const SCHEMA_SCHEME = 'toolbelt-schema';
export const RESULT_SCHEME = 'toolbelt-result';

/** The language of result documents: package.json contributes it with a grammar. */
const RESULT_LANGUAGE = 'toolbelt-result';

/** A tool's result document is `toolbelt-result:/<n>/<tool> result`. */
const RESULT_SUFFIX = ' result';

/** The tool whose result a document shows; undefined for any other document (images, Activity details). */
export function toolOfResult(uri: vscode.Uri): string | undefined {
	if (uri.scheme !== RESULT_SCHEME || !uri.path.endsWith(RESULT_SUFFIX)) return undefined;
	return /^\/\d+\/([a-z_]+)$/.exec(uri.path.slice(0, -RESULT_SUFFIX.length))?.[1];
}

/** Results are kept for the editors showing them; old ones go first. */
const MAX_RESULTS = 50;
/** Lines of a result scanned for matches to mark: results are capped anyway. */
const MAX_MARKED_LINES = 2000;

/** A minimal in-memory file system: one flat folder of files per scheme. */
class MemoryFiles implements vscode.FileSystemProvider {
	private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
	private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
	readonly onDidChangeFile = this.emitter.event;

	constructor(private readonly maxFiles = Infinity) {}

	set(uri: vscode.Uri, data: Uint8Array): void {
		const existed = this.files.has(uri.path);
		this.files.delete(uri.path);
		this.files.set(uri.path, { data, mtime: Date.now() });
		for (const old of this.files.keys()) {
			if (this.files.size <= this.maxFiles) break;
			this.files.delete(old);
		}
		this.emitter.fire([{ type: existed ? vscode.FileChangeType.Changed : vscode.FileChangeType.Created, uri }]);
	}

	has(uri: vscode.Uri): boolean {
		return this.files.has(uri.path);
	}

	watch(): vscode.Disposable {
		return new vscode.Disposable(() => undefined);
	}

	stat(uri: vscode.Uri): vscode.FileStat {
		const file = this.files.get(uri.path);
		if (file) return { type: vscode.FileType.File, ctime: file.mtime, mtime: file.mtime, size: file.data.byteLength };
		if (this.isFolder(uri.path)) return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
		throw vscode.FileSystemError.FileNotFound(uri);
	}

	readDirectory(uri: vscode.Uri): [string, vscode.FileType][] {
		const prefix = uri.path.endsWith('/') ? uri.path : `${uri.path}/`;
		return [...this.files.keys()].filter(path => path.startsWith(prefix)).map(path => [path.slice(prefix.length), vscode.FileType.File]);
	}

	private isFolder(path: string): boolean {
		const prefix = path.endsWith('/') ? path : `${path}/`;
		return [...this.files.keys()].some(file => file.startsWith(prefix));
	}

	createDirectory(): void {
		// Folders exist implicitly.
	}

	readFile(uri: vscode.Uri): Uint8Array {
		const file = this.files.get(uri.path);
		if (!file) throw vscode.FileSystemError.FileNotFound(uri);
		return file.data;
	}

	writeFile(uri: vscode.Uri, content: Uint8Array): void {
		this.set(uri, content);
	}

	delete(uri: vscode.Uri): void {
		this.files.delete(uri.path);
		this.emitter.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
	}

	rename(oldUri: vscode.Uri, newUri: vscode.Uri): void {
		const file = this.files.get(oldUri.path);
		if (!file) throw vscode.FileSystemError.FileNotFound(oldUri);
		this.files.delete(oldUri.path);
		this.set(newUri, file.data);
	}
}

export class ToolDocuments implements vscode.Disposable {
	private readonly inputs = new MemoryFiles();
	private readonly results = new MemoryFiles(MAX_RESULTS);
	private readonly disposables: vscode.Disposable[];
	private nextResult = 1;
	/** grep results: where the search matched, marked in every editor showing them. */
	private readonly matchers = new Map<string, RegExp>();
	private readonly matchDecoration = vscode.window.createTextEditorDecorationType({
		backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
		borderColor: new vscode.ThemeColor('editor.findMatchHighlightBorder'),
		borderStyle: 'solid',
		borderWidth: '1px',
	});

	constructor(private readonly tools: readonly ToolDefinition<any>[]) {
		this.disposables = [
			vscode.workspace.registerFileSystemProvider(INPUT_SCHEME, this.inputs, { isCaseSensitive: true }),
			vscode.workspace.registerFileSystemProvider(RESULT_SCHEME, this.results, { isCaseSensitive: true, isReadonly: true }),
			vscode.workspace.registerTextDocumentContentProvider(SCHEMA_SCHEME, {
				provideTextDocumentContent: uri => this.schemaText(uri),
			}),
			this.matchDecoration,
			// Decorations belong to an editor, not a document: a result shown again is marked again.
			vscode.window.onDidChangeVisibleTextEditors(editors => editors.forEach(editor => this.markMatches(editor))),
		];
	}

	dispose(): void {
		for (const disposable of this.disposables) disposable.dispose();
	}

	schemaUri(tool: ToolDefinition<any>): vscode.Uri {
		return vscode.Uri.from({ scheme: SCHEMA_SCHEME, path: `/${tool.name}.schema.json` });
	}

	private schemaText(uri: vscode.Uri): string {
		const name = uri.path.replace(/^\//, '').replace(/\.schema\.json$/, '');
		const tool = this.tools.find(candidate => candidate.name === name);
		return tool ? JSON.stringify(editorSchema(tool.schema, `Input of ${tool.name}`), null, '\t') : '{}';
	}

	inputUri(tool: ToolDefinition<any>): vscode.Uri {
		return vscode.Uri.from({ scheme: INPUT_SCHEME, path: `/${tool.name}.json` });
	}

	/** The input document of a tool; keeps what was typed last time unless it is missing or `replace` is set. */
	async openInput(tool: ToolDefinition<any>, initialText: () => string, replace = false): Promise<vscode.TextEditor> {
		const uri = this.inputUri(tool);
		const created = !this.inputs.has(uri);
		if (created) this.inputs.set(uri, new TextEncoder().encode(initialText()));
		const document = await vscode.workspace.openTextDocument(uri);
		const text = replace && !created ? initialText() : undefined;
		if (text !== undefined && document.getText() !== text) await this.replaceText(document, text);
		if (document.languageId !== 'json') await vscode.languages.setTextDocumentLanguage(document, 'json');
		return vscode.window.showTextDocument(document, { preview: false });
	}

	/**
	 * New text for an input document VS Code already holds, as an edit: it lands before the method
	 * returns (the person may start typing right after), where rewriting the file would reach the
	 * open editor only when VS Code reloads it. Running the input saves it.
	 */
	private async replaceText(document: vscode.TextDocument, text: string): Promise<void> {
		const edit = new vscode.WorkspaceEdit();
		edit.replace(document.uri, new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)), text);
		await vscode.workspace.applyEdit(edit);
	}

	toolOfInput(uri: vscode.Uri): ToolDefinition<any> | undefined {
		if (uri.scheme !== INPUT_SCHEME) return undefined;
		const name = uri.path.replace(/^\//, '').replace(/\.json$/, '');
		return this.tools.find(tool => tool.name === name);
	}

	/** Shows text (an Activity entry's details) in a new read-only result document. */
	async showText(name: string, text: string): Promise<void> {
		const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${this.nextResult++}/${name}` });
		this.results.set(uri, new TextEncoder().encode(text));
		await this.open(uri, { preview: true });
	}

	/**
	 * Opens a tool result: its text in a read-only editor, and each image in the image preview.
	 * `matcher` marks what a search matched.
	 */
	async showResult(tool: ToolDefinition<any>, header: string, result: ToolResult, options: vscode.TextDocumentShowOptions = {}, matcher?: RegExp): Promise<vscode.Uri> {
		const id = this.nextResult++;
		const images = result.content.filter(part => part.kind === 'image');
		const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${id}/${tool.name}${RESULT_SUFFIX}` });
		this.results.set(uri, new TextEncoder().encode(`${header}\n\n${resultText(result)}\n`));
		if (matcher) this.rememberMatcher(uri, matcher);
		this.markMatches(await this.open(uri, { preview: true, ...options }));
		for (const [index, image] of images.entries()) {
			if (image.kind !== 'image') continue;
			const extension = image.mimeType.split('/')[1] ?? 'bin';
			const imageUri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${id}/image-${index + 1}.${extension}` });
			this.results.set(imageUri, image.data);
			await vscode.commands.executeCommand('vscode.open', imageUri, { preview: false, viewColumn: vscode.ViewColumn.Beside });
		}
		return uri;
	}

	/** Results get their language before they are shown, so they never flash as plain text. */
	private async open(uri: vscode.Uri, options: vscode.TextDocumentShowOptions): Promise<vscode.TextEditor> {
		let document = await vscode.workspace.openTextDocument(uri);
		if (document.languageId !== RESULT_LANGUAGE) document = await vscode.languages.setTextDocumentLanguage(document, RESULT_LANGUAGE);
		return vscode.window.showTextDocument(document, options);
	}

	private rememberMatcher(uri: vscode.Uri, matcher: RegExp): void {
		this.matchers.set(uri.toString(), matcher);
		for (const old of this.matchers.keys()) {
			if (this.matchers.size <= MAX_RESULTS) break;
			this.matchers.delete(old);
		}
	}

	private markMatches(editor: vscode.TextEditor): void {
		const matcher = this.matchers.get(editor.document.uri.toString());
		if (!matcher) return;
		const ranges: vscode.Range[] = [];
		for (let line = 0; line < Math.min(editor.document.lineCount, MAX_MARKED_LINES); line++) {
			for (const [start, end] of matchSpans(editor.document.lineAt(line).text, matcher)) ranges.push(new vscode.Range(line, start, line, end));
		}
		editor.setDecorations(this.matchDecoration, ranges);
	}
}
