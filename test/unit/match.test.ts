import * as assert from 'node:assert/strict';
import { findLines, locateText, nearestLines, normalizeUnicode } from '../../src/core/match';
import { decodeText, detectFormat, encodeText, fitToFormat, lineTable, linesAt, withEol } from '../../src/core/text';

describe('match: findLines (blocks of lines, each tolerance level)', () => {
	const file = ['function a() {', '\treturn 1;', '}', '', 'function b() {', '\treturn 1;', '}'];

	it('finds every start of a block, from a line on, or only at the end', () => {
		assert.deepEqual(findLines(file, ['function b() {', '\treturn 1;'], 'exact'), [4]);
		assert.deepEqual(findLines(file, ['\treturn 1;', '}'], 'exact'), [1, 5]);
		assert.deepEqual(findLines(file, ['\treturn 1;'], 'exact', 2), [5]);
		assert.deepEqual(findLines(file, ['}'], 'exact', 0, true), [6]);
		assert.deepEqual(findLines(file, ['function a() {'], 'exact', 0, true), []);
		assert.deepEqual(findLines(['a', 'b', 'a', 'b'], ['a', 'b'], 'exact'), [0, 2]);
	});

	it('tolerates trailing whitespace, then indentation, then Unicode look-alikes, each at its level only', () => {
		assert.deepEqual(findLines(['x = 1;   ', 'y'], ['x = 1;', 'y'], 'exact'), []);
		assert.deepEqual(findLines(['x = 1;   ', 'y'], ['x = 1;', 'y'], 'trailing'), [0]);
		assert.deepEqual(findLines(['    x = 1;', 'y'], ['x = 1;', 'y'], 'trailing'), []);
		assert.deepEqual(findLines(['    x = 1;', 'y'], ['x = 1;', 'y'], 'trim'), [0]);
		assert.deepEqual(findLines(['say(“hi” — now)'], ['say("hi" - now)'], 'trim'), []);
		assert.deepEqual(findLines(['say(“hi” — now)'], ['say("hi" - now)'], 'unicode'), [0]);
		assert.deepEqual(findLines(['alpha'], ['beta'], 'unicode'), []);
	});

	it('names the nearest block for not-found messages', () => {
		const near = nearestLines(file, ['function b() {', '\treturn 2;', '}']);
		assert.equal(near?.index, 4);
		assert.ok(near!.similarity > 0.6);
		assert.equal(nearestLines(file, ['completely unrelated text here']), undefined);
	});
});

describe('match: locateText (edit_file)', () => {
	it('finds exact occurrences with their character ranges', () => {
		assert.deepEqual(locateText('a b a', 'b'), { kind: 'found', level: 'exact', ranges: [{ start: 2, end: 3 }] });
	});

	it('reports the 1-based lines of every occurrence when ambiguous', () => {
		assert.deepEqual(locateText('x\ny\nx\n\nx', 'x'), { kind: 'ambiguous', level: 'exact', lines: [1, 3, 5] });
	});

	it('reports several places as ambiguous at every tolerant level too, never just the first', () => {
		assert.deepEqual(locateText('v = 1 \nw\nv = 1\t\n', 'v = 1\n'), { kind: 'ambiguous', level: 'trailing', lines: [1, 3] });
		assert.deepEqual(locateText('\tgo();\nx\n\t\tgo();\n', ' go();\n'), { kind: 'ambiguous', level: 'trim', lines: [1, 3] });
		assert.deepEqual(locateText('say “hi”\nsay ‘x’\nsay “hi”\n', 'say "hi"'), { kind: 'ambiguous', level: 'unicode', lines: [1, 3] });
		assert.deepEqual(locateText(' a – b \nc\n\ta — b\t\n', 'a - b\n'), { kind: 'ambiguous', level: 'unicode', lines: [1, 3] });
	});

	it('returns every non-overlapping occurrence with `all`', () => {
		const found = locateText('aaaa', 'aa', true);
		assert.equal(found.kind, 'found');
		assert.deepEqual(found.kind === 'found' && found.ranges.map(r => r.start), [0, 2]);
	});

	it('locates whole lines at the tolerant levels, taking the line ending when the quote ends with one', () => {
		const text = 'keep\nvalue = 1   \nafter\n';
		const found = locateText(text, 'value = 1\n');
		assert.equal(found.kind, 'found');
		if (found.kind === 'found') {
			assert.equal(found.level, 'trailing');
			assert.equal(text.slice(found.ranges[0].start, found.ranges[0].end), 'value = 1   \n');
		}
	});

	it('maps Unicode look-alikes one to one, so a mid-line quote is found in place', () => {
		const text = 'He said “hello” — twice.';
		const found = locateText(text, '"hello" -');
		assert.equal(found.kind === 'found' && text.slice(found.ranges[0].start, found.ranges[0].end), '“hello” —');
		assert.equal(normalizeUnicode('‘a’ “b” – — \u00a0'), '\'a\' "b" - -  ');
	});

	it('re-indents a replacement quoted with a different indentation unit', () => {
		const text = 'if (x) {\n\tif (y) {\n\t\tgo();\n\t}\n}\n';
		const found = locateText(text, 'if (y) {\n    go();\n}');
		assert.equal(found.kind, 'found');
		if (found.kind === 'found') {
			assert.equal(found.level, 'trim');
			const reindent = found.ranges[0].reindent!;
			assert.equal(reindent('if (y) {\n    go();\n    if (z) {\n        stop();\n    }\n}'), '\tif (y) {\n\t\tgo();\n\t\tif (z) {\n\t\t\tstop();\n\t\t}\n\t}');
		}
	});

	it('never matches blank quotes loosely', () => {
		assert.deepEqual(locateText('a\n\n  \nb', '   \n'), { kind: 'none' });
		assert.deepEqual(locateText('abc', ''), { kind: 'none' });
	});
});

describe('text: format detection and preservation', () => {
	it('detects the dominant line ending, mixed endings, BOM and final newline', () => {
		assert.deepEqual(detectFormat('a\r\nb\r\nc\n'), { bom: false, eol: '\r\n', mixedEol: true, finalNewline: true });
		assert.deepEqual(detectFormat('\ufeffa\nb'), { bom: true, eol: '\n', mixedEol: false, finalNewline: false });
		assert.deepEqual(detectFormat(''), { bom: false, eol: '\n', mixedEol: false, finalNewline: false });
	});

	it('decodes strictly (invalid UTF-8 is refused) and round-trips the BOM', () => {
		assert.equal(decodeText(Buffer.from([0x63, 0xe9])), undefined);
		const decoded = decodeText(Buffer.from('\ufeffhé\r\n', 'utf8'))!;
		assert.equal(decoded.text, 'hé\r\n');
		assert.deepEqual(Buffer.from(encodeText(decoded.text, decoded.format)), Buffer.from('\ufeffhé\r\n', 'utf8'));
	});

	it('fits model text to the file\'s line endings', () => {
		assert.equal(withEol('a\nb\r\nc', '\r\n'), 'a\r\nb\r\nc');
		assert.equal(withEol('a\r\nb\n', '\n'), 'a\nb\n');
		assert.equal(fitToFormat('\ufeffx\ny', detectFormat('1\r\n2\r\n')), 'x\r\ny');
	});

	it('maps lines to offsets and offsets to lines', () => {
		const table = lineTable('ab\r\ncd\n\nz');
		assert.deepEqual(table.lines, ['ab', 'cd', '', 'z']);
		assert.deepEqual(table.starts, [0, 4, 7, 8]);
		assert.deepEqual(table.ends, [2, 6, 7, 9]);
		assert.deepEqual(lineTable('').lines, ['']);
		assert.deepEqual(lineTable('a\n').lines, ['a']);
		assert.deepEqual(linesAt('a\nb\nc', [0, 2, 4]), [1, 2, 3]);
	});
});
