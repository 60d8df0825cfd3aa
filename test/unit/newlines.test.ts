import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import {
	COPY_OVER_BYTES, countInJavaScript, countNewlines, countsNatively, newlineCountUsage, NewlineCounter, newlineScanBuffer, WebAssemblyApi,
} from '../../src/core/files/newlines';

/** The plain byte loop every count must agree with. */
function naive(bytes: Uint8Array, from: number, to: number): number {
	let count = 0;
	for (let i = Math.max(0, from); i < Math.min(to, bytes.length); i++) if (bytes[i] === 0x0a) count++;
	return count;
}

/** Seeded bytes where each 1,000-byte block has its own chance of a newline, from never to every byte. */
function randomBytes(length: number, seed: number): Buffer {
	const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
	const bytes = Buffer.alloc(length);
	for (let at = 0; at < length; at += 1000) {
		const density = [0, 0.001, 0.05, 0.5, 1][Math.floor(random() * 5)];
		// Bytes one bit away from a newline and high bytes, which a sloppy comparison miscounts.
		for (let i = at; i < Math.min(length, at + 1000); i++) bytes[i] = random() < density ? 0x0a : [0x0b, 0x8a, 0xff, 0x00, 0x61, 0x0e][Math.floor(random() * 6)];
	}
	return bytes;
}

describe('newline counting', () => {
	it('runs in WebAssembly on this Node (the JavaScript count is only the fallback)', () => {
		assert.equal(countsNatively(), true);
		// A scan buffer is a view of the module's memory (whole 64 KiB pages), not a buffer of its own.
		const scan = newlineScanBuffer(1000);
		assert.equal(scan.bytes.length, 1000);
		assert.equal(scan.bytes.buffer.byteLength, 64 * 1024);
	});

	it('falls back to JavaScript where WebAssembly is missing (node --jitless), counting the same', () => {
		const module = path.join(__dirname, '../../src/core/files/newlines.js');
		const script = `const n = require(${JSON.stringify(module)}); const scan = n.newlineScanBuffer(100); scan.bytes.fill(10);
			console.log(JSON.stringify([n.countsNatively(), scan.count(3, 100), n.countNewlines(Buffer.alloc(5000, 10), 1, 5000)]));`;
		const out = execFileSync(process.execPath, ['--jitless', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
		assert.deepEqual(JSON.parse(out), [false, 97, 4999]);
	});

	for (const [name, count] of [['countNewlines', countNewlines], ['the JavaScript fallback', countInJavaScript]] as const) {
		describe(name, () => {
			it('agrees with a byte loop for sparse, dense and mixed newlines, any range and alignment', () => {
				let seed = 11;
				const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
				for (let round = 0; round < 200; round++) {
					const bytes = randomBytes(1 + Math.floor(random() * 20_000), round);
					// An unaligned view into a larger buffer, as chunks from a pipe can be.
					const shift = Math.floor(random() * 16);
					const view = Buffer.concat([Buffer.alloc(shift, 0x0a), bytes, Buffer.alloc(3, 0x0a)]).subarray(shift, shift + bytes.length);
					const from = Math.floor(random() * view.length);
					const to = from + Math.floor(random() * (view.length - from + 10));
					assert.equal(count(view, from, to), naive(view, from, to), `round ${round} [${from}, ${to})`);
					assert.equal(count(new Uint8Array(view), 0, view.length), naive(view, 0, view.length), `round ${round}, whole`);
				}
			});

			it('counts every length around the 16-byte blocks and the copy threshold, and nothing past the range', () => {
				const newlines = Buffer.alloc(1100, '\n');
				for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 511, 512, 513, 1024, 1099]) {
					for (const from of [0, 1, 7, 15]) assert.equal(count(newlines, from, from + length), Math.max(0, Math.min(length, 1100 - from)), `[${from}, +${length})`);
				}
				// Out-of-range and reversed ranges count what lies inside the bytes, or nothing.
				assert.equal(count(newlines, -5, 10), 10);
				assert.equal(count(newlines, 1090, 5000), 10);
				assert.equal(count(newlines, 50, 20), 0);
			});

			it('counts a range longer than the scratch space, in pieces', () => {
				const big = randomBytes(700_001, 5);
				assert.equal(count(big, 3, big.length), naive(big, 3, big.length));
			});
		});
	}

	describe('newlineScanBuffer', () => {
		it('counts the bytes read into it, in place, at any range, and stays usable beside another', () => {
			const first = newlineScanBuffer(100_000);
			const second = newlineScanBuffer(64);
			assert.equal(first.bytes.length, 100_000);
			const content = randomBytes(100_000, 9);
			content.copy(first.bytes);
			second.bytes.fill(0x0a);
			for (const [from, to] of [[0, 100_000], [1, 99_999], [17, 18], [40_000, 40_016], [0, 0]]) {
				assert.equal(first.count(from, to), naive(content, from, to), `[${from}, ${to})`);
			}
			assert.equal(second.count(0, 64), 64);
			// Past its end: clamped to the buffer (the memory under it is larger, and holds nothing of the file).
			first.bytes.fill(0x0a);
			assert.equal(first.count(99_990, 200_000), 10);
		});
	});

	// Both ways count the same, so results cannot show which one ran: the usage figures do.
	describe('which way counts', () => {
		const host = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;
		const newlines = Buffer.alloc(3000, '\n');

		it('counts a range of COPY_OVER_BYTES or more natively, a shorter one in JavaScript', () => {
			const counter = new NewlineCounter(host);
			assert.equal(counter.count(newlines, 3, 3 + COPY_OVER_BYTES - 1), COPY_OVER_BYTES - 1);
			assert.deepEqual([counter.usage.nativeBytes, counter.usage.javaScriptBytes], [0, COPY_OVER_BYTES - 1]);
			assert.equal(counter.count(newlines, 3, 3 + COPY_OVER_BYTES), COPY_OVER_BYTES);
			assert.deepEqual([counter.usage.nativeBytes, counter.usage.javaScriptBytes], [COPY_OVER_BYTES, COPY_OVER_BYTES - 1]);
			// From past the threshold's size: the range's length decides, not where it ends.
			assert.equal(counter.count(newlines, 2000, 2100), 100);
			assert.equal(counter.usage.javaScriptBytes, COPY_OVER_BYTES - 1 + 100);
			assert.equal(counter.native, true);
		});

		it('compiles the module once and makes its scratch space once; a scan buffer is an instance of its own', () => {
			const counter = new NewlineCounter(host);
			for (let round = 0; round < 3; round++) assert.equal(counter.count(newlines, 0, 3000), 3000);
			assert.deepEqual([counter.usage.compiles, counter.usage.instances], [1, 1]);
			const scan = counter.scanBuffer(4096);
			scan.bytes.fill(0x0a);
			assert.equal(scan.count(10, 4000), 3990);
			assert.deepEqual([counter.usage.compiles, counter.usage.instances, counter.usage.nativeBytes], [1, 2, 3 * 3000 + 3990]);
		});

		/** The host's WebAssembly with one of its parts failing as `failure` says, each attempt counted. */
		function failing(part: 'Module' | 'Memory', failure: Error): { api: WebAssemblyApi; attempts: () => number } {
			let attempts = 0;
			const fails = class { constructor() { attempts++; throw failure; } };
			// Named one by one: WebAssembly's members are not enumerable, so `...host` would copy none.
			const api = { Module: host!.Module, Memory: host!.Memory, Instance: host!.Instance, [part]: fails as unknown as WebAssemblyApi[typeof part] };
			return { api, attempts: () => attempts };
		}

		// [what is missing, the counter's WebAssembly, modules compiled]
		const missing: Array<[string, () => WebAssemblyApi | undefined, number]> = [
			['no WebAssembly (node --jitless)', () => undefined, 0],
			['a WebAssembly without SIMD (the module does not compile)', () => failing('Module', new Error('invalid SIMD opcode')).api, 0],
			['a WebAssembly that cannot give memory', () => failing('Memory', new RangeError('out of memory')).api, 1],
		];
		for (const [label, api, compiles] of missing) {
			it(`with ${label}, counts everything in JavaScript, the same`, () => {
				const counter = new NewlineCounter(api());
				assert.equal(counter.native, false);
				const bytes = randomBytes(300_000, 3);
				assert.equal(counter.count(bytes, 5, bytes.length), naive(bytes, 5, bytes.length));
				const scan = counter.scanBuffer(1000);
				assert.equal(scan.bytes.length, 1000);
				assert.equal(scan.bytes.buffer.byteLength, 1000, 'a buffer of its own, not module memory');
				scan.bytes.fill(0x0a);
				assert.equal(scan.count(1, 1000), 999);
				const { nativeBytes, javaScriptBytes, compiles: compiled, instances } = counter.usage;
				assert.deepEqual([nativeBytes, javaScriptBytes, compiled, instances], [0, bytes.length - 5 + 999, compiles, 0]);
			});
		}

		it('tries to compile the module once where it does not compile, not again for every scan buffer', () => {
			const withoutSimd = failing('Module', new Error('invalid SIMD opcode'));
			const counter = new NewlineCounter(withoutSimd.api);
			assert.equal(counter.native, false);
			for (let round = 0; round < 3; round++) assert.equal(counter.scanBuffer(100).bytes.length, 100);
			assert.equal(withoutSimd.attempts(), 1);
		});

		it('the shared counter is the host\'s: its counts and scan buffers show in newlineCountUsage', () => {
			const before = newlineCountUsage();
			assert.equal(countNewlines(newlines, 0, 1000), 1000);
			const scan = newlineScanBuffer(2000);
			scan.bytes.fill(0x0a);
			assert.equal(scan.count(0, 2000), 2000);
			const after = newlineCountUsage();
			assert.equal(after.nativeBytes - before.nativeBytes, 3000);
			assert.equal(after.compiles, 1);
			assert.equal(countsNatively(), true);
		});
	});
});
