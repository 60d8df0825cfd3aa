import * as path from 'node:path';
import { isPending } from '../context';
import type { ChangeState, PendingCall } from '../context';
import type { ToolResult } from '../results/result';

/**
 * Serializes work on files through one tool host: each call waits for the calls before it on any
 * of the same paths, then holds them until `work` settles. Locks are taken for all paths at once
 * (never one after another), so two calls on overlapping sets cannot deadlock. `held`: lock keys
 * the caller already holds (a commit's, from its planning: see ChangeContext.heldLocks), not
 * taken again.
 */
export async function withFileLocks<T>(state: ChangeState, paths: readonly string[], work: () => Promise<T>, held?: ReadonlySet<string>): Promise<T> {
	const lock = await lockFiles(state, paths, held);
	try {
		return await work();
	} finally {
		lock.unlock();
	}
}

/**
 * withFileLocks for a tool's planning. When the plan is a pending call, the locks stay held until
 * it is committed or released: a call no one is asked about reads, computes and writes as one
 * step (twenty edits at once all land), while the registry releases them before a person is asked
 * (the commit then takes them again and checks the bytes).
 */
export async function planWithFileLocks(state: ChangeState, paths: readonly string[], work: () => Promise<ToolResult | PendingCall>): Promise<ToolResult | PendingCall> {
	const lock = await lockFiles(state, paths, undefined);
	let outcome: ToolResult | PendingCall;
	try {
		outcome = await work();
	} catch (error) {
		lock.unlock();
		throw error;
	}
	if (!isPending(outcome)) {
		lock.unlock();
		return outcome;
	}
	const planned = outcome;
	let held = true;
	const release = () => {
		held = false;
		lock.unlock();
		planned.release?.();
	};
	return {
		pending: true,
		request: planned.request,
		settlesOnCancel: planned.settlesOnCancel,
		release,
		commit: (ctx, confirmed) => {
			if (!held) return planned.commit(ctx, confirmed);
			// The commit's own locks on these paths are the ones this call already holds: handed to it
			// in its context (an AsyncLocalStorage would do it too, but its promise hooks, once on, tax
			// every promise the process makes: ~35 ms of a 200-file patch in an earlier profile).
			const heldLocks = new Set([...(ctx.heldLocks ?? []), ...lock.keys]);
			return planned.commit({ ...ctx, heldLocks }, confirmed).finally(release);
		},
	};
}

async function lockFiles(state: ChangeState, paths: readonly string[], held: ReadonlySet<string> | undefined): Promise<{ keys: string[]; unlock: () => void }> {
	const keys = [...new Set(paths.map(absolute => lockKey(absolute)))].filter(key => !held?.has(key));
	const previous = keys.map(key => state.fileLocks.get(key));
	let release!: () => void;
	const mine = new Promise<void>(resolve => { release = resolve; });
	for (const key of keys) state.fileLocks.set(key, mine);
	// Safe to call twice: a lock is deleted only while it is still this call's own.
	const unlock = () => {
		release();
		for (const key of keys) if (state.fileLocks.get(key) === mine) state.fileLocks.delete(key);
	};
	await Promise.all(previous);
	return { keys, unlock };
}

/** One key per file: the path resolved, and on Windows and macOS (names match whatever their case) folded to lower case. */
export function lockKey(absolute: string, platform: NodeJS.Platform = process.platform): string {
	const resolved = path.resolve(absolute);
	return platform === 'win32' || platform === 'darwin' ? resolved.toLowerCase() : resolved;
}
