import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { contains } from '../files/paths';
import { SANDBOX_TMP } from './bwrap';
import type { Sandbox } from './runtime';

/**
 * When a sandboxed command failed because of the sandbox, one sentence that says so and names the
 * way forward, read from what the command printed. Only what the sandbox causes is named: a
 * read-only file system, a denied path outside the writable places, a hidden path, a network that
 * is off, or bwrap's own complaint.
 */

const NETWORK_FAILURE = /Network is unreachable|Could not resolve host|Temporary failure in name resolution|Name or service not known|getaddrinfo|ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED|Connection refused|nodename nor servname/i;
const READ_ONLY = /Read-only file system|EROFS/;
const DENIED = /Permission denied|Operation not permitted|EACCES|EPERM/;
const MISSING = /No such file or directory|ENOENT/;
const ESCALATE = 'run it again with sandbox: false and a justification (the user is asked)';

export function explainBlocked(output: string, sandbox: Sandbox): string | undefined {
	const policy = sandbox.policy;
	if (sandbox.kind === 'none' || !policy || output === '') return undefined;
	const lines = output.split('\n');
	const setup = lines.find(line => line.startsWith('bwrap: '));
	if (setup) return `Sandbox: the sandbox could not be set up (${setup.trim().slice(0, 200)}); tell the user, or ${ESCALATE}.`;
	if (!policy.network && NETWORK_FAILURE.test(output)) {
		return `Sandbox: network access is off for commands (toolbelt.sandbox.network is "off"), which is likely why a connection failed; if the task needs the network, ask the user to set toolbelt.sandbox.network to "on", or ${ESCALATE}.`;
	}
	// Only a complaint about a hidden path counts: a listing that merely names one (ps, env) does not.
	const complaints = lines.filter(line => MISSING.test(line) || DENIED.test(line));
	const hidden = policy.mounts.filter(mount => mount.access === 'hide')
		.find(mount => complaints.some(line => line.includes(mount.path) || line.includes(tildeForm(mount.path))));
	if (hidden) return `Sandbox: ${hidden.path} is hidden from commands (toolbelt.sandbox.denyRead); if the task truly needs it, ${ESCALATE}.`;
	const hostTmp = sandbox.kind === 'bwrap' ? lines.filter(line => MISSING.test(line)).flatMap(pathsIn).find(found => inHostTmp(found, sandbox)) : undefined;
	if (hostTmp) return `Sandbox: ${hostTmp} is in the host's /tmp, which commands do not see (they get a private /tmp of their own); use a folder inside the workspace, or ${ESCALATE}.`;
	const blockedWrite = lines.some(line => READ_ONLY.test(line) || (DENIED.test(line) && pathsIn(line).some(found => !writable(found, sandbox))));
	if (blockedWrite) {
		return `Sandbox: a write was blocked; commands may change only the workspace folders (not protected paths such as .git or .env files) and $TMPDIR. Write there instead, or ${ESCALATE}.`;
	}
	return undefined;
}

function tildeForm(absolute: string): string {
	const home = os.homedir();
	return contains(home, absolute) && absolute !== home ? `~${absolute.slice(home.length)}` : absolute;
}

/** Absolute paths a message names: `cannot create '/x/y': …`, `/x/y: Permission denied`. */
function pathsIn(line: string): string[] {
	return Array.from(line.matchAll(/(?:^|[\s'"`‘(])(\/[^\s'"`’):]+)/g), match => match[1]);
}

function writable(target: string, sandbox: Sandbox): boolean {
	const policy = sandbox.policy!;
	const places = [...policy.mounts.filter(mount => mount.access === 'write').map(mount => mount.path), SANDBOX_TMP, ...(policy.tmpDir ? [policy.tmpDir] : [])];
	const readOnly = policy.mounts.filter(mount => mount.access !== 'write').map(mount => mount.path);
	return places.some(place => contains(place, target)) && !readOnly.some(place => contains(place, target));
}

/** A path under /tmp that exists on the host (or whose folder does) but is not mounted in the sandbox. */
function inHostTmp(target: string, sandbox: Sandbox): boolean {
	const shown = sandbox.policy!.mounts.some(mount => contains(mount.path, target));
	if (shown || !contains(SANDBOX_TMP, target) || target === SANDBOX_TMP) return false;
	return fs.existsSync(target) || (path.dirname(target) !== SANDBOX_TMP && fs.existsSync(path.dirname(target)));
}
