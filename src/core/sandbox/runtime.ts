import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../results/errors';
import { findOnPath } from '../commands/process';
import type { SandboxSettings } from '../policy/settings';
import { bwrapProgram, Program, SANDBOX_TMP } from './bwrap';
import { commandPolicy, CommandPolicyInput, readOnlySearchPolicy, SandboxPolicy } from './policy';
import { HeldPlaceholders, holdPlaceholders } from './placeholders';
import { seatbeltProgram } from './seatbelt';

/**
 * The OS sandbox every process Toolbelt starts runs in: bubblewrap on Linux, sandbox-exec on
 * macOS, none on Windows (said in each result's metadata and once in the log).
 *
 * Why our own arguments and not @anthropic-ai/sandbox-runtime (which wraps the same two tools):
 * that package is a 0.0.x research preview with a process-wide manager, ships ~9 MB of per-platform
 * binaries (seccomp helpers, a Windows service) and HTTP/SOCKS proxies with a MITM certificate
 * authority for domain allow-lists, and hands back a shell string. We need none of the proxies
 * (network is on or off), and we need what it does not give: the argv itself (so our process-group
 * kill and pty sessions keep working), a PID namespace that ends with the call, read-only binds
 * for the protected paths found in the workspace, and a policy we can unit-test as data. The
 * bwrap arguments and the SBPL profile are a few hundred lines we own (policy.ts, bwrap.ts,
 * seatbelt.ts).
 */

export type SandboxKind = 'bwrap' | 'sandbox-exec' | 'none';
export type NoSandboxReason = 'off' | 'escalated' | 'unavailable' | 'unsupported';

/** What differs per host; every field has a default. */
export interface SandboxHostOptions {
	/** bubblewrap (default: `bwrap` on PATH, else /usr/bin/bwrap); tests point it at a missing file. */
	readonly bwrapPath?: string;
	readonly platform?: NodeJS.Platform;
	readonly homeDir?: string;
	/**
	 * Hidden from commands: the folder holding every workspace's Toolbelt storage (in VS Code the
	 * editor's user data). Default: this workspace's storage folder. Its command logs stay readable.
	 */
	readonly storageRoot?: string;
	/** Told once per host when commands cannot be sandboxed here (VS Code: the Toolbelt log). */
	warn?(message: string): void;
	/** How long the probe may take before it is no answer (default 5 s); tests shorten it. */
	readonly probeTimeoutMs?: number;
}

type Runtime =
	| { readonly kind: 'bwrap'; readonly bwrap: string; readonly env?: string }
	| { readonly kind: 'sandbox-exec'; readonly sandboxExec: string };

type Availability =
	| { readonly ok: true; readonly runtime: Runtime }
	/**
	 * `fix`: what gets this host a sandbox, when anything does. `unanswered`: the probe did not end
	 * in time (a busy machine), which says nothing either way: it is asked again next time, and
	 * meanwhile nothing runs, never unconfined.
	 */
	| { readonly ok: false; readonly reason: string; readonly fix?: string; readonly unsupported?: boolean; readonly unanswered?: boolean };

/** How a command will run, decided before the person is asked (the request says which). */
export type SandboxDecision =
	| { readonly kind: 'bwrap' | 'sandbox-exec'; readonly runtime: Runtime }
	| { readonly kind: 'none'; readonly why: NoSandboxReason; readonly detail: string };

export interface Sandbox {
	readonly kind: SandboxKind;
	readonly why?: NoSandboxReason;
	/** Why there is none, in words. */
	readonly detail?: string;
	readonly policy?: SandboxPolicy;
	/** The walk for protected paths saw the whole workspace (it stops at a bound). */
	readonly scanComplete: boolean;
	/** Every process the program starts ends with it (a PID namespace): nothing can be left running. */
	readonly endsWithProgram: boolean;
	/** Variables the program gets: its TMPDIR. */
	readonly env: Readonly<Record<string, string>>;
	/** How the program ended, from how what was started ended. */
	readExit<E extends ProgramExit>(exit: E): E;
	/** What to start in place of `program`, run in `cwd`. */
	wrap<P extends Program>(program: P, cwd: string): P;
	/**
	 * Protected paths (real, absolute) the program created where the sandbox could not guard them
	 * before they existed (`*.pem`, a nested `.env.local`): call once it is gone.
	 */
	createdProtected(): Promise<string[]>;
	/** Removes the private temp folder and the placeholders of missing protected paths (once the program is gone). */
	dispose(): Promise<void>;
}

export interface ProgramExit {
	readonly exitCode: number | null;
	readonly signal: NodeJS.Signals | null;
}

const SANDBOX_EXEC = '/usr/bin/sandbox-exec';
const PROBE_MS = 5_000;
const INSTALL_BWRAP = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';

const probes = new Map<string, Promise<Availability>>();
/** The probes that have answered, for a search that must not wait for one (see readOnlySearch). */
const answered = new Map<string, Availability>();
const warned = new WeakSet<SandboxHostOptions>();

/** The platform and bubblewrap a host uses, and the key its probe is kept under. */
function hostTools(host: SandboxHostOptions): { platform: NodeJS.Platform; bwrap: string; key: string } {
	const platform = host.platform ?? process.platform;
	const bwrap = host.bwrapPath ?? findOnPath('bwrap', process.env) ?? '/usr/bin/bwrap';
	return { platform, bwrap, key: `${platform}\0${bwrap}` };
}

/**
 * Forgets every probe's answer. For tests only: mutation testing runs the tests once per planted
 * bug in one process, and a probe answered under a bug in the bubblewrap arguments would otherwise
 * answer for every later run ("not sandboxed"), failing tests for a bug they do not have.
 */
export function forgetSandboxProbes(): void {
	probes.clear();
	answered.clear();
}

/** Whether this host can sandbox, probed once per host and tool path: `bwrap … true` must run. */
export function sandboxAvailability(host: SandboxHostOptions = {}): Promise<Availability> {
	const { platform, bwrap, key } = hostTools(host);
	let probe = probes.get(key);
	if (!probe) {
		probe = probeRuntime(platform, bwrap, host.probeTimeoutMs ?? PROBE_MS).then(availability => {
			if (availability.ok === false && availability.unanswered) probes.delete(key);
			else answered.set(key, availability);
			return availability;
		});
		probes.set(key, probe);
	}
	return probe;
}

async function probeRuntime(platform: NodeJS.Platform, bwrap: string, timeoutMs: number): Promise<Availability> {
	if (platform === 'linux') return probeBwrap(bwrap, timeoutMs);
	if (platform === 'darwin') {
		const result = await runBriefly({ file: SANDBOX_EXEC, args: ['-p', '(version 1)(allow default)', '/usr/bin/true'] }, timeoutMs);
		if (result.ok) return { ok: true, runtime: { kind: 'sandbox-exec', sandboxExec: SANDBOX_EXEC } };
		if (result.timedOut) return unanswered('sandbox-exec', timeoutMs);
		return { ok: false, reason: `sandbox-exec does not work here (${result.problem})` };
	}
	const name = platform === 'win32' ? 'Windows' : platform;
	return { ok: false, unsupported: true, reason: `${name} has no sandbox Toolbelt can use` };
}

async function probeBwrap(bwrap: string, timeoutMs: number): Promise<Availability> {
	if (!fs.existsSync(bwrap)) return { ok: false, reason: `bubblewrap (${bwrap}) is not installed`, fix: INSTALL_BWRAP };
	const trial: SandboxPolicy = { base: 'host', mounts: [], network: false };
	const env = findOnPath('env', process.env);
	if (env) {
		const shielded = await runBriefly(bwrapProgram({ bwrap, env }, trial, '/', { file: 'true', args: [] }), timeoutMs);
		if (shielded.ok) return { ok: true, runtime: { kind: 'bwrap', bwrap, env } };
		if (shielded.timedOut) return unanswered('bubblewrap', timeoutMs);
	}
	const plain = await runBriefly(bwrapProgram({ bwrap }, trial, '/', { file: 'true', args: [] }), timeoutMs);
	if (plain.ok) return { ok: true, runtime: { kind: 'bwrap', bwrap } };
	if (plain.timedOut) return unanswered('bubblewrap', timeoutMs);
	return {
		ok: false,
		reason: `bubblewrap cannot create its namespaces here (${plain.problem})`,
		fix: 'allow unprivileged user namespaces for bwrap (some containers, and Ubuntu\'s AppArmor policy, forbid them)',
	};
}

function unanswered(what: string, timeoutMs: number): Availability {
	return { ok: false, unanswered: true, reason: `the check that ${what} works gave no answer within ${formatSeconds(timeoutMs)} (the machine may be busy)` };
}

function formatSeconds(ms: number): string {
	return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * Runs a probe with a deadline; `problem` is the first line it complained with. At the deadline it
 * is killed and answers at once (timedOut), not when whatever it left holding its pipe ends.
 */
function runBriefly(program: Program, timeoutMs: number): Promise<{ ok: boolean; problem: string; timedOut?: boolean }> {
	return new Promise(resolve => {
		const child = spawn(program.file, program.args, { stdio: ['ignore', 'ignore', 'pipe'] });
		let stderr = '';
		child.stderr!.on('data', (chunk: Buffer) => { if (stderr.length < 4096) stderr += chunk.toString('utf8'); });
		const timer = setTimeout(() => {
			child.kill('SIGKILL');
			resolve({ ok: false, problem: 'no answer in time', timedOut: true });
		}, timeoutMs);
		child.once('error', error => {
			clearTimeout(timer);
			resolve({ ok: false, problem: error.message });
		});
		child.once('close', (code, signal) => {
			clearTimeout(timer);
			const said = stderr.split('\n').find(line => line.trim() !== '')?.trim();
			resolve({ ok: code === 0, problem: said ?? (signal ? `ended by ${signal}` : `exit code ${code}`) });
		});
	});
}

const ESCALATED: SandboxDecision = { kind: 'none', why: 'escalated', detail: 'the call asked to run outside the sandbox (sandbox: false)' };

/**
 * Decides how a command runs. `escalate`: the call asked to run outside (sandbox: false). Throws
 * when the mode is `required` and this host has no sandbox, saying what to install.
 */
export async function decideSandbox(settings: SandboxSettings, host: SandboxHostOptions = {}, escalate = false): Promise<SandboxDecision> {
	if (settings.mode === 'off') return { kind: 'none', why: 'off', detail: 'toolbelt.sandbox.mode is "off"' };
	const available = await sandboxAvailability(host);
	if (!available.ok) {
		if (available.unanswered) {
			if (escalate) return ESCALATED;
			throw new ToolError('sandbox_unavailable', `A command runs in the sandbox where one works, but ${available.reason}. Nothing was run. Try again in a moment: the check runs again.`);
		}
		if (settings.mode === 'required') {
			const fix = available.fix ? `${available.fix}, or to ` : '';
			throw new ToolError('sandbox_unavailable', `Commands must run in a sandbox here (toolbelt.sandbox.mode is "required"), but ${available.reason}. Nothing was run. Tell the user to ${fix}set toolbelt.sandbox.mode to "auto" (commands then run without one).`);
		}
		if (host.warn && !warned.has(host)) {
			warned.add(host);
			host.warn(`Commands run without a sandbox: ${available.reason}.${available.fix ? ` To confine them, ${available.fix}.` : ''}`);
		}
		return { kind: 'none', why: available.unsupported ? 'unsupported' : 'unavailable', detail: available.reason };
	}
	if (escalate) return ESCALATED;
	return { kind: available.runtime.kind, runtime: available.runtime };
}

/**
 * The sandbox of one command or session: a private temp folder and the policy built for this
 * moment's workspace (protected paths as they exist now). Dispose it when the program is gone.
 */
export async function openSandbox(decision: SandboxDecision, input: Omit<CommandPolicyInput, 'tmpDir' | 'platform' | 'home'>, host: SandboxHostOptions = {}): Promise<Sandbox> {
	if (decision.kind === 'none') {
		return { kind: 'none', why: decision.why, detail: decision.detail, scanComplete: true, endsWithProgram: false, env: {}, readExit: exit => exit, wrap: program => program, createdProtected: async () => [], dispose: async () => undefined };
	}
	// By real path: macOS's temp folder is under /var, a link to /private/var, and profiles match real paths.
	const tmpDir = await fs.promises.realpath(await fs.promises.mkdtemp(path.join(os.tmpdir(), 'toolbelt-sandbox-')));
	let placeholders: HeldPlaceholders | undefined;
	const dispose = async () => {
		placeholders?.release();
		await fs.promises.rm(tmpDir, { recursive: true, force: true }).catch(() => undefined);
	};
	try {
		const made = await commandPolicy({ ...input, tmpDir, home: host.homeDir ?? os.homedir(), platform: host.platform });
		const runtime = decision.runtime;
		// sandbox-exec denies a missing path as it is; bwrap needs something there to mount on.
		placeholders = runtime.kind === 'bwrap' ? holdPlaceholders(made.policy.mounts) : undefined;
		const policy = placeholders ? { ...made.policy, mounts: placeholders.mounts } : made.policy;
		const ours = new Set(placeholders?.paths);
		return {
			kind: runtime.kind,
			policy,
			scanComplete: made.scanComplete,
			createdProtected: async () => (await made.createdSince()).filter(found => !ours.has(found)),
			endsWithProgram: runtime.kind === 'bwrap',
			readExit: exit => (runtime.kind === 'bwrap' ? signalFromStatus(exit) : exit),
			env: { TMPDIR: runtime.kind === 'bwrap' ? SANDBOX_TMP : tmpDir },
			wrap: (program, cwd) => ({ ...program, ...confine(runtime, policy, cwd, program) }),
			dispose,
		};
	} catch (error) {
		await dispose();
		throw error;
	}
}

/**
 * bwrap exits with 128+N when its program was killed by signal N, as shells report it; read that
 * back as the signal. (A program that itself exits with such a code reads the same way.)
 */
function signalFromStatus<E extends ProgramExit>(exit: E): E {
	if (exit.signal || exit.exitCode === null || exit.exitCode <= 128) return exit;
	const signal = Object.entries(os.constants.signals).find(([, number]) => number === exit.exitCode! - 128)?.[0] as NodeJS.Signals | undefined;
	return signal ? { ...exit, exitCode: null, signal } : exit;
}

function confine(runtime: Runtime, policy: SandboxPolicy, cwd: string, program: Program): Program {
	return runtime.kind === 'bwrap' ? bwrapProgram(runtime, policy, cwd, program) : seatbeltProgram(runtime.sandboxExec, policy, program);
}

/**
 * `program` (ripgrep, for grep and find_files) confined to reading `folders`: nothing else of the
 * user's is visible, nothing is writable, no network. Undefined when this host has no sandbox.
 *
 * A search does not wait for the probe (a process of its own, ~9 ms, before a CLI's first search):
 * where bubblewrap is installed and no probe has answered yet, the search starts in it at once, and
 * only if bubblewrap fails to set it up does `searchSandboxFailed` probe to tell why. Nor does it
 * shield bwrap from the group's signals (`env`, two more programs to start): nothing sends ripgrep
 * one but our own SIGKILL.
 */
export async function readOnlySearch(program: Program, options: { folders: readonly string[]; cwd: string }, host: SandboxHostOptions = {}): Promise<Program | undefined> {
	const runtime = await searchRuntime(host);
	if (!runtime) return undefined;
	const policy = await readOnlySearchPolicy(options.folders, [path.dirname(program.file)]);
	return runtime.kind === 'bwrap' ? bwrapProgram({ bwrap: runtime.bwrap }, policy, options.cwd, program) : confine(runtime, policy, options.cwd, program);
}

async function searchRuntime(host: SandboxHostOptions): Promise<Runtime | undefined> {
	const { platform, bwrap, key } = hostTools(host);
	const known = answered.get(key);
	if (known) return known.ok ? known.runtime : undefined;
	if (platform === 'linux' && fs.existsSync(bwrap)) return { kind: 'bwrap', bwrap };
	const available = await sandboxAvailability(host);
	if (available.ok) return available.runtime;
	// No answer in time says nothing either way: as for a command, nothing runs unconfined for it.
	if (available.unanswered) throw new ToolError('io', `The search sandbox could not be checked: ${available.reason}. Nothing was searched. Try again in a moment.`);
	return undefined;
}

/** True when a confined program printed nothing and ended with the sandbox's own complaint: it never started. */
export function sandboxFailedToStart(stderr: string): boolean {
	return /^(bwrap|sandbox-exec): /.test(stderr);
}

/**
 * After a search's sandbox failed to start: resolves when this host has no sandbox after all (the
 * search then runs plainly, as it does where none can be had); throws when the probe says the
 * sandbox works, since searching unconfined then would break the promise silently.
 */
export async function searchSandboxFailed(stderr: string, host: SandboxHostOptions = {}): Promise<void> {
	const available = await sandboxAvailability(host);
	if (!available.ok && !available.unanswered) return;
	const said = stderr.split('\n')[0].trim();
	throw new ToolError('io', `The search sandbox could not be set up (${said}), so nothing was searched. Try again; if it keeps failing, tell the user (with toolbelt.sandbox.mode "off" searches run without it).`);
}
