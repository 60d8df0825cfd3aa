/**
 * Where lines start in big files, learnt while reading them, so a second read deep into the same
 * file version costs a seek and one chunk instead of a scan from the top.
 *
 * The index is sparse: one checkpoint per chunk scanned (the byte offset of the chunk and how many
 * newlines precede it), thinned to every other checkpoint when a file has too many. It belongs to
 * one version of one file (size, modification and change times, inode); any change starts a new one.
 */

/** Checkpoints kept per file; past this every other one is dropped (a 1 GiB file: 1 per MB). */
const MAX_CHECKPOINTS = 1024;
/** Files remembered; the least recently read is forgotten first. */
const MAX_FILES = 16;

export interface FileIdentity {
	readonly size: number;
	readonly mtimeMs: number;
	readonly ctimeMs: number;
	readonly ino: number;
}

export interface Checkpoint {
	/** Byte offset (never inside a UTF-8 sequence's reading: the scan only counts newlines). */
	readonly byte: number;
	/** Newlines before `byte`: the line that holds `byte` is number `newlines + 1`. */
	readonly newlines: number;
}

export class LineIndex {
	/** Sorted by byte (and so by newlines). */
	private checkpoints: Checkpoint[] = [{ byte: 0, newlines: 0 }];
	/** Lines in the whole file, once counted. */
	totalLines: number | undefined;

	constructor(readonly identity: FileIdentity) {}

	/** The last checkpoint from which line `line` (1-based) can be reached by scanning forward. */
	before(line: number): Checkpoint {
		const list = this.checkpoints;
		let low = 0;
		let high = list.length - 1;
		while (low < high) {
			const middle = (low + high + 1) >> 1;
			if (list[middle].newlines <= line - 1) low = middle;
			else high = middle - 1;
		}
		return list[low];
	}

	/** Records that `newlines` newlines precede byte `byte` (checkpoints arrive in any order). */
	record(byte: number, newlines: number): void {
		const list = this.checkpoints;
		const last = list[list.length - 1];
		if (byte > last.byte) list.push({ byte, newlines });
		else {
			const at = list.findIndex(point => point.byte >= byte);
			if (list[at].byte === byte) return;
			list.splice(at, 0, { byte, newlines });
		}
		if (list.length > MAX_CHECKPOINTS) this.checkpoints = list.filter((_, index) => index % 2 === 0);
	}
}

/** The line indexes of the files read lately, one per file version. */
export class LineIndexes {
	private readonly byPath = new Map<string, LineIndex>();

	/** The index for this version of the file: the remembered one, or a new empty one. */
	forFile(absolute: string, identity: FileIdentity): LineIndex {
		const known = this.byPath.get(absolute);
		this.byPath.delete(absolute);
		const index = known && sameVersion(known.identity, identity) ? known : new LineIndex(identity);
		this.byPath.set(absolute, index);
		if (this.byPath.size > MAX_FILES) this.byPath.delete(this.byPath.keys().next().value!);
		return index;
	}
}

function sameVersion(a: FileIdentity, b: FileIdentity): boolean {
	return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;
}
