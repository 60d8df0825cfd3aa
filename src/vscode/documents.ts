import * as vscode from 'vscode';
import { editorSchema } from '../core/jsonInput';
import { resultText, ToolResult } from '../core/result';
import type { ToolDefinition } from '../tools/tool';

/**
 * The virtual documents of the command palette flow:
 * - `toolbelt-input:/<tool>.json` — tool input typed as JSON (writable, in memory);
 * - `toolbelt-schema:/<tool>.schema.json` — the tool's schema, which the JSON language service
 *   loads through `$schema` for completion and checks;
 * - `toolbelt-result:/<n>/<name>` — results (text, or an image) in read-only editors.
 */
export const INPUT_SCHEME = 'toolbelt-input';
export const SCHEMA_SCHEME = 'toolbelt-schema';
export const RESULT_SCHEME = 'toolbelt-result';

/** A tool's result document is `toolbelt-result:/<n>/<tool> result.txt`. */
const RESULT_SUFFIX = ' result.txt';

/** The tool whose result a document shows; undefined for any other document (images, Activity details). */
export function toolOfResult(uri: vscode.Uri): string | undefined {
	if (uri.scheme !== RESULT_SCHEME || !uri.path.endsWith(RESULT_SUFFIX)) return undefined;
	return /^\/\d+\/([a-z_]+)$/.exec(uri.path.slice(0, -RESULT_SUFFIX.length))?.[1];
}

/** Results are kept for the editors showing them; old ones go first. */
const MAX_RESULTS = 50;

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

	constructor(private readonly tools: readonly ToolDefinition<any>[]) {
		this.disposables = [
			vscode.workspace.registerFileSystemProvider(INPUT_SCHEME, this.inputs, { isCaseSensitive: true }),
			vscode.workspace.registerFileSystemProvider(RESULT_SCHEME, this.results, { isCaseSensitive: true, isReadonly: true }),
			vscode.workspace.registerTextDocumentContentProvider(SCHEMA_SCHEME, {
				provideTextDocumentContent: uri => this.schemaText(uri),
			}),
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
		const open = vscode.workspace.textDocuments.find(doc => doc.uri.toString() === uri.toString());
		if (open && replace) {
			// An open document (perhaps with unsaved typing) takes the new text as an edit, saved at once.
			const edit = new vscode.WorkspaceEdit();
			edit.replace(uri, new vscode.Range(open.positionAt(0), open.positionAt(open.getText().length)), initialText());
			await vscode.workspace.applyEdit(edit);
			await open.save();
		} else if (!open && (replace || !this.inputs.has(uri))) {
			this.inputs.set(uri, new TextEncoder().encode(initialText()));
		}
		const document = open ?? await vscode.workspace.openTextDocument(uri);
		if (document.languageId !== 'json') await vscode.languages.setTextDocumentLanguage(document, 'json');
		return vscode.window.showTextDocument(document, { preview: false });
	}

	toolOfInput(uri: vscode.Uri): ToolDefinition<any> | undefined {
		if (uri.scheme !== INPUT_SCHEME) return undefined;
		const name = uri.path.replace(/^\//, '').replace(/\.json$/, '');
		return this.tools.find(tool => tool.name === name);
	}

	/** Puts text in a new read-only result document and returns its URI. */
	addText(name: string, text: string): vscode.Uri {
		const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${this.nextResult++}/${name}` });
		this.results.set(uri, new TextEncoder().encode(text));
		return uri;
	}

	/** Opens a tool result: its text in a read-only editor, and each image in the image preview. */
	async showResult(tool: ToolDefinition<any>, header: string, result: ToolResult, options: vscode.TextDocumentShowOptions = {}): Promise<vscode.Uri> {
		const id = this.nextResult++;
		const images = result.content.filter(part => part.kind === 'image');
		const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${id}/${tool.name}${RESULT_SUFFIX}` });
		this.results.set(uri, new TextEncoder().encode(`${header}\n\n${resultText(result)}\n`));
		await vscode.window.showTextDocument(uri, { preview: true, ...options });
		for (const [index, image] of images.entries()) {
			if (image.kind !== 'image') continue;
			const extension = image.mimeType.split('/')[1] ?? 'bin';
			const imageUri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${id}/image-${index + 1}.${extension}` });
			this.results.set(imageUri, image.data);
			await vscode.commands.executeCommand('vscode.open', imageUri, { preview: false, viewColumn: vscode.ViewColumn.Beside });
		}
		return uri;
	}
}
