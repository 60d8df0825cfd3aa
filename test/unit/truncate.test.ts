import * as assert from 'node:assert/strict';
import {
	countLines,
	cutLine,
	formatBytes,
	formatCount,
	HeadTailBuffer,
	metadataOf,
	omittedMarker,
	truncateText,
	TruncateOptions,
	TruncationInfo,
	utf8PrefixLength,
	utf8SuffixStart,
} from '../../src/core/results/truncate';

/** Characters of every UTF-8 width: 1 (a), 2 (é), 3 (€, 中), 4 (😀, 𝄞). */
const WIDE = ['a', 'é', '€', '中', '😀', '𝄞', '\n'];

/** Byte offsets where a character starts, plus the end. */
function boundaries(text: string): Set<number> {
	const set = new Set<number>([0]);
	let offset = 0;
	for (const char of text) {
		offset += Buffer.byteLength(char);
		set.add(offset);
	}
	return set;
}

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state * 1664525 + 1013904223) >>> 0;
		return state / 2 ** 32;
	};
}

function randomText(next: () => number, length: number): string {
	let text = '';
	for (let i = 0; i < length; i++) text += WIDE[Math.floor(next() * WIDE.length)];
	return text;
}

const MARKER = /\[… [^\]]* …\]/;

/** Splits a truncated text back into the kept head and tail using the byte counts it reports. */
function pieces(output: string, info: TruncationInfo): { head: string; tail: string } {
	const match = MARKER.exec(output);
	assert.ok(match, `no marker in ${JSON.stringify(output)}`);
	const before = output.slice(0, match.index);
	const rest = output.slice(match.index + match[0].length);
	const tail = rest.startsWith('\n') ? rest.slice(1) : rest;
	// The module adds a newline before the marker only when the head does not end with one.
	const tailBytes = Buffer.byteLength(tail);
	const head = Buffer.byteLength(before) + tailBytes === info.keptBytes ? before : before.slice(0, -1);
	assert.equal(Buffer.byteLength(head) + tailBytes, info.keptBytes);
	return { head, tail };
}

/** Lines wholly inside the byte range [from, to) of text. */
function linesWithin(text: string, from: number, to: number): number {
	const buf = Buffer.from(text);
	let count = 0;
	let start = 0;
	while (start < buf.length) {
		const newline = buf.indexOf(10, start);
		const end = newline === -1 ? buf.length : newline + 1;
		if (start >= from && end <= to) count++;
		start = end;
	}
	return count;
}

function checkTruncation(text: string, opts: TruncateOptions): void {
	const { text: output, info } = truncateText(text, opts);
	const bytes = Buffer.byteLength(text);
	assert.equal(info.totalBytes, bytes);
	assert.equal(info.totalLines, countLines(Buffer.from(text)));
	if (!info.truncated) {
		assert.equal(output, text);
		assert.ok(bytes <= opts.maxBytes && info.totalLines <= opts.maxLines);
		return;
	}
	const { head, tail } = pieces(output, info);
	assert.ok(text.startsWith(head), 'the head is a prefix of the text');
	assert.ok(text.endsWith(tail), 'the tail is a suffix of the text');
	assert.ok(!head.includes('\uFFFD') && !tail.includes('\uFFFD'), 'no character was split');
	if (opts.keep === 'head') assert.equal(tail, '');
	if (opts.keep === 'tail') assert.equal(head, '');
	assert.ok(info.keptBytes <= opts.maxBytes, `kept ${info.keptBytes} > ${opts.maxBytes}`);
	assert.ok(info.keptLines <= Math.max(opts.maxLines, 0));
	assert.equal(info.bytesOmitted, bytes - info.keptBytes);
	const headBytes = Buffer.byteLength(head);
	assert.equal(info.linesOmitted, linesWithin(text, headBytes, bytes - Buffer.byteLength(tail)));
	assert.equal(info.keptLines, info.totalLines - info.linesOmitted);
	assert.equal(MARKER.exec(output)?.[0], omittedMarker({ lines: info.linesOmitted, bytes: info.bytesOmitted, hint: opts.hint?.(info) }));
}

describe('truncate', () => {
	describe('formatBytes / formatCount', () => {
		it('formats bytes 1024-based and short', () => {
			assert.equal(formatBytes(0), '0 B');
			assert.equal(formatBytes(512), '512 B');
			assert.equal(formatBytes(1023), '1023 B');
			assert.equal(formatBytes(1024), '1 KB');
			assert.equal(formatBytes(1536), '1.5 KB');
			assert.equal(formatBytes(56 * 1024), '56 KB');
			assert.equal(formatBytes(10 * 1024 - 1), '10 KB');
			assert.equal(formatBytes(1024 * 1024 - 1), '1 MB');
			assert.equal(formatBytes(Math.round(1.2 * 1024 * 1024)), '1.2 MB');
			assert.equal(formatBytes(3 * 1024 ** 3), '3 GB');
			assert.equal(formatBytes(2000 * 1024 ** 4), '2,000 TB');
		});

		it('groups thousands with commas whatever the locale', () => {
			assert.equal(formatCount(0), '0');
			assert.equal(formatCount(999), '999');
			assert.equal(formatCount(1000), '1,000');
			assert.equal(formatCount(1234), '1,234');
			assert.equal(formatCount(1234567), '1,234,567');
			assert.equal(formatCount(-999), '-999');
			assert.equal(formatCount(-1000), '-1,000');
			assert.equal(formatCount(999.5), '999.5');
			assert.equal(formatCount(1000.25), '1,000.25');
		});
	});

	describe('omittedMarker', () => {
		it('says lines and bytes, bytes alone, and appends a hint inside the brackets', () => {
			assert.equal(omittedMarker({ lines: 1234, bytes: 56 * 1024 }), '[… 1,234 lines / 56 KB omitted …]');
			assert.equal(omittedMarker({ bytes: 56 * 1024 }), '[… 56 KB omitted …]');
			assert.equal(omittedMarker({ lines: 0, bytes: 10 }), '[… 10 B omitted …]');
			assert.equal(omittedMarker({ lines: 1 }), '[… 1 line omitted …]');
			assert.equal(omittedMarker({}), '[… text omitted …]', 'neither known');
			assert.equal(omittedMarker({ lines: 0, hint: 'use offset=5 to continue' }), '[… text omitted; use offset=5 to continue …]');
			assert.equal(
				omittedMarker({ lines: 1234, bytes: 56 * 1024, hint: 'use offset=4001 to continue' }),
				'[… 1,234 lines / 56 KB omitted; use offset=4001 to continue …]',
			);
		});
	});

	describe('utf8PrefixLength / utf8SuffixStart', () => {
		it('never cuts inside a character of any width, at any cut point', () => {
			for (const char of WIDE) {
				const text = `x${char}${char}y`;
				const buf = Buffer.from(text);
				const cuts = boundaries(text);
				for (let max = 0; max <= buf.length + 1; max++) {
					const prefix = utf8PrefixLength(buf, max);
					const best = Math.max(...[...cuts].filter(cut => cut <= max));
					assert.equal(prefix, best, `prefix of ${JSON.stringify(text)} at ${max}`);
					const suffix = utf8SuffixStart(buf, max);
					const first = Math.min(...[...cuts].filter(cut => cut >= buf.length - max));
					assert.equal(suffix, first, `suffix of ${JSON.stringify(text)} at ${max}`);
				}
			}
		});

		it('matches a brute-force answer on random mixed text', () => {
			const next = random(7);
			for (let round = 0; round < 200; round++) {
				const text = randomText(next, 1 + Math.floor(next() * 12));
				const buf = Buffer.from(text);
				const cuts = [...boundaries(text)];
				for (let max = 0; max <= buf.length; max++) {
					assert.equal(utf8PrefixLength(buf, max), Math.max(...cuts.filter(cut => cut <= max)));
					assert.equal(utf8SuffixStart(buf, max), Math.min(...cuts.filter(cut => cut >= buf.length - max)));
					assert.ok(!buf.toString('utf8', 0, utf8PrefixLength(buf, max)).includes('\uFFFD'));
				}
			}
		});

		it('cuts invalid bytes where asked instead of searching far', () => {
			const junk = new Uint8Array(10).fill(0x80);
			assert.equal(utf8PrefixLength(junk, 4), 4);
			assert.equal(utf8SuffixStart(junk, 8), 2);
			// A lead byte whose sequence is complete is not cut, whatever follows.
			assert.equal(utf8PrefixLength(new Uint8Array([0x61, 0xc3, 0xa9, 0x80]), 3), 3);
		});
	});

	describe('cutLine', () => {
		it('leaves short lines alone', () => {
			assert.deepEqual(cutLine('short', 5), { text: 'short', cut: false });
		});

		it('cuts long lines and says how many characters went', () => {
			const line = 'x'.repeat(10_000);
			const { text, cut } = cutLine(line, 2000);
			assert.equal(cut, true);
			assert.equal(text, `${'x'.repeat(2000)} [… line cut: 8,000 more chars …]`);
		});

		it('never splits a surrogate pair', () => {
			assert.equal(cutLine('a😀b', 2).text, 'a [… line cut: 3 more chars …]');
			assert.equal(cutLine('a😀b', 3).text, 'a😀 [… line cut: 1 more char …]');
			assert.equal(cutLine('😀😀😀', 1).text, ' [… line cut: 6 more chars …]');
		});
	});

	describe('truncateText', () => {
		const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');

		it('returns text that fits unchanged', () => {
			const text = lines(3);
			const result = truncateText(text, { maxBytes: Buffer.byteLength(text), maxLines: 3, keep: 'head' });
			assert.equal(result.text, text);
			assert.deepEqual(result.info, { truncated: false, totalBytes: 21, totalLines: 3, keptBytes: 21, keptLines: 3, bytesOmitted: 0, linesOmitted: 0 });
		});

		it('handles empty text', () => {
			const result = truncateText('', { maxBytes: 0, maxLines: 0, keep: 'middle' });
			assert.equal(result.text, '');
			assert.equal(result.info.truncated, false);
			assert.equal(result.info.totalLines, 0);
		});

		it('keeps the head by lines, marker at the end, with a hint', () => {
			const result = truncateText(lines(10), {
				maxBytes: 1000, maxLines: 3, keep: 'head',
				hint: info => `use offset=${info.keptLines + 1} to continue`,
			});
			assert.equal(result.text, 'line 1\nline 2\nline 3\n[… 7 lines / 50 B omitted; use offset=4 to continue …]');
			assert.deepEqual(metadataOf(result.info), { truncated: true, bytesOmitted: 50, linesOmitted: 7 });
			assert.equal(result.info.keptLines, 3);
			assert.equal(result.info.keptBytes, 21);
		});

		it('keeps the tail by lines, marker at the start', () => {
			const result = truncateText(lines(10), { maxBytes: 1000, maxLines: 2, keep: 'tail' });
			assert.equal(result.text, '[… 8 lines / 56 B omitted …]\nline 9\nline 10\n');
		});

		it('keeps the tail of one-character lines and of a text that starts with an empty line', () => {
			const short = truncateText('1\n2\n3\n4\n5\n', { maxBytes: 1000, maxLines: 2, keep: 'tail' });
			assert.deepEqual([short.text, short.info.keptLines, short.info.linesOmitted], ['[… 3 lines / 6 B omitted …]\n4\n5\n', 2, 3]);
			const blankFirst = truncateText('\nabc\n', { maxBytes: 4, maxLines: 100, keep: 'tail' });
			assert.deepEqual([blankFirst.text, blankFirst.info.keptLines, blankFirst.info.linesOmitted], ['[… 1 line / 1 B omitted …]\nabc\n', 1, 1]);
		});

		it('keeps a quarter head and three quarters tail in the middle strategy', () => {
			const result = truncateText(lines(20), { maxBytes: 10_000, maxLines: 8, keep: 'middle' });
			assert.equal(result.text, `line 1\nline 2\n[… 12 lines / 89 B omitted …]\n${lines(20).split('\n').slice(14, 20).join('\n')}\n`);
			assert.equal(result.info.keptLines, 8);
		});

		it('applies the byte cap at whole lines', () => {
			// 'line 1\n' … 'line 9\n' are 7 bytes each.
			const result = truncateText(lines(9), { maxBytes: 20, maxLines: 100, keep: 'head' });
			assert.equal(result.text, 'line 1\nline 2\n[… 7 lines / 49 B omitted …]');
			const tail = truncateText(lines(9), { maxBytes: 20, maxLines: 100, keep: 'tail' });
			assert.equal(tail.text, '[… 7 lines / 49 B omitted …]\nline 8\nline 9\n');
		});

		it('puts the marker on its own line after a head without a final newline', () => {
			const result = truncateText('aaaa\nbbbb', { maxBytes: 4, maxLines: 10, keep: 'head' });
			assert.equal(result.text, 'aaaa\n[… 1 line / 5 B omitted …]');
			assert.equal(result.info.keptBytes, 4);
			assert.equal(result.info.linesOmitted, 1);
		});

		it('cuts a single huge line at a UTF-8-safe byte boundary', () => {
			const text = 'é'.repeat(1000);
			const head = truncateText(text, { maxBytes: 101, maxLines: 10, keep: 'head' });
			assert.equal(head.text, `${'é'.repeat(50)}\n[… 1.9 KB omitted …]`);
			assert.equal(head.info.bytesOmitted, 1900);
			assert.equal(head.info.linesOmitted, 0);
			assert.equal(head.info.keptLines, 1);

			const tail = truncateText('€'.repeat(100), { maxBytes: 100, maxLines: 10, keep: 'tail' });
			assert.equal(tail.text, `[… 201 B omitted …]\n${'€'.repeat(33)}`);

			const middle = truncateText('😀'.repeat(100), { maxBytes: 50, maxLines: 10, keep: 'middle' });
			// The head gets 12 bytes (3 emoji), the tail the remaining 38 (9 emoji, 36 bytes).
			assert.equal(middle.text, `${'😀'.repeat(3)}\n[… 352 B omitted …]\n${'😀'.repeat(9)}`);
			assert.equal(middle.info.keptLines, 1);
			assert.equal(middle.info.linesOmitted, 0);
		});

		it('cuts the edge lines when no whole line fits, counting the lines between', () => {
			const text = `${'a'.repeat(100)}\nshort\n${'b'.repeat(100)}`;
			const result = truncateText(text, { maxBytes: 40, maxLines: 10, keep: 'middle' });
			assert.equal(result.text, `${'a'.repeat(10)}\n[… 1 line / 167 B omitted …]\n${'b'.repeat(30)}`);
			assert.equal(result.info.keptLines, 2);
		});

		it('keeps the start of the first huge line and the end of the last when two lines may be kept, only the end when one', () => {
			const text = `${'a'.repeat(50)}\n${'b'.repeat(50)}\n`;
			assert.equal(truncateText(text, { maxBytes: 20, maxLines: 2, keep: 'middle' }).text, `aaaaa\n[… 82 B omitted …]\n${'b'.repeat(14)}\n`);
			assert.equal(truncateText(text, { maxBytes: 20, maxLines: 1, keep: 'middle' }).text, `[… 1 line / 82 B omitted …]\n${'b'.repeat(19)}\n`);
		});

		it('keeps whole lines over a partial one when any line fits', () => {
			const result = truncateText(`ok\n${'x'.repeat(500)}\n`, { maxBytes: 100, maxLines: 10, keep: 'head' });
			assert.equal(result.text, 'ok\n[… 1 line / 501 B omitted …]');
		});

		it('treats an infinite cap as no cap', () => {
			const bytesOnly = truncateText(lines(10), { maxBytes: 15, maxLines: Infinity, keep: 'middle' });
			assert.equal(bytesOnly.text, '[… 8 lines / 56 B omitted …]\nline 9\nline 10\n');
			const linesOnly = truncateText(lines(10), { maxBytes: Infinity, maxLines: 4, keep: 'middle' });
			assert.equal(linesOnly.text, 'line 1\n[… 6 lines / 42 B omitted …]\nline 8\nline 9\nline 10\n');
		});

		it('holds its invariants on random multi-byte text and caps', () => {
			const next = random(42);
			for (let round = 0; round < 3000; round++) {
				const text = randomText(next, Math.floor(next() * 60));
				const keep = (['head', 'tail', 'middle'] as const)[round % 3];
				const maxBytes = Math.floor(next() * 40);
				const maxLines = Math.floor(next() * 8);
				const headShare = next() < 0.5 ? undefined : next();
				checkTruncation(text, {
					maxBytes, maxLines, keep, headShare,
					hint: info => (info.keptLines % 2 ? `use offset=${info.keptLines + 1} to continue` : undefined),
				});
			}
		});
	});

	describe('HeadTailBuffer', () => {
		/** What the buffer must produce for a stream, computed from the whole stream at once. */
		function expected(stream: Buffer, maxBytes: number, headShare = 0.25): string {
			if (stream.length <= maxBytes) return stream.toString('utf8');
			const headCap = Math.floor(maxBytes * headShare);
			const headEnd = utf8PrefixLength(stream, headCap);
			const tailStart = utf8SuffixStart(stream, maxBytes - headCap);
			const head = stream.toString('utf8', 0, headEnd);
			const omitted = linesWithin(stream.toString('utf8'), headEnd, tailStart);
			const marker = omittedMarker({ lines: omitted, bytes: stream.length - headEnd - (stream.length - tailStart) });
			const before = head === '' || head.endsWith('\n') ? head : `${head}\n`;
			const tail = stream.toString('utf8', tailStart);
			return tail === '' ? `${before}${marker}` : `${before}${marker}\n${tail}`;
		}

		function feed(buffer: HeadTailBuffer, stream: Buffer, sizes: () => number): void {
			for (let at = 0; at < stream.length;) {
				const size = Math.max(1, sizes());
				buffer.push(stream.subarray(at, at + size));
				at += size;
			}
		}

		it('returns everything when the stream fits, even with characters split across chunks', () => {
			const stream = Buffer.from('héllo 😀 wörld\n中文\n');
			const buffer = new HeadTailBuffer(64);
			feed(buffer, stream, () => 1);
			const { text, info } = buffer.toText();
			assert.equal(text, stream.toString('utf8'));
			assert.equal(info.truncated, false);
			assert.equal(info.totalLines, 2);
			assert.equal(buffer.droppedBytes, 0);
		});

		it('keeps head and tail with the exact marker, for 1-byte to large chunks', () => {
			const next = random(99);
			for (let round = 0; round < 400; round++) {
				const stream = Buffer.from(randomText(next, Math.floor(next() * 200)));
				const maxBytes = Math.floor(next() * 64);
				const share = round % 4 === 0 ? 0.25 : next();
				const buffer = new HeadTailBuffer(maxBytes, share);
				const biggest = 1 + Math.floor(next() * 100);
				feed(buffer, stream, () => Math.floor(next() * biggest));
				const { text, info } = buffer.toText();
				assert.equal(text, expected(stream, maxBytes, share), `round ${round}`);
				assert.equal(info.totalBytes, stream.length);
				assert.equal(info.totalLines, countLines(stream));
				assert.equal(info.bytesOmitted, info.totalBytes - info.keptBytes);
				assert.equal(info.keptLines, info.totalLines - info.linesOmitted);
				assert.ok(!text.replace(MARKER, '').includes('\uFFFD'));
			}
		});

		it('cuts a 4-byte character straddling both cut points cleanly', () => {
			// Head cap 4 ends inside the first emoji; the tail cap 13 starts inside one too.
			const stream = Buffer.from(`ab${'😀'.repeat(20)}`);
			const buffer = new HeadTailBuffer(17);
			feed(buffer, stream, () => 3);
			const { text, info } = buffer.toText();
			assert.equal(text, `ab\n[… 68 B omitted …]\n${'😀'.repeat(3)}`);
			assert.equal(info.bytesOmitted, 82 - 2 - 12);
			assert.equal(info.keptBytes, 14);
		});

		it('counts omitted lines exactly as they stream', () => {
			const stream = Buffer.from(Array.from({ length: 100_000 }, (_, i) => `${i}\n`).join(''));
			const buffer = new HeadTailBuffer(1000);
			feed(buffer, stream, () => 4093);
			const { text, info } = buffer.toText(i => `see the full log (${i.totalLines} lines)`);
			assert.equal(text, expected(stream, 1000).replace(' …]', '; see the full log (100000 lines) …]'));
			assert.equal(info.totalLines, 100_000);
			assert.match(text, /\[… 99,\d{3} lines \/ \d+(\.\d)? KB omitted; see the full log/);
		});

		it('keeps memory bounded whatever the input size', () => {
			const maxBytes = 64 * 1024;
			const buffer = new HeadTailBuffer(maxBytes);
			const next = random(5);
			const block = Buffer.from('ü'.repeat(600_001)); // 1.2 MB of 2-byte characters
			let pushed = 0;
			while (pushed < 50 * 1024 * 1024) {
				// Odd sizes split characters at chunk edges; starting at pushed % 2 keeps the stream valid.
				const size = next() < 0.5 ? 1 + Math.floor(next() * 100) : 1 + Math.floor(next() * 1_200_000);
				buffer.push(block.subarray(pushed % 2, pushed % 2 + size));
				pushed += size;
				assert.ok(buffer.retainedBytes <= maxBytes, `retained ${buffer.retainedBytes}`);
			}
			assert.equal(buffer.totalBytes, pushed);
			assert.equal(buffer.droppedBytes, pushed - maxBytes);
			const { text, info } = buffer.toText();
			assert.ok(info.keptBytes <= maxBytes && info.keptBytes >= maxBytes - 2);
			assert.ok(!text.includes('\uFFFD'));
		});

		it('starts small and grows only as output arrives', () => {
			const buffer = new HeadTailBuffer(10 * 1024 * 1024);
			buffer.push(Buffer.from('hello\n'));
			assert.ok(buffer.retainedBytes <= 8192);
			assert.equal(buffer.toText().text, 'hello\n');
		});

		it('drops everything after the head when the tail share is zero', () => {
			const buffer = new HeadTailBuffer(4, 1);
			buffer.push(Buffer.from('ab\ncd\nef'));
			const { text, info } = buffer.toText();
			assert.equal(text, 'ab\nc\n[… 1 line / 4 B omitted …]');
			assert.equal(info.linesOmitted, 1);
			assert.equal(info.keptLines, 2);
		});
	});
});

describe('truncate: the edges of each rule', () => {
	it('keeps the fraction of a count', () => {
		assert.equal(formatCount(1234.5), '1,234.5');
		assert.equal(formatCount(0.25), '0.25');
	});

	it('knows the length of a sequence from its lead byte, at every boundary of the ranges', () => {
		// 'a', the lead byte, then three continuation bytes; the prefix that fits in 1–5 bytes.
		const cuts = (lead: number) => [1, 2, 3, 4, 5].map(n => utf8PrefixLength(Buffer.from([0x61, lead, 0x80, 0x80, 0x80]), n));
		assert.deepEqual(cuts(0xc0), [1, 1, 3, 4, 5], '2 bytes');
		assert.deepEqual(cuts(0xdf), [1, 1, 3, 4, 5], '2 bytes');
		assert.deepEqual(cuts(0xe0), [1, 1, 1, 4, 5], '3 bytes');
		assert.deepEqual(cuts(0xef), [1, 1, 1, 4, 5], '3 bytes');
		assert.deepEqual(cuts(0xf0), [1, 1, 1, 1, 5], '4 bytes');
		assert.deepEqual(cuts(0xf7), [1, 1, 1, 1, 5], '4 bytes');
		assert.deepEqual(cuts(0xf8), [1, 2, 3, 4, 5], 'no UTF-8 lead: cut where asked');
		assert.deepEqual(cuts(0xff), [1, 2, 3, 4, 5], 'no UTF-8 lead: cut where asked');
	});

	it('skips at most three continuation bytes at the start of a suffix', () => {
		assert.equal(utf8SuffixStart(Buffer.from([0x61, 0x80, 0x80, 0x80, 0x80, 0x61]), 5), 1, 'four in a row: not UTF-8, cut where asked');
		assert.equal(utf8SuffixStart(Buffer.from([0xf0, 0x80, 0x80, 0x80, 0x61]), 4), 4, 'three: the next character');
	});

	it('never leaves half of a surrogate pair at the cut, at either end of the high-surrogate range', () => {
		assert.equal(cutLine('\u{10000}abc', 1).text, ' [… line cut: 5 more chars …]');
		assert.equal(cutLine('\u{10FC00}x', 1).text, ' [… line cut: 3 more chars …]');
		assert.equal(cutLine('\udbffx', 1).text, ' [… line cut: 2 more chars …]');
		assert.equal(cutLine('\udc00x', 1).text, '\udc00 [… line cut: 1 more char …]', 'a low surrogate is no pair start');
	});

	it('keeps a piece of an edge line when one line may be kept and none fits whole, at either end', () => {
		const cut = (text: string, options: TruncateOptions) => { const result = truncateText(text, options); return [result.text, result.info.keptLines, result.info.linesOmitted]; };
		assert.deepEqual(cut('a😀€😀bbba€ éééé \n\n€\nb \n\n\n', { maxBytes: 14, maxLines: 1, keep: 'head' }), ['a😀€😀bb\n[… 5 lines / 26 B omitted …]', 1, 5]);
		assert.deepEqual(cut('b😀éabb😀€😀aééa€ba😀   bb€ \n😀😀bé😀é ', { maxBytes: 4, maxLines: 1, keep: 'tail' }), ['[… 1 line / 61 B omitted …]\né ', 1, 1]);
		assert.deepEqual(cut('😀éb é€b\n\n€😀 €a😀é  é€ b\nbéb😀€€ébb', { maxBytes: 4, maxLines: 1, keep: 'middle' }), ['[… 3 lines / 58 B omitted …]\nébb', 1, 3]);
	});

	it('keeps a line that fills the byte cap exactly', () => {
		assert.equal(truncateText('aéb\n\n😀€€ébbaé😀€a€ééa\n😀\na😀😀b😀ba😀a', { maxBytes: 6, maxLines: 5, keep: 'head' }).text, 'aéb\n\n[… 3 lines / 60 B omitted …]');
		assert.equal(truncateText('b€\n\n😀é\n\n\néaé €a\n€bb😀a😀é ', { maxBytes: 26, maxLines: 5, keep: 'middle' }).text, 'b€\n\n[… 4 lines / 20 B omitted …]\n€bb😀a😀é ');
	});

	it('rounds sizes of ten units and more to whole numbers', () => {
		assert.equal(formatBytes(177_674), '174 KB');
	});

	describe('HeadTailBuffer', () => {
		it('counts a line kept in both head and tail as kept, and a line kept nowhere as omitted', () => {
			const both = new HeadTailBuffer(24, 0.25);
			both.push(Buffer.from(' b\nb€b€a€€bé\n€a😀'));
			assert.deepEqual(both.toText().info, { truncated: true, totalBytes: 30, totalLines: 3, keptBytes: 22, keptLines: 3, bytesOmitted: 8, linesOmitted: 0 });
			const none = new HeadTailBuffer(0);
			none.push(Buffer.from('b  €bbbé'));
			assert.equal(none.toText().text, '[… 1 line / 11 B omitted …]');
		});

		it('holds exactly its two stores, growing the tail by doubling only as far as needed', () => {
			assert.equal(new HeadTailBuffer(100).retainedBytes, 100);
			const buffer = new HeadTailBuffer(40_000);
			buffer.push(Buffer.alloc(10_000, 'a'));
			buffer.push(Buffer.alloc(8192, 'b'));
			assert.equal(buffer.retainedBytes, 10_000 + 8192);
		});

		it('keeps every byte in order while the tail grows', () => {
			const text = Array.from({ length: 3000 }, (_, i) => `line ${i}\n`).join('');
			const buffer = new HeadTailBuffer(100_000);
			for (let at = 0; at < text.length; at += 5000) buffer.push(Buffer.from(text.slice(at, at + 5000)));
			assert.deepEqual(buffer.toText(), { text, info: { truncated: false, totalBytes: text.length, totalLines: 3000, keptBytes: text.length, keptLines: 3000, bytesOmitted: 0, linesOmitted: 0 } });
		});

		it('ignores empty chunks', () => {
			const buffer = new HeadTailBuffer(100);
			buffer.push(Buffer.from('a\n'));
			buffer.push(Buffer.alloc(0));
			assert.equal(buffer.toText().info.totalLines, 1);
		});

		it('counts one long line cut in the middle as kept, not omitted', () => {
			const both = new HeadTailBuffer(100);
			both.push(Buffer.alloc(1000, 'x'));
			assert.deepEqual(both.toText().info, { truncated: true, totalBytes: 1000, totalLines: 1, keptBytes: 100, keptLines: 1, bytesOmitted: 900, linesOmitted: 0 });
			const headOnly = new HeadTailBuffer(10, 1);
			headOnly.push(Buffer.alloc(100, 'x'));
			assert.deepEqual(headOnly.toText(), { text: 'xxxxxxxxxx\n[… 90 B omitted …]', info: { truncated: true, totalBytes: 100, totalLines: 1, keptBytes: 10, keptLines: 1, bytesOmitted: 90, linesOmitted: 0 } });
		});
	});
});
