import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Boundary, WorkspaceRoot } from './boundary';
import { applyChangesAtomically } from './atomic';
import { ApprovalRequest, createSharedState, Diagnostic, FileChange, Host, SharedState } from './context';
import { commandLogDir } from './process';
import type { LanguageServices } from './languages';
import { defaultSettings, mergeSettings, Settings, SettingsOverrides } from './settings';

export interface NodeHostOptions {
	/** Where backups and command logs go (default: a folder under the OS temp dir). */
	storageDir?: string;
	/** Answers approval questions; the default refuses (no one to ask). */
	confirm?: (request: ApprovalRequest) => Promise<boolean>;
	/** Writes a change set; the default writes each file atomically, with rollback. */
	applyChanges?: (changes: readonly FileChange[], signal: AbortSignal) => Promise<void>;
	/** Unsaved editor text to pretend is open (tests). */
	dirty?: Map<string, string>;
	trusted?: boolean;
	/** Diagnostics to pretend a language server reports (tests); plain Node has none. */
	diagnostics?: (absolutePaths: readonly string[]) => Promise<Diagnostic[]>;
	/** Called where an editor would open diff views (tests). */
	showDiffs?: (changes: readonly FileChange[]) => Promise<void>;
	/** Language services to pretend an editor offers (tests); plain Node has none. */
	languages?: LanguageServices;
}

/** A host for the CLI, the unit tests and the benchmarks: plain Node, no editor. */
export function createNodeHost(options: NodeHostOptions = {}): Host {
	// One folder per user: /tmp is shared, and another user's folder there is not writable.
	const storageDir = options.storageDir ?? path.join(os.tmpdir(), `toolbelt-storage-${os.userInfo().uid}`);
	return {
		kind: 'node',
		storageDir,
		dirtyText: absolutePath => options.dirty?.get(absolutePath),
		confirm: options.confirm ?? (async () => false),
		applyChanges: options.applyChanges ?? applyChangesAtomically,
		...(options.diagnostics ? { diagnostics: options.diagnostics } : {}),
		...(options.showDiffs ? { showDiffs: options.showDiffs } : {}),
		...(options.languages ? { languages: options.languages } : {}),
		isTrusted: () => options.trusted ?? true,
	};
}

export interface NodeEnvironmentOptions extends NodeHostOptions {
	roots: (string | WorkspaceRoot)[];
	settings?: SettingsOverrides;
}

/** Everything a ToolRegistry needs, on plain Node. */
export function createNodeEnvironment(options: NodeEnvironmentOptions) {
	const settings: Settings = mergeSettings(defaultSettings(), options.settings).settings;
	const roots: WorkspaceRoot[] = options.roots.map(root =>
		typeof root === 'string' ? { name: path.basename(path.resolve(root)), path: path.resolve(root) } : root);
	for (const root of roots) {
		if (!fs.existsSync(root.path)) throw new Error(`Workspace folder ${root.path} does not exist.`);
	}
	const state: SharedState = createSharedState();
	const host = createNodeHost(options);
	let boundary: Promise<Boundary> | undefined;
	return {
		host,
		state,
		settings: () => settings,
		boundary: () => (boundary ??= Boundary.create({
			roots,
			fileAccess: settings.fileAccess,
			// Command logs are outside the workspace; read_file pages them.
			additionalReadPaths: [...settings.additionalReadPaths, commandLogDir(host.storageDir)],
			protectedPaths: settings.protectedPaths,
		})),
	};
}
