import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Boundary, WorkspaceRoot } from './policy/boundary';
import { workspaceBoundary } from './policy/workspaceBoundary';
import { applyChangesAtomically } from './files/atomic';
import { createSharedState, Diagnostic, FileChange, Host, ToolEnvironment } from './context';
import type { SandboxHostOptions } from './sandbox/runtime';
import type { LanguageServices } from './languages';
import { defaultSettings, mergeSettings, Settings, SettingsOverrides } from './policy/settings';
import { cliStorageBase, cliStorageDir, ensurePrivateFolder } from './files/storage';
import type { FileSystem } from './files/fileSystem';

export interface NodeHostOptions {
	/**
	 * Where backups and command logs go; it must be private to the user (see storage.ts). Default:
	 * a folder of this set of workspace folders under `<tmp>/toolbelt-<uid>`.
	 */
	storageDir?: string;
	/** Answers approval questions; the default refuses (no one to ask). */
	confirm?: Host['confirm'];
	/** Writes a change set; the default writes each file atomically, with rollback, checked against the boundary. */
	applyChanges?: Host['applyChanges'];
	/** Unsaved editor text to pretend is open (tests). */
	dirty?: Map<string, string>;
	trusted?: boolean;
	/** Diagnostics to pretend a language server reports (tests); plain Node has none. */
	diagnostics?: (absolutePaths: readonly string[]) => Promise<Diagnostic[]>;
	/** Called where an editor would open diff views (tests). */
	showDiffs?: (changes: readonly FileChange[]) => Promise<void>;
	/** Where the sandbox finds bwrap, whose home it hides, … (tests inject these). */
	sandbox?: SandboxHostOptions;
	/** Language services to pretend an editor offers (tests); plain Node has none. */
	languages?: LanguageServices;
}

/** A host for the CLI, the unit tests and the benchmarks: plain Node, no editor. */
function createNodeHost(options: NodeHostOptions & { storageDir: string }): Host {
	return {
		kind: 'node',
		storageDir: options.storageDir,
		dirtyText: absolutePath => options.dirty?.get(absolutePath),
		confirm: options.confirm ?? (async () => false),
		applyChanges: options.applyChanges ?? ((changes, signal, boundary, checked) => applyChangesAtomically(changes, signal, { boundary, ...checked })),
		// A host given another way to write may write in place.
		replacesFiles: options.applyChanges === undefined,
		...(options.diagnostics ? { diagnostics: options.diagnostics } : {}),
		...(options.showDiffs ? { showDiffs: options.showDiffs } : {}),
		...(options.sandbox ? { sandbox: options.sandbox } : {}),
		...(options.languages ? { languages: options.languages } : {}),
		isTrusted: () => options.trusted ?? true,
	};
}

export interface NodeEnvironmentOptions extends NodeHostOptions {
	roots: (string | WorkspaceRoot)[];
	settings?: SettingsOverrides;
	/** Where the folders' files are when not on disk (tests of virtual workspaces); default: the disk. */
	fileSystem?: FileSystem;
}

/**
 * Everything a ToolRegistry needs, on plain Node. With workspace folders, the storage folder is
 * made private (or checked) here, before anything is written to it: a StorageError says what to do.
 */
export function createNodeEnvironment(options: NodeEnvironmentOptions): ToolEnvironment {
	const settings: Settings = mergeSettings(defaultSettings(), options.settings).settings;
	const roots: WorkspaceRoot[] = options.roots.map(root =>
		typeof root === 'string' ? { name: path.basename(path.resolve(root)), path: path.resolve(root) } : root);
	const virtual = options.fileSystem !== undefined && !options.fileSystem.local;
	for (const root of roots) {
		if (!virtual && !fs.existsSync(root.path)) throw new Error(`Workspace folder ${root.path} does not exist.`);
	}
	const base = options.storageDir === undefined ? cliStorageBase() : undefined;
	const storageDir = options.storageDir ?? cliStorageDir(roots.map(root => root.path), base);
	if (roots.length > 0) {
		if (base !== undefined) ensurePrivateFolder(base);
		ensurePrivateFolder(storageDir);
	}
	let boundary: Promise<Boundary> | undefined;
	return {
		host: createNodeHost({ ...options, storageDir }),
		state: createSharedState(storageDir),
		settings: () => settings,
		// Every workspace's storage (the default base holds them all) stays out of the tools' reach.
		boundary: () => (boundary ??= workspaceBoundary({ roots, settings, storageDir, privateDir: base ?? storageDir, fileSystem: options.fileSystem })),
	};
}
