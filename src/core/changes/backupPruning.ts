import * as fs from 'node:fs';
import * as path from 'node:path';
import { BACKUP_FOLDER } from './backups';

/**
 * Keeps the backup folder (`<storageDir>/backups/<set>/`) within the person's limits
 * (`toolbelt.backups.maxAgeDays`, `toolbelt.backups.maxTotalMB`): sets older than the age go,
 * then the oldest go until the total fits. The newest set always stays — it may be the only way
 * back from the change just made, however large it is.
 */

export interface PruneLimits {
	/** 0 or less: no age limit. */
	readonly maxAgeDays: number;
	/** 0 or less: no size limit. */
	readonly maxTotalBytes: number;
	readonly now?: number;
}

export interface PruneReport {
	readonly kept: number;
	readonly removed: number;
	readonly freedBytes: number;
	readonly keptBytes: number;
}

interface SetOnDisk {
	readonly dir: string;
	readonly createdAt: number;
	readonly bytes: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export async function pruneBackups(storageDir: string, limits: PruneLimits): Promise<PruneReport> {
	const sets = await setsOnDisk(path.join(storageDir, BACKUP_FOLDER));
	const now = limits.now ?? Date.now();
	const doomed = new Set<SetOnDisk>();
	const [newest, ...older] = sets;
	if (limits.maxAgeDays > 0) {
		for (const set of older) if (now - set.createdAt > limits.maxAgeDays * DAY_MS) doomed.add(set);
	}
	if (limits.maxTotalBytes > 0) {
		let total = sets.filter(set => !doomed.has(set)).reduce((sum, set) => sum + set.bytes, 0);
		for (const set of [...older].reverse()) {
			if (total <= limits.maxTotalBytes) break;
			if (doomed.has(set)) continue;
			doomed.add(set);
			total -= set.bytes;
		}
	}
	let freedBytes = 0;
	for (const set of doomed) {
		await fs.promises.rm(set.dir, { recursive: true, force: true }).catch(() => undefined);
		freedBytes += set.bytes;
	}
	const keptSets = newest ? sets.filter(set => !doomed.has(set)) : [];
	return { kept: keptSets.length, removed: doomed.size, freedBytes, keptBytes: keptSets.reduce((sum, set) => sum + set.bytes, 0) };
}

/** Every set folder, newest first, with its size. A folder without a readable manifest dates from its mtime. */
async function setsOnDisk(root: string): Promise<SetOnDisk[]> {
	const entries = await fs.promises.readdir(root, { withFileTypes: true }).catch(() => []);
	const sets: SetOnDisk[] = [];
	for (const entry of entries) {
		if (!entry.isDirectory()) continue;
		const dir = path.join(root, entry.name);
		const files = await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []);
		let bytes = 0;
		for (const file of files) {
			if (file.isFile()) bytes += (await fs.promises.stat(path.join(dir, file.name)).catch(() => ({ size: 0 }))).size;
		}
		sets.push({ dir, createdAt: await createdAt(dir), bytes });
	}
	return sets.sort((a, b) => b.createdAt - a.createdAt || b.dir.localeCompare(a.dir));
}

async function createdAt(dir: string): Promise<number> {
	try {
		const manifest = JSON.parse(await fs.promises.readFile(path.join(dir, 'manifest.json'), 'utf8'));
		if (typeof manifest.createdAt === 'number') return manifest.createdAt;
	} catch {
		// Fall back to the folder's own time.
	}
	return (await fs.promises.stat(dir)).mtimeMs;
}
