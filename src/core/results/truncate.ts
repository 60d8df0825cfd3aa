import { asBuffer } from '../files/bytes';
import { countNewlines } from '../files/newlines';

/**
 * The one truncation module for every tool: byte and line caps, head/tail/middle strategies, the
 * omission marker and the metadata a result carries. Cuts never split a UTF-8 character.
 *
 * Counting conventions (shared by every function here):
 * - bytes are UTF-8 bytes;
 * - a line is a run of text ending in '\n' (which belongs to it) or the final run without one, so
 *   'a\nb' and 'a\nb\n' both have 2 lines and '' has 0;
 * - a line counts as omitted only when none of it is kept; a line cut in two (because it alone is
 *   larger than the byte cap) counts as kept, its dropped part shows up in the bytes.
 *
 * Marker wording: `[… 1,234 lines / 56 KB omitted …]`, `[… 56 KB omitted …]` when no whole line was
 * dropped (or lines are unknown), and a hint, when given, after a semicolon inside the brackets:
 * `[… 1,234 lines / 56 KB omitted; use offset=4001 to continue …]`. A hint is a whole phrase that
 * starts with a verb ("use offset=4001 to continue", "see the full log with read_file path=…").
 */

export interface TruncationInfo {
	truncated: boolean;
	totalBytes: number;
	totalLines: number;
	keptBytes: number;
	keptLines: number;
	bytesOmitted: number;
	linesOmitted: number;
}

export type KeepStrategy = 'head' | 'tail' | 'middle';

export interface TruncateOptions {
	/** Cap on the bytes of the original text that are kept; the marker (under 120 bytes) comes on top. */
	maxBytes: number;
	/** Cap on the lines kept. */
	maxLines: number;
	keep: KeepStrategy;
	/** For 'middle': the head's share of both caps (default 0.25, the tail gets the rest). */
	headShare?: number;
	/** Builds the continuation hint from what was dropped; undefined for none. */
	hint?: (info: TruncationInfo) => string | undefined;
}

export interface Truncated {
	text: string;
	info: TruncationInfo;
}

const NEWLINE = 0x0a;
const UNITS = ['KB', 'MB', 'GB', 'TB'];

/** `512 B`, `56 KB`, `1.2 MB`: 1024-based, one decimal below 10 units, none above. */
export function formatBytes(n: number): string {
	if (n < 1024) return `${n} B`;
	let value = n / 1024;
	let unit = 0;
	while (unit < UNITS.length - 1 && roundForDisplay(value) >= 1024) {
		value /= 1024;
		unit++;
	}
	// Rounded to one decimal at most, so `1.5` or `12`, never `1.0`.
	return `${formatCount(roundForDisplay(value))} ${UNITS[unit]}`;
}

function roundForDisplay(value: number): number {
	return value < 10 ? Math.round(value * 10) / 10 : Math.round(value);
}

/** `1,234,567`: fixed separators so output does not depend on the host's locale. */
export function formatCount(n: number): string {
	// Most counts shown (a patch's added and removed lines per file) have no thousands: no regex for them.
	if (Number.isInteger(n) && n > -1000 && n < 1000) return String(n);
	const [whole, fraction] = String(n).split('.');
	const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** `1 file`, `2,000 files`. */
export function plural(n: number, word: string): string {
	return `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** The marker put where text was dropped. See the module comment for the wording. */
export function omittedMarker(o: { lines?: number; bytes?: number; hint?: string }): string {
	const parts: string[] = [];
	const lines = o.lines ?? 0;
	if (lines > 0) parts.push(plural(lines, 'line'));
	if (o.bytes !== undefined) parts.push(formatBytes(o.bytes));
	const what = parts.length > 0 ? `${parts.join(' / ')} omitted` : 'text omitted';
	return `[… ${what}${o.hint ? `; ${o.hint}` : ''} …]`;
}

function isContinuation(byte: number): boolean {
	return (byte & 0xc0) === 0x80;
}

/** Length of the sequence a lead byte starts; 1 for ASCII and for bytes that cannot lead one. */
function sequenceLength(lead: number): number {
	if (lead >= 0xf0 && lead <= 0xf7) return 4;
	if (lead >= 0xe0) return lead <= 0xef ? 3 : 1;
	if (lead >= 0xc0) return 2;
	return 1;
}

/**
 * The largest n ≤ maxBytes such that buf[0..n) does not end inside a multi-byte UTF-8 sequence.
 * Looks back at most 3 bytes, so invalid input (binary) costs nothing and is cut where asked.
 */
export function utf8PrefixLength(buf: Uint8Array, maxBytes: number): number {
	const n = Math.max(0, Math.min(Math.floor(maxBytes), buf.length));
	for (let p = n - 1; p >= 0 && p >= n - 3; p--) {
		if (isContinuation(buf[p])) continue;
		return p + sequenceLength(buf[p]) > n ? p : n;
	}
	return n;
}

/** The smallest start s ≥ buf.length − maxBytes that is a character boundary. */
export function utf8SuffixStart(buf: Uint8Array, maxBytes: number): number {
	const first = Math.max(0, buf.length - Math.max(0, Math.floor(maxBytes)));
	let s = first;
	while (s < buf.length && s < first + 3 && isContinuation(buf[s])) s++;
	// Three continuation bytes in a row and still no lead: not UTF-8, so the first cut is as good as any.
	return s < buf.length && isContinuation(buf[s]) ? first : s;
}

/** Cuts one line to maxChars UTF-16 units (never inside a surrogate pair) and says how much went. */
export function cutLine(line: string, maxChars: number): { text: string; cut: boolean } {
	if (line.length <= maxChars) return { text: line, cut: false };
	let end = Math.max(0, Math.floor(maxChars));
	// At 0 the code is NaN, in no range.
	const code = line.charCodeAt(end - 1);
	if (code >= 0xd800 && code <= 0xdbff) end--;
	return { text: `${line.slice(0, end)} [… line cut: ${plural(line.length - end, 'more char')} …]`, cut: true };
}

/** Lines in a buffer, by the module's convention. */
export function countLines(buf: Uint8Array): number {
	if (buf.length === 0) return 0;
	return countNewlines(buf, 0, buf.length) + (buf[buf.length - 1] === NEWLINE ? 0 : 1);
}

/** Whole lines from `start` forward: where they end and how many, within both caps and `limit`. */
function takeHead(buf: Buffer, start: number, limit: number, maxLines: number, maxBytes: number): Span {
	let end = start;
	let lines = 0;
	while (end < limit && lines < maxLines) {
		const newline = buf.indexOf(NEWLINE, end);
		const next = newline === -1 || newline >= limit ? limit : newline + 1;
		if (next - start > maxBytes) break;
		end = next;
		lines++;
	}
	return { start, end, lines };
}

/** Whole lines back from `end`, not reaching below `limit`. */
function takeTail(buf: Buffer, end: number, limit: number, maxLines: number, maxBytes: number): Span {
	let start = end;
	let lines = 0;
	while (start > limit && lines < maxLines) {
		// The line before `start` ends at start-1 (its newline, or the end of the text).
		const newline = start - 2 >= limit ? buf.lastIndexOf(NEWLINE, start - 2) : -1;
		const previous = newline < limit ? limit : newline + 1;
		if (end - previous > maxBytes) break;
		start = previous;
		lines++;
	}
	return { start, end, lines };
}

interface Span {
	start: number;
	end: number;
	/** Lines with any part inside the span. */
	lines: number;
}

function split(limit: number, share: number): [number, number] {
	if (!Number.isFinite(limit)) return [Infinity, Infinity];
	const head = Math.floor(limit * share);
	return [head, limit - head];
}

/** Picks the kept spans: whole lines when any fit, else a UTF-8-safe piece of the edge line(s). */
function choose(buf: Buffer, opts: TruncateOptions): { head?: Span; tail?: Span } {
	const { maxBytes, maxLines, keep } = opts;
	const size = buf.length;
	if (keep === 'head') {
		const head = takeHead(buf, 0, size, maxLines, maxBytes);
		if (head.lines > 0 || maxLines < 1) return { head };
		return { head: headPiece(buf, maxBytes) };
	}
	if (keep === 'tail') {
		const tail = takeTail(buf, size, 0, maxLines, maxBytes);
		if (tail.lines > 0 || maxLines < 1) return { tail };
		return { tail: tailPiece(buf, maxBytes) };
	}
	return chooseMiddle(buf, maxBytes, maxLines, opts.headShare ?? 0.25);
}

/** Head gets its share of both caps first, the tail the rest, and the head anything the tail left. */
function chooseMiddle(buf: Buffer, maxBytes: number, maxLines: number, share: number): { head?: Span; tail?: Span } {
	const [headLines, tailLines] = split(maxLines, share);
	const [headBytes] = split(maxBytes, share);
	const first = takeHead(buf, 0, buf.length, headLines, headBytes);
	const tail = takeTail(buf, buf.length, first.end, tailLines, maxBytes - first.end);
	const more = takeHead(buf, first.end, tail.start, maxLines - first.lines - tail.lines, maxBytes - first.end - (tail.end - tail.start));
	const head = { start: 0, end: more.end, lines: first.lines + more.lines };
	if (head.lines + tail.lines > 0 || maxLines < 1) return { head, tail };
	return middleOfHugeLines(buf, maxLines, headBytes, maxBytes);
}

/**
 * No whole line fits (both edge lines are larger than the byte cap): keep the start of the first
 * line and the end of the last one, or both ends of the only line.
 */
function middleOfHugeLines(buf: Buffer, maxLines: number, headBytes: number, maxBytes: number): { head?: Span; tail?: Span } {
	const firstNewline = buf.indexOf(NEWLINE);
	const oneLine = firstNewline === -1 || firstNewline === buf.length - 1;
	if (maxLines < 2 && !oneLine) return { tail: tailPiece(buf, maxBytes) };
	const headEnd = utf8PrefixLength(buf, headBytes);
	const tailStart = Math.max(headEnd, utf8SuffixStart(buf, maxBytes - headEnd));
	const head = { start: 0, end: headEnd, lines: headEnd > 0 ? 1 : 0 };
	const tail = { start: tailStart, end: buf.length, lines: tailStart < buf.length ? 1 : 0 };
	// The two pieces of one line are still one kept line.
	if (oneLine && head.lines > 0) tail.lines = 0;
	return { head, tail };
}

function headPiece(buf: Buffer, maxBytes: number): Span {
	const end = utf8PrefixLength(buf, maxBytes);
	return { start: 0, end, lines: end > 0 ? 1 : 0 };
}

function tailPiece(buf: Buffer, maxBytes: number): Span {
	const start = utf8SuffixStart(buf, maxBytes);
	return { start, end: buf.length, lines: start < buf.length ? 1 : 0 };
}

/**
 * Caps text by lines, then by bytes, keeping the head, the tail or both ends, and puts the marker
 * where text was dropped. Text within both caps comes back unchanged with truncated=false.
 */
export function truncateText(text: string, opts: TruncateOptions): Truncated {
	const buf = Buffer.from(text);
	const totalLines = countLines(buf);
	if (buf.length <= opts.maxBytes && totalLines <= opts.maxLines) {
		return { text, info: untruncated(buf.length, totalLines) };
	}
	const { head, tail } = choose(buf, opts);
	const headBytes = head ? head.end - head.start : 0;
	const tailBytes = tail ? tail.end - tail.start : 0;
	const keptLines = (head?.lines ?? 0) + (tail?.lines ?? 0);
	const info: TruncationInfo = {
		truncated: true,
		totalBytes: buf.length,
		totalLines,
		keptBytes: headBytes + tailBytes,
		keptLines,
		bytesOmitted: buf.length - headBytes - tailBytes,
		linesOmitted: totalLines - keptLines,
	};
	const marker = omittedMarker({ lines: info.linesOmitted, bytes: info.bytesOmitted, hint: opts.hint?.(info) });
	const before = head ? buf.toString('utf8', head.start, head.end) : '';
	const after = tail ? buf.toString('utf8', tail.start, tail.end) : '';
	return { text: joinAroundMarker(before, marker, after), info };
}

/** The marker always sits on a line of its own. */
function joinAroundMarker(before: string, marker: string, after: string): string {
	const head = before === '' || before.endsWith('\n') ? before : `${before}\n`;
	return after === '' ? `${head}${marker}` : `${head}${marker}\n${after}`;
}

function untruncated(bytes: number, lines: number): TruncationInfo {
	return { truncated: false, totalBytes: bytes, totalLines: lines, keptBytes: bytes, keptLines: lines, bytesOmitted: 0, linesOmitted: 0 };
}

/** The part of a result's metadata that says what was cut. */
export function metadataOf(info: TruncationInfo): { truncated: boolean; bytesOmitted: number; linesOmitted: number } {
	return { truncated: info.truncated, bytesOmitted: info.bytesOmitted, linesOmitted: info.linesOmitted };
}

/**
 * Keeps the first headShare·maxBytes bytes of a stream and a ring of the last ones, so command
 * output of any size costs at most maxBytes of memory. Newlines are counted once, as bytes arrive:
 * those that fell out are the total less those still held, so the marker can say how many lines went.
 */
export class HeadTailBuffer {
	private readonly headCap: number;
	private readonly tailCap: number;
	private head: Uint8Array;
	private headLen = 0;
	/** Linear while it grows to tailCap, a ring (oldest byte at ringStart) once full. */
	private ring: Uint8Array;
	private ringStart = 0;
	private ringLen = 0;
	private total = 0;
	private dropped = 0;
	private newlines = 0;
	private lastByte = -1;

	constructor(readonly maxBytes: number, headShare = 0.25) {
		const cap = Math.max(0, Math.floor(maxBytes));
		this.headCap = Math.floor(cap * Math.min(1, Math.max(0, headShare)));
		this.tailCap = cap - this.headCap;
		// Grown on demand: most commands print far less than the cap.
		this.head = new Uint8Array(Math.min(this.headCap, 4096));
		this.ring = new Uint8Array(Math.min(this.tailCap, 4096));
	}

	get totalBytes(): number {
		return this.total;
	}

	/** Bytes that fell out between head and tail so far (before the UTF-8 trim of toText). */
	get droppedBytes(): number {
		return this.dropped;
	}

	/** Bytes held in memory (capacity of both stores); never more than maxBytes. */
	get retainedBytes(): number {
		return this.head.byteLength + this.ring.byteLength;
	}

	push(chunk: Uint8Array): void {
		if (chunk.length === 0) return;
		this.total += chunk.length;
		this.newlines += countNewlines(chunk, 0, chunk.length);
		this.lastByte = chunk[chunk.length - 1];
		const toHead = Math.min(chunk.length, this.headCap - this.headLen);
		if (this.headLen + toHead > this.head.length) {
			const next = new Uint8Array(grownSize(this.head.length, this.headLen + toHead, this.headCap));
			next.set(this.head.subarray(0, this.headLen));
			this.head = next;
		}
		this.head.set(chunk.subarray(0, toHead), this.headLen);
		this.headLen += toHead;
		if (toHead < chunk.length) this.pushTail(chunk.subarray(toHead));
	}

	private pushTail(chunk: Uint8Array): void {
		const cap = this.tailCap;
		if (chunk.length >= cap) {
			// The chunk alone fills the ring: everything held so far and the chunk's start fall out.
			this.dropRing(this.ringLen);
			this.dropped += chunk.length - cap;
			this.reserveRing(cap);
			this.ring.set(chunk.subarray(chunk.length - cap));
			this.ringStart = 0;
			this.ringLen = cap;
			return;
		}
		this.dropRing(this.ringLen + chunk.length - cap);
		this.reserveRing(this.ringLen + chunk.length);
		const size = this.ring.length;
		const at = (this.ringStart + this.ringLen) % size;
		const first = Math.min(chunk.length, size - at);
		this.ring.set(chunk.subarray(0, first), at);
		this.ring.set(chunk.subarray(first), 0);
		this.ringLen += chunk.length;
	}

	/** Room for `needed` bytes in the ring (≤ tailCap), doubling; a grown ring starts linear again. */
	private reserveRing(needed: number): void {
		if (needed <= this.ring.length) return;
		const kept = this.tailBytes();
		this.ring = new Uint8Array(grownSize(this.ring.length, needed, this.tailCap));
		this.ring.set(kept);
		this.ringStart = 0;
	}

	/** Lets the oldest n ring bytes fall out. */
	private dropRing(n: number): void {
		if (n <= 0) return;
		this.dropped += n;
		this.ringStart = (this.ringStart + n) % this.ring.length;
		this.ringLen -= n;
	}

	private tailBytes(): Buffer {
		const out = Buffer.allocUnsafe(this.ringLen);
		const first = Math.min(this.ringLen, this.ring.length - this.ringStart);
		out.set(this.ring.subarray(this.ringStart, this.ringStart + first), 0);
		out.set(this.ring.subarray(0, this.ringLen - first), first);
		return out;
	}

	/** The kept text with the marker between head and tail; the hint is as for truncateText. */
	toText(hint?: (info: TruncationInfo) => string | undefined): Truncated {
		const head = asBuffer(this.head).subarray(0, this.headLen);
		const tail = this.tailBytes();
		const totalLines = this.newlines + (this.total > 0 && this.lastByte !== NEWLINE ? 1 : 0);
		if (this.dropped === 0) {
			// Nothing fell out: join before decoding so a character split across head and tail survives.
			return { text: Buffer.concat([head, tail]).toString('utf8'), info: untruncated(this.total, totalLines) };
		}
		const headEnd = utf8PrefixLength(head, head.length);
		const tailStart = utf8SuffixStart(tail, tail.length);
		const kept = headEnd + tail.length - tailStart;
		const info: TruncationInfo = {
			truncated: true,
			totalBytes: this.total,
			totalLines,
			keptBytes: kept,
			keptLines: 0,
			bytesOmitted: this.total - kept,
			linesOmitted: this.omittedLines(head, headEnd, tail, tailStart),
		};
		info.keptLines = totalLines - info.linesOmitted;
		const marker = omittedMarker({ lines: info.linesOmitted, bytes: info.bytesOmitted, hint: hint?.(info) });
		return { text: joinAroundMarker(head.toString('utf8', 0, headEnd), marker, tail.toString('utf8', tailStart)), info };
	}

	/**
	 * Lines wholly inside the dropped middle. Each dropped newline ends a line that is wholly dropped,
	 * except the first when the head stops mid-line (that line is partly kept). The UTF-8 trims never
	 * move a newline, since '\n' is never part of a multi-byte sequence.
	 */
	private omittedLines(head: Uint8Array, headEnd: number, tail: Uint8Array, tailStart: number): number {
		const droppedNewlines = this.newlines - countNewlines(head, 0, head.length) - countNewlines(tail, 0, tail.length);
		const headMidLine = headEnd > 0 && head[headEnd - 1] !== NEWLINE;
		let lines = droppedNewlines - (headMidLine && droppedNewlines > 0 ? 1 : 0);
		// Nothing kept after the cut: the unterminated last line went too, unless the head holds its start.
		const lastLineOpen = this.lastByte !== NEWLINE;
		if (tail.length === tailStart && lastLineOpen && (droppedNewlines > 0 || !headMidLine)) lines++;
		return lines;
	}
}

/** Doubles from `current` until `needed` fits, never past `cap` (needed ≤ cap). */
function grownSize(current: number, needed: number, cap: number): number {
	let size = Math.max(current, 1024);
	while (size < needed) size *= 2;
	return Math.min(size, cap);
}
