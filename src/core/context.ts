import type { Boundary } from './policy/boundary';
import type { SandboxHostOptions } from './sandbox/runtime';
import type { LanguageServices } from './languages';
import { SessionManager } from './commands/sessions';
import { LineIndexes } from './files/lineIndex';
import { CommandLogs, commandLogDir } from './commands/process';
import { BackupClock } from './changes/backups';
import { ProtectedScanCache } from './sandbox/policy';
import type { Settings } from './policy/settings';
import type { FileBytes } from './files/splicedBytes';
import type { DiskBytes } from './files/diskBytes';
import type { ToolResult } from './results/result';

/**
 * What the change pipeline (core/changes) needs to plan and commit a change: a tool's call gives it
 * its ToolContext; the person's own restore of a backup (src/vscode/backupsUi.ts) builds one of
 * these. Nothing else in it, so the pipeline cannot come to depend on a tool's settings or limits.
 */
export interface ChangeContext {
	/** Who makes the change, recorded with its backup: a tool's model-facing name, or `restore_backup`. */
	readonly tool: string;
	readonly boundary: Boundary;
	readonly host: Host;
	readonly state: ChangeState;
	/** Fires when the caller cancels; long work checks it and stops promptly. */
	readonly signal: AbortSignal;
	/** When the diff of an applied change is opened. */
	readonly settings: Pick<Settings, 'showDiffs'>;
	/** Adds fields to the call's structured event (bytes, files touched, …). */
	note(fields: Partial<ToolEventFields>): void;
	/**
	 * Lock keys (see lockKey) this call holds already: those its planning took and hands on to its
	 * commit (planWithFileLocks). withFileLocks does not take them again, which would wait on itself.
	 */
	readonly heldLocks?: ReadonlySet<string>;
}

/**
 * What a tool receives: built once per call by the ToolRegistry (registry.ts), the only place that
 * makes one. A tool never reaches past it to VS Code or to process globals; its caps are
 * `settings.limits`.
 */
export interface ToolContext extends ChangeContext {
	readonly settings: Settings;
	/** State shared by every call through one registry (the tool host). */
	readonly state: SharedState;
}

/**
 * What a ToolRegistry needs from where it runs: built by src/vscode/environment.ts in the extension
 * and by core/nodeHost.ts in the CLI, the MCP server, tests and benchmarks.
 */
export interface ToolEnvironment {
	readonly host: Host;
	readonly state: SharedState;
	settings(): Settings;
	/** Rebuilt by the environment when folders or settings change (see workspaceBoundary); cheap to call. */
	boundary(): Promise<Boundary>;
}

/** The parts that differ between VS Code and plain Node. */
export interface Host {
	readonly kind: 'vscode' | 'node';
	/** Folder for backups, command logs and other per-workspace data the extension owns. */
	readonly storageDir: string;
	/** The text of an open editor for this file if it has unsaved changes, else undefined. */
	dirtyText(absolutePath: string): string | undefined;
	/**
	 * Asks the person. Resolves true to go ahead. Node hosts without a TTY resolve false. `signal`
	 * fires when the call is cancelled: a host that can take its question back does (an MCP
	 * client's dialog); its answer is not waited for either way.
	 */
	confirm(request: ApprovalRequest, signal?: AbortSignal): Promise<boolean>;
	/**
	 * Applies a set of file changes all-or-nothing (WorkspaceEdit in VS Code, atomic writes in Node).
	 * `boundary` is where the writes must land: a host that opens files itself checks what it opened
	 * against it (see atomic.ts). `checked` is what the commit found just before (a host may use
	 * it instead of looking again).
	 */
	applyChanges(changes: readonly FileChange[], signal: AbortSignal, boundary: Boundary, checked?: CheckedFiles): Promise<WrittenVersions | void>;
	/**
	 * True when applyChanges replaces every file it writes by renaming a new file over it and
	 * removes files by unlinking them (Node's atomic writes): the original file then leaves its path
	 * untouched, and its backup can be a hard link to it. Not VS Code's: a save writes in place.
	 */
	readonly replacesFiles?: boolean;
	/** Shows the diff of applied changes to the person, if the host can. */
	showDiffs?(changes: readonly FileChange[]): Promise<void>;
	/** Errors and warnings for these files (or all when empty), if the host knows any. */
	diagnostics?(absolutePaths: readonly string[]): Promise<Diagnostic[]>;
	/** False in an untrusted workspace: mutating tools refuse. */
	isTrusted(): boolean;
	/** Where the sandbox finds its tools and what it hides; see core/sandbox/runtime.ts. */
	readonly sandbox?: SandboxHostOptions;
	/** The editor's language services (definitions, references, rename, …); absent outside VS Code. */
	readonly languages?: LanguageServices;
}

export interface Diagnostic {
	readonly path: string;
	readonly line: number;
	readonly column: number;
	readonly severity: 'error' | 'warning' | 'info' | 'hint';
	readonly message: string;
	readonly source?: string;
	readonly code?: string;
}

/**
 * The version of each file a host wrote, by its final path, as it saw it right after writing (the
 * atomic writes' landing checks): the commit records these instead of asking the disk again.
 */
export type WrittenVersions = ReadonlyMap<string, FileVersion>;

/**
 * What a commit found about its files under their locks, right before applying them: the atomic
 * writes take it instead of reading and resolving every file again.
 */
export interface CheckedFiles {
	/** Files' disk bytes (by change path), read through a checked descriptor: what a rollback puts back. */
	readonly onDisk?: ReadonlyMap<string, Uint8Array>;
	/** Real paths of the changes' paths and move targets, as the boundary resolved them for writing. */
	readonly realPaths?: ReadonlyMap<string, string>;
}

/** One file as a change set holds it. Paths are absolute and have passed the boundary. */
export interface FileChange {
	readonly path: string;
	readonly displayPath: string;
	/** Bytes before the change (or, for a big file edited in place, the file left on disk: see DiskBytes); null when the file is created. */
	readonly before: Uint8Array | DiskBytes | null;
	/** Bytes after the change (maybe as pieces of `before`, see SplicedBytes); null when the file is deleted. */
	readonly after: FileBytes | null;
	/** Set when the file moves: where it ends up. */
	readonly movedTo?: { readonly path: string; readonly displayPath: string };
}

export type ApprovalRequest =
	| {
		readonly kind: 'files';
		readonly title: string;
		readonly changes: readonly FileChange[];
		/** Display paths among the changes that match `protectedPaths`: these always ask. */
		readonly protectedPaths: readonly string[];
	}
	| {
		readonly kind: 'command';
		readonly title: string;
		readonly command: string;
		readonly cwd: string;
		/** The command runs inside the OS sandbox: under approval `edits` it needs no confirmation. */
		readonly sandboxed?: boolean;
		/**
		 * Set when the call asks to run outside the OS sandbox: the model's reason, shown to the
		 * person. Such a request always asks (see mustReachPerson).
		 */
		readonly unsandboxed?: { readonly justification: string };
	}
	| {
		/** Any other call when `approval` is `always`. */
		readonly kind: 'call';
		readonly title: string;
		readonly detail: string;
	};

/**
 * What a tool returns instead of a result when its call changes something: everything is computed
 * (the file changes with the bytes they were made from, or the command to run), nothing is done
 * yet. The registry decides whether `request` is put to the person (settings.approval, protected
 * paths; in chat VS Code asks from the preview), then calls `commit` once. Chat's preview keeps it
 * for the invocation that follows, so what the person was shown is what lands, and the tool's
 * planning runs once per approved call.
 */
export interface PendingCall {
	readonly pending: true;
	readonly request: ApprovalRequest;
	/**
	 * Does the planned work with the invocation's context (its signal, notes). `confirmed` is true
	 * when a person agreed to `request` (here or in chat), false when no one was asked. A file change
	 * checks first that every file is still byte for byte what the change was made from.
	 */
	commit(ctx: ToolContext, confirmed: boolean): Promise<ToolResult>;
	/**
	 * The commit watches the signal itself, stops only where nothing is half done and puts back what
	 * it wrote (the file-change pipeline): the registry then waits for what it really did. Otherwise
	 * a cancel that came as the files were renamed was reported as cancelled, the commit went on
	 * writing after the result, and the versions it wrote were not recorded in time.
	 */
	readonly settlesOnCancel?: boolean;
	/**
	 * With settlesOnCancel: how long after a cancel the registry waits for the commit before it
	 * reports the call cancelled and still stopping (default SETTLE_AFTER_CANCEL_MS in the registry).
	 */
	readonly settleLimitMs?: number;
	/**
	 * Lets go of what planning still holds (its file locks, see planWithFileLocks) when the call is
	 * about to wait for a person, is kept for a later invocation, or is dropped. Safe to call twice.
	 */
	release?(): void;
}

export function isPending(outcome: ToolResult | PendingCall): outcome is PendingCall {
	return (outcome as PendingCall).pending === true;
}

/** What this tool host last saw of a file, for stale-write detection. */
export interface FileVersion {
	readonly mtimeMs: number;
	readonly size: number;
	/**
	 * SHA-256 of the whole content, when this tool host read or wrote all of it (small files): a
	 * rewrite with as many bytes within one tick of a coarse clock keeps size and time stamp alike.
	 */
	readonly sha256?: string;
}

/** What the change pipeline keeps between calls: versions for stale-write checks, file locks, backup times. */
export interface ChangeState {
	/** Absolute path → the version this tool host last read or wrote. */
	readonly fileVersions: Map<string, FileVersion>;
	/**
	 * Absolute path → the tail of the queue of calls working on that file (see withFileLocks in
	 * changes/locks.ts): a read-change-write on one file never interleaves with another.
	 */
	readonly fileLocks: Map<string, Promise<void>>;
	readonly backupClock: BackupClock;
}

/** Everything one registry (tool host) keeps between calls; made by its environment, never by a module. */
export interface SharedState extends ChangeState {
	/** Interactive sessions (exec_command, write_stdin, …); the VS Code layer mirrors them in terminals. */
	readonly sessions: SessionManager;
	readonly commandLogs: CommandLogs;
	/** Languages whose server stayed silent for a whole wait (code tools): the next call waits less. */
	readonly silentLanguages: Set<string>;
	/** Where lines start in the big files read lately, so paging deep into them costs a seek. */
	readonly lineIndexes: LineIndexes;
	/** What the sandbox's protected-path walks saw of this workspace, so the next walk reads only what changed. */
	readonly protectedScans: ProtectedScanCache;
}

export function createChangeState(): ChangeState {
	return { fileVersions: new Map(), fileLocks: new Map(), backupClock: new BackupClock() };
}

/** `storageDir`: the host's, where command logs go. */
export function createSharedState(storageDir: string): SharedState {
	return { ...createChangeState(), sessions: new SessionManager(), commandLogs: new CommandLogs(commandLogDir(storageDir)), silentLanguages: new Set(), lineIndexes: new LineIndexes(), protectedScans: new ProtectedScanCache() };
}

/** `waiting`: the call waits for a person to confirm it (nothing has run or changed yet). */
export type ToolStatus = 'running' | 'waiting' | 'done' | 'failed' | 'declined' | 'cancelled';

/** A command's end as a result reports it: a tool call that worked can still hold a failed command. */
export interface CommandExit {
	readonly code: number | null;
	readonly signal?: string;
	readonly timedOut?: boolean;
}

export interface ToolEventFields {
	bytes: number;
	truncated: boolean;
	filesTouched: string[];
	/** The backup set taken before the call's change (its id), so the change can be shown later. */
	backupSet: string;
	target: string;
}

/**
 * One structured event per phase of a call: the log channel, Activity view and API read these.
 * `update` events come between start and end when the call starts or stops waiting for a person.
 */
export interface ToolEvent extends Partial<ToolEventFields> {
	readonly id: string;
	readonly tool: string;
	readonly phase: 'start' | 'update' | 'end';
	readonly status: ToolStatus;
	readonly startedAt: number;
	/** The whole call, start to end, waiting for the person included. */
	readonly durationMs?: number;
	/** Of durationMs, the time spent waiting for the person to confirm. */
	readonly waitedMs?: number;
	/** How a command ended (run_command, exec_command, write_stdin), when one did. */
	readonly exit?: CommandExit;
	readonly input?: unknown;
	readonly error?: { readonly code: string; readonly message: string };
	/** The result text (bounded), on end events. */
	readonly resultText?: string;
}
