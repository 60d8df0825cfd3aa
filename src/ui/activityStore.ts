import * as fsSync from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { CommandExit, ToolEvent, ToolStatus } from '../core/context';
import { brokenCopyPath } from '../core/plan/planDocument';
import { PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE } from '../core/files/storage';
import { truncateText } from '../core/results/truncate';

/**
 * The history behind the Activity view: one record per tool call, newest first, bounded, kept in
 * a JSON file in the workspace's storage so it survives a window reload. A file that cannot be
 * read is set aside (`.broken-<time>`) and replaced; it never stops the extension from starting.
 */

export interface ActivityRecord {
	readonly id: string;
	readonly tool: string;
	readonly status: ToolStatus;
	readonly startedAt: number;
	readonly mutating: boolean;
	readonly target?: string;
	readonly durationMs?: number;
	/** Of durationMs, the time the call waited for the person to confirm it. */
	readonly waitedMs?: number;
	/** How the command of a command tool ended. */
	readonly exit?: CommandExit;
	readonly bytes?: number;
	readonly truncated?: boolean;
	/** The input as pretty JSON, capped. */
	readonly inputText?: string;
	/** The result as the model saw it, capped (the registry already caps it). */
	readonly resultText?: string;
	readonly error?: { readonly code: string; readonly message: string };
	readonly filesTouched?: readonly string[];
	/** The backup set of the call's change: what "open the diff" compares the files with. */
	readonly backupSet?: string;
}

export const DEFAULT_MAX_RECORDS = 200;
/** An input (a whole file for write_file) is kept only in part: the view shows, it does not replay. */
const INPUT_CHARS = 8 * 1024;
const FORMAT_VERSION = 1;
const STATUSES: readonly ToolStatus[] = ['running', 'waiting', 'done', 'failed', 'declined', 'cancelled'];

export interface LoadedStore {
	readonly store: ActivityStore;
	/** Set when the file could not be used; say it to the person once. */
	readonly problem?: string;
}

export class ActivityStore {
	private list: ActivityRecord[];
	private readonly listeners = new Set<() => void>();
	private saveTimer: ReturnType<typeof setTimeout> | undefined;
	private saving: Promise<void> = Promise.resolve();

	/** Writes started, and the newest one whose file is in place: an older one never replaces it. */
	private writes = 0;
	private landed = 0;

	private constructor(readonly file: string, records: ActivityRecord[], readonly max: number, private readonly saveDelayMs: number) {
		this.list = records.slice(0, max);
	}

	/** An empty store that never touches the disk (tests, no workspace storage). */
	static inMemory(max = DEFAULT_MAX_RECORDS): ActivityStore {
		return new ActivityStore('', [], max, 0);
	}

	static async load(file: string, options: { max?: number; saveDelayMs?: number; now?: Date } = {}): Promise<LoadedStore> {
		const max = options.max ?? DEFAULT_MAX_RECORDS;
		const make = (records: ActivityRecord[]) => new ActivityStore(file, records, max, options.saveDelayMs ?? 500);
		let text: string;
		try {
			text = await fs.readFile(file, 'utf8');
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { store: make([]) };
			return { store: make([]), problem: `The activity history (${file}) could not be read (${(error as Error).message}); starting a new one.` };
		}
		const parsed = parseRecords(text);
		if ('problem' in parsed) {
			const kept = await setAside(file, options.now ?? new Date());
			return {
				store: make([]),
				problem: `The activity history was unreadable (${parsed.problem}) and has been replaced${kept ? `; the old file is kept as ${kept}` : ''}.`,
			};
		}
		const store = make(parsed.records.map(interrupted));
		const dropped = parsed.dropped ? `${parsed.dropped} unreadable entr${parsed.dropped === 1 ? 'y was' : 'ies were'} dropped from the activity history.` : undefined;
		return { store, problem: dropped };
	}

	/** Newest first. */
	records(): readonly ActivityRecord[] {
		return this.list;
	}

	get(id: string): ActivityRecord | undefined {
		return this.list.find(record => record.id === id);
	}

	onDidChange(listener: () => void): { dispose(): void } {
		this.listeners.add(listener);
		return { dispose: () => this.listeners.delete(listener) };
	}

	/** Folds a registry event in: a start adds a running row, an update changes its status, an end completes it. */
	record(event: ToolEvent, mutating: boolean): ActivityRecord {
		const existing = this.list.findIndex(record => record.id === event.id);
		const previous = existing >= 0 ? this.list[existing] : undefined;
		const next: ActivityRecord = {
			...previous,
			id: event.id,
			tool: event.tool,
			status: event.status,
			startedAt: event.startedAt,
			mutating,
			...defined({
				target: event.target ?? previous?.target,
				durationMs: event.durationMs,
				waitedMs: event.waitedMs,
				exit: event.exit,
				bytes: event.bytes,
				truncated: event.truncated,
				inputText: previous?.inputText ?? inputText(event.input),
				resultText: event.resultText,
				error: event.error,
				filesTouched: event.filesTouched,
				backupSet: event.backupSet,
			}),
		};
		if (previous) this.list[existing] = next;
		else this.list.unshift(next);
		if (this.list.length > this.max) this.list.length = this.max;
		this.changed();
		return next;
	}

	clear(): void {
		this.list = [];
		this.changed();
	}

	/** Writes pending changes now (deactivation, tests). */
	async flush(): Promise<void> {
		if (this.saveTimer) {
			clearTimeout(this.saveTimer);
			this.saveTimer = undefined;
			this.saving = this.saving.then(() => this.write());
		}
		await this.saving;
	}

	/**
	 * Writes pending changes before returning (deactivation: the extension host may stop before an
	 * asynchronous write finishes).
	 */
	flushSync(): void {
		if (!this.saveTimer) return;
		clearTimeout(this.saveTimer);
		this.saveTimer = undefined;
		const temp = tempFor(this.file);
		const sequence = ++this.writes;
		try {
			fsSync.mkdirSync(path.dirname(this.file), { recursive: true, mode: PRIVATE_FOLDER_MODE });
			fsSync.writeFileSync(temp, this.serialize(), { mode: PRIVATE_FILE_MODE });
			fsSync.renameSync(temp, this.file);
			this.landed = sequence;
		} catch {
			fsSync.rmSync(temp, { force: true });
		}
	}

	private serialize(): string {
		return JSON.stringify({ version: FORMAT_VERSION, records: this.list });
	}

	private changed(): void {
		for (const listener of this.listeners) listener();
		if (!this.file || this.saveTimer) return;
		// Bursts of events (a start and its end, parallel calls) become one write.
		this.saveTimer = setTimeout(() => {
			this.saveTimer = undefined;
			this.saving = this.saving.then(() => this.write());
		}, this.saveDelayMs);
	}

	private async write(): Promise<void> {
		const text = this.serialize();
		const temp = tempFor(this.file);
		const sequence = ++this.writes;
		try {
			await fs.mkdir(path.dirname(this.file), { recursive: true, mode: PRIVATE_FOLDER_MODE });
			// The history holds tool inputs and results: as private as the backups.
			await fs.writeFile(temp, text, { mode: PRIVATE_FILE_MODE });
			// A later snapshot (the synchronous flush at deactivation) may have landed meanwhile.
			if (sequence < this.landed) {
				await fs.rm(temp, { force: true });
				return;
			}
			await fs.rename(temp, this.file);
			this.landed = sequence;
		} catch {
			// History is a convenience: a full disk must not break tool calls.
			await fs.rm(temp, { force: true }).catch(() => undefined);
		}
	}
}

/**
 * A temp name of its own for every write: the synchronous flush at deactivation may run while an
 * asynchronous write is still open, and a shared name would let that write land in the new file.
 */
function tempFor(file: string): string {
	return `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
}

type Parsed = { records: ActivityRecord[]; dropped: number } | { problem: string };

export function parseRecords(text: string): Parsed {
	let data: any;
	try {
		data = JSON.parse(text);
	} catch (error) {
		return { problem: `not valid JSON: ${(error as Error).message}` };
	}
	if (!data || typeof data !== 'object' || !Array.isArray(data.records)) return { problem: 'no "records" list' };
	if (data.version !== FORMAT_VERSION) return { problem: `unknown format version ${JSON.stringify(data.version)}` };
	const records = data.records.filter(isRecord);
	return { records, dropped: data.records.length - records.length };
}

function isRecord(value: any): value is ActivityRecord {
	return !!value && typeof value === 'object'
		&& typeof value.id === 'string' && typeof value.tool === 'string'
		&& STATUSES.includes(value.status) && typeof value.startedAt === 'number' && typeof value.mutating === 'boolean';
}

/** A call still running (or waiting for the person) when the window went away will never end. */
function interrupted(record: ActivityRecord): ActivityRecord {
	if (record.status !== 'running' && record.status !== 'waiting') return record;
	return { ...record, status: 'cancelled', error: { code: 'cancelled', message: 'The window closed before this call finished.' } };
}

async function setAside(file: string, now: Date): Promise<string | undefined> {
	const kept = brokenCopyPath(file, now);
	try {
		await fs.rename(file, kept);
		return path.basename(kept);
	} catch {
		await fs.rm(file, { force: true }).catch(() => undefined);
		return undefined;
	}
}

function inputText(input: unknown): string | undefined {
	if (input === undefined) return undefined;
	let text: string;
	try {
		text = JSON.stringify(input, null, 2) ?? String(input);
	} catch {
		text = String(input);
	}
	return truncateText(text, { maxBytes: INPUT_CHARS, maxLines: 400, keep: 'head' }).text;
}

function defined<T extends object>(fields: T): Partial<T> {
	return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
