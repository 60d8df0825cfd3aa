import * as assert from 'node:assert/strict';
import { replaceExactBytes } from '../../src/core/text/byteEdit';
import { wholeBytes } from '../../src/core/files/splicedBytes';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const edited = (text: string | Buffer, edits: { oldText: string; newText: string; replaceAll?: boolean }[]) => {
	const result = replaceExactBytes(typeof text === 'string' ? bytes(text) : text, edits);
	return result && { text: Buffer.from(wholeBytes(result.after)).toString('utf8'), counts: result.counts };
};

describe('replaceExactBytes', () => {
	it('replaces one exact occurrence, multi-byte text around it kept byte for byte', () => {
		assert.deepEqual(edited('größe 😀\nold line\nÜnïcödé\n', [{ oldText: 'old line', newText: 'neue Zeile ✓' }]), { text: 'größe 😀\nneue Zeile ✓\nÜnïcödé\n', counts: [1] });
	});

	it('applies edits in turn, each to the result of the one before, and replaces all when asked', () => {
		assert.deepEqual(edited('a b a b a\n', [{ oldText: 'a', newText: 'x', replaceAll: true }, { oldText: 'x b x', newText: 'y' }]), { text: 'y b x\n', counts: [3, 1] });
		// Non-overlapping, left to right, as the text search counts them.
		assert.deepEqual(edited('aaaa', [{ oldText: 'aa', newText: 'b', replaceAll: true }]), { text: 'bb', counts: [2] });
	});

	it('keeps a BOM and never matches across it; fits the model\'s CRLF to the file\'s LF', () => {
		const result = replaceExactBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('one\ntwo\n')]), [{ oldText: '\ufeffone\r\ntwo', newText: 'uno\r\ndos' }]);
		assert.deepEqual([...wholeBytes(result!.after).subarray(0, 3)], [0xef, 0xbb, 0xbf]);
		assert.equal(Buffer.from(wholeBytes(result!.after).subarray(3)).toString('utf8'), 'uno\ndos\n');
	});

	it('leaves to the text path what it cannot do exactly: CRLF files, no match, several matches, binary or invalid UTF-8', () => {
		assert.equal(edited('one\r\ntwo\r\n', [{ oldText: 'one', newText: '1' }]), undefined);
		assert.equal(edited('one\ntwo\n', [{ oldText: 'three', newText: '3' }]), undefined);
		assert.equal(edited('x x\n', [{ oldText: 'x', newText: 'y' }]), undefined);
		assert.equal(edited('one\ntwo\n', [{ oldText: 'one', newText: '1' }, { oldText: 'one', newText: '2' }]), undefined);
		assert.equal(edited(Buffer.from([0x61, 0x00, 0x62]), [{ oldText: 'a', newText: 'c' }]), undefined);
		assert.equal(edited(Buffer.from([0x61, 0xff, 0x62]), [{ oldText: 'a', newText: 'c' }]), undefined);
		assert.equal(edited('one\n', [{ oldText: '', newText: 'x' }]), undefined);
	});
});
