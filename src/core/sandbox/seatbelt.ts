import { contains } from '../files/paths';
import type { Program } from './bwrap';
import type { Mount, SandboxPolicy } from './policy';

/**
 * A policy as a macOS `sandbox-exec` profile (Seatbelt's SBPL). Paths are passed as parameters
 * (`-D W0=/path`, read in the profile with `(param "W0")`), so no path is ever quoted into the
 * profile text. With a `host` base everything is allowed except what the rules deny: only deny
 * rules follow `(allow default)`, so no question of which rule wins arises.
 *
 * What macOS cannot do here, said in the README: /tmp cannot be swapped for a private folder (the
 * private one is TMPDIR and /tmp is not writable), and there are no PID namespaces: a daemon that
 * leaves the process group outlives the command.
 */

/** Device files any program writes to. */
const DEVICE_WRITES = [
	'(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/tty")', '(literal "/dev/dtracehelper")',
	'(regex #"^/dev/ttys[0-9]+$")', '(regex #"^/dev/fd/[0-9]+$")',
];

/** What a program needs to load at all, for an `empty` base. */
const SYSTEM_READS = ['(subpath "/System")', '(subpath "/usr/lib")', '(subpath "/private/var/db/dyld")', '(subpath "/Library/Apple")', '(literal "/dev/null")', '(literal "/dev/urandom")'];

export interface SeatbeltProfile {
	readonly profile: string;
	/** Parameter name → path, given to sandbox-exec as `-D name=path`. */
	readonly params: Readonly<Record<string, string>>;
}

export function seatbeltProfile(policy: SandboxPolicy): SeatbeltProfile {
	const params: Record<string, string> = {};
	const counts = new Map<string, number>();
	const ref = (prefix: string, mount: Pick<Mount, 'path' | 'directory' | 'access'>): string => {
		const index = counts.get(prefix) ?? 0;
		counts.set(prefix, index + 1);
		const name = `${prefix}${index}`;
		params[name] = mount.path;
		return mount.access === 'hide' && !mount.directory ? `(literal (param "${name}"))` : `(subpath (param "${name}"))`;
	};
	const of = (access: Mount['access']) => policy.mounts.filter(mount => mount.access === access);
	const lines = ['(version 1)'];
	if (policy.base === 'host') {
		lines.push('(allow default)');
		const writable = [...of('write').map(mount => ref('W', mount)), ...(policy.tmpDir ? [ref('T', { path: policy.tmpDir, access: 'write' })] : []), ...DEVICE_WRITES];
		lines.push(`(deny file-write* (require-not (require-any ${writable.join(' ')})))`);
		const readOnly = of('read').map(mount => ref('R', mount));
		if (readOnly.length) lines.push(`(deny file-write* ${readOnly.join(' ')})`);
	} else {
		lines.push('(deny default)', '(allow process-exec process-fork sysctl-read file-read-metadata)', '(allow signal (target same-sandbox))');
		lines.push(`(allow file-read* ${[...of('read').map(mount => ref('R', mount)), ...SYSTEM_READS].join(' ')})`);
		lines.push(`(allow file-write-data ${DEVICE_WRITES.slice(0, 2).join(' ')})`);
	}
	for (const hidden of of('hide')) {
		// What stays readable inside a hidden folder: this workspace's command logs in the storage.
		const inside = of('read').filter(mount => mount.path !== hidden.path && contains(hidden.path, mount.path));
		const target = ref('H', hidden);
		const rule = inside.length ? `(require-all ${target} (require-not (require-any ${inside.map(mount => ref('K', mount)).join(' ')})))` : target;
		lines.push(`(deny file-read* file-write* ${rule})`);
	}
	if (!policy.network) lines.push('(deny network*)');
	return { profile: lines.join('\n'), params };
}

export function seatbeltProgram(sandboxExec: string, policy: SandboxPolicy, program: Program): Program {
	const { profile, params } = seatbeltProfile(policy);
	const defines = Object.entries(params).map(([name, value]) => `-D${name}=${value}`);
	return { file: sandboxExec, args: ['-p', profile, ...defines, program.file, ...program.args] };
}
