import * as assert from 'node:assert/strict';
import { countLineEdits, lineCounts } from '../../src/core/changes/diff';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { decodeFileLines, encodeFileLines, FileLines, lineKeys } from '../../src/core/patch/fileLines';
import { stagePatch } from '../../src/core/patch/apply';
import { parsePatch } from '../../src/core/patch/parse';
import type { ToolContext } from '../../src/core/context';
import { makeTree } from './helpers';

/** A small deterministic generator (xorshift), so a failure names its seed and can be replayed. */
function random(seed: number): (below: number) => number {
	let state = seed >>> 0 || 1;
	return below => {
		state ^= state << 13;
		state >>>= 0;
		state ^= state >>> 17;
		state ^= state << 5;
		state >>>= 0;
		return state % below;
	};
}

/** Text with few distinct lines (repeats, as braces and blank lines repeat), mixed endings, maybe a BOM and no final newline. */
function randomText(pick: (below: number) => number): string {
	const words = ['', '}', '\treturn x;', 'const a = 1;', 'b\r', ' c ', 'x = y'];
	const endings = ['\n', '\n', '\n', '\r\n'];
	let text = pick(5) === 0 ? '\ufeff' : '';
	const count = pick(30);
	for (let line = 0; line < count; line++) text += words[pick(words.length)] + endings[pick(endings.length)];
	if (pick(3) === 0) text += words[pick(words.length)];
	return text;
}

/** The same file with lines inserted, removed, replaced and re-ended, and maybe its final newline flipped. */
function edited(file: FileLines, pick: (below: number) => number): FileLines {
	const lines = [...file.lines];
	const endings = [...file.endings];
	for (let step = pick(6); step > 0; step--) {
		const at = pick(lines.length + 1);
		const kind = pick(4);
		if (kind === 0 || lines.length === 0) {
			lines.splice(at, 0, `new ${pick(3)}`);
			endings.splice(at, 0, file.eol);
		} else if (kind === 1) {
			lines.splice(Math.min(at, lines.length - 1), 1);
			endings.splice(Math.min(at, endings.length - 1), 1);
		} else if (kind === 2) {
			lines[Math.min(at, lines.length - 1)] = `changed ${pick(3)}`;
		} else {
			endings[Math.min(at, endings.length - 1)] = pick(2) ? '\r\n' : '\n';
		}
	}
	// Only the last line may lack an ending.
	for (let index = 0; index < endings.length - 1; index++) if (endings[index] === '') endings[index] = file.eol;
	if (endings.length > 0 && pick(4) === 0) endings[endings.length - 1] = endings[endings.length - 1] === '' ? '\n' : '';
	return { bom: file.bom, eol: file.eol, lines, endings };
}

describe('line counts from the lines staging holds', () => {
	it('are lineCounts\' own for random texts and edits: endings mixed, a BOM, no final newline, repeated lines', () => {
		for (let seed = 1; seed <= 3000; seed++) {
			const pick = random(seed);
			const before = decodeFileLines(Buffer.from(randomText(pick)), 'f.txt');
			const after = edited(before, pick);
			const expected = lineCounts({ path: '/f.txt', displayPath: 'f.txt', before: encodeFileLines(before), after: encodeFileLines(after) });
			assert.deepEqual(countLineEdits(lineKeys(before), lineKeys(after)), expected, `seed ${seed}`);
		}
	});

	it('are lineCounts\' own past the work limit too: a large region rewritten whole counts every line', () => {
		const before = decodeFileLines(Buffer.from(Array.from({ length: 6000 }, (_, i) => `old ${i}\n`).join('')), 'big.txt');
		const after = decodeFileLines(Buffer.from(Array.from({ length: 6000 }, (_, i) => `new ${i}\n`).join('')), 'big.txt');
		const counts = countLineEdits(lineKeys(before), lineKeys(after));
		assert.deepEqual(counts, { added: 6000, removed: 6000 });
		assert.deepEqual(counts, lineCounts({ path: '/big.txt', displayPath: 'big.txt', before: encodeFileLines(before), after: encodeFileLines(after) }));
	});

	it('a patch\'s staged counts are those of its changes; a file changed twice, moved or added is counted at the commit', async () => {
		const tree = makeTree({ 'a.txt': 'one\r\ntwo\r\nthree', 'b.txt': 'x\ny\nz\n', 'c.txt': 'keep\nmove\n' });
		try {
			const env = createNodeEnvironment({ roots: [tree.root], storageDir: tree.file('.storage') });
			const ctx: ToolContext = { tool: 'apply_patch', boundary: await env.boundary(), host: env.host, state: env.state, settings: env.settings(), signal: new AbortController().signal, note: () => undefined };
			const patch = [
				'*** Begin Patch',
				'*** Update File: a.txt', '@@', ' one', '-two', '+2', '+2b', ' three', '*** End of File',
				'*** Update File: b.txt', '@@', '-x', '+X',
				'*** Update File: b.txt', '@@', ' X', '-y',
				'*** Update File: c.txt', '*** Move to: d.txt', '@@', ' keep', '-move', '+moved',
				'*** Add File: e.txt', '+new',
				'*** End Patch',
			].join('\n');
			const staged = await stagePatch(parsePatch(patch), ctx);
			assert.deepEqual(staged.files.map(file => file.path), ['a.txt', 'b.txt', 'c.txt', 'e.txt']);
			assert.deepEqual(staged.lineCounts, [{ added: 2, removed: 1 }, undefined, undefined, undefined]);
			assert.deepEqual(staged.lineCounts[0], lineCounts(staged.changes[0]));
		} finally {
			tree.cleanup();
		}
	});
});
