import * as path from 'node:path';
import type { SandboxPolicy } from './policy';

/**
 * A policy as bubblewrap (`bwrap`) arguments, for Linux.
 * - `--ro-bind / /` then the mounts, shallow before deep, so a workspace inside a hidden folder
 *   shows again and a protected `.git` inside the workspace stays read-only; at the same path,
 *   hiding wins. Hidden folders become empty read-only tmpfs, hidden files /dev/null.
 * - A private /tmp (the policy's tmpDir), a fresh /dev (no host terminals to type into) and /proc.
 * - `--unshare-pid`: the command's whole tree lives in a PID namespace whose init is bwrap; when
 *   the command exits, or bwrap dies, the kernel kills every process left in it, `setsid` and
 *   double-forked daemons included. `--die-with-parent` ties that init to the outer bwrap.
 * - `--unshare-net` when the network is off: only a private loopback.
 * - `--cap-drop ALL`: run as root, bwrap would otherwise keep capabilities, and a command could
 *   simply unmount the read-only binds.
 */

export interface Program {
	readonly file: string;
	readonly args: readonly string[];
}

/**
 * Signals a terminal or our own timeout sends to the whole process group. The outer bwrap ignores
 * them, so Ctrl-C reaches the program rather than ending the sandbox, and a timeout's SIGTERM lets
 * it clean up; the program gets them back at their defaults. SIGHUP (a session being stopped, or
 * its terminal gone) and SIGKILL end bwrap, and with it everything inside at once: an interactive
 * shell has moved to a process group of its own, which a group signal would not reach.
 */
const SHIELDED_SIGNALS = 'INT,QUIT,TSTP,TERM';

/** Where the private temp folder appears inside. */
export const SANDBOX_TMP = '/tmp';

const ORDER = { write: 0, read: 1, hide: 2 } as const;

export function bwrapArgs(policy: SandboxPolicy, cwd: string, program: Program): string[] {
	const args = ['--die-with-parent', '--cap-drop', 'ALL', '--unshare-pid'];
	if (!policy.network) args.push('--unshare-net');
	if (policy.base === 'host') args.push('--ro-bind', '/', '/');
	args.push('--dev', '/dev', '--proc', '/proc');
	const steps = policy.mounts.map(mount => ({ path: mount.path, rank: ORDER[mount.access], args: mountArgs(mount.access, mount.path, mount.directory) }));
	if (policy.tmpDir) steps.push({ path: SANDBOX_TMP, rank: ORDER.write, args: ['--bind', policy.tmpDir, SANDBOX_TMP] });
	steps.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
	for (const step of steps) args.push(...step.args);
	// Last: the mount points of deeper binds are made inside these folders before they turn read-only.
	for (const mount of policy.mounts) if (mount.access === 'hide' && mount.directory) args.push('--remount-ro', mount.path);
	args.push('--chdir', cwd, '--', program.file, ...program.args);
	return args;
}

function mountArgs(access: 'write' | 'read' | 'hide', target: string, directory?: boolean): string[] {
	switch (access) {
		case 'write': return ['--bind', target, target];
		// -try: a protected file removed since the policy was made has nothing left to protect.
		case 'read': return ['--ro-bind-try', target, target];
		case 'hide': return directory ? ['--tmpfs', target] : ['--ro-bind', '/dev/null', target];
	}
}

function depth(absolute: string): number {
	return absolute.split(path.sep).filter(Boolean).length;
}

/**
 * The program to start: bwrap running `program`, wrapped in `env` when it can shield bwrap from
 * the group's signals (coreutils 8.31+; without it, Ctrl-C in a session ends the session).
 */
export function bwrapProgram(tools: { bwrap: string; env?: string }, policy: SandboxPolicy, cwd: string, program: Program): Program {
	if (!tools.env) return { file: tools.bwrap, args: bwrapArgs(policy, cwd, program) };
	const restored: Program = { file: tools.env, args: [`--default-signal=${SHIELDED_SIGNALS}`, program.file, ...program.args] };
	return { file: tools.env, args: [`--ignore-signal=${SHIELDED_SIGNALS}`, tools.bwrap, ...bwrapArgs(policy, cwd, restored)] };
}
