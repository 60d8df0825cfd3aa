import { asBuffer } from './bytes';
import { DiskBytes, DiskSplice } from './diskBytes';

/**
 * A file's new bytes kept as pieces: views into its old bytes, with the new text between them.
 * An exact edit of one line in a 50 MB file then copies nothing: the atomic write hands the pieces
 * to the kernel as they are, and the diff finds the unchanged ends from where the pieces still sit
 * in the old bytes. Fresh memory is what such an edit cost most (a new 50 MB buffer is paged in on
 * first touch, which took longer than reading the file); whole() joins the pieces, once, for the
 * few consumers that need one buffer (the editor's workspace edit, a virtual file system).
 */
export class SplicedBytes {
	readonly byteLength: number;
	private joined: Buffer | undefined;

	private constructor(
		/** The old bytes the pieces are cut from. */
		readonly base: Buffer,
		readonly pieces: readonly Buffer[],
	) {
		this.byteLength = pieces.reduce((sum, piece) => sum + piece.length, 0);
	}

	/** The old bytes unchanged, as one piece. */
	static of(bytes: Uint8Array): SplicedBytes {
		const base = asBuffer(bytes);
		return new SplicedBytes(base, base.length > 0 ? [base] : []);
	}

	/** The bytes as one buffer (joined on the first call). */
	whole(): Buffer {
		this.joined ??= this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces, this.byteLength);
		return this.joined;
	}

	/** A copy of bytes [from, to): a window for a search, or a diff's changed middle. */
	slice(from: number, to: number): Buffer {
		return Buffer.concat(this.views(from, to));
	}

	/**
	 * Where `needle` next occurs at or after `from` (-1: nowhere), found inside a piece by the
	 * native search, or across the joins of pieces in a small window around each join.
	 */
	indexOf(needle: Buffer, from: number): number {
		// A window of the needle's size is copied at each join: past the size of the whole, the
		// joined bytes (made once, kept) cost less to search.
		if (this.pieces.length > 1 && this.pieces.length * needle.length > this.byteLength) return this.whole().indexOf(needle, from);
		let start = 0;
		for (const piece of this.pieces) {
			const end = start + piece.length;
			if (end > from) {
				const local = Math.max(0, from - start);
				const inside = piece.indexOf(needle, local);
				if (inside !== -1) return start + inside;
				// A match that starts in this piece's last bytes and runs on into the next pieces (the
				// window ends a byte short of holding a whole needle past this piece).
				const crossFrom = Math.max(local, piece.length - needle.length + 1);
				const across = this.slice(start + crossFrom, Math.min(this.byteLength, end + needle.length - 1)).indexOf(needle);
				if (across !== -1) return start + crossFrom + across;
			}
			start = end;
		}
		return -1;
	}

	/** These bytes with `length` bytes at each of `starts` (ascending, not overlapping) replaced by `replacement`. */
	replaced(starts: readonly number[], length: number, replacement: Buffer): SplicedBytes {
		const pieces: Buffer[] = [];
		let from = 0;
		for (const start of starts) {
			pieces.push(...this.views(from, start));
			if (replacement.length > 0) pieces.push(replacement);
			from = start + length;
		}
		pieces.push(...this.views(from, this.byteLength));
		return new SplicedBytes(this.base, pieces);
	}

	/** How many bytes at the start are the old bytes in their old place (at most the shared prefix). */
	unchangedPrefix(): number {
		let at = 0;
		for (const piece of this.pieces) {
			if (!this.inPlace(piece, at)) break;
			at += piece.length;
		}
		return at;
	}

	/** How many bytes at the end are the old bytes at the same distance from the end. */
	unchangedSuffix(): number {
		let at = this.byteLength;
		for (let index = this.pieces.length - 1; index >= 0; index--) {
			const piece = this.pieces[index];
			if (!this.inPlace(piece, at - piece.length + this.base.length - this.byteLength)) break;
			at -= piece.length;
		}
		return this.byteLength - at;
	}

	/** Whether the pieces, joined, are exactly the old bytes. */
	equalsBase(): boolean {
		if (this.byteLength !== this.base.length) return false;
		let at = 0;
		for (const piece of this.pieces) {
			if (!this.inPlace(piece, at) && !piece.equals(this.base.subarray(at, at + piece.length))) return false;
			at += piece.length;
		}
		return true;
	}

	/** Whether `piece` is the very memory of the old bytes at `offset`. */
	private inPlace(piece: Buffer, offset: number): boolean {
		// Inside the old bytes: small buffers share Node's pool, so a new piece may sit just past them.
		if (offset < 0 || offset + piece.length > this.base.length) return false;
		return piece.buffer === this.base.buffer && piece.byteOffset === this.base.byteOffset + offset;
	}

	/** Views (no copies) of the pieces covering bytes [from, to). */
	private views(from: number, to: number): Buffer[] {
		const views: Buffer[] = [];
		let start = 0;
		for (const piece of this.pieces) {
			// The part of this piece inside [from, to); an empty one is no piece (two matches side by side
			// leave nothing of the old bytes between them).
			const first = Math.max(0, from - start);
			const end = Math.min(piece.length, to - start);
			if (first < end) views.push(piece.subarray(first, end));
			start += piece.length;
			if (start >= to) break;
		}
		return views;
	}
}

/** A file's new bytes in a change: one buffer, pieces (see SplicedBytes), or a file on disk with one range replaced (see DiskSplice). */
export type FileBytes = Uint8Array | SplicedBytes | DiskSplice;

/** The bytes as one buffer: pieces are joined (once); a file left on disk is read again (checked against its digest). */
export function wholeBytes(bytes: FileBytes | DiskBytes): Uint8Array {
	return bytes instanceof SplicedBytes || bytes instanceof DiskSplice || bytes instanceof DiskBytes ? bytes.whole() : bytes;
}

/** The bytes as the buffers to write one after another, without joining them. */
export function byteParts(bytes: Uint8Array | SplicedBytes): readonly Uint8Array[] {
	return bytes instanceof SplicedBytes ? bytes.pieces : [bytes];
}
