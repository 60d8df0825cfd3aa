import type { PendingCall } from '../core/context';

/** How long a previewed call waits for its invocation. Chat invokes right after the person answers. */
export const PENDING_CALL_TTL_MS = 10 * 60_000;
/** Previewed calls kept at once: chat previews one call at a time, so a few cover parallel sessions. */
export const MAX_PENDING_CALLS = 16;

/**
 * Calls previewed for chat's confirmation, kept for the invocation that follows (VS Code calls
 * `prepareInvocation` then `invoke` with the same input). Keyed by tool and canonical input; a new
 * preview of the same call supersedes the old one, and an entry no invocation takes expires, so an
 * abandoned confirmation holds nothing for long (and never a lock: plans hold none).
 */
export class PendingCalls {
	private readonly entries = new Map<string, { call: PendingCall; expiresAt: number }>();

	constructor(private readonly now: () => number = Date.now) {}

	keep(tool: string, input: unknown, call: PendingCall): void {
		this.dropExpired();
		const key = keyOf(tool, input);
		this.entries.delete(key);
		this.entries.set(key, { call, expiresAt: this.now() + PENDING_CALL_TTL_MS });
		for (const oldest of this.entries.keys()) {
			if (this.entries.size <= MAX_PENDING_CALLS) break;
			this.entries.delete(oldest);
		}
	}

	/** The previewed call for this input, removed from the store: each preview is committed at most once. */
	take(tool: string, input: unknown): PendingCall | undefined {
		this.dropExpired();
		const key = keyOf(tool, input);
		const entry = this.entries.get(key);
		this.entries.delete(key);
		return entry?.call;
	}

	get size(): number {
		this.dropExpired();
		return this.entries.size;
	}

	private dropExpired(): void {
		const now = this.now();
		for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
	}
}

function keyOf(tool: string, input: unknown): string {
	return `${tool}\u0000${canonicalJson(input)}`;
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same call. */
export function canonicalJson(value: unknown): string {
	return JSON.stringify(value, (_key, item) => (item && typeof item === 'object' && !Array.isArray(item)
		? Object.fromEntries(Object.keys(item).sort().map(name => [name, item[name]]))
		: item));
}
