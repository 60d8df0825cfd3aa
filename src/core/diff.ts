import { createTwoFilesPatch, structuredPatch } from 'diff';
import type { FileChange } from './context';

/** Bytes as text for a diff; undefined for content that is not text. */
function asText(bytes: Uint8Array | null): string {
	return bytes ? new TextDecoder('utf-8').decode(bytes) : '';
}

/** A unified diff of one change, with a/ and b/ paths as git prints them. */
export function unifiedDiff(change: FileChange, context = 3): string {
	const from = change.before ? `a/${change.displayPath}` : '/dev/null';
	const to = change.after ? `b/${change.movedTo?.displayPath ?? change.displayPath}` : '/dev/null';
	const patch = createTwoFilesPatch(from, to, asText(change.before), asText(change.after), undefined, undefined, { context });
	// The library starts with a line of '=' under an Index header; git's shape is easier to read.
	return patch.replace(/^=+\n/m, '');
}

export function unifiedDiffs(changes: readonly FileChange[], context = 3): string {
	return changes.map(change => unifiedDiff(change, context)).join('\n');
}

/** Lines added and removed by a change. */
export function diffStat(change: FileChange): { added: number; removed: number } {
	const patch = structuredPatch('a', 'b', asText(change.before), asText(change.after), undefined, undefined, { context: 0 });
	let added = 0;
	let removed = 0;
	for (const hunk of patch.hunks) {
		for (const line of hunk.lines) {
			if (line.startsWith('+')) added++;
			else if (line.startsWith('-')) removed++;
		}
	}
	return { added, removed };
}
