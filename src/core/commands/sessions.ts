import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import type { IPty } from '@lydell/node-pty';
import { cleanTerminalText } from './ansi';
import {
	commandLaunch, DRAIN_MS, groupAlive, killEscapedNow, MarkedGroup, markedGroup, RUN_MARK, signalGroup, spawnLaunch, terminateEscaped, terminateGroup,
} from './process';
import type { Sandbox } from '../sandbox/runtime';
import { HeadTailBuffer, TruncationInfo } from '../results/truncate';

/**
 * Interactive sessions (exec_command / write_stdin): a program on a real pseudo-terminal (programs
 * see a TTY, so prompts appear and line editing works) or on pipes. Each session keeps the output
 * the model has not read yet in a bounded head/tail buffer, and a bounded raw transcript so a
 * terminal that opens late can still show what happened. Every session runs in its own process
 * group, which is what gets signalled when it is killed.
 */

export const MAX_LIVE_SESSIONS = 16;
/** Finished sessions remembered, so writing to one gets a clear answer rather than "unknown id". */
const FINISHED_KEPT = 16;
/** Raw output kept for mirrors (a VS Code terminal) that attach after the start. */
const TRANSCRIPT_CHARS = 256 * 1024;
/** SIGHUP/SIGTERM first; SIGKILL after this. Interactive programs seldom need longer. */
export const SESSION_GRACE_MS = 1_000;
/** Wide, so that programs laying out columns for the terminal seldom wrap what the model reads. */
export const PTY_COLUMNS = 160;
export const PTY_ROWS = 40;

/** A minimal event source, so the VS Code layer can listen without the core importing vscode. */
export class Emitter<T> {
	private readonly listeners = new Set<(value: T) => void>();

	readonly event = (listener: (value: T) => void): { dispose(): void } => {
		this.listeners.add(listener);
		return { dispose: () => this.listeners.delete(listener) };
	};

	fire(value: T): void {
		for (const listener of [...this.listeners]) {
			try {
				listener(value);
			} catch {
				// A faulty listener (a closed terminal) must not break the session.
			}
		}
	}

	clear(): void {
		this.listeners.clear();
	}
}

export interface StartOptions {
	command: string;
	/** Absolute, checked by the caller. */
	cwd: string;
	/** As the model should see it (workspace-relative). */
	displayCwd?: string;
	tty: boolean;
	/** Cap of the unread-output buffer. */
	maxOutputBytes: number;
	env?: Readonly<Record<string, string>>;
	/** The sandbox the session runs in; the session disposes of it when its program is gone. */
	sandbox?: Sandbox;
}

export interface SessionExit {
	readonly exitCode: number | null;
	readonly signal: NodeJS.Signals | null;
}

/** Why a session was stopped by us rather than ending by itself. */
export type StopReason = 'killed' | 'pruned' | 'terminal closed' | 'shutdown' | 'cancelled';

/** What a session runs on: a pty or pipes. */
interface Backend {
	readonly pid: number;
	/** False when some of the text could not be delivered (pipes: stdin already closed by \u0004). */
	write(text: string): boolean;
	/** Releases file descriptors once the session is over. */
	close(): void;
}

interface BackendEvents {
	data(text: string): void;
	exit(exit: SessionExit): void;
}

export class Session {
	readonly startedAt = Date.now();
	/** Last time the model started, wrote to or read from it: pruning picks the longest idle. */
	lastActivityAt = this.startedAt;
	private exitInfo: SessionExit | undefined;
	/** When the program ended (Date.now()), once it has. */
	endedAt: number | undefined;
	private unread: HeadTailBuffer;
	private transcriptParts: string[] = [];
	private transcriptChars = 0;
	private readonly dataEmitter = new Emitter<string>();
	private readonly exitEmitter = new Emitter<SessionExit>();
	private readonly backend: Backend;
	/** Finds what the program started that left its process group (RUN_MARK is in its environment). */
	private readonly group: MarkedGroup;
	private resolveExited!: () => void;
	/** Resolves when the program has exited and its output has been collected. */
	readonly exited = new Promise<void>(resolve => { this.resolveExited = resolve; });
	/** Resolves once, after the exit, what the program left running and its sandbox are gone too. */
	cleanedUp: Promise<void> | undefined;
	stopReason: StopReason | undefined;

	/** Raw output as it arrives (escape sequences and all), for mirrors. */
	readonly onData = this.dataEmitter.event;
	readonly onExit = this.exitEmitter.event;

	constructor(readonly id: number, readonly options: StartOptions, private readonly graceMs: number) {
		this.unread = new HeadTailBuffer(options.maxOutputBytes, 0.25);
		const events: BackendEvents = { data: text => this.received(text), exit: exit => this.ended(exit) };
		try {
			const mark = randomBytes(8).toString('hex');
			const marked = { ...options, env: { ...options.env, [RUN_MARK]: mark } };
			this.backend = options.tty ? ptyBackend(marked, events) : pipeBackend(marked, events);
			this.group = markedGroup(mark, this.backend.pid);
		} catch (error) {
			void options.sandbox?.dispose();
			throw error;
		}
	}

	get command(): string {
		return this.options.command;
	}

	get pid(): number {
		return this.backend.pid;
	}

	get tty(): boolean {
		return this.options.tty;
	}

	get alive(): boolean {
		return this.exitInfo === undefined;
	}

	get exit(): SessionExit | undefined {
		return this.exitInfo;
	}

	/** Bytes of output not yet returned to the model. */
	get unreadBytes(): number {
		return this.unread.totalBytes;
	}

	/** Everything still held of the raw output, oldest first (bounded). */
	get transcript(): string {
		return this.transcriptParts.join('');
	}

	private received(text: string): void {
		this.unread.push(Buffer.from(text, 'utf8'));
		this.transcriptParts.push(text);
		this.transcriptChars += text.length;
		while (this.transcriptChars > TRANSCRIPT_CHARS && this.transcriptParts.length > 1) {
			this.transcriptChars -= this.transcriptParts.shift()!.length;
		}
		this.dataEmitter.fire(text);
	}

	private ended(exit: SessionExit): void {
		if (this.exitInfo) return;
		this.exitInfo = this.options.sandbox?.readExit(exit) ?? exit;
		this.endedAt = Date.now();
		this.backend.close();
		// The program is done; anything it left in its group goes with it (in a sandbox, everything did
		// already), and then its private temp folder.
		const leftovers = process.platform !== 'win32' && groupAlive(this.pid) ? terminateGroup(this.pid, this.graceMs, ['SIGHUP', 'SIGTERM']) : Promise.resolve();
		this.cleanedUp = Promise.all([leftovers, this.stopEscaped()]).then(() => this.options.sandbox?.dispose());
		this.exitEmitter.fire(this.exitInfo);
		this.dataEmitter.clear();
		this.exitEmitter.clear();
		this.resolveExited();
	}

	/**
	 * Sends characters as typed. On a pty control characters do what they do in a terminal (the
	 * line discipline turns \u0003 into SIGINT). On pipes they are emulated: \u0003 sends SIGINT
	 * and \u001c SIGQUIT to the group, \u0004 closes stdin; \r becomes \n. False when some of
	 * the text did not reach the program: it has ended, or (pipes) its stdin was closed.
	 */
	write(chars: string): boolean {
		if (!this.alive) return false;
		return this.backend.write(chars);
	}

	/** The output since the last read, cleaned for a model, and what was dropped from it. */
	read(hint?: (info: TruncationInfo) => string | undefined): { text: string; info: TruncationInfo } {
		this.lastActivityAt = Date.now();
		const { text, info } = this.unread.toText(hint);
		this.unread = new HeadTailBuffer(this.options.maxOutputBytes, 0.25);
		return { text: cleanTerminalText(text), info };
	}

	/** Waits until the program exits, `ms` pass, or the signal fires, whichever comes first. */
	async waitForExit(ms: number, signal?: AbortSignal): Promise<boolean> {
		if (!this.alive) return true;
		let timer: NodeJS.Timeout | undefined;
		let onAbort: (() => void) | undefined;
		const stop = new Promise<void>(resolve => {
			timer = setTimeout(resolve, ms);
			onAbort = () => resolve();
			signal?.addEventListener('abort', onAbort, { once: true });
		});
		await Promise.race([this.exited, stop]);
		clearTimeout(timer);
		if (onAbort) signal?.removeEventListener('abort', onAbort);
		return !this.alive;
	}

	/** Stops the program and everything in its process group (SIGHUP, SIGTERM, then SIGKILL). */
	async kill(reason: StopReason): Promise<void> {
		if (!this.alive) return;
		this.stopReason ??= reason;
		await Promise.all([terminateGroup(this.pid, this.graceMs, ['SIGHUP', 'SIGTERM']), this.stopEscaped()]);
		// Its exit event normally follows at once; a pty that never reports it must not hang us.
		await Promise.race([this.exited, delay(500)]);
		if (this.alive) this.ended({ exitCode: null, signal: 'SIGKILL' });
	}

	/** Last resort when the host process exits: no time for a grace period. */
	killNow(): void {
		if (this.alive) signalGroup(this.pid, 'SIGKILL');
		if (!this.options.sandbox?.endsWithProgram) killEscapedNow(this.group);
	}

	/**
	 * Stops what the program started that left its process group (setsid, daemons), which signals
	 * to the group miss; in bwrap they end with its PID namespace, so /proc is not searched.
	 */
	private stopEscaped(): Promise<void> {
		if (this.options.sandbox?.endsWithProgram) return Promise.resolve();
		return terminateEscaped(this.group, this.graceMs, ['SIGHUP', 'SIGTERM']);
	}
}

function delay(ms: number): Promise<void> {
	return new Promise(resolve => setTimeout(resolve, ms));
}

function signalName(signal: number | string | null | undefined): NodeJS.Signals | null {
	if (!signal) return null;
	if (typeof signal === 'string') return signal as NodeJS.Signals;
	const entry = Object.entries(os.constants.signals).find(([, value]) => value === signal);
	return (entry?.[0] as NodeJS.Signals | undefined) ?? null;
}

/** A lazy memo of a module, loaded once per process, so it may be module-wide. */
let ptyModule: typeof import('@lydell/node-pty') | undefined;

/** Loaded on first use: a prebuilt native module, kept out of the bundle (see esbuild.mjs). */
function loadPty(): typeof import('@lydell/node-pty') {
	ptyModule ??= require('@lydell/node-pty') as typeof import('@lydell/node-pty');
	return ptyModule;
}

function ptyBackend(options: StartOptions, events: BackendEvents): Backend {
	const shell = commandLaunch(options, { PAGER: 'cat', GIT_PAGER: 'cat', TERM: 'xterm-256color' });
	const term: IPty = loadPty().spawn(shell.file, [...shell.args], {
		name: 'xterm-256color',
		cols: PTY_COLUMNS,
		rows: PTY_ROWS,
		cwd: options.cwd,
		env: shell.env as Record<string, string>,
	});
	const dataListener = term.onData(text => events.data(text));
	// node-pty reports the exit only after the terminal's output is drained (or 200 ms later).
	const exitListener = term.onExit(({ exitCode, signal }) => {
		events.exit(signal ? { exitCode: null, signal: signalName(signal) } : { exitCode, signal: null });
	});
	return {
		pid: term.pid,
		write: text => {
			term.write(text);
			return true;
		},
		close: () => {
			dataListener.dispose();
			exitListener.dispose();
		},
	};
}

function pipeBackend(options: StartOptions, events: BackendEvents): Backend {
	const shell = commandLaunch(options);
	const child = spawnLaunch(shell, options.cwd);
	const streams = [child.stdout!, child.stderr!];
	for (const stream of streams) {
		stream.setEncoding('utf8');
		stream.on('data', (text: string) => events.data(text));
		stream.on('error', () => undefined);
	}
	child.stdin!.on('error', () => undefined);
	const closed = new Promise<void>(resolve => child.once('close', () => resolve()));
	let exited = false;
	const finish = (exit: SessionExit) => {
		if (exited) return;
		exited = true;
		// Output written just before the exit may still be in the pipes; a background process
		// holding them open must not keep the session alive, hence the bounded drain.
		void Promise.race([closed, delay(DRAIN_MS)]).then(() => events.exit(exit));
	};
	child.once('exit', (exitCode, signal) => finish({ exitCode, signal }));
	child.once('error', error => {
		events.data(`Could not start the shell: ${error.message}\n`);
		finish({ exitCode: 127, signal: null });
	});
	const pid = child.pid ?? -1;
	return {
		pid,
		write: text => writeToPipe(child.stdin!, pid, text),
		close: () => {
			for (const stream of streams) stream.destroy();
			child.stdin!.destroy();
		},
	};
}

const PIPE_CONTROLS = /[\x03\x04\x1c]/;

/** Writes text to a session's stdin pipe, emulating control keys; false when text came after stdin was closed. */
function writeToPipe(stdin: NodeJS.WritableStream & { writableEnded: boolean }, pid: number, text: string): boolean {
	let delivered = true;
	let rest = text;
	while (rest.length > 0) {
		const at = rest.search(PIPE_CONTROLS);
		const plain = at === -1 ? rest : rest.slice(0, at);
		if (plain && stdin.writableEnded) delivered = false;
		else if (plain) stdin.write(plain.replace(/\r\n?/g, '\n'));
		if (at === -1) break;
		const control = rest[at];
		if (control === '\x03') signalGroup(pid, 'SIGINT');
		else if (control === '\x1c') signalGroup(pid, 'SIGQUIT');
		else if (!stdin.writableEnded) stdin.end();
		rest = rest.slice(at + 1);
	}
	return delivered;
}

/** What one session is, for list_sessions and the VS Code layer. */
export interface SessionSummary {
	readonly id: number;
	readonly command: string;
	readonly cwd: string;
	readonly tty: boolean;
	readonly pid: number;
	readonly startedAt: number;
	readonly lastActivityAt: number;
	readonly alive: boolean;
	readonly exit?: SessionExit;
	readonly stopReason?: StopReason;
	readonly unreadBytes: number;
}

export interface ManagerOptions {
	maxLive?: number;
	graceMs?: number;
}

/**
 * All sessions of one tool host (one VS Code window, one CLI run). Also remembers process groups
 * that run_command left running in the background, so they go when the host goes.
 */
export class SessionManager {
	private readonly sessions = new Map<number, Session>();
	private readonly background = new Map<number, string>();
	/** run_command calls still running (their groups and what left them): they go with the host too. */
	private readonly running = new Set<MarkedGroup>();
	private nextId = 1;
	private readonly startEmitter = new Emitter<Session>();
	private exitHookInstalled = false;
	private readonly exitHook = () => this.killAllNow();
	readonly maxLive: number;
	private readonly graceMs: number;

	/** Fires for every new session, after it started. */
	readonly onDidStart = this.startEmitter.event;

	constructor(options: ManagerOptions = {}) {
		this.maxLive = options.maxLive ?? MAX_LIVE_SESSIONS;
		this.graceMs = options.graceMs ?? SESSION_GRACE_MS;
	}

	/**
	 * Starts a session. When `maxLive` sessions are alive already, the one idle longest is stopped
	 * first and returned as `pruned`, so the caller can tell the model.
	 */
	start(options: StartOptions): { session: Session; pruned?: Session } {
		let pruned: Session | undefined;
		const live = this.live();
		if (live.length >= this.maxLive) {
			pruned = live.reduce((oldest, s) => (s.lastActivityAt < oldest.lastActivityAt ? s : oldest));
			void pruned.kill('pruned');
		}
		const session = new Session(this.nextId++, options, this.graceMs);
		this.sessions.set(session.id, session);
		void session.exited.then(() => this.forgetOldFinished());
		this.installExitHook();
		this.startEmitter.fire(session);
		return { session, pruned };
	}

	get(id: number): Session | undefined {
		return this.sessions.get(id);
	}

	/** Whether an id was handed out by this manager (it may have been forgotten since). */
	issued(id: number): boolean {
		return Number.isInteger(id) && id >= 1 && id < this.nextId;
	}

	live(): Session[] {
		return [...this.sessions.values()].filter(session => session.alive);
	}

	/** Live sessions first, then the remembered finished ones; oldest first within each. */
	all(): Session[] {
		const sessions = [...this.sessions.values()];
		return [...sessions.filter(s => s.alive), ...sessions.filter(s => !s.alive)];
	}

	summaries(): SessionSummary[] {
		return this.all().map(summarize);
	}

	/** Remembers a process group run_command left running, to stop it with everything else. */
	adoptBackground(pgid: number, command: string): void {
		this.background.set(pgid, command);
		this.installExitHook();
	}

	/**
	 * Holds a running run_command's process group until the returned release is called, so that
	 * disposing of the host (or its process exiting) stops it: it used to run on to its timeout.
	 */
	trackRunning(group: MarkedGroup): () => void {
		this.running.add(group);
		this.installExitHook();
		return () => {
			this.running.delete(group);
			this.forgetOldFinished();
		};
	}

	/** Background process groups from run_command that are still alive. */
	backgroundGroups(): { pgid: number; command: string }[] {
		for (const pgid of this.background.keys()) if (!groupAlive(pgid)) this.background.delete(pgid);
		return [...this.background].map(([pgid, command]) => ({ pgid, command }));
	}

	/** Stops every live session and background group; resolves when they are gone. */
	async killAll(reason: StopReason = 'killed'): Promise<number> {
		const live = this.live();
		const groups = this.backgroundGroups();
		const running = [...this.running];
		this.background.clear();
		await Promise.all([
			...live.map(session => session.kill(reason)),
			...groups.map(group => terminateGroup(group.pgid, this.graceMs)),
			...running.flatMap(group => [terminateGroup(group.pgid, this.graceMs), terminateEscaped(group, this.graceMs)]),
		]);
		return live.length + groups.length + running.length;
	}

	/** The extension is deactivating: everything goes, sandbox temp folders too, and no listener survives. */
	async dispose(): Promise<void> {
		await this.killAll('shutdown');
		await Promise.all([...this.sessions.values()].map(session => session.cleanedUp));
		this.startEmitter.clear();
		this.removeExitHook();
	}

	private killAllNow(): void {
		for (const session of this.live()) session.killNow();
		for (const pgid of this.background.keys()) signalGroup(pgid, 'SIGKILL');
		for (const group of this.running) {
			signalGroup(group.pgid, 'SIGKILL');
			killEscapedNow(group);
		}
	}

	/** If the host process exits without deactivating us (a crash, a test runner), nothing is left behind. */
	private installExitHook(): void {
		if (this.exitHookInstalled) return;
		this.exitHookInstalled = true;
		process.on('exit', this.exitHook);
	}

	private removeExitHook(): void {
		if (!this.exitHookInstalled) return;
		this.exitHookInstalled = false;
		process.off('exit', this.exitHook);
	}

	private forgetOldFinished(): void {
		const finished = [...this.sessions.values()].filter(s => !s.alive);
		for (const session of finished.slice(0, Math.max(0, finished.length - FINISHED_KEPT))) this.sessions.delete(session.id);
		if (this.live().length === 0 && this.background.size === 0 && this.running.size === 0) this.removeExitHook();
	}
}

export function summarize(session: Session): SessionSummary {
	return {
		id: session.id,
		command: session.command,
		cwd: session.options.displayCwd ?? session.options.cwd,
		tty: session.tty,
		pid: session.pid,
		startedAt: session.startedAt,
		lastActivityAt: session.lastActivityAt,
		alive: session.alive,
		exit: session.exit,
		stopReason: session.stopReason,
		unreadBytes: session.unreadBytes,
	};
}
