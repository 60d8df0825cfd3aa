import { ChildProcess, spawn, SpawnOptions, StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compactStamp } from '../files/files';
import { ToolError } from '../results/errors';
import { formatBytes } from '../results/truncate';
import type { Sandbox } from '../sandbox/runtime';
import { OutputSink, outputSockets, StreamCapture } from './output';

export type { StreamCapture } from './output';

/**
 * The command runner behind run_command. What it guarantees, because agents in editors are known
 * for the opposite (hanging, losing output, leaving processes behind):
 * - the command runs in its own process group (its own session, in fact), so a timeout or a cancel
 *   reaches every process it started: SIGTERM to the group, SIGKILL after a grace period;
 * - stdin is a pipe that gets the given text and is closed, never the extension host's stdin;
 * - the call finishes when the shell exits plus a short drain, even when a background process it
 *   left behind keeps the output pipes open;
 * - each stream is kept in a bounded head/tail buffer, and written whole to a log file (with
 *   backpressure), so a command printing gigabytes costs bounded memory (see output.ts, which also
 *   says how the bytes are read cheaply).
 *
 * Shell: `bash -o pipefail -c` on Linux and macOS (`/bin/sh -c` where there is no bash). On Windows
 * `pwsh -NoProfile -NonInteractive -Command` when PowerShell 7 is on PATH, else `%ComSpec% /d /s /c`
 * (cmd.exe); the tree is stopped with `taskkill /T /F` there, since Windows has no process groups
 * that a signal reaches.
 */

export const DEFAULT_TIMEOUT_MS = 120_000;
export const MAX_TIMEOUT_MS = 600_000;
/** SIGTERM first; what is still alive this long after gets SIGKILL. */
export const KILL_GRACE_MS = 2_000;
/** After the shell exits, how long output may still arrive before the pipes are let go. */
export const DRAIN_MS = 250;
/** A log file stops growing here (the buffers still see everything). */
export const LOG_CAP_BYTES = 1024 * 1024 * 1024;

/** Set for every command: no pagers waiting for a key, no colour codes, no terminal tricks. */
export const COMMAND_ENV: Readonly<Record<string, string>> = { PAGER: 'cat', GIT_PAGER: 'cat', NO_COLOR: '1', TERM: 'dumb' };

export interface ShellInvocation {
	readonly file: string;
	readonly args: string[];
	/** cmd.exe parses its own command line; Node must not quote it again. */
	readonly windowsVerbatimArguments?: boolean;
}

/** A POSIX shell, and whether it takes `-o pipefail` (bash does, a plain sh may not). */
export interface PosixShell {
	readonly file: string;
	readonly pipefail: boolean;
}

/** A lazy memo of a fact that never changes while the process runs (which shell), so it may be module-wide. */
let posixShell: PosixShell | undefined;

/** The shell a command string runs in on this platform (see the module comment). */
export function shellInvocation(command: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): ShellInvocation {
	if (platform === 'win32') {
		const pwsh = findOnPath('pwsh.exe', env);
		if (pwsh) return { file: pwsh, args: ['-NoLogo', '-NoProfile', '-NonInteractive', '-Command', command] };
		return { file: env.ComSpec || 'cmd.exe', args: ['/d', '/s', '/c', `"${command}"`], windowsVerbatimArguments: true };
	}
	posixShell ??= findPosixShell(env);
	return posixInvocation(posixShell, command);
}

/** `binBash` if it exists, else bash on the PATH, else `/bin/sh` (without pipefail). */
export function findPosixShell(env: NodeJS.ProcessEnv, binBash = '/bin/bash'): PosixShell {
	if (fs.existsSync(binBash)) return { file: binBash, pipefail: true };
	const bash = findOnPath('bash', env);
	return bash ? { file: bash, pipefail: true } : { file: '/bin/sh', pipefail: false };
}

export function posixInvocation(shell: PosixShell, command: string): ShellInvocation {
	// --norc: bash sources ~/.bashrc when its stdin is a socket (Node's stdio pipes are socketpairs)
	// and SHLVL is below 2, so whether a command saw the person's rc file depended on how the editor
	// was started (and a pyenv or nvm set-up in it printed errors inside the sandbox).
	const options = shell.pipefail ? ['--norc', '-o', 'pipefail'] : [];
	if (command.length <= PIECE_CHARS) return { file: shell.file, args: [...options, '-c', command] };
	if (Buffer.byteLength(command) > MAX_COMMAND_BYTES) throw commandTooLong(command);
	// $0 is the shell as with -c alone; `set --` empties the positional parameters the pieces came in.
	return { file: shell.file, args: [...options, '-c', JOIN_PIECES, shell.file, ...pieces(command)] };
}

/**
 * Linux refuses to start a program with an argument over 128 KiB (MAX_ARG_STRLEN), and a heredoc
 * writing a big file makes such a command. A longer command goes in pieces that the shell joins
 * and evaluates. A piece of this many UTF-16 units is at most 3 bytes a unit in UTF-8: 96 KiB.
 */
const PIECE_CHARS = 32 * 1024;
const JOIN_PIECES = 'eval "set --; $(printf %s "$@")"';
/** Every argument and variable of a program shares 2 MiB (ARG_MAX, usually): leave room for the environment. */
export const MAX_COMMAND_BYTES = 1024 * 1024;

function pieces(command: string): string[] {
	const found: string[] = [];
	for (let start = 0; start < command.length;) {
		let end = Math.min(command.length, start + PIECE_CHARS);
		// Never between the two halves of a surrogate pair.
		if (end < command.length && /[\ud800-\udbff]/.test(command[end - 1])) end--;
		found.push(command.slice(start, end));
		start = end;
	}
	return found;
}

function commandTooLong(command: string): ToolError {
	return new ToolError('invalid_input', `The command is ${formatBytes(Buffer.byteLength(command))}; commands up to ${formatBytes(MAX_COMMAND_BYTES)} can be started. Write the long part to a file with write_file (or a few smaller commands), then run a short command that uses it.`);
}

export function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
	const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
	for (const dir of dirs) {
		const candidate = path.join(dir, name);
		if (fs.existsSync(candidate)) return candidate;
	}
	return undefined;
}

export interface Launch extends ShellInvocation {
	readonly env: NodeJS.ProcessEnv;
}

/**
 * What to start for a command: its shell (through the sandbox when there is one) and environment
 * (see commandEnv; the sandbox's TMPDIR wins).
 */
export function commandLaunch(options: { command: string; cwd: string; env?: Readonly<Record<string, string>>; sandbox?: Sandbox }, overrides: Readonly<Record<string, string>> = COMMAND_ENV): Launch {
	const shell = shellInvocation(options.command);
	const launch = options.sandbox ? options.sandbox.wrap(shell, options.cwd) : shell;
	return { ...launch, env: commandEnv({ ...options.env, ...options.sandbox?.env }, overrides) };
}

/**
 * Starts a command's shell with pipes for its three streams (spawnOptions' default) or what `stdio`
 * gives. On POSIX it gets a new session and process group: signals reach the whole tree, and with
 * no controlling terminal a password prompt on /dev/tty fails instead of hanging.
 */
export function spawnLaunch(launch: Launch, cwd: string, stdio?: StdioOptions): ChildProcess {
	return spawn(launch.file, launch.args, spawnOptions(launch, cwd, stdio));
}

/** How spawnLaunch starts a shell on `platform`: `stdio` (three pipes unless given), a session of its own (POSIX), no console window (Windows). */
export function spawnOptions(launch: Launch, cwd: string, stdio: StdioOptions = ['pipe', 'pipe', 'pipe'], platform: NodeJS.Platform = process.platform): SpawnOptions {
	return {
		cwd,
		env: launch.env,
		stdio,
		detached: platform !== 'win32',
		windowsHide: true,
		windowsVerbatimArguments: launch.windowsVerbatimArguments,
	};
}

/**
 * The environment of a command: ours, then COMMAND_ENV, then what the caller asked for (which wins).
 * ELECTRON_RUN_AS_NODE is dropped: inherited from the extension host it would turn any Electron
 * program the command starts (VS Code's own `code` included) into plain Node.
 */
export function commandEnv(extra: Readonly<Record<string, string>> = {}, overrides: Readonly<Record<string, string>> = COMMAND_ENV, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = { ...base, ...overrides, ...extra };
	delete env.ELECTRON_RUN_AS_NODE;
	return env;
}

/** Sends a signal to a whole process group (a tree on Windows). False when nothing was there. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
	if (!isGroupId(pid)) return false;
	// Stryker disable all: Windows only (the tests run on Linux); listed in test/MUTATION-SURVIVORS.md.
	if (process.platform === 'win32') {
		if (signal === 'SIGKILL' || signal === 'SIGTERM') {
			spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => undefined);
			return true;
		}
	}
	// Stryker restore all
	return trySignal(groupTarget(pid), signal);
}

/** Whether `pid` may name a command's group: kill(-1) would reach every process we may signal, kill(0) our own group. */
function isGroupId(pid: number): boolean {
	return Number.isInteger(pid) && pid > 1;
}

/** What kill() is given to reach a group: its negated id, or on Windows (no groups) the root's pid. */
function groupTarget(pgid: number, platform: NodeJS.Platform = process.platform): number {
	return platform === 'win32' ? pgid : -pgid;
}

function trySignal(pid: number, signal: NodeJS.Signals | 0): boolean {
	try {
		process.kill(pid, signal);
		return true;
	} catch {
		return false;
	}
}

/**
 * Whether any process of the group is still running. kill(-pgid, 0) also succeeds for zombies, and
 * where PID 1 does not reap orphans (some containers) a dead background job stays a zombie for
 * good; on Linux the group's members are therefore looked up in /proc when the cheap check says yes.
 */
export function groupAlive(pgid: number, platform: NodeJS.Platform = process.platform): boolean {
	if (!isGroupId(pgid)) return false;
	if (!trySignal(groupTarget(pgid, platform), 0)) return false;
	if (platform !== 'linux') return true;
	return livingMembers(pgid).length > 0;
}

/**
 * Pids of the group's members that are not zombies, from /proc (Linux only; `proc` is for tests).
 * When /proc cannot be read, the group leader stands for the group (the caller's cheap check said yes).
 */
export function livingMembers(pgid: number, proc = '/proc'): number[] {
	return membersWithParents(pgid, proc)?.map(member => member.pid) ?? [pgid];
}

/** livingMembers with each one's parent; undefined when /proc cannot be read. */
function membersWithParents(pgid: number, proc = '/proc'): { pid: number; ppid: number }[] | undefined {
	let entries: string[];
	try {
		entries = fs.readdirSync(proc);
	} catch {
		return undefined;
	}
	const members: { pid: number; ppid: number }[] = [];
	for (const entry of entries) {
		// Only the numbered entries are processes (not self, sys, …).
		if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
		const stat = procStat(Number(entry), proc);
		if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') members.push({ pid: Number(entry), ppid: stat.ppid });
	}
	return members;
}

/** State, parent and process group of a pid from /proc/<pid>/stat; undefined when it is gone. */
export function procStat(pid: number, proc = '/proc'): { state: string; ppid: number; pgrp: number; startTicks: number } | undefined {
	let text: string;
	try {
		text = fs.readFileSync(`${proc}/${pid}/stat`, 'utf8');
	} catch {
		return undefined;
	}
	// The command name is in parentheses and may itself hold spaces or parentheses.
	const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
	// Field 22 of proc(5), `starttime`: clock ticks after boot.
	return { state: fields[0], ppid: Number(fields[1]), pgrp: Number(fields[2]), startTicks: Number(fields[19]) };
}

/**
 * The variable every command of runProcess gets, with a value of its own: processes that left its
 * process group (`setsid`, a daemon's double fork) still carry it, and are found by it.
 */
export const RUN_MARK = 'TOOLBELT_RUN';

/** A started command as the search for its escaped processes needs it. */
export interface MarkedGroup {
	/** The value of RUN_MARK in its environment. */
	readonly mark: string;
	/** Its process group: the leader's pid. */
	readonly pgid: number;
	/** When the leader started (proc(5) `starttime`): whatever it started, started no earlier. */
	readonly startTicks: number;
}

/**
 * Call right after the spawn: the leader cannot have been reaped yet, so its start time is there
 * to read. Should it not be, this process's own start time is the (looser) bound.
 */
export function markedGroup(mark: string, pgid: number, proc = '/proc'): MarkedGroup {
	const startTicks = procStat(pgid, proc)?.startTicks ?? procStat(process.pid, proc)?.startTicks ?? 0;
	return { mark, pgid, startTicks };
}

/**
 * Living processes whose environment holds `RUN_MARK=mark` but that are outside the group `pgid`
 * (Linux, from /proc; none elsewhere): what a command started that signals to its group miss.
 * Best effort: a process that cleared its environment, or one we may not read (setuid), is not seen.
 * Two guards beside the mark, so that no single wrong test here (mutation testing planted them)
 * can signal a process the command did not start: never this process or those above it, and
 * never a process older than the command.
 */
export function escapedMembers(group: MarkedGroup, proc = '/proc'): number[] {
	if (process.platform !== 'linux') return [];
	const needle = `${RUN_MARK}=${group.mark}\0`;
	let entries: string[];
	try {
		entries = fs.readdirSync(proc);
	} catch {
		return [];
	}
	const escaped: number[] = [];
	const own = ownLine(proc);
	for (const entry of entries) {
		if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57 || own.has(Number(entry))) continue;
		let environ: string;
		try {
			environ = fs.readFileSync(`${proc}/${entry}/environ`, 'latin1');
		} catch {
			continue;
		}
		if (!environ.startsWith(needle) && !environ.includes(`\0${needle}`)) continue;
		const stat = procStat(Number(entry), proc);
		if (stat && stat.pgrp !== group.pgid && stat.startTicks >= group.startTicks && stat.state !== 'Z' && stat.state !== 'X') escaped.push(Number(entry));
	}
	return escaped;
}

/**
 * This process and every one above it, up to init: never a command's child, whatever a scan finds.
 * A wrong match (a bug in the test above; mutation testing planted one) then cannot signal the
 * editor, the agent or the shell that started Toolbelt.
 */
function ownLine(proc: string): Set<number> {
	const line = new Set<number>([1]);
	for (let pid = process.pid; pid > 1 && !line.has(pid); pid = procStat(pid, proc)?.ppid ?? 0) line.add(pid);
	return line;
}

/** Stops the escaped processes of a command one by one: SIGTERM (or `first`), then SIGKILL after `graceMs`. */
export async function terminateEscaped(group: MarkedGroup, graceMs: number, first: NodeJS.Signals[] = ['SIGTERM']): Promise<void> {
	const escaped = () => escapedMembers(group);
	const found = escaped();
	if (found.length === 0) return;
	for (const pid of found) {
		for (const signal of [...first, 'SIGCONT' as const]) trySignal(pid, signal);
	}
	if (await waitUntil(() => escaped().length === 0, graceMs)) return;
	for (const pid of escaped()) trySignal(pid, 'SIGKILL');
	await waitUntil(() => escaped().length === 0, 1_000);
}

/** Last resort when the host process exits: SIGKILL to the escaped processes, no grace. */
export function killEscapedNow(group: MarkedGroup): void {
	for (const pid of escapedMembers(group)) trySignal(pid, 'SIGKILL');
}

/**
 * SIGTERM (or the `first` signals) to the group, then SIGKILL to whatever is left after `graceMs`.
 * Resolves once the group is gone (or, for processes that cannot die, shortly after the SIGKILL).
 * A member that ignored SIGTERM when it was sent and stops ignoring it within the grace (bwrap's
 * launcher, see repeatTermToListeners) is sent it again, and so is what it started meanwhile.
 */
export async function terminateGroup(pgid: number, graceMs = KILL_GRACE_MS, first: NodeJS.Signals[] = ['SIGTERM']): Promise<void> {
	// Taken before the signal (Linux, from /proc): those that ignore it now may be about to stop ignoring it.
	const before = process.platform === 'linux' ? livingMembers(pgid) : [];
	const deaf: DeafMembers = { before: new Set(before), deaf: new Set(before.filter(pid => ignoresTerm(pid))), signalled: new Set() };
	if (!first.map(signal => signalGroup(pgid, signal)).some(Boolean)) return;
	// A stopped process (ctrl-Z, SIGTTIN) never acts on SIGTERM until it is continued.
	signalGroup(pgid, 'SIGCONT');
	const graceEnds = Date.now() + graceMs;
	if (deaf.deaf.size) await waitUntil(() => repeatTermToListeners(pgid, deaf), graceMs);
	if (await waitUntilGone(pgid, Math.max(0, graceEnds - Date.now()))) return;
	signalGroup(pgid, 'SIGKILL');
	await waitUntilGone(pgid, 1_000);
}

/** Members of a group that ignored SIGTERM when it was sent, and what became of them. */
interface DeafMembers {
	/** The members when SIGTERM was sent. */
	readonly before: Set<number>;
	/** Members seen ignoring SIGTERM since, and the children they started meanwhile. */
	readonly deaf: Set<number>;
	readonly signalled: Set<number>;
}

/**
 * SIGTERM again to each member that missed it because it ignored it then (or was started since by
 * one that did) and no longer ignores it: bwrap's launcher ignores SIGTERM until the sandboxed
 * program starts (see bwrap.ts), so a cancel during the sandbox's set-up was lost and the program
 * ran on, to its end or to the SIGKILL, while the result said it was stopped. True once the group
 * is gone (one look at /proc serves both).
 */
function repeatTermToListeners(pgid: number, members: DeafMembers): boolean {
	const living = membersWithParents(pgid) ?? [];
	for (const { pid, ppid } of living) {
		if (members.signalled.has(pid)) continue;
		const missed = members.deaf.has(pid) || (!members.before.has(pid) && members.deaf.has(ppid));
		if (!missed) continue;
		if (ignoresTerm(pid)) {
			members.deaf.add(pid);
			continue;
		}
		trySignal(pid, 'SIGTERM');
		members.signalled.add(pid);
	}
	return living.length === 0;
}

/** Whether a process ignores SIGTERM (its SigIgn mask in /proc; false when it cannot be read). */
export function ignoresTerm(pid: number, proc = '/proc'): boolean {
	let status: string;
	try {
		status = fs.readFileSync(`${proc}/${pid}/status`, 'utf8');
	} catch {
		return false;
	}
	const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(status)?.[1];
	// SIGTERM is signal 15: bit 14 of the mask.
	return mask !== undefined && (BigInt(`0x${mask}`) & (1n << 14n)) !== 0n;
}

/** True once the group is gone; false when it is still there after `ms`. */
function waitUntilGone(pgid: number, ms: number, firstPause = 5): Promise<boolean> {
	return waitUntil(() => !groupAlive(pgid), ms, firstPause);
}

/** True once `done` says so; false when it still does not after `ms`. */
async function waitUntil(done: () => boolean, ms: number, firstPause = 5): Promise<boolean> {
	const deadline = Date.now() + ms;
	for (let pause = firstPause; ; pause = nextPollPause(pause)) {
		if (done()) return true;
		const left = deadline - Date.now();
		if (left <= 0) return false;
		await delay(Math.min(pause, left));
	}
}

/** The longest pause between two looks at a dying group. */
export const POLL_PAUSE_MAX_MS = 50;

/**
 * The pause after `pause` while waiting for a group to go: doubling, since most commands end at once
 * on SIGTERM and are seen gone at the first looks, up to POLL_PAUSE_MAX_MS for those that take long.
 */
export function nextPollPause(pause: number): number {
	return Math.min(pause * 2, POLL_PAUSE_MAX_MS);
}

function delay(ms: number): Promise<void> {
	return new Promise(resolve => setTimeout(resolve, ms));
}

export interface RunOptions {
	command: string;
	/** Absolute; checked by the caller (inside the workspace, a directory). */
	cwd: string;
	timeoutMs?: number;
	/** Written to the command's stdin, which is then closed. Without it stdin is empty. */
	stdin?: string;
	/** Extra variables; they win over ours. */
	env?: Readonly<Record<string, string>>;
	signal?: AbortSignal;
	/** Cap of each stream's buffer (head quarter, tail three quarters). */
	maxOutputBytes: number;
	/** When set, each stream is written whole to `<logDir>/<name>.stdout.log` / `.stderr.log`. */
	logDir?: string;
	/** Where each log stops growing; LOG_CAP_BYTES unless set. */
	logCapBytes?: number;
	/** Runs the shell inside this sandbox (opened and disposed by the caller). */
	sandbox?: Sandbox;
	graceMs?: number;
	drainMs?: number;
	/** Told the process group and mark as soon as the shell runs (to stop it from elsewhere, e.g. when the host goes). */
	onStart?: (group: MarkedGroup) => void;
}

export type RunEnd = 'exit' | 'timeout' | 'cancelled';

export interface RunResult {
	readonly end: RunEnd;
	/** The shell's exit code; null when it was ended by a signal. */
	readonly exitCode: number | null;
	readonly signal: NodeJS.Signals | null;
	readonly durationMs: number;
	readonly stdout: StreamCapture;
	readonly stderr: StreamCapture;
	/** The process group (= the shell's pid on POSIX). */
	readonly pid: number | undefined;
	/**
	 * Background processes the command started were still running when it finished normally, and
	 * were left running (a server started with `&`). After a timeout or cancel this is never true.
	 */
	readonly leftRunning: boolean;
	/** Such a process still held the output pipes after the drain: we stopped reading them. */
	readonly pipesHeld: boolean;
	/**
	 * Processes the command started that left its process group (setsid, daemons) and still ran
	 * when it finished normally (Linux only; see escapedMembers). After a timeout or cancel they
	 * were stopped too, and this is empty.
	 */
	readonly escaped: number[];
}

/** Thrown when the shell itself cannot be started (not when the command is not found: that is exit 127). */
export class SpawnError extends Error {
	constructor(readonly code: string | undefined, message: string) {
		super(message);
		this.name = 'SpawnError';
	}
}

/** Runs one command to completion (see the module comment). Never throws for the command's own failure. */
export async function runProcess(options: RunOptions): Promise<RunResult> {
	const started = Date.now();
	const mark = randomBytes(8).toString('hex');
	const shell = commandLaunch({ ...options, env: { ...options.env, [RUN_MARK]: mark } });
	const logBase = options.logDir ? path.join(options.logDir, logName(started)) : undefined;
	if (options.logDir) await makeLogDir(options.logDir);
	const logFile = (stream: string) => (logBase === undefined ? undefined : { path: `${logBase}.${stream}.log`, cap: options.logCapBytes ?? LOG_CAP_BYTES });
	const stdout = new OutputSink(options.maxOutputBytes, logFile('stdout'));
	const stderr = new OutputSink(options.maxOutputBytes, logFile('stderr'));
	try {
		const child = await spawnInto(shell, options.cwd, stdout, stderr);
		const group = child.pid === undefined ? undefined : markedGroup(mark, child.pid);
		if (group) options.onStart?.(group);
		feedStdin(child, options.stdin);
		const outcome = await supervise(child, group, options, [stdout, stderr], shell);
		const [out, err] = await Promise.all([stdout.finish(), stderr.finish()]);
		return { ...outcome, durationMs: Date.now() - started, stdout: out, stderr: err, pid: child.pid };
	} finally {
		stdout.release();
		stderr.release();
	}
}

/** The command's log folder, or a refusal before anything runs: its full output would have nowhere to go. */
async function makeLogDir(logDir: string): Promise<void> {
	try {
		await fs.promises.mkdir(logDir, { recursive: true, mode: 0o700 });
	} catch (error) {
		throw new ToolError('io', `The command was not run: the folder for its output log, ${logDir}, could not be made (${(error as Error).message}). Tell the user: Toolbelt's storage folder must be writable and have free space.`);
	}
}

/** Starts the shell with its stdout and stderr read by the sinks: through sockets where it can, else Node's pipes. */
async function spawnInto(shell: Launch, cwd: string, stdout: OutputSink, stderr: OutputSink): Promise<ChildProcess> {
	const sockets = await outputSockets([stdout.reader(), stderr.reader()]);
	if (!sockets) {
		const child = spawnLaunch(shell, cwd);
		stdout.readStream(child.stdout!);
		stderr.readStream(child.stderr!);
		return child;
	}
	const [out, err] = sockets;
	stdout.readSocket(out.ours);
	stderr.readSocket(err.ours);
	try {
		return spawnLaunch(shell, cwd, ['pipe', out.theirs, err.theirs]);
	} finally {
		// The command has its own copies now: ours would keep the streams open after it ends.
		out.theirs.destroy();
		err.theirs.destroy();
	}
}

function feedStdin(child: ChildProcess, text: string | undefined): void {
	const stdin = child.stdin!;
	// The command may exit without reading its input: that EPIPE is not our failure.
	stdin.on('error', () => undefined);
	stdin.end(text);
}

type Outcome = Pick<RunResult, 'end' | 'exitCode' | 'signal' | 'leftRunning' | 'pipesHeld' | 'escaped'>;

/**
 * Waits for the shell to exit (or the timeout, or the cancel), then for the drain. A timeout or
 * cancel stops the group and the processes carrying the command's mark that left it. `group` is
 * undefined when the shell did not start (the child's 'error' event follows).
 */
function supervise(child: ChildProcess, group: MarkedGroup | undefined, options: RunOptions, sinks: OutputSink[], shell: ShellInvocation): Promise<Outcome> {
	const timeoutMs = Math.min(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
	const graceMs = options.graceMs ?? KILL_GRACE_MS;
	const drainMs = options.drainMs ?? DRAIN_MS;
	return new Promise<Outcome>((resolve, reject) => {
		let end: RunEnd = 'exit';
		let stopping: Promise<void> | undefined;
		const stop = (why: RunEnd) => {
			if (stopping || group === undefined) return;
			end = why;
			stopping = Promise.all([
				terminateGroup(group.pgid, graceMs),
				terminateEscaped(group, graceMs),
			]).then(() => undefined);
		};
		const timer = setTimeout(() => stop('timeout'), timeoutMs);
		const onAbort = () => stop('cancelled');
		options.signal?.addEventListener('abort', onAbort);
		if (options.signal?.aborted) onAbort();
		const cleanup = () => {
			clearTimeout(timer);
			options.signal?.removeEventListener('abort', onAbort);
		};
		child.once('error', error => {
			cleanup();
			const code = (error as NodeJS.ErrnoException).code;
			// Node reports a missing or unreadable cwd as a failure to spawn the shell itself.
			reject(new SpawnError(code, `The command could not be started: ${error.message} (the shell is ${shell.file}, the folder ${options.cwd}).`));
		});
		child.once('exit', (exitCode, signal) => {
			cleanup();
			void (async () => {
				const drained = await Promise.race([Promise.all(sinks.map(sink => sink.closed)).then(() => true), delay(drainMs).then(() => false)]);
				await stopping;
				const pid = child.pid!;
				// bwrap reports the exit while its PID namespace is still being torn down (a few ms): wait for that.
				if (options.sandbox?.endsWithProgram) await waitUntilGone(pid, graceMs, 1);
				// On a timeout or cancel the whole group is gone by now; after a normal exit, what is
				// left was started in the background on purpose and keeps running.
				const leftRunning = !stopping && groupAlive(pid);
				// In bwrap they ended with its PID namespace: no need to look through /proc (about 2 ms per 100 processes).
				const escaped = stopping || options.sandbox?.endsWithProgram ? [] : escapedMembers(group!);
				const exit = options.sandbox?.readExit({ exitCode, signal }) ?? { exitCode, signal };
				resolve({ end, ...exit, leftRunning, pipesHeld: !drained, escaped });
			})();
		});
	});
}

/**
 * Sortable by time, unique without a counter (several tool hosts may share one process and one
 * folder): `20261121-093001-123-4242-9f3a1c2e`.
 */
function logName(now: number): string {
	return `${compactStamp(now, true)}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/**
 * `<storageDir>/commands`, where command logs go. Only the path: the folder is made by the
 * boundary builder (workspaceBoundary) and again by runProcess before it writes a log.
 */
export function commandLogDir(storageDir: string): string {
	return path.join(storageDir, 'commands');
}

/** Log files kept in a commands folder (two per command at most). */
const LOGS_KEPT = 400;
/** Prune the folder every this many commands (and on the first). */
const PRUNE_EVERY = 25;

/** One tool host's command logs: the folder, and how many commands ran since it was last pruned. */
export class CommandLogs {
	private commandsRun = 0;

	constructor(readonly dir: string) {}

	/** Before each command: on the first and then every PRUNE_EVERY-th, keeps the newest LOGS_KEPT logs. */
	async beforeCommand(): Promise<void> {
		if (this.commandsRun++ % PRUNE_EVERY === 0) await pruneLogs(this.dir, LOGS_KEPT);
	}
}

/** Keeps the newest `keep` files of a log folder; best effort (another window may be pruning too). */
export async function pruneLogs(dir: string, keep: number): Promise<number> {
	let names: string[];
	try {
		names = (await fs.promises.readdir(dir)).filter(name => name.endsWith('.log'));
	} catch {
		return 0;
	}
	if (names.length <= keep) return 0;
	const stats = await Promise.all(names.map(async name => ({ name, mtime: await fs.promises.stat(path.join(dir, name)).then(s => s.mtimeMs, () => 0) })));
	stats.sort((a, b) => b.mtime - a.mtime || b.name.localeCompare(a.name));
	const doomed = stats.slice(keep);
	await Promise.all(doomed.map(entry => fs.promises.rm(path.join(dir, entry.name), { force: true })));
	return doomed.length;
}
