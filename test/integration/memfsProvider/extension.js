// An in-memory FileSystemProvider for the scheme memfs:, seeded with a small workspace at /ws.
// Toolbelt's virtual suite opens memfs:/ws as its workspace folder; nothing of it is on disk.
const vscode = require('vscode');

const SEED = {
	'/ws/hello.txt': 'hello\nworld\n',
	'/ws/src/app.ts': 'export const answer = 42;\nexport function greet() {\n\treturn "hello";\n}\n',
	'/ws/docs/notes.md': '# Notes\nhello again\n',
};

class MemoryFileSystem {
	constructor() {
		this.entries = new Map([['/', { type: vscode.FileType.Directory, mtime: Date.now(), size: 0 }]]);
		this.emitter = new vscode.EventEmitter();
		this.onDidChangeFile = this.emitter.event;
		for (const [file, text] of Object.entries(SEED)) this.put(file, new TextEncoder().encode(text));
	}

	put(file, data) {
		for (let folder = parentOf(file); !this.entries.has(folder); folder = parentOf(folder)) {
			this.entries.set(folder, { type: vscode.FileType.Directory, mtime: Date.now(), size: 0 });
		}
		this.entries.set(file, { type: vscode.FileType.File, mtime: Date.now(), size: data.byteLength, data });
	}

	lookup(uri) {
		const entry = this.entries.get(uri.path);
		if (!entry) throw vscode.FileSystemError.FileNotFound(uri);
		return entry;
	}

	watch() {
		return new vscode.Disposable(() => undefined);
	}

	stat(uri) {
		const { type, mtime, size } = this.lookup(uri);
		return { type, ctime: mtime, mtime, size };
	}

	readDirectory(uri) {
		if (this.lookup(uri).type !== vscode.FileType.Directory) throw vscode.FileSystemError.FileNotADirectory(uri);
		const prefix = uri.path === '/' ? '/' : `${uri.path}/`;
		return [...this.entries].filter(([key]) => key !== '/' && parentOf(key) === uri.path && key.startsWith(prefix))
			.map(([key, entry]) => [key.slice(prefix.length), entry.type]);
	}

	createDirectory(uri) {
		if (!this.entries.has(parentOf(uri.path))) throw vscode.FileSystemError.FileNotFound(uri.with({ path: parentOf(uri.path) }));
		this.entries.set(uri.path, { type: vscode.FileType.Directory, mtime: Date.now(), size: 0 });
		this.emitter.fire([{ type: vscode.FileChangeType.Created, uri }]);
	}

	readFile(uri) {
		const entry = this.lookup(uri);
		if (entry.type !== vscode.FileType.File) throw vscode.FileSystemError.FileIsADirectory(uri);
		return entry.data;
	}

	writeFile(uri, content, options) {
		const exists = this.entries.has(uri.path);
		if (!exists && !options.create) throw vscode.FileSystemError.FileNotFound(uri);
		if (exists && !options.overwrite) throw vscode.FileSystemError.FileExists(uri);
		if (!this.entries.has(parentOf(uri.path))) throw vscode.FileSystemError.FileNotFound(uri.with({ path: parentOf(uri.path) }));
		this.put(uri.path, content);
		this.emitter.fire([{ type: exists ? vscode.FileChangeType.Changed : vscode.FileChangeType.Created, uri }]);
	}

	delete(uri) {
		this.lookup(uri);
		for (const key of [...this.entries.keys()]) {
			if (key === uri.path || key.startsWith(`${uri.path}/`)) this.entries.delete(key);
		}
		this.emitter.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
	}

	rename(oldUri, newUri, options) {
		if (this.entries.has(newUri.path) && !options.overwrite) throw vscode.FileSystemError.FileExists(newUri);
		const moved = [...this.entries].filter(([key]) => key === oldUri.path || key.startsWith(`${oldUri.path}/`));
		if (!moved.length) throw vscode.FileSystemError.FileNotFound(oldUri);
		for (const [key, entry] of moved) {
			this.entries.delete(key);
			this.entries.set(newUri.path + key.slice(oldUri.path.length), entry);
		}
		this.emitter.fire([{ type: vscode.FileChangeType.Deleted, uri: oldUri }, { type: vscode.FileChangeType.Created, uri: newUri }]);
	}
}

function parentOf(file) {
	const slash = file.lastIndexOf('/');
	return slash <= 0 ? '/' : file.slice(0, slash);
}

/** The tests read the provider's content directly to check what Toolbelt wrote. */
function activate(context) {
	const memfs = new MemoryFileSystem();
	context.subscriptions.push(vscode.workspace.registerFileSystemProvider('memfs', memfs, { isCaseSensitive: true }));
	return { text: file => { const entry = memfs.entries.get(file); return entry && entry.data ? new TextDecoder().decode(entry.data) : undefined; } };
}

module.exports = { activate };
