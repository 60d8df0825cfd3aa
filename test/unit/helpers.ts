import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ApprovalRequest, FileChange } from '../../src/core/context';
import { createNodeEnvironment, NodeEnvironmentOptions } from '../../src/core/nodeHost';
import { resultText, ToolResult } from '../../src/core/results/result';
import { ALL_TOOLS, InvokeOptions, ToolRegistry } from '../../src/tools';
import { removeWhenTheRunEnds } from './tempRoot';

/**
 * A real temporary folder (in `parent`, default the OS temp folder) with the given files; removed by
 * `cleanup`, or when the run ends for a test that made another in its place.
 */
export function makeTree(files: Record<string, string | Uint8Array> = {}, parent = os.tmpdir()): { root: string; cleanup(): void; file(rel: string): string } {
	const root = fs.realpathSync(fs.mkdtempSync(path.join(parent, 'tb-')));
	removeWhenTheRunEnds(root);
	for (const [rel, content] of Object.entries(files)) {
		const target = path.join(root, rel);
		fs.mkdirSync(path.dirname(target), { recursive: true });
		fs.writeFileSync(target, content);
	}
	return {
		root,
		cleanup: () => {
			stopProcessesIn(root);
			fs.rmSync(root, { recursive: true, force: true });
		},
		file: rel => path.join(root, rel),
	};
}

/** A change of `rel` in a tree as the change pipeline takes it (null: the file does not exist before / after). */
export function fileChange(tree: { file(rel: string): string }, rel: string, before: string | null, after: string | null, movedTo?: string): FileChange {
	return {
		path: tree.file(rel),
		displayPath: rel,
		before: before === null ? null : new Uint8Array(Buffer.from(before)),
		after: after === null ? null : new Uint8Array(Buffer.from(after)),
		...(movedTo ? { movedTo: { path: tree.file(movedTo), displayPath: movedTo } } : {}),
	};
}

/** Every entry under a folder with its text ('<dir>' for folders, '<other>' for links and the like): to compare before and after. */
export function snapshotTree(folder: string): Record<string, string> {
	const files: Record<string, string> = {};
	for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
		const full = path.join(entry.parentPath ?? entry.path, entry.name);
		files[path.relative(folder, full)] = entry.isFile() ? fs.readFileSync(full, 'utf8') : entry.isDirectory() ? '<dir>' : '<other>';
	}
	return files;
}

/**
 * SIGKILLs every process whose working folder is `folder` or inside it (Linux: found in /proc), so a
 * test whose command or session was not stopped (a bug under test) leaves nothing behind.
 */
export function stopProcessesIn(folder: string): void {
	if (process.platform !== 'linux') return;
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		let cwd: string;
		try {
			cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
		} catch {
			continue;
		}
		if (cwd !== folder && !cwd.startsWith(`${folder}${path.sep}`)) continue;
		try {
			process.kill(Number(entry), 'SIGKILL');
		} catch {
			// Gone meanwhile.
		}
	}
}

export interface Harness {
	registry: ToolRegistry;
	/** Every approval request the tools made, in order. */
	asked: ApprovalRequest[];
	invoke(name: string, input: unknown, options?: InvokeOptions): Promise<ToolResult>;
	/** Invokes and returns the text; throws when the tool reported an error. */
	text(name: string, input: unknown, options?: InvokeOptions): Promise<string>;
	/** Invokes and returns the error message; throws when the tool succeeded. */
	error(name: string, input: unknown, options?: InvokeOptions): Promise<{ code: string; message: string }>;
	/** Stops the host's sessions and commands still running, as disposing of the tool host does. */
	stopSessions(): Promise<void>;
}

/**
 * A registry over real folders with the Node host. Approvals are granted unless `approve`
 * says otherwise; each request is recorded in `asked`.
 */
export function makeHarness(
	roots: string | string[],
	options: Omit<NodeEnvironmentOptions, 'roots'> & { approve?: boolean } = {},
): Harness {
	const asked: ApprovalRequest[] = [];
	const env = createNodeEnvironment({
		storageDir: testStorageDir(),
		...options,
		roots: Array.isArray(roots) ? roots : [roots],
		confirm: async request => {
			asked.push(request);
			return options.approve ?? true;
		},
	});
	const registry = new ToolRegistry(ALL_TOOLS, env);
	const invoke = (name: string, input: unknown, invokeOptions?: InvokeOptions) => registry.invoke(name, input, invokeOptions);
	return {
		registry,
		asked,
		invoke,
		text: async (name, input, invokeOptions) => {
			const result = await invoke(name, input, invokeOptions);
			if (result.error) throw new Error(`${name} failed: ${result.error.message}`);
			return resultText(result);
		},
		error: async (name, input, invokeOptions) => {
			const result = await invoke(name, input, invokeOptions);
			if (!result.error) throw new Error(`${name} succeeded but an error was expected:\n${resultText(result)}`);
			return result.error;
		},
		stopSessions: () => env.state.sessions.dispose(),
	};
}

/**
 * For a suite of command tests outside the sandbox: a fresh tree and harness for each test, and
 * after it the sessions stopped (within `deadlineMs`) and any process left in the tree killed.
 */
export function unsandboxedCommands(deadlineMs: number): { readonly tree: ReturnType<typeof makeTree>; readonly h: Harness } {
	let tree: ReturnType<typeof makeTree> | undefined;
	let h: Harness | undefined;
	beforeEach(() => {
		tree = makeTree();
		h = makeHarness(tree.root, { settings: { sandbox: { mode: 'off' } } });
	});
	afterEach(async () => {
		await withDeadline(h!.stopSessions(), deadlineMs, 'dispose did not return');
		stopProcessesIn(tree!.root);
		tree!.cleanup();
	});
	return { get tree() { return tree!; }, get h() { return h!; } };
}

/** A storage folder (backups, command logs) for a tool host of a test, removed when the run ends. */
export function testStorageDir(): string {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-storage-'));
	removeWhenTheRunEnds(dir);
	return dir;
}

/**
 * Settles as `work` does, or rejects with `what` after `ms`. Tests that stop processes race their
 * own deadline, well inside mocha's timeout: a bug that keeps a process alive then fails the test
 * at once, and its cleanup still runs, instead of the run hanging.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const deadline = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what} (still pending after ${ms} ms)`)), ms);
	});
	return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Makes a file or folder read-only, for root too (who ignores permission bits: `chattr +i` then).
 * Returns the undo, or undefined where that cannot be done (no chattr, or a file system without it).
 */
export function makeReadOnly(target: string): (() => void) | undefined {
	if (process.getuid?.() !== 0) {
		const mode = fs.statSync(target).mode & 0o777;
		fs.chmodSync(target, mode & ~0o222);
		return () => fs.chmodSync(target, mode);
	}
	try {
		execFileSync('chattr', ['+i', target], { stdio: 'ignore' });
	} catch {
		return undefined;
	}
	return () => execFileSync('chattr', ['-i', target], { stdio: 'ignore' });
}

/**
 * Skips a test that needs a working sandbox where there is none (no bubblewrap, no namespaces), so
 * the suite runs anywhere; but where one is expected (TOOLBELT_EXPECT_SANDBOX, set by `npm test`
 * on Linux and by the mutation runs) its absence fails instead: a planted bug that breaks
 * bubblewrap's arguments must fail these tests, not skip them.
 */
export function needsSandbox(context: Mocha.Context, available: { ok: boolean; reason?: string } | undefined): void {
	if (process.platform === 'linux' && available?.ok) return;
	if (process.env.TOOLBELT_EXPECT_SANDBOX) throw new Error(`A working sandbox was expected (TOOLBELT_EXPECT_SANDBOX): ${available && !available.ok ? available.reason : `none on ${process.platform}`}`);
	context.skip();
}

/** Polls `check` every 20 ms until it holds or `ms` pass; its last answer. */
export async function until(check: () => boolean, ms: number): Promise<boolean> {
	const deadline = Date.now() + ms;
	while (!check() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20));
	return check();
}

/** Whether a process with exactly this command line runs (Linux /proc). */
export function commandLineRuns(commandLine: string): boolean {
	for (const pid of fs.readdirSync('/proc').filter(name => /^\d+$/.test(name))) {
		try {
			if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() === commandLine) return true;
		} catch {
			// Gone between the listing and the read.
		}
	}
	return false;
}
