import { asBuffer } from './bytes';

/**
 * Counting newlines: what paging deep into a huge file, counting a file's lines and bounding a
 * command's output spend their time on. JavaScript counts a byte or a word at a time; a tiny
 * WebAssembly function compares 16 bytes at once (128-bit SIMD), about four times faster than the
 * best JavaScript count here, so a scan of a file is no slower than reading it. Where WebAssembly or
 * its SIMD is missing (Node run with --jitless), the JavaScript count does the same job.
 */

const NEWLINE = 0x0a;

/**
 * count(start, end): the newlines in the module's memory [start, end). Hand-assembled (the binary
 * format is small and fixed; a build step for 150 bytes would cost more than it saves), with
 * locals 0 start, 1 end, 2 n (the count), 3 blocksEnd (where the last whole 16-byte block ends).
 */
const LOCAL_GET = 0x20, LOCAL_SET = 0x21, I32_CONST = 0x41, I32_ADD = 0x6a, I32_SUB = 0x6b, I32_AND = 0x71;
const I32_GE_U = 0x4f, I32_EQ = 0x46, I32_POPCNT = 0x69, I32_LOAD8_U = 0x2d, BLOCK = 0x02, LOOP = 0x03, BR = 0x0c, BR_IF = 0x0d;
const END = 0x0b, VOID = 0x40, I32 = 0x7f, SIMD = 0xfd, V128_LOAD = 0x00, I8X16_SPLAT = 0x0f, I8X16_EQ = 0x23, I8X16_BITMASK = 0x64;
const START = 0, RANGE_END = 1, COUNT = 2, BLOCKS_END = 3;

/** `while (at < limit) { body; at += step }` over local START, as block { loop { … } }. */
function loopUntil(limit: number, step: number, body: number[]): number[] {
	return [
		BLOCK, VOID, LOOP, VOID,
		LOCAL_GET, START, LOCAL_GET, limit, I32_GE_U, BR_IF, 1,
		...body,
		LOCAL_GET, START, I32_CONST, step, I32_ADD, LOCAL_SET, START,
		BR, 0, END, END,
	];
}

const COUNT_BODY = [
	1, 2, I32, // two more i32 locals: COUNT, BLOCKS_END
	// blocksEnd = end - ((end - start) & 15)
	LOCAL_GET, RANGE_END, LOCAL_GET, RANGE_END, LOCAL_GET, START, I32_SUB, I32_CONST, 15, I32_AND, I32_SUB, LOCAL_SET, BLOCKS_END,
	// 16 bytes at a time: compare each with '\n', one mask bit per newline, count the bits.
	...loopUntil(BLOCKS_END, 16, [
		LOCAL_GET, COUNT,
		LOCAL_GET, START, SIMD, V128_LOAD, 0, 0,
		I32_CONST, NEWLINE, SIMD, I8X16_SPLAT,
		SIMD, I8X16_EQ, SIMD, I8X16_BITMASK, I32_POPCNT,
		I32_ADD, LOCAL_SET, COUNT,
	]),
	// The last few bytes one at a time.
	...loopUntil(RANGE_END, 1, [
		LOCAL_GET, COUNT,
		LOCAL_GET, START, I32_LOAD8_U, 0, 0, I32_CONST, NEWLINE, I32_EQ,
		I32_ADD, LOCAL_SET, COUNT,
	]),
	LOCAL_GET, COUNT, END,
];

function section(id: number, content: number[]): number[] {
	return [id, ...unsignedLeb(content.length), ...content];
}

function unsignedLeb(value: number): number[] {
	const out: number[] = [];
	do {
		const low = value & 0x7f;
		value >>>= 7;
		out.push(value ? low | 0x80 : low);
	} while (value);
	return out;
}

const name = (text: string): number[] => [text.length, ...Buffer.from(text, 'ascii')];

const MODULE_BYTES = Uint8Array.from([
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	...section(1, [1, 0x60, 2, I32, I32, 1, I32]), // one type: (i32, i32) -> i32
	...section(2, [1, ...name('m'), ...name('memory'), 0x02, 0x00, 0x01]), // memory imported (at least a page)
	...section(3, [1, 0]), // one function, of that type
	...section(7, [1, ...name('count'), 0x00, 0]), // exported as "count"
	...section(10, [1, ...unsignedLeb(COUNT_BODY.length), ...COUNT_BODY]),
]);

const PAGE = 64 * 1024;

type CountIn = (start: number, end: number) => number;

/** The few WebAssembly names used here (the project's type libraries do not declare them). */
export interface WebAssemblyApi {
	Module: new (bytes: Uint8Array) => object;
	Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
	Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

/** A buffer whose newlines are counted where they lie: a file read in chunks is read into it. */
export interface NewlineScanBuffer {
	readonly bytes: Buffer;
	/** Newlines in bytes[from, to). */
	count(from: number, to: number): number;
}

/**
 * What a counter has done: how many bytes each way counted, how often it compiled the module and
 * made an instance of it. Tests check with it that big ranges are counted natively and the module
 * compiled once, which results alone cannot show (both ways count the same).
 */
export interface NewlineCountUsage {
	nativeBytes: number;
	javaScriptBytes: number;
	compiles: number;
	instances: number;
}

/** Ranges shorter than this are counted in JavaScript: copying them over would cost more. */
export const COPY_OVER_BYTES = 512;
const SCRATCH_BYTES = 256 * 1024;

/**
 * The counts over one WebAssembly implementation: the host's (see the shared one below), or none,
 * where every count runs in JavaScript. Compiled and given its scratch space on first use.
 */
export class NewlineCounter {
	readonly usage: NewlineCountUsage = { nativeBytes: 0, javaScriptBytes: 0, compiles: 0, instances: 0 };
	/** The compiled module, or null where WebAssembly (or its SIMD) is not available. */
	private compiled: object | null | undefined;
	/** Shared by every count of bytes that live elsewhere: each copy is counted before the call returns. */
	private scratch: { bytes: Buffer; count: CountIn } | null | undefined;

	constructor(private readonly api: WebAssemblyApi | undefined) {}

	/** Whether the counts run in WebAssembly here (else in JavaScript). */
	get native(): boolean {
		return this.scratchSpace() !== null;
	}

	/** Newlines in bytes[from, to) (the range is clamped to the bytes). */
	count(bytes: Uint8Array, from: number, to: number): number {
		const start = Math.max(0, from);
		const end = Math.min(to, bytes.length);
		const space = end - start >= COPY_OVER_BYTES ? this.scratchSpace() : null;
		if (!space) return this.inJavaScript(bytes, start, end);
		let count = 0;
		for (let at = start; at < end; at += SCRATCH_BYTES) {
			const piece = Math.min(SCRATCH_BYTES, end - at);
			space.bytes.set(bytes.subarray(at, at + piece));
			count += space.count(0, piece);
		}
		this.usage.nativeBytes += end - start;
		return count;
	}

	/**
	 * A scan buffer of `size` bytes, its own (a scan awaits reads, so another may run meanwhile).
	 * Where WebAssembly is missing it is a plain buffer counted in JavaScript.
	 */
	scanBuffer(size: number): NewlineScanBuffer {
		const native = this.instantiate(size);
		if (!native) {
			// Its own memory, word-aligned for the word-at-a-time count.
			const bytes = Buffer.allocUnsafeSlow(size);
			return { bytes, count: (from, to) => this.inJavaScript(bytes, from, to) };
		}
		// Never grown, so this view stays attached.
		const bytes = Buffer.from(native.memory.buffer, 0, size);
		return {
			bytes,
			count: (from, to) => {
				const start = Math.max(0, from);
				const end = Math.min(to, size);
				this.usage.nativeBytes += Math.max(0, end - start);
				return native.count(start, end);
			},
		};
	}

	private inJavaScript(bytes: Uint8Array, from: number, to: number): number {
		this.usage.javaScriptBytes += Math.max(0, Math.min(to, bytes.length) - Math.max(0, from));
		return countInJavaScript(bytes, from, to);
	}

	private scratchSpace(): { bytes: Buffer; count: CountIn } | null {
		if (this.scratch === undefined) {
			const native = this.instantiate(SCRATCH_BYTES);
			this.scratch = native ? { bytes: Buffer.from(native.memory.buffer, 0, SCRATCH_BYTES), count: native.count } : null;
		}
		return this.scratch;
	}

	/** Memory of `bytes` bytes (rounded up to pages) with the count over it; undefined without WebAssembly. */
	private instantiate(bytes: number): { memory: { readonly buffer: ArrayBuffer }; count: CountIn } | undefined {
		const module = this.module();
		if (!module) return undefined;
		try {
			const memory = new this.api!.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
			const instance = new this.api!.Instance(module, { m: { memory } });
			this.usage.instances++;
			return { memory, count: instance.exports.count as CountIn };
		} catch {
			return undefined;
		}
	}

	private module(): object | null {
		if (this.compiled === undefined) {
			try {
				this.compiled = this.api ? new this.api.Module(MODULE_BYTES) : null;
				if (this.compiled) this.usage.compiles++;
			} catch {
				// No SIMD (or no WebAssembly at all): every count runs in JavaScript.
				this.compiled = null;
			}
		}
		return this.compiled;
	}
}

/** This process's counter, over the host's WebAssembly (missing under --jitless). */
const shared = new NewlineCounter((globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly);

/** Newlines in bytes[from, to) (the range is clamped to the bytes). */
export function countNewlines(bytes: Uint8Array, from: number, to: number): number {
	return shared.count(bytes, from, to);
}

/** A scan buffer of `size` bytes, its own (see NewlineCounter.scanBuffer). */
export function newlineScanBuffer(size: number): NewlineScanBuffer {
	return shared.scanBuffer(size);
}

/** Whether this process counts in WebAssembly (else in JavaScript): for tests and benches. */
export function countsNatively(): boolean {
	return shared.native;
}

/** What this process's counts have done so far (a copy). */
export function newlineCountUsage(): NewlineCountUsage {
	return { ...shared.usage };
}

/**
 * The JavaScript count. Buffer.indexOf is memchr-fast between newlines that are far apart, but each
 * call costs far more than a byte: where newlines come close together the next block is counted
 * four bytes at a time.
 */
export function countInJavaScript(bytes: Uint8Array, from: number, to: number): number {
	const view = asBuffer(bytes);
	const end = Math.min(to, view.length);
	let count = 0;
	for (let at = Math.max(0, from); at < end;) {
		const newline = view.indexOf(NEWLINE, at);
		if (newline === -1 || newline >= end) break;
		count++;
		const dense = newline - at < DENSE_GAP;
		at = newline + 1;
		if (dense) {
			const blockEnd = Math.min(end, at + DENSE_BLOCK);
			count += countByWords(view, at, blockEnd);
			at = blockEnd;
		}
	}
	return count;
}

/** Newlines closer than this make the JavaScript count take the next DENSE_BLOCK bytes by words. */
const DENSE_GAP = 32;
const DENSE_BLOCK = 4096;
const NEWLINES_WORD = 0x0a0a0a0a;
const LOW_SEVEN_BITS = 0x7f7f7f7f;

/**
 * Newlines in bytes[from..to) by 32-bit words (SWAR): a byte of the word XOR '\n\n\n\n' is zero
 * exactly where the byte was a newline; the per-byte zero test cannot carry into the next byte.
 */
function countByWords(bytes: Buffer, from: number, to: number): number {
	let count = 0;
	let at = from;
	for (; at < to && (bytes.byteOffset + at) % 4 !== 0; at++) if (bytes[at] === NEWLINE) count++;
	const words = Math.max(0, (to - at) >> 2);
	const view = words > 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset + at, words) : [];
	for (let i = 0; i < words; i++) {
		const zeroWhereNewline = view[i] ^ NEWLINES_WORD;
		const highBitWhereZero = ~(((zeroWhereNewline & LOW_SEVEN_BITS) + LOW_SEVEN_BITS) | zeroWhereNewline | LOW_SEVEN_BITS);
		// One bit per newline byte, at the bottom of its byte; the multiply sums the four bytes into the top one.
		count += Math.imul(highBitWhereZero >>> 7, 0x01010101) >>> 24;
	}
	for (at += words * 4; at < to; at++) if (bytes[at] === NEWLINE) count++;
	return count;
}
