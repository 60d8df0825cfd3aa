import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { CAPTURE_BYTES, rgJsonHandler, RgJsonLine } from '../../src/core/search/rgJson';
import { LineHandler, LineSplitter, rgPath } from '../../src/core/search/ripgrep';
import { windowPattern } from '../../src/tools/grepWindows';
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

	function messagesOf(output: Buffer, wholeBytes: number, sizes: () => number): RgJsonLine[] {
		const messages: RgJsonLine[] = [];
		const handler = rgJsonHandler(message => void messages.push(message), wholeBytes);
		feed(new LineSplitter(handler, handler.maxLineBytes), output, sizes);
		return messages;
	}

	it('reads long messages as they stream: the same lines, lengths, offsets and bytes as a whole parse', () => {
		const tree = makeTree({ 'f.txt': file });
		try {
			// As grep's second pass asks: one match per line, from up to 100 bytes before the pattern to the
			// line's end (so its text holds the window; cut inside a character it comes as base64).
			const { regex } = windowPattern({ pattern: 'needle', fixedStrings: false, pcre2: false });
			const output = execFileSync(rgPath(), ['--json', '--no-config', '--context', '1', '--regexp', regex, '--', 'f.txt'], { cwd: tree.root });
			const whole = messagesOf(output, 1 << 20, () => output.length);
			assert.deepEqual(whole.map(message => [message.type, message.lineNumber]), [['match', 1], ['match', 2], ['match', 3], ['context', 4], ['match', 5], ['context', 6], ['match', 7]]);
			for (const [seed, max] of [[1, 7], [2, 100], [3, 5000], [4, 70_000]]) {
				const streamed = messagesOf(output, 64, chunker(seed, max));
				assert.equal(streamed.length, whole.length);
				for (const [i, message] of streamed.entries()) {
					const raw = lines[message.lineNumber - 1];
					assert.equal(message.path, 'f.txt');
					assert.equal(message.type, whole[i].type);
					assert.equal(message.lineNumber, whole[i].lineNumber);
					assert.equal(message.matchStart, whole[i].matchStart);
					assert.ok(!('whole' in message.text));
					const { length, from, bytes } = message.text as { length: number; from: number; bytes: Buffer };
					assert.equal(length, raw.length, `line ${message.lineNumber}: its length without the line ending`);
					assert.equal(from, message.matchStart ?? 0);
					assert.deepEqual(bytes, raw.subarray(from, from + CAPTURE_BYTES), `line ${message.lineNumber}: the bytes from ${from}`);
				}
			}
		} finally {
			tree.cleanup();
		}
	});

	it('skips begin, end and summary messages and anything that is not rg\'s shape', () => {
		const junk = Buffer.from([
			'{"type":"begin","data":{"path":{"text":"f.txt"}}}',
			`{"type":"match","data":{"path":{"text":"f.txt"},${' '.repeat(200)}`,
			`{"type":"match","nonsense":"${'x'.repeat(300)}"}`,
			'not json at all',
			'{"type":"match","data":{"path":{"text":"f.txt"},"lines":{"text":"ok\\n"},"line_number":9,"absolute_offset":0,"submatches":[{"match":{"text":"ok"},"start":0,"end":2}]}}',
		].join('\n'));
		for (const wholeBytes of [64, 1 << 20]) {
			const messages = messagesOf(junk, wholeBytes, chunker(5, 50));
			assert.deepEqual(messages.map(message => message.lineNumber), [9], `wholeBytes ${wholeBytes}`);
		}
	});
});
