import * as assert from 'node:assert/strict';
import { findLines, locateText, nearestLines, normalizeUnicode } from '../../src/core/text/match';
import { decodeText, detectFormat, encodeText, fitToFormat, lineTable, linesAt, withEol } from '../../src/core/text/text';

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

describe('match: the corners of tolerant locating', () => {
	/** [start, end, located text] of each range. */
	const ranges = (text: string, needle: string, all = false) => {
		const found = locateText(text, needle, all);
		assert.equal(found.kind, 'found', JSON.stringify(found));
		return found.kind === 'found' ? found.ranges.map(range => [range.start, range.end, text.slice(range.start, range.end)]) : [];
	};
	/** The replacement as the located place re-indents it; undefined when it is used as written. */
	const reindented = (text: string, needle: string, replacement: string) => {
		const found = locateText(text, needle);
		assert.equal(found.kind, 'found', JSON.stringify(found));
		return found.kind === 'found' ? found.ranges[0].reindent?.(replacement) : undefined;
	};

	it('maps every look-alike it knows to its ASCII form', () => {
		assert.equal(normalizeUnicode('\u2018\u2019\u201a\u201b\u2032\u00b4'), '\'\'\'\'\'\'');
		assert.equal(normalizeUnicode('\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb'), '"""""""');
		assert.equal(normalizeUnicode('\u2010\u2011\u2012\u2013\u2014\u2015\u2212'), '-------');
		assert.equal(normalizeUnicode('\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000'), ' '.repeat(15));
		assert.equal(normalizeUnicode('plain \u00e9 text'), 'plain \u00e9 text');
		assert.deepEqual(findLines(['  say “hi”  '], ['say "hi"'], 'unicode'), [0]);
	});

	it('takes whole lines, with or without the last line ending, CRLF included', () => {
		assert.deepEqual(ranges('x = 1  \r\ny\r\n', 'x = 1\r\n'), [[0, 9, 'x = 1  \r\n']]);
		assert.deepEqual(ranges('a  \nb  \nc\n', 'a\nb'), [[0, 7, 'a  \nb  ']]);
		assert.deepEqual(ranges('x\na  ', 'a\n'), [[2, 5, 'a  ']], 'the last line has no ending to take');
		assert.deepEqual(ranges('a  \n\nb\n', 'a\n\nb'), [[0, 6, 'a  \n\nb']], 'a blank line inside the quote is fine');
	});

	it('never returns overlapping places with `all`, and counts one at the first line', () => {
		assert.deepEqual(ranges('a \na \na \n', 'a\na\n', true), [[0, 6, 'a \na \n']]);
		assert.deepEqual(ranges('a \nb \na \nb \n', 'a\nb\n', true), [[0, 6, 'a \nb \n'], [6, 12, 'a \nb \n']]);
	});

	it('re-indents at the look-alike level too, by the unit the quoted lines reveal', () => {
		assert.equal(reindented('\tsay “hi”\n', '  say "hi"\n', '  say "bye"\n  more\n'), '\tsay "bye"\n\tmore\n');
		// The shortest quoted indentation is the base even when it is neither first nor last.
		assert.equal(reindented('\t\tx\n\ty\n\t\tz\n', '    x\n  y\n    z', '    x\n  y\n      w\n    z\nu\n   \n'), '\t\tx\n\ty\n\t\t\tw\n\t\tz\nu\n   \n');
		// A blank line in the quote says nothing about indentation.
		assert.equal(reindented('\tif (a) {\n\n\t\tgo();\n\t}\n', 'if (a) {\n\n    go();\n}', 'if (a) {\n\n    stop();\n}'), '\tif (a) {\n\n\t\tstop();\n\t}');
		assert.equal(reindented('\tif (a) {\n\n\t\tgo();\n\t}\n', 'if (a) {\n    \n    go();\n}', 'if (a) {\n    \n    stop();\n}'), '\tif (a) {\n    \n\t\tstop();\n\t}', 'nor does a line of only spaces');
		// The unit is the smallest step, wherever its line is in the quote.
		assert.equal(reindented('\ta\n\t\t\tb\n\t\tc\n\t\t\td\n', '  a\n      b\n    c\n      d', '  a\n          e'), '\ta\n\t\t\t\t\te');
		// Deeper than any quoted line: whole units convert, a leftover is kept; shallower than the base stays.
		assert.equal(reindented('\ta\n\t\tb\n', '  a\n    b', '  a\n     odd\n'), '\ta\n\t\t odd\n');
		assert.equal(reindented('a\n\tb\n', '    a\n      b', '    a\n        c\n  d'), 'a\n\t\tc\n  d');
	});

	it('uses the replacement as written when the quoted indentation is no constant shift', () => {
		// One quoted indentation standing for two in the file.
		assert.equal(reindented('\ta\n\t\tb\n', '  a\n  b', '  a\n  c'), undefined);
		// Levels that do not follow one unit: known indentations still map, others only get the base.
		assert.equal(reindented('\ta\n\t\tb\n\t\t\t\tc\n', '  a\n    b\n      c', '  a\n    b\n        d'), '\ta\n\t\tb\n\t      d');
		// Steps of two and three spaces: no unit, so an indentation the quote lacks keeps its extra as written.
		assert.equal(reindented('a\n\tb\n\tc\n', 'a\n  b\n   c', 'a\n    d'), 'a\n    d');
		// Indentation alike, only trailing space and look-alikes differ: nothing to re-indent.
		assert.equal(reindented('\tsay “hi”  \n', '\tsay "hi"\n', '\tsay "bye"\n'), undefined);
	});
});

describe('match: nearestLines (for "not found" messages)', () => {
	it('scores by the Dice similarity of character pairs, line by line', () => {
		assert.deepEqual(nearestLines(['abc'], ['abd']), { index: 0, similarity: 0.5 });
		assert.deepEqual(nearestLines(['x'], ['x']), { index: 0, similarity: 1 });
		assert.deepEqual(nearestLines(['a', ''], ['a', '']), { index: 0, similarity: 1 });
		assert.deepEqual(nearestLines(['\tsay “hi”'], ['  say "hi"  ']), { index: 0, similarity: 1 }, 'whitespace and look-alikes aside');
		assert.equal(nearestLines(['alpha beta'], ['gamma delta']), undefined);
		assert.equal(nearestLines(['aaaa'], ['a']), undefined, 'one character against a run of pairs');
	});

	it('prefers the earliest of equally good blocks, and counts lines past the end as unlike', () => {
		const file = ['zzz', 'function f() {', '  return 1;', '}', 'function f() {', '  return 1;', '}'];
		assert.deepEqual(nearestLines(file, ['function f() {', '  return 2;', '}']), { index: 1, similarity: 11 / 12 });
		assert.deepEqual(nearestLines(['q', 'w', 'function g(a) {'], ['function g(a) {', 'body', 'end']), { index: 2, similarity: 1 / 3 });
		assert.deepEqual(nearestLines(['a', 'function g(a) {', 'x'], ['', 'function g(a) {', 'x']), { index: 0, similarity: 2 / 3 }, 'placed by its first non-blank line');
	});

	it('scores the whole block: the best first line alone does not win', () => {
		const file = ['function load() {', 'zzz', 'qqq', 'function loads() {', 'const data = read();', 'return data;'];
		assert.equal(nearestLines(file, ['function load() {', 'const data = read();', 'return data;'])?.index, 3);
	});

	it('finds a near miss however deep its indentation and however many lines look like its first', () => {
		assert.equal(nearestLines(['}', `${' '.repeat(24)}n = 1;`, '}'], ['n = 2;'])?.index, 1);
		const decoys = Array.from({ length: 25 }, (_, i) => `const value${i} = compute();`);
		assert.equal(nearestLines([...decoys, 'const values = compute(input);', 'return values;'], ['const values = compute(inputs);', 'return values;'])?.index, 25);
	});

	it('names no block that is at most 30% alike, even when its first line is the same', () => {
		assert.equal(nearestLines(['function alpha() {', 'zzz', 'qqq', 'yyy'], ['function alpha() {', 'completely', 'different', 'stuff']), undefined);
		const unlike = Array.from({ length: 7 }, (_, i) => 'q'.repeat(i + 2));
		assert.equal(nearestLines(['same one', 'same two', 'same three', ...unlike], ['same one', 'same two', 'same three', ...unlike.map(() => 'xy')]), undefined, 'three of ten lines alike');
	});

	it('gives up on empty files, blank quotes and files too long to search', () => {
		assert.equal(nearestLines([], ['a']), undefined);
		assert.equal(nearestLines(['a'], ['', '  ']), undefined);
		assert.equal(nearestLines([''], ['']), undefined);
		assert.equal(nearestLines(new Array(200_001).fill('a'), ['a']), undefined);
		assert.deepEqual(nearestLines(new Array(200_000).fill('a'), ['a']), { index: 0, similarity: 1 });
	});
});
