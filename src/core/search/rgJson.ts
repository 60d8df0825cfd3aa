import type { LineHandler, LongLineHandler } from './ripgrep';

/**
 * rg's `--json` match, context and end messages, read within a fixed memory bound. A message holds
 * its line whole (and a match's text after it), so a minified bundle makes messages of many
 * megabytes: short ones are parsed whole; longer ones are read as they stream, keeping only the
 * path, the line's number and offset, the first match's offset, the line's length and a few
 * hundred bytes.
 */

/** A match or context line as rg reported it, reduced to what a window of it needs. */
export interface RgJsonLine {
	readonly type: 'match' | 'context';
	readonly path: string;
	readonly lineNumber: number;
	/** Byte offset of the line in its file. */
	readonly absoluteOffset: number;
	/** Byte offset in the line of the first submatch (none for context lines). */
	readonly matchStart?: number;
	readonly text: LineText;
}

/** The end of a file's messages; `binaryOffset`: where rg found binary data (a NUL byte), if it did. */
export interface RgJsonEnd {
	readonly type: 'end';
	readonly path: string;
	readonly binaryOffset?: number;
}

export type RgJsonMessage = RgJsonLine | RgJsonEnd;

/**
 * A line's length in raw bytes (without its line ending), and the line: a short one whole
 * (without its ending), a long one as some of its raw bytes: those from `from` on (the first
 * match's text for a match, the line's start otherwise), up to CAPTURE_BYTES of them (fewer only
 * where the line or the match ends).
 */
export type LineText =
	| { readonly whole: string; readonly length: number }
	| { readonly length: number; readonly from: number; readonly bytes: Buffer };

/** Raw bytes kept of a long line (a window is 300 bytes, plus a split character at either end). */
export const CAPTURE_BYTES = 512;
/** Messages up to this size are parsed whole; longer ones stream. */
const WHOLE_MESSAGE_BYTES = 32 * 1024;
/** A message's parts other than the line and match texts are small; past this it is not rg's shape. */
const SMALL_PART_BYTES = 64 * 1024;

/**
 * A LineHandler for runRg that hands `onMessage` each match, context and end message of rg's
 * --json output. `wholeBytes`: messages up to this size are parsed whole (tests lower it to
 * stream small ones). An end message is small (a path and counts): at the default size it is
 * parsed whole; one longer than `wholeBytes` is skipped, so tests that lower it see no end messages
 * for long paths.
 */
export function rgJsonHandler(onMessage: (message: RgJsonMessage) => boolean | void, wholeBytes = WHOLE_MESSAGE_BYTES): LineHandler & { maxLineBytes: number } {
	return {
		maxLineBytes: wholeBytes,
		line: bytes => {
			const message = wholeMessage(bytes);
			return message ? onMessage(message) : undefined;
		},
		long: new LongMessage(onMessage),
	};
}

interface RgMessage {
	data: {
		path: RgText;
		lines: RgText;
		line_number: number;
		absolute_offset: number;
		submatches?: { start: number }[];
	};
}

interface RgEndMessage {
	data: {
		path: RgText;
		binary_offset: number | null;
	};
}

type RgText = { text: string } | { bytes: string };

const MATCH_PREFIX = Buffer.from('{"type":"match"');
const CONTEXT_PREFIX = Buffer.from('{"type":"context"');
const END_PREFIX = Buffer.from('{"type":"end"');

function typeOf(bytes: Buffer): RgJsonLine['type'] | undefined {
	return startsWith(bytes, MATCH_PREFIX) ? 'match' : startsWith(bytes, CONTEXT_PREFIX) ? 'context' : undefined;
}

function wholeMessage(bytes: Buffer): RgJsonMessage | undefined {
	if (startsWith(bytes, END_PREFIX)) return endMessage(bytes);
	const type = typeOf(bytes);
	// begin/summary messages carry nothing used: skip their parse.
	if (!type) return undefined;
	try {
		const { data } = JSON.parse(bytes.toString('utf8')) as RgMessage;
		if (typeof data.line_number !== 'number' || typeof data.absolute_offset !== 'number') return undefined;
		return { type, path: textOf(data.path), lineNumber: data.line_number, absoluteOffset: data.absolute_offset, matchStart: data.submatches?.[0]?.start, text: wholeLine(data.lines) };
	} catch {
		// Not rg's shape.
		return undefined;
	}
}

function endMessage(bytes: Buffer): RgJsonEnd | undefined {
	try {
		const { data } = JSON.parse(bytes.toString('utf8')) as RgEndMessage;
		return { type: 'end', path: textOf(data.path), ...(typeof data.binary_offset === 'number' ? { binaryOffset: data.binary_offset } : {}) };
	} catch {
		return undefined;
	}
}

/** rg gives text as UTF-8, or as base64 bytes when it is not valid UTF-8. */
function textOf(value: RgText): string {
	return 'text' in value ? value.text : Buffer.from(value.bytes, 'base64').toString('utf8');
}

/** A short line without its ending, and its length in raw bytes (base64 text decodes to other lengths). */
function wholeLine(value: RgText): LineText {
	if ('text' in value) {
		const whole = withoutLineEnd(value.text);
		return { whole, length: Buffer.byteLength(whole) };
	}
	const raw = Buffer.from(value.bytes, 'base64');
	const end = raw.length > 0 && raw[raw.length - 1] === 0x0a ? raw.length - (raw.length > 1 && raw[raw.length - 2] === 0x0d ? 2 : 1) : raw.length;
	return { whole: raw.toString('utf8', 0, end), length: end };
}

/** A regex anchored at the end would be tried at every position of a long line; this is O(1). */
function withoutLineEnd(text: string): string {
	if (!text.endsWith('\n')) return text;
	return text.endsWith('\r\n') ? text.slice(0, -2) : text.slice(0, -1);
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
	return bytes.length >= prefix.length && bytes.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}

// The keys between the parts. Inside a JSON string every quote is escaped, so none of these can
// occur in a path or a line: a plain search finds them.
const LINES_KEYS = [Buffer.from('},"lines":{"text":"'), Buffer.from('},"lines":{"bytes":"')];
const SUBMATCHES_KEY = Buffer.from('"submatches":[');
const MATCH_KEYS = [Buffer.from('{"match":{"text":"'), Buffer.from('{"match":{"bytes":"')];
const END_KEY = Buffer.from(',"end":');

type Phase = 'prelude' | 'line' | 'middle' | 'submatch' | 'match' | 'tail' | 'done' | 'skip';

/**
 * One long message at a time, read part by part as it streams: the prelude (type and path), the
 * line's text (counted, its start kept), the line number, and the first submatch (its text's start
 * kept, its offset). Everything else is skipped. A message that does not have rg's shape is dropped.
 */
class LongMessage implements LongLineHandler {
	private phase: Phase = 'skip';
	private type: RgJsonLine['type'] = 'match';
	/** The small part being collected (prelude, middle, tail). */
	private part = Buffer.alloc(0);
	private path = '';
	private lineNumber = 0;
	private absoluteOffset = 0;
	private matchStart: number | undefined;
	private line: StringBody | undefined;
	private match: StringBody | undefined;

	constructor(private readonly onMessage: (message: RgJsonMessage) => boolean | void) {}

	start(head: Buffer): void {
		const type = typeOf(head);
		this.phase = type ? 'prelude' : 'skip';
		this.type = type ?? 'match';
		this.part = Buffer.alloc(0);
		this.line = this.match = this.matchStart = undefined;
		this.more(head);
	}

	more(piece: Buffer): void {
		let at = 0;
		while (at < piece.length && this.phase !== 'done' && this.phase !== 'skip') at = this.step(piece, at);
	}

	end(): boolean | void {
		const { line, match, matchStart } = this;
		// Read up to its line number at least (the rest is the first submatch).
		const numbered = this.phase === 'submatch' || this.phase === 'match' || this.phase === 'tail' || this.phase === 'done';
		this.phase = 'skip';
		this.line = this.match = undefined;
		if (!numbered || !line) return undefined;
		const fromMatch = match !== undefined && matchStart !== undefined;
		const length = line.lengthWithoutLineEnd();
		const from = fromMatch ? matchStart : 0;
		// Never past the line's end into its line ending.
		const bytes = (fromMatch ? match : line).head().subarray(0, Math.max(0, length - from));
		return this.onMessage({ type: this.type, path: this.path, lineNumber: this.lineNumber, absoluteOffset: this.absoluteOffset, matchStart, text: { length, from, bytes } });
	}

	/** Reads from `at` in the current phase; returns where the next phase starts. */
	private step(piece: Buffer, at: number): number {
		switch (this.phase) {
			case 'prelude':
				return this.collect(piece, at, LINES_KEYS, (part, key) => {
					try {
						const head = JSON.parse(`${part.toString('utf8', 0, part.length - key.length + 1)}}}`) as RgMessage;
						this.path = textOf(head.data.path);
					} catch {
						return 'skip';
					}
					this.line = new StringBody(key === LINES_KEYS[1]);
					return 'line';
				});
			case 'line':
				return this.readString(this.line!, piece, at, 'middle');
			case 'middle':
				return this.collect(piece, at, [SUBMATCHES_KEY], part => {
					this.lineNumber = numberIn(part, 'line_number') ?? NaN;
					this.absoluteOffset = numberIn(part, 'absolute_offset') ?? NaN;
					return Number.isNaN(this.lineNumber) || Number.isNaN(this.absoluteOffset) ? 'skip' : 'submatch';
				});
			case 'submatch':
				// `]` right away: no submatch (a context line).
				if (this.part.length === 0 && piece[at] === 0x5d) {
					this.phase = 'done';
					return at + 1;
				}
				return this.collect(piece, at, MATCH_KEYS, (_part, key) => {
					this.match = new StringBody(key === MATCH_KEYS[1]);
					return 'match';
				});
			case 'match':
				return this.readString(this.match!, piece, at, 'tail');
			case 'tail':
				return this.collect(piece, at, [END_KEY], part => {
					this.matchStart = numberIn(part, 'start');
					return 'done';
				});
			default:
				return piece.length;
		}
	}

	private readString(body: StringBody, piece: Buffer, at: number, next: Phase): number {
		const end = body.feed(piece, at);
		if (end === -1) return piece.length;
		this.phase = next;
		return end;
	}

	/**
	 * Collects a small part until one of `keys` ends it; `then` reads the part (which ends with the
	 * key) and names the next phase. Returns where the bytes after the key start in `piece`.
	 */
	private collect(piece: Buffer, at: number, keys: readonly Buffer[], then: (part: Buffer, key: Buffer) => Phase): number {
		const before = this.part.length;
		const part = Buffer.concat([this.part, piece.subarray(at, at + SMALL_PART_BYTES)]);
		for (const key of keys) {
			// A key found now ends in the new bytes (it was not in the part before).
			const found = part.indexOf(key, Math.max(0, before - key.length + 1));
			if (found === -1) continue;
			const end = found + key.length;
			this.part = Buffer.alloc(0);
			this.phase = then(part.subarray(0, end), key);
			return at + end - before;
		}
		this.part = part;
		if (part.length > SMALL_PART_BYTES) this.phase = 'skip';
		return Math.min(piece.length, at + SMALL_PART_BYTES);
	}
}

/** The number a small part gives for `"name":`. */
function numberIn(part: Buffer, name: string): number | undefined {
	const found = new RegExp(`"${name}":(\\d+)`).exec(part.toString('latin1'));
	return found ? Number(found[1]) : undefined;
}

/** JSON escapes as serde_json writes them: `\uXXXX` only for control characters, one byte each. */
const ESCAPED: Record<number, number> = { 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09, 0x62: 0x08, 0x66: 0x0c, 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f };

/** Whole tokens of a JSON string's body (latin1, a byte a character): runs of plain bytes and whole escapes; never the closing quote. */
const WHOLE_TOKENS = /[^"\\]*(?:(?:\\u[0-9a-fA-F]{4}|\\[^u])[^"\\]*)*/y;
/** One escape, in a run of whole tokens (searched from a token's start, every backslash found starts one). */
const ONE_ESCAPE = /\\(?:u[0-9a-fA-F]{4}|[^u])/g;
const BACKSLASH = 0x5c;
/**
 * Most characters one pass reads: the regex keeps a backtracking entry per token, and a piece of
 * megabytes of escapes (a test's; a pipe's are 64 KB) overflowed its stack. A pass cut here stops
 * at a token's end (a cut escape is not whole), and the next pass goes on from there.
 */
const BULK_CHARS = 64 * 1024;

/**
 * The byte the token ending at `to` stands for, and where the token starts, in whole tokens that
 * start at `from`. A backslash starts an escape when it is the first, third, … of its run: a run
 * starts at a token's start (every escape starts with a backslash).
 */
function tokenBefore(text: string, from: number, to: number): { byte: number; start: number } {
	if (to - from >= 6 && text.charCodeAt(to - 5) === 0x75 && startsEscape(text, from, to - 6)) return { byte: parseInt(text.slice(to - 4, to), 16) & 0xff, start: to - 6 };
	if (to - from >= 2 && startsEscape(text, from, to - 2)) {
		const code = text.charCodeAt(to - 1);
		return { byte: ESCAPED[code] ?? code, start: to - 2 };
	}
	return { byte: text.charCodeAt(to - 1), start: to - 1 };
}

/** Whether the character at `at` is a backslash that starts an escape (counted back to `from`, a token's start). */
function startsEscape(text: string, from: number, at: number): boolean {
	let run = 0;
	while (at - run >= from && text.charCodeAt(at - run) === BACKSLASH) run++;
	return run % 2 === 1;
}

/**
 * The raw bytes a run of whole tokens stands for: each escape counts as the one byte it stands
 * for. Decoded as JSON, natively: read as latin1, a plain byte is one character and an escape
 * decodes to one (a source map's line, an escape every few bytes, took half again as long counted
 * by replacing its escapes). Counted by the replacement where it is not valid JSON (not rg's shape).
 */
function rawLength(tokens: string): number {
	try {
		return (JSON.parse(`"${tokens}"`) as string).length;
	} catch {
		return tokens.replace(ONE_ESCAPE, '.').length;
	}
}

/**
 * The body of a JSON string streamed in pieces: counts its raw bytes and keeps the first
 * CAPTURE_BYTES of them and the last two (for the line ending). rg writes text as an escaped
 * string, or base64 (`bytes`) when it is not valid UTF-8.
 */
class StringBody {
	private raw = 0;
	private readonly captured = Buffer.alloc(CAPTURE_BYTES);
	private capturedBytes = 0;
	private last = -1;
	private beforeLast = -1;
	/** In an escape: after the backslash (-1), or the hex digits of `\u` still to come. */
	private escape = 0;
	private hex = 0;
	private inEscape = false;
	/** base64: the first characters and the last few. */
	private base64Head = '';
	private base64Tail = '';

	constructor(private readonly base64: boolean) {}

	/** Reads from `at`; returns the index after the closing quote, or -1 when the string goes on. */
	feed(piece: Buffer, at: number): number {
		return this.base64 ? this.feedBase64(piece, at) : this.feedText(piece, at);
	}

	head(): Buffer {
		if (!this.base64) return this.captured.subarray(0, this.capturedBytes);
		return Buffer.from(this.base64Head.slice(0, this.base64Head.length - (this.base64Head.length % 4)), 'base64').subarray(0, CAPTURE_BYTES);
	}

	/** Raw length without a final `\n` or `\r\n` (rg includes the line's ending in its text). */
	lengthWithoutLineEnd(): number {
		if (this.last !== 0x0a) return this.raw;
		return this.raw - (this.beforeLast === 0x0d ? 2 : 1);
	}

	private feedText(piece: Buffer, at: number): number {
		let i = at;
		// Searched as a latin1 string (one character per byte): a string's indexOf has none of the
		// checks a Buffer's makes on every call, which cost most of a line with an escape every few
		// bytes (a source map's sources). Where the next quote and backslash are is searched again only
		// once passed, so a line full of escapes costs its length, not its length times its escapes.
		const text = piece.toString('latin1', 0, piece.length);
		let quote = -2;
		let slash = -2;
		while (i < piece.length) {
			if (this.inEscape) {
				i = this.readEscape(piece, i);
				continue;
			}
			if (this.capturedBytes === CAPTURE_BYTES) {
				const end = this.skipBulk(text, i);
				if (end > i) {
					i = end;
					quote = slash = -2;
					continue;
				}
			}
			if (quote !== -1 && quote < i) quote = text.indexOf('"', i);
			if (slash !== -1 && slash < i) slash = text.indexOf('\\', i);
			const stop = slash !== -1 && (quote === -1 || slash < quote) ? slash : quote;
			this.addRun(piece, i, stop === -1 ? piece.length : stop);
			if (stop === -1) return -1;
			if (stop === quote) return stop + 1;
			this.inEscape = true;
			this.escape = -1;
			i = stop + 1;
		}
		return -1;
	}

	/**
	 * Once the head is kept, the rest of a long line only counts: its bytes, and its last two (for
	 * the line ending). Counted by byte, a source map's line, an escape every few bytes, cost the
	 * first search of a process tens of milliseconds before the code was compiled; here two native
	 * regex passes count a piece's whole tokens. They stop at the closing quote or at an escape the
	 * piece's end cuts, which the byte-wise reader then takes. Returns where the whole tokens end.
	 */
	private skipBulk(text: string, at: number): number {
		WHOLE_TOKENS.lastIndex = at;
		const tokens = WHOLE_TOKENS.exec(text.length - at > BULK_CHARS ? text.slice(0, at + BULK_CHARS) : text)?.[0] ?? '';
		if (tokens.length === 0) return at;
		const end = at + tokens.length;
		this.raw += rawLength(tokens);
		const last = tokenBefore(text, at, end);
		this.beforeLast = last.start > at ? tokenBefore(text, at, last.start).byte : this.last;
		this.last = last.byte;
		return end;
	}

	private readEscape(piece: Buffer, i: number): number {
		const byte = piece[i];
		if (this.escape === -1) {
			if (byte === 0x75 /* u */) {
				this.escape = 4;
				this.hex = 0;
			} else {
				this.inEscape = false;
				this.addByte(ESCAPED[byte] ?? byte);
			}
			return i + 1;
		}
		this.hex = this.hex * 16 + parseInt(String.fromCharCode(byte), 16);
		if (--this.escape === 0) {
			this.inEscape = false;
			this.addByte(this.hex & 0xff);
		}
		return i + 1;
	}

	private addRun(piece: Buffer, from: number, to: number): void {
		if (to <= from) return;
		this.raw += to - from;
		if (this.capturedBytes < CAPTURE_BYTES) this.capturedBytes += piece.copy(this.captured, this.capturedBytes, from, Math.min(to, from + CAPTURE_BYTES - this.capturedBytes));
		this.beforeLast = to - from >= 2 ? piece[to - 2] : this.last;
		this.last = piece[to - 1];
	}

	private addByte(byte: number): void {
		this.raw++;
		if (this.capturedBytes < CAPTURE_BYTES) this.captured[this.capturedBytes++] = byte;
		this.beforeLast = this.last;
		this.last = byte;
	}

	private feedBase64(piece: Buffer, at: number): number {
		const quote = piece.indexOf(0x22, at);
		const end = quote === -1 ? piece.length : quote;
		const wanted = Math.ceil(CAPTURE_BYTES / 3) * 4 + 4;
		if (this.base64Head.length < wanted) this.base64Head += piece.toString('latin1', at, Math.min(end, at + wanted - this.base64Head.length));
		this.base64Tail = (this.base64Tail + piece.toString('latin1', Math.max(at, end - 8), end)).slice(-8);
		this.raw += end - at;
		if (quote === -1) return -1;
		// Characters counted so far become bytes: 4 characters are 3 bytes, less the padding.
		const padding = this.base64Tail.endsWith('==') ? 2 : this.base64Tail.endsWith('=') ? 1 : 0;
		const tail = Buffer.from(this.base64Tail.slice(-4), 'base64');
		this.last = tail.length > 0 ? tail[tail.length - 1] : -1;
		this.beforeLast = tail.length > 1 ? tail[tail.length - 2] : -1;
		this.raw = (this.raw / 4) * 3 - padding;
		return quote + 1;
	}
}
