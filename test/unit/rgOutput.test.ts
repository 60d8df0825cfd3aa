import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { CAPTURE_BYTES, rgJsonHandler, RgJsonLine, RgJsonMessage } from '../../src/core/search/rgJson';
import { LineHandler, LineSplitter, rgPath, TextLineSplitter } from '../../src/core/search/ripgrep';
import { GREP_LINE_CHARS, windowPattern } from '../../src/tools/grepWindows';
import { makeTree } from './helpers';

/** Chunk sizes from a fixed seed: the same "random" cuts on every run. */
function chunker(seed: number, max: number): () => number {
	let state = seed;
	return () => {
		state = (state * 1103515245 + 12345) % 2147483648;
		return 1 + (state % max);
	};
}

function feed(splitter: LineSplitter, bytes: Buffer, size: () => number): void {
	for (let at = 0; at < bytes.length;) {
		const n = size();
		if (!splitter.push(bytes.subarray(at, at + n))) return;
		at += n;
	}
	splitter.end();
}

describe('LineSplitter', () => {
	const text = Buffer.from(`one\n\n${'x'.repeat(100)}\nlast`);

	it('hands over each line whole, however the chunks fall, and a last line without a newline', () => {
		for (const max of [1, 3, 7, 50, 1000]) {
			const lines: string[] = [];
			feed(new LineSplitter({ line: bytes => void lines.push(bytes.toString()) }, 1024), text, chunker(max, max));
			assert.deepEqual(lines, ['one', '', 'x'.repeat(100), 'last']);
		}
	});

	it('keeps only the first maxLineBytes of a longer line when no one takes the rest', () => {
		const lines: string[] = [];
		feed(new LineSplitter({ line: bytes => void lines.push(bytes.toString()) }, 10), text, chunker(3, 7));
		assert.deepEqual(lines, ['one', '', 'x'.repeat(10), 'last']);
	});

	it('streams a longer line to its long handler: the head, then the rest piece by piece', () => {
		for (const max of [1, 5, 40, 1000]) {
			const lines: string[] = [];
			let long = '';
			const handler: LineHandler = {
				line: bytes => void lines.push(bytes.toString()),
				long: {
					start: head => {
						assert.equal(head.length, 10);
						long = head.toString();
					},
					more: piece => void (long += piece.toString()),
					end: () => void lines.push(`long:${long}`),
				},
			};
			feed(new LineSplitter(handler, 10), text, chunker(max, max));
			assert.deepEqual(lines, ['one', '', `long:${'x'.repeat(100)}`, 'last']);
		}
	});

	it('stops when a handler returns false', () => {
		const lines: string[] = [];
		const splitter = new LineSplitter({ line: bytes => (lines.push(bytes.toString()), lines.length < 2) }, 1024);
		assert.equal(splitter.push(text), false);
		assert.deepEqual(lines, ['one', '']);
	});
});

describe('TextLineSplitter', () => {
	// Multi-byte characters (2, 3 and 4 bytes) that chunks of any size cut through.
	const text = Buffer.from(`é/one\n\n${'€'.repeat(40)}\nx😀\nlast😀`);

	function textFeed(splitter: TextLineSplitter, size: () => number): void {
		for (let at = 0; at < text.length;) {
			const n = size();
			if (!splitter.push(text.subarray(at, at + n))) return;
			at += n;
		}
		splitter.end();
	}

	it('hands over each line decoded whole, however the chunks cut its characters, and a last line without a newline', () => {
		for (const max of [1, 2, 3, 7, 50, 1000]) {
			const lines: string[] = [];
			textFeed(new TextLineSplitter({ text: line => void lines.push(line) }, 1024), chunker(max, max));
			assert.deepEqual(lines, ['é/one', '', '€'.repeat(40), 'x😀', 'last😀'], `chunks of up to ${max} bytes`);
		}
	});

	it('cuts a line longer than its cap to the cap, and skips the rest of it', () => {
		for (const max of [1, 5, 1000]) {
			const lines: string[] = [];
			textFeed(new TextLineSplitter({ text: line => void lines.push(line) }, 10), chunker(max, max));
			assert.deepEqual(lines, ['é/one', '', '€'.repeat(10), 'x😀', 'last😀'], `chunks of up to ${max} bytes`);
		}
	});

	it('stops when a handler returns false', () => {
		const lines: string[] = [];
		const splitter = new TextLineSplitter({ text: line => (lines.push(line), lines.length < 2) }, 1024);
		assert.equal(splitter.push(text), false);
		assert.deepEqual(lines, ['é/one', '']);
	});
});

describe('rgJsonHandler', () => {
	// Lines of every kind rg writes differently: escapes (quotes, backslashes, tabs, control
	// characters), multi-byte text, invalid UTF-8 (base64), CRLF, and lines longer than what is kept.
	const lines: Buffer[] = [
		Buffer.from('plain needle line'),
		Buffer.from(`${'a\t"b\\c\u0001é😀;'.repeat(200)}needle${'z'.repeat(700)}`),
		Buffer.concat([Buffer.from('bad \xff bytes '.repeat(100), 'latin1'), Buffer.from('needle'), Buffer.from([0xfe, 0xff]), Buffer.from('y'.repeat(900))]),
		Buffer.from(`context ${'q'.repeat(2000)}`),
		Buffer.from(`needle at the start ${'é'.repeat(400)}`),
		Buffer.from('x'),
		Buffer.from(`${'w'.repeat(3000)} needle at the end`),
	];
	const endings = ['\n', '\r\n', '\n', '\n', '\r\n', '\n', ''];
	const file = Buffer.concat(lines.flatMap((line, i) => [line, Buffer.from(endings[i])]));

	function messagesOf(output: Buffer, wholeBytes: number, sizes: () => number): RgJsonMessage[] {
		const messages: RgJsonMessage[] = [];
		const handler = rgJsonHandler(message => void messages.push(message), wholeBytes);
		feed(new LineSplitter(handler, handler.maxLineBytes), output, sizes);
		return messages;
	}

	const linesOf = (messages: RgJsonMessage[]) => messages.filter((message): message is RgJsonLine => message.type !== 'end');

	it('reads long messages as they stream: the same lines, lengths, offsets and bytes as a whole parse', () => {
		const tree = makeTree({ 'f.txt': file });
		try {
			// As grep asks: the pattern wrapped so that a line's first match holds its window (up to 100
			// bytes, the pattern, up to 304 bytes; cut inside a character its text comes as base64).
			const { regex } = windowPattern({ pattern: 'needle', fixedStrings: false, pcre2: false });
			const output = execFileSync(rgPath(), ['--json', '--no-config', '--context', '1', '--regexp', regex, '--', 'f.txt'], { cwd: tree.root });
			const whole = linesOf(messagesOf(output, 1 << 20, () => output.length));
			assert.deepEqual(whole.map(message => [message.type, message.lineNumber]), [['match', 1], ['match', 2], ['match', 3], ['context', 4], ['match', 5], ['context', 6], ['match', 7]]);
			const starts = lines.map((_, i) => lines.slice(0, i).reduce((sum, line, j) => sum + line.length + endings[j].length, 0));
			for (const message of whole) {
				assert.equal(message.absoluteOffset, starts[message.lineNumber - 1]);
				assert.equal(message.text.length, lines[message.lineNumber - 1].length, `line ${message.lineNumber}: its length in bytes without the line ending`);
			}
			for (const [seed, max] of [[1, 7], [2, 100], [3, 5000], [4, 70_000]]) {
				const streamed = linesOf(messagesOf(output, 64, chunker(seed, max)));
				assert.equal(streamed.length, whole.length);
				for (const [i, message] of streamed.entries()) {
					const raw = lines[message.lineNumber - 1];
					assert.equal(message.path, 'f.txt');
					assert.equal(message.type, whole[i].type);
					assert.equal(message.lineNumber, whole[i].lineNumber);
					assert.equal(message.absoluteOffset, whole[i].absoluteOffset);
					assert.equal(message.matchStart, whole[i].matchStart);
					assert.ok(!('whole' in message.text));
					const { length, from, bytes } = message.text as { length: number; from: number; bytes: Buffer };
					assert.equal(length, raw.length, `line ${message.lineNumber}: its length without the line ending`);
					assert.equal(from, message.matchStart ?? 0);
					// A context line is kept from its start (CAPTURE_BYTES of it); a match from where the match
					// starts, as much of it as the wrapped match holds: a window at least, or the rest of the line.
					const wanted = message.type === 'context' ? Math.min(CAPTURE_BYTES, raw.length) : Math.min(GREP_LINE_CHARS + 4, raw.length - from);
					assert.ok(bytes.length >= wanted && bytes.length <= CAPTURE_BYTES, `line ${message.lineNumber}: ${bytes.length} bytes kept`);
					assert.deepEqual(bytes, raw.subarray(from, from + bytes.length), `line ${message.lineNumber}: the bytes from ${from}`);
				}
			}
		} finally {
			tree.cleanup();
		}
	});

	it('counts a long line dense with escapes to the byte, whatever escape ends it or a piece cuts', () => {
		// Context lines (kept from their start) between short matches; each long one is thick with
		// escapes (runs of backslashes of every length, quotes, control characters) and ends in a
		// different one, so that both the bulk count and its last two bytes (the line ending) are checked.
		const pieces = ['ab', '\\', '\\\\', '\\\\\\', '"', '\t', '\u0001', '\r', 'é', '/', 'n', 'u0041', '\\u0041'];
		const next = chunker(9, pieces.length);
		const body = (n: number) => Array.from({ length: n }, () => pieces[next() - 1]).join('');
		const endsWith = ['\\', '\\n', '\r', '\u0001', '"', '\\\\\\', 'plain', '\t\r', '\\r', '\\\\\r'];
		const long = endsWith.map(end => Buffer.from(`${body(1500)}${end}`));
		const text = Buffer.concat([...long.flatMap(line => [Buffer.from('needle\n'), line, Buffer.from('\n')]), Buffer.from('needle\n'), long[0]]);
		const tree = makeTree({ 'e.txt': text });
		try {
			const output = execFileSync(rgPath(), ['--json', '--no-config', '--context', '1', '--regexp', 'needle', '--', 'e.txt'], { cwd: tree.root });
			// A line ending in \r is read as ending in \r\n: its \r is not counted.
			const expected = [...long, long[0]].map(line => ({ length: line.length - (line[line.length - 1] === 0x0d ? 1 : 0), head: line.subarray(0, CAPTURE_BYTES) }));
			for (const [seed, max] of [[1, 3], [2, 40], [3, 700], [4, 5000], [5, 70_000]]) {
				const context = linesOf(messagesOf(output, 64, chunker(seed, max))).filter(message => message.type === 'context');
				assert.equal(context.length, expected.length, `seed ${seed}`);
				for (const [i, message] of context.entries()) {
					const { length, from, bytes } = message.text as { length: number; from: number; bytes: Buffer };
					assert.equal(length, expected[i].length, `seed ${seed}, long line ${i + 1}: its length`);
					assert.equal(from, 0);
					assert.deepEqual(bytes, expected[i].head, `seed ${seed}, long line ${i + 1}: its start`);
				}
			}
		} finally {
			tree.cleanup();
		}
	});

	it('wraps a pattern with a word boundary with a tail only, and finds the same lines as the pattern as given', () => {
		const wrapped = (pattern: string) => windowPattern({ pattern, fixedStrings: false, pcre2: false });
		for (const pattern of ['\\bfoo\\b', 'foo\\B', '\\<foo', '\\\\\\bfoo']) assert.equal(wrapped(pattern).lead, 0, pattern);
		// An escaped backslash before the letter is no boundary; a fixed string is never a pattern.
		assert.equal(wrapped('\\\\bfoo').lead, 100);
		assert.equal(windowPattern({ pattern: '\\bfoo', fixedStrings: true, pcre2: false }).lead, 100);
		const text = `${'héllo wörld xfoox '.repeat(4)}\n`.repeat(50) + `${'é'.repeat(400)} foo ${'ü'.repeat(400)}\nfoo\n`;
		const tree = makeTree({ 'u.txt': text });
		try {
			const lines = (regex: string) => {
				const output = execFileSync(rgPath(), ['--json', '--no-config', '--regexp', regex, '--', 'u.txt'], { cwd: tree.root });
				return linesOf(messagesOf(output, 1 << 20, () => output.length)).map(message => [message.lineNumber, message.matchStart]);
			};
			assert.deepEqual(lines(wrapped('\\bfoo\\b').regex), [[51, 801], [52, 0]]);
			assert.deepEqual(lines(wrapped('\\bfoo\\b').regex), lines('\\bfoo\\b'));
		} finally {
			tree.cleanup();
		}
	});

	it('prints for the wrapped pattern exactly what the tail written once prints (the tail twice only speeds rg\'s start)', () => {
		// Lines where each part of a wrapped match is cut short or runs full: a match near the start,
		// near the end, several per line, at the line's last byte, in multi-byte text, in invalid
		// UTF-8 (printed as base64), and a dense line; both variants (with a lead, and a tail only).
		const text = Buffer.concat([
			Buffer.from(`foo${'x'.repeat(500)}\n${'y'.repeat(50)}foo${'z'.repeat(200)}\n${'w'.repeat(1000)}foo\n`),
			Buffer.from(`${'ab foo '.repeat(300)}\n${'é'.repeat(400)}foo${'ü'.repeat(400)}\n${'foo'.repeat(2000)}\n`),
			Buffer.from([0xff, 0xfe, 0x66, 0x6f, 0x6f, 0xc3, 0x0a]),
			Buffer.from(`${'q'.repeat(120)} foo ${'r'.repeat(600)}`),
		]);
		const tree = makeTree({ 'w.txt': text });
		try {
			const search = (regex: string) => execFileSync(rgPath(), ['--json', '--no-config', '--regexp', regex, '--', 'w.txt'], { cwd: tree.root, maxBuffer: 16 << 20 }).toString('utf8').replace(/"elapsed":\{[^}]*\}/g, '').replace(/"(?:secs|nanos|human)":[^,}]*/g, '');
			const tailOnce = '(?-u:[^\\n]){0,304}';
			const variants: [string, string, number][] = [['foo', `(?-u:[^\\n]){0,100}(?:foo)${tailOnce}`, 8], ['\\bfoo\\b', `(?:\\bfoo\\b)${tailOnce}`, 3]];
			for (const [pattern, once, lines] of variants) {
				const { regex } = windowPattern({ pattern, fixedStrings: false, pcre2: false });
				assert.notEqual(regex, once);
				const printed = search(regex);
				assert.equal((printed.match(/"type":"match"/g) ?? []).length, lines, `${pattern}: the lines matched`);
				assert.equal(printed, search(once), pattern);
			}
		} finally {
			tree.cleanup();
		}
	});

	it('counts a line of millions of escapes handed over in one piece', () => {
		// 3.5 million times `a` and a newline inside the line: 7 million tokens, more than one regex
		// pass over them can hold (it overflowed at 6 million); 10.5 MB of JSON in a single chunk.
		const units = 3_500_000;
		const json = `{"type":"context","data":{"path":{"text":"big.txt"},"lines":{"text":"${'a\\n'.repeat(units)}x\\r\\n"},"line_number":7,"absolute_offset":0,"submatches":[]}}\n`;
		const [message] = linesOf(messagesOf(Buffer.from(json), 64, () => json.length));
		assert.equal(message.lineNumber, 7);
		assert.equal(message.text.length, 2 * units + 1);
		assert.deepEqual((message.text as { bytes: Buffer }).bytes, Buffer.from('a\n'.repeat(CAPTURE_BYTES / 2)));
	});

	it('counts a long line that is not valid JSON (an unknown escape, a raw control character) an escape a byte', () => {
		// Not what rg prints: the native JSON decoding refuses such a piece, and the count by escapes takes it.
		const body = `${'ab\\q'.repeat(20_000)}\u0001x\t${'c'.repeat(100)}\\n`;
		const json = `{"type":"context","data":{"path":{"text":"odd.txt"},"lines":{"text":"${body}"},"line_number":3,"absolute_offset":0,"submatches":[]}}\n`;
		for (const [seed, max] of [[1, 50], [2, 5000], [3, 70_000]]) {
			const [message] = linesOf(messagesOf(Buffer.from(json), 64, chunker(seed, max)));
			assert.equal(message.lineNumber, 3);
			assert.equal(message.text.length, 3 * 20_000 + 3 + 100, `seed ${seed}`);
		}
	});

	it('holds a dense line\'s matches to one per window: a line of `a` searched for `a` prints about twice its length', () => {
		const line = 'a'.repeat(300_000);
		const tree = makeTree({ 'a.txt': `${line}\n` });
		try {
			const { regex } = windowPattern({ pattern: 'a', fixedStrings: false, pcre2: false });
			const output = execFileSync(rgPath(), ['--json', '--no-config', '--regexp', regex, '--', 'a.txt'], { cwd: tree.root, maxBuffer: 64 << 20 });
			// The pattern as given would list 300,000 submatches (~15 MB of JSON); wrapped, each match
			// spans ~400 bytes, so there are ~750, and the message is the line plus their texts.
			assert.ok(output.length < 2.5 * line.length, `${output.length} bytes of JSON`);
			const [message] = linesOf(messagesOf(output, 1 << 20, () => output.length));
			assert.equal(message.matchStart, 0);
			assert.equal(message.text.length, line.length);
		} finally {
			tree.cleanup();
		}
	});

	it('reports end messages with their binary offset; skips begin and summary messages and anything not rg\'s shape', () => {
		const junk = Buffer.from([
			'{"type":"begin","data":{"path":{"text":"f.txt"}}}',
			`{"type":"match","data":{"path":{"text":"f.txt"},${' '.repeat(200)}`,
			`{"type":"match","nonsense":"${'x'.repeat(300)}"}`,
			'not json at all',
			'{"type":"match","data":{"path":{"text":"f.txt"},"lines":{"text":"ok\\n"},"line_number":9,"absolute_offset":0,"submatches":[{"match":{"text":"ok"},"start":0,"end":2}]}}',
			'{"type":"match","data":{"path":{"text":"f.txt"},"lines":{"text":"no offset\\n"},"line_number":10,"submatches":[]}}',
			'{"type":"end","data":{"path":{"text":"f.txt"},"binary_offset":null,"stats":{"matches":1}}}',
			'{"type":"end","data":{"path":{"bytes":"Yi5iaW4="},"binary_offset":12,"stats":{"matches":1}}}',
			'{"type":"summary","data":{"elapsed_total":{"secs":0}}}',
		].join('\n'));
		assert.deepEqual(messagesOf(junk, 1 << 20, chunker(5, 50)).map(message => message.type === 'end' ? ['end', message.path, message.binaryOffset] : [message.type, message.lineNumber]), [
			['match', 9], ['end', 'f.txt', undefined], ['end', 'b.bin', 12],
		]);
		// Streamed, long messages of other shapes are skipped as well (an end message is never long).
		assert.deepEqual(linesOf(messagesOf(junk, 64, chunker(5, 50))).map(message => message.lineNumber), [9]);
	});
});
