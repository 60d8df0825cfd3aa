import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { makeHarness, makeTree } from './helpers';

/**
 * Runs a call that must not hang (a named pipe opened by mistake blocks forever): past the
 * deadline the call is cancelled (its rg killed) and the test fails.
 */
async function withDeadline<T>(call: (signal: AbortSignal) => Promise<T>, ms = 10_000): Promise<T> {
	const controller = new AbortController();
	let timer: NodeJS.Timeout | undefined;
	const deadline = new Promise<never>((_, reject) => {
		timer = setTimeout(() => {
			controller.abort();
			reject(new Error(`no answer within ${ms} ms: the call blocked`));
		}, ms);
	});
	try {
		return await Promise.race([call(controller.signal), deadline]);
	} finally {
		clearTimeout(timer);
	}
}

/** Live child processes of this process with this command name (Linux). */
/** Polls `list` until it is empty or the time is up; returns what was last seen. */
async function goneWithin(list: () => number[], ms: number): Promise<number[]> {
	const deadline = Date.now() + ms;
	for (;;) {
		const left = list();
		if (!left.length || Date.now() > deadline) return left;
		await new Promise(resolve => setTimeout(resolve, 50));
	}
}

function childProcessesNamed(name: string): number[] {
	return fs.readdirSync('/proc').filter(entry => /^\d+$/.test(entry)).flatMap(pid => {
		try {
			const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
			const [, comm, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat)!;
			const [state, ppid] = rest.split(' ');
			return comm === name && Number(ppid) === process.pid && state !== 'Z' ? [Number(pid)] : [];
		} catch {
			return [];
		}
	});
}

/** The `path:line:` lines of a grep result, without the header and footer. */
const matchLines = (text: string) => text.split('\n').filter(line => /^[^\s[(].*:\d+: /.test(line) || /^[^\s[(].*:\d+:$/.test(line));

describe('grep', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => {
		tree = makeTree({
			'src/a.ts': 'const alpha = 1;\nconst beta = 2;\n// TODO: alpha again\n',
			'src/b.py': 'def alpha():\n    return "Alpha"\n',
			'src/deep/c.ts': 'export const ALPHA = 3;\n',
			'docs/notes.md': 'No greek here.\nalpha? (maybe)\n',
			'.hidden.ts': 'alpha hidden\n',
			'.gitignore': 'gen/\n',
			'gen/out.ts': 'alpha generated\n',
			'node_modules/pkg/index.js': 'alpha module\n',
			'unicode.txt': 'Grüße, alpha 😀 — ok\n',
			'blob.bin': Buffer.concat([Buffer.from('alpha'), Buffer.from([0, 1, 2, 0])]),
		});
	});
	afterEach(() => tree.cleanup());

	it('returns `path:line: text` grouped by file, with totals', async () => {
		const text = await makeHarness(tree.root).text('grep', { pattern: 'alpha' });
		assert.match(text.split('\n')[0], /^5 matching lines in 4 files for "alpha"; showing 1–5:$/);
		assert.deepEqual(matchLines(text), [
			'docs/notes.md:2: alpha? (maybe)',
			'src/a.ts:1: const alpha = 1;',
			'src/a.ts:3: // TODO: alpha again',
			'src/b.py:1: def alpha():',
			'unicode.txt:1: Grüße, alpha 😀 — ok',
		]);
		// A blank line between files.
		assert.match(text, /docs\/notes\.md:2: alpha\? \(maybe\)\n\nsrc\/a\.ts:1:/);
	});

	it('ignoreCase and fixedStrings', async () => {
		const h = makeHarness(tree.root);
		const insensitive = matchLines(await h.text('grep', { pattern: 'alpha', ignoreCase: true }));
		assert.ok(insensitive.includes('src/deep/c.ts:1: export const ALPHA = 3;'));
		assert.ok(insensitive.includes('src/b.py:2:     return "Alpha"'));
		assert.deepEqual(matchLines(await h.text('grep', { pattern: 'alpha?', fixedStrings: true })), ['docs/notes.md:2: alpha? (maybe)']);
	});

	it('shows context lines marked with -, and -- between separate groups', async () => {
		const text = await makeHarness(tree.root).text('grep', { pattern: 'alpha', path: 'src/a.ts', context: 1 });
		assert.match(text, /src\/a\.ts:1: const alpha = 1;\nsrc\/a\.ts-2- const beta = 2;\nsrc\/a\.ts:3: \/\/ TODO: alpha again/);
		const apart = makeTree({ 'f.txt': 'hit\n1\n2\n3\n4\nhit\n' });
		try {
			const separated = await makeHarness(apart.root).text('grep', { pattern: 'hit', context: 1 });
			assert.match(separated, /f\.txt:1: hit\nf\.txt-2- 1\n--\nf\.txt-5- 4\nf\.txt:6: hit/);
		} finally {
			apart.cleanup();
		}
	});

	it('narrows with glob (one, or several comma-separated) and exclude', async () => {
		const h = makeHarness(tree.root);
		assert.deepEqual(matchLines(await h.text('grep', { pattern: 'alpha', glob: '*.py' })), ['src/b.py:1: def alpha():']);
		assert.equal(matchLines(await h.text('grep', { pattern: 'alpha', glob: '*.py, *.md' })).length, 2);
		// A comma inside braces belongs to its glob.
		assert.equal(matchLines(await h.text('grep', { pattern: 'alpha', glob: '*.{py,md}' })).length, 2);
		assert.deepEqual(matchLines(await h.text('grep', { pattern: 'alpha', glob: 'src/**' })).length, 3);
		const excluded = matchLines(await h.text('grep', { pattern: 'alpha', exclude: '*.md,src' }));
		assert.deepEqual(excluded, ['unicode.txt:1: Grüße, alpha 😀 — ok']);
		assert.match((await h.error('grep', { pattern: 'alpha', glob: ['*.py'] })).message, /glob: expected a string, got an array/);
	});

	it('does not search ignored, hidden, node_modules or binary files unless asked', async () => {
		const h = makeHarness(tree.root);
		const normal = await h.text('grep', { pattern: 'alpha' });
		assert.doesNotMatch(normal, /generated|hidden|module|blob/);
		// Even a glob naming them does not bring hidden or ignored files back.
		assert.doesNotMatch(await h.text('grep', { pattern: 'alpha', glob: '*.ts' }), /generated|hidden/);
		const all = await h.text('grep', { pattern: 'alpha', includeIgnored: true, includeHidden: true });
		assert.match(all, /gen\/out\.ts:1: alpha generated/);
		assert.match(all, /\.hidden\.ts:1: alpha hidden/);
		assert.match(all, /node_modules\/pkg\/index\.js:1: alpha module/);
	});

	it('searches an ignored folder when it is the path asked for', async () => {
		const h = makeHarness(tree.root);
		assert.deepEqual(matchLines(await h.text('grep', { pattern: 'alpha', path: 'node_modules/pkg' })), ['node_modules/pkg/index.js:1: alpha module']);
		assert.deepEqual(matchLines(await h.text('grep', { pattern: 'alpha', path: 'gen' })), ['gen/out.ts:1: alpha generated']);
	});

	it('honours the editor\'s excludes', async () => {
		const text = await makeHarness(tree.root, { settings: { searchExcludes: ['docs/**', '**/*.py'] } }).text('grep', { pattern: 'alpha' });
		assert.doesNotMatch(text, /notes|b\.py/);
		assert.match(text, /src\/a\.ts/);
	});

	it('pages with offset: stable, non-overlapping, complete', async () => {
		const many = makeTree(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`d${i % 4}/f${i}.txt`, Array.from({ length: 7 }, (_, j) => `needle ${i}.${j}`).join('\n') + '\n'])));
		try {
			const h = makeHarness(many.root);
			const whole = matchLines(await h.text('grep', { pattern: 'needle', limit: 1000 }));
			assert.equal(whole.length, 210);
			const pages: string[] = [];
			for (let offset = 0; offset < 210; offset += 25) {
				const result = await h.invoke('grep', { pattern: 'needle', limit: 25, offset });
				pages.push(...matchLines((result.content[0] as { text: string }).text));
				assert.equal(result.metadata.nextOffset, offset + 25 < 210 ? offset + 25 : undefined);
			}
			assert.deepEqual(pages, whole);
		} finally {
			many.cleanup();
		}
	});

	it('stops the search once the page is full when there are too many matches to collect, in the same order', async function () {
		this.timeout(60_000);
		const big = makeTree(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`part${i}.txt`, Array.from({ length: 5000 }, (_, j) => `hit ${i}:${j}`).join('\n') + '\n'])));
		try {
			const h = makeHarness(big.root);
			const first = await h.invoke('grep', { pattern: 'hit', limit: 10 });
			const text = (first.content[0] as { text: string }).text;
			assert.equal(first.metadata.complete, false);
			assert.match(text, /^more than 10 matching lines \(the search stopped once this page was full\)/);
			assert.deepEqual(matchLines(text), Array.from({ length: 10 }, (_, j) => `part0.txt:${j + 1}: hit 0:${j}`));
			const later = await h.invoke('grep', { pattern: 'hit', limit: 3, offset: 5001 });
			assert.deepEqual(matchLines((later.content[0] as { text: string }).text), ['part1.txt:2: hit 1:1', 'part1.txt:3: hit 1:2', 'part1.txt:4: hit 1:3']);
			assert.equal(later.metadata.nextOffset, 5004);
		} finally {
			big.cleanup();
		}
	});

	it('trims long lines around the match', async () => {
		const long = makeTree({ 'min.js': `${'x'.repeat(5000)}needle${'y'.repeat(5000)}\n` });
		try {
			const result = await makeHarness(long.root).invoke('grep', { pattern: 'needle' });
			const text = (result.content[0] as { text: string }).text;
			const line = matchLines(text)[0];
			assert.match(line, /^min\.js:1: \[… 4,900 chars\] x+needley+ \[4,806 chars …\]$/);
			assert.ok(line.length < 400);
			assert.match(text, /1 long line was trimmed around the match/);
			assert.equal(result.metadata.truncated, true);
		} finally {
			long.cleanup();
		}
	});

	it('cuts a megabyte-long minified line with escapes and multi-byte text at the right bytes', async () => {
		// Tabs, quotes, backslashes and control characters are escaped in rg's JSON; é and 😀 are
		// multi-byte. The window must be the raw bytes around the match, decoded whole.
		const unit = 'a\t"b\\c\u0001é😀;';
		const before = unit.repeat(20000);
		const line = `${before}needle[${'z'.repeat(150)}]${unit.repeat(20000)}`;
		const long = makeTree({ 'bundle.min.js': `${line}\r\n` });
		try {
			const text = (await makeHarness(long.root).invoke('grep', { pattern: 'needle' })).content[0] as { text: string };
			const shown = matchLines(text.text)[0];
			const raw = Buffer.from(line);
			const match = /^bundle\.min\.js:1: \[… ([\d,]+) bytes\] (.*) \[([\d,]+) bytes …\]$/s.exec(shown);
			assert.ok(match, shown.slice(0, 200));
			const [omittedBefore, omittedAfter] = [match[1], match[3]].map(n => Number(n.replace(/,/g, '')));
			// The window is the exact bytes between the two counts, decoded: nothing lost, nothing split.
			assert.equal(match[2], raw.subarray(omittedBefore, raw.length - omittedAfter).toString('utf8'));
			assert.ok(Math.abs(omittedBefore - (Buffer.byteLength(before) - 100)) <= 3, 'the match is a third into the window');
			assert.ok(match[2].includes(`needle[${'z'.repeat(150)}`));
			assert.ok(Buffer.byteLength(match[2]) <= 303, 'about 300 bytes: a split character is taken whole');
			assert.match(text.text, /1 long line was trimmed around the match/);
		} finally {
			long.cleanup();
		}
	});

	it('windows a match at the very start or end of a long line, counted in bytes', async () => {
		// Over 32 KB a line is read as it streams and windowed by its bytes; the window starts 100 bytes
		// before the match, or at the line's start, and stops at the line's end.
		const long = makeTree({ 'end.js': `${'x'.repeat(40_000)}needleyyyy\n`, 'start.js': `needle${'y'.repeat(40_000)}\n` });
		try {
			const lines = matchLines(await makeHarness(long.root).text('grep', { pattern: 'needle' }));
			assert.deepEqual(lines, [
				`end.js:1: [… 39,900 bytes] ${'x'.repeat(100)}needleyyyy`,
				`start.js:1: needle${'y'.repeat(294)} [39,706 bytes …]`,
			]);
		} finally {
			long.cleanup();
		}
	});

	it('never splits a character at a window\'s edges, in a line windowed by bytes or by characters', async () => {
		// By bytes (a line over 32 KB): the window would start in the second byte of 😀 and end in the
		// middle of €; it starts after the one and ends before the other.
		const bytes = `${'x'.repeat(40_000)}😀${'a'.repeat(97)}needle${'b'.repeat(196)}€${'c'.repeat(1000)}`;
		// By characters (UTF-16 units): it would start in the second half of a 😀 and end in the first
		// half of another; it takes both whole.
		const chars = `${'😀'.repeat(600)}${'z'.repeat(99)}needle w${'😀'.repeat(600)}`.replace(' ', '');
		const long = makeTree({ 'bytes.js': `${bytes}\n`, 'chars.js': `${chars}\n` });
		try {
			const lines = matchLines(await makeHarness(long.root).text('grep', { pattern: 'needle' }));
			assert.deepEqual(lines, [
				`bytes.js:1: [… 40,004 bytes] ${'a'.repeat(97)}needle${'b'.repeat(196)} [1,003 bytes …]`,
				`chars.js:1: [… 1,198 chars] 😀${'z'.repeat(99)}needlew${'😀'.repeat(97)} [1,006 chars …]`,
			]);
			assert.equal(Buffer.byteLength(bytes), 41_306);
		} finally {
			long.cleanup();
		}
	});

	it('reads long lines in the one search that finds them: a single rg run', async () => {
		const long = makeTree({ 'min.js': `${'x'.repeat(100_000)}needle${'y'.repeat(100_000)}\n${'z'.repeat(50_000)}needle\n` });
		// The module object itself (an import would be a copy), whose spawn runRg calls.
		const childProcess = require('node:child_process') as { spawn: (...args: unknown[]) => unknown };
		const started: unknown[] = [];
		const spawn = childProcess.spawn;
		childProcess.spawn = (...args: unknown[]) => {
			started.push(args[0]);
			return spawn(...args);
		};
		try {
			const lines = matchLines(await makeHarness(long.root, { settings: { sandbox: { mode: 'off' } } }).text('grep', { pattern: 'needle' }));
			assert.deepEqual(lines, [`min.js:1: [… 99,900 bytes] ${'x'.repeat(100)}needle${'y'.repeat(194)} [99,806 bytes …]`, `min.js:2: [… 49,900 bytes] ${'z'.repeat(100)}needle`]);
			assert.equal(started.length, 1, started.join(', '));
		} finally {
			childProcess.spawn = spawn;
			long.cleanup();
		}
	});

	it('counts a line as trimmed only when it was, whatever its text says', async () => {
		const odd = makeTree({ 'a.txt': '[… see above] needle\n', 'b.txt': `needle ${'x'.repeat(20_000)}\n` });
		try {
			const result = await makeHarness(odd.root).invoke('grep', { pattern: 'needle' });
			const text = (result.content[0] as { text: string }).text;
			assert.match(text, /a\.txt:1: \[… see above\] needle/);
			assert.match(text, /b\.txt:1: needle x+ \[19,707 chars …\]/);
			assert.match(text, /\(1 long line was trimmed around the match; read_file shows them whole\)/);
			assert.equal(result.metadata.truncated, true);
		} finally {
			odd.cleanup();
		}
	});

	it('searches several workspace folders together with folder-qualified paths', async () => {
		const other = makeTree({ 'x.txt': 'alpha from two\n' });
		try {
			const h = makeHarness([tree.root, other.root]);
			const text = await h.text('grep', { pattern: 'alpha from|const alpha' });
			assert.deepEqual(matchLines(text), [`${path.basename(tree.root)}/src/a.ts:1: const alpha = 1;`, `${path.basename(other.root)}/x.txt:1: alpha from two`]);
			assert.deepEqual(matchLines(await h.text('grep', { pattern: 'alpha', path: path.basename(other.root) })), [`${path.basename(other.root)}/x.txt:1: alpha from two`]);
		} finally {
			other.cleanup();
		}
	});

	it('falls back to PCRE2 for look-around', async () => {
		const text = await makeHarness(tree.root).text('grep', { pattern: 'alpha(?= =)' });
		assert.deepEqual(matchLines(text), ['src/a.ts:1: const alpha = 1;']);
		assert.match(text, /PCRE2/);
	});

	it('says clearly when nothing matches', async () => {
		const text = await makeHarness(tree.root).text('grep', { pattern: 'zzz_nothing' });
		assert.match(text, /^No matches for "zzz_nothing"\. Ignored files/);
	});

	it('says when offset is past the end of the matches', async () => {
		const h = makeHarness(tree.root);
		for (const offset of [5, 40]) {
			const result = await h.invoke('grep', { pattern: 'alpha', offset });
			assert.equal(result.error, undefined);
			assert.equal((result.content[0] as { text: string }).text, `5 matching lines in 4 files for "alpha"; offset ${offset} is past the end. Use a smaller offset.`);
			assert.equal(result.metadata.matches, 0);
			assert.equal(result.metadata.nextOffset, undefined);
		}
	});

	describe('bad input', () => {
		it('returns ripgrep\'s explanation of an invalid regex', async () => {
			const error = await makeHarness(tree.root).error('grep', { pattern: '(unclosed' });
			assert.equal(error.code, 'invalid_input');
			assert.match(error.message, /regex parse error:\n\s+\(\?:\(unclosed\)\n\s+\^\nerror: unclosed group/);
			assert.match(error.message, /fixedStrings/);
		});

		it('returns ripgrep\'s explanation of an invalid glob', async () => {
			const error = await makeHarness(tree.root).error('grep', { pattern: 'alpha', glob: 'src/{a' });
			assert.equal(error.code, 'invalid_input');
			assert.match(error.message, /error parsing glob 'src\/\{a'/);
		});

		it('refuses a path outside the workspace and symlinks leading outside', async function () {
			const h = makeHarness(tree.root);
			assert.equal((await h.error('grep', { pattern: 'x', path: '..' })).code, 'outside_boundary');
			if (process.platform === 'win32') return;
			const outside = makeTree({ 'secret.txt': 'alpha secret\n' });
			try {
				fs.symlinkSync(outside.root, tree.file('out'));
				fs.symlinkSync(outside.file('secret.txt'), tree.file('secret-link.txt'));
				assert.equal((await h.error('grep', { pattern: 'alpha', path: 'out' })).code, 'outside_boundary');
				assert.equal((await h.error('grep', { pattern: 'alpha', path: 'secret-link.txt' })).code, 'outside_boundary');
				assert.doesNotMatch(await h.text('grep', { pattern: 'alpha' }), /secret/);
			} finally {
				outside.cleanup();
			}
		});

		it('refuses a missing path and bad numbers', async () => {
			const h = makeHarness(tree.root);
			assert.equal((await h.error('grep', { pattern: 'x', path: 'nope' })).code, 'not_found');
			assert.equal((await h.error('grep', { pattern: 'x', context: 11 })).code, 'invalid_input');
			assert.equal((await h.error('grep', { pattern: '' })).code, 'invalid_input');
		});
	});

	describe('bounded in memory and time', () => {
		it('holds one window of a 2 MB line of `a` searched for `a` (two million matches), not its matches', async () => {
			const long = makeTree({ 'a.txt': `${'a'.repeat(2 * 1024 * 1024)}\n` });
			try {
				const result = await makeHarness(long.root).invoke('grep', { pattern: 'a', limit: 1 });
				const text = (result.content[0] as { text: string }).text;
				assert.deepEqual(matchLines(text), [`a.txt:1: ${'a'.repeat(300)} [2,096,852 bytes …]`]);
				assert.match(text, /^1 matching line in 1 file for "a"; showing 1–1:/);
				assert.ok(text.length < 1000, `a result of ${text.length} characters`);
				assert.equal(result.metadata.truncated, true);
			} finally {
				long.cleanup();
			}
		});

		it('finishes a 32 MB single line and shows the match in a window counted in bytes', async function () {
			this.timeout(120_000);
			const half = 16 * 1024 * 1024;
			const long = makeTree({ 'bundle.js': `${'x'.repeat(half)}needle${'y'.repeat(half)}\n` });
			try {
				const h = makeHarness(long.root);
				const sparse = matchLines(await h.text('grep', { pattern: 'needle' }));
				assert.deepEqual(sparse, [`bundle.js:1: [… ${(half - 100).toLocaleString('en-US')} bytes] ${'x'.repeat(100)}needle${'y'.repeat(194)} [${(half - 194).toLocaleString('en-US')} bytes …]`]);
				// Every byte matches: the window is the line's start.
				const dense = matchLines(await h.text('grep', { pattern: '[xy]', limit: 1 }));
				assert.deepEqual(dense, [`bundle.js:1: ${'x'.repeat(300)} [${(2 * half + 6 - 300).toLocaleString('en-US')} bytes …]`]);
			} finally {
				long.cleanup();
			}
		});

		it('windows long context lines, in characters or bytes by their size', async () => {
			const long = makeTree({ 'f.txt': `${'c'.repeat(5000)}\nneedle\n${'d'.repeat(100_000)}\n` });
			try {
				const lines = (await makeHarness(long.root).text('grep', { pattern: 'needle', context: 1 })).split('\n');
				assert.ok(lines.includes(`f.txt-1- ${'c'.repeat(300)} [4,700 chars …]`), lines.join('\n'));
				assert.ok(lines.includes('f.txt:2: needle'));
				assert.ok(lines.includes(`f.txt-3- ${'d'.repeat(300)} [99,700 bytes …]`), lines.join('\n'));
				assert.ok(lines.includes('(2 long lines were trimmed around the match; read_file shows them whole)'));
			} finally {
				long.cleanup();
			}
		});

		it('finds the window of a long line for a literal with regex characters, and under PCRE2', async () => {
			const long = makeTree({ 'f.txt': `axb(c ${'-'.repeat(5000)}a.b(c${'-'.repeat(5000)}\n`, 'g.txt': `${'-'.repeat(40_000)}needle!${'-'.repeat(1000)}\n` });
			try {
				const h = makeHarness(long.root);
				assert.deepEqual(matchLines(await h.text('grep', { pattern: 'a.b(c', fixedStrings: true })), [`f.txt:1: [… 4,906 chars] ${'-'.repeat(100)}a.b(c${'-'.repeat(195)} [4,805 chars …]`]);
				// Look-ahead needs PCRE2, whose window starts at the match.
				const pcre2 = await h.text('grep', { pattern: 'needle(?=!)' });
				assert.deepEqual(matchLines(pcre2), [`g.txt:1: [… 40,000 bytes] needle!${'-'.repeat(293)} [707 bytes …]`]);
			} finally {
				long.cleanup();
			}
		});

		it('windows a long line that is not valid UTF-8 by its bytes', async () => {
			const line = Buffer.concat([Buffer.from('\xff-'.repeat(20_000), 'latin1'), Buffer.from('needle'), Buffer.from('-\xfe'.repeat(20_000), 'latin1')]);
			const long = makeTree({ 'f.bin.txt': Buffer.concat([line, Buffer.from('\n')]) });
			try {
				const shown = matchLines(await makeHarness(long.root).text('grep', { pattern: 'needle' }))[0];
				const match = /^f\.bin\.txt:1: \[… 39,900 bytes\] (.*) \[39,806 bytes …\]$/.exec(shown);
				assert.ok(match, shown);
				assert.equal(match[1], line.subarray(39_900, 40_200).toString('utf8'));
			} finally {
				long.cleanup();
			}
		});

		it('stops rg when cancelled during a long search', async function () {
			this.timeout(60_000);
			const long = makeTree({ 'a.txt': `${'a'.repeat(64 * 1024 * 1024)}\n` });
			try {
				const controller = new AbortController();
				const call = makeHarness(long.root).invoke('grep', { pattern: 'a' }, { signal: controller.signal });
				setTimeout(() => controller.abort(), 20);
				assert.equal((await call).error?.code, 'cancelled');
				// The call returns at once; the kill it sent reaches rg a moment later, even on a loaded machine.
				if (process.platform === 'linux') assert.deepEqual(await goneWithin(() => childProcessesNamed('rg'), 5_000), []);
			} finally {
				long.cleanup();
			}
		});

		describe('a path that is not a regular file or folder', () => {
			if (process.platform === 'win32') return;

			it('refuses a named pipe without opening it (grep and find_files), also through a symlink', async function () {
				fs.mkdirSync(tree.file('pipes'));
				execFileSync('mkfifo', [tree.file('pipes/fifo')]);
				fs.symlinkSync('fifo', tree.file('pipes/link'));
				const h = makeHarness(tree.root);
				for (const [tool, input] of [['grep', { pattern: 'alpha', path: 'pipes/fifo' }], ['grep', { pattern: 'alpha', path: 'pipes/link' }], ['find_files', { pattern: '*', path: 'pipes/fifo' }]] as const) {
					const error = await withDeadline(signal => h.invoke(tool, input, { signal }));
					assert.equal(error.error?.code, 'io');
					assert.match(error.error!.message, /^pipes\/(fifo|link) is a named pipe \(FIFO\), not a regular file or folder: (grep|find_files) does not open such files/);
				}
				// A walk passes it by.
				assert.match(await withDeadline(signal => h.text('grep', { pattern: 'alpha', path: 'pipes' }, { signal })), /^No matches/);
				assert.match(await withDeadline(signal => h.text('find_files', { pattern: '*', path: 'pipes' }, { signal })), /^No files match/);
			});

			it('refuses a socket and a device', async () => {
				const server = net.createServer();
				await new Promise<void>(resolve => server.listen(tree.file('sock'), resolve));
				try {
					const h = makeHarness(tree.root, { settings: { additionalReadPaths: ['/dev'] } });
					assert.match((await withDeadline(signal => h.error('grep', { pattern: 'x', path: 'sock' }, { signal }))).message, /^sock is a socket, not a regular file or folder/);
					assert.match((await withDeadline(signal => h.error('grep', { pattern: 'x', path: '/dev/zero' }, { signal }))).message, /^\/dev\/zero is a character device, not a regular file or folder/);
					assert.match((await withDeadline(signal => h.error('find_files', { pattern: 'x', path: '/dev/null' }, { signal }))).message, /^\/dev\/null is a character device/);
				} finally {
					server.close();
				}
			});
		});

		it('shows the text lines before binary data in a file named as path, none from there on, and names the file', async () => {
			fs.writeFileSync(tree.file('mixed.dat'), Buffer.concat([Buffer.from('alpha one\nalpha two\nalpha \0 in binary\nalpha after\n')]));
			const text = await makeHarness(tree.root).text('grep', { pattern: 'alpha', path: 'mixed.dat' });
			assert.deepEqual(matchLines(text), ['mixed.dat:1: alpha one', 'mixed.dat:2: alpha two']);
			assert.match(text, /^2 matching lines in 1 file/);
			assert.match(text, /\(binary data in mixed\.dat: the search of these files stopped there/);
		});

		it('reports matches in a binary file named as path, without showing them', async () => {
			const text = await makeHarness(tree.root).text('grep', { pattern: 'alpha', path: 'blob.bin' });
			assert.equal(text, 'No text matches for "alpha" in blob.bin; binary files match: blob.bin (read_file with encoding base64 reads them).');
		});

		it('finds files whose name holds a newline', async function () {
			if (process.platform === 'win32') return;
			fs.writeFileSync(tree.file('we\nird.txt'), 'alpha in a weird name\n');
			const text = await makeHarness(tree.root).text('grep', { pattern: 'weird name' });
			assert.match(text, /^1 matching line in 1 file/);
			// Quoted (unusualNames.test.ts): raw, the name would be two lines of the result.
			assert.ok(text.split('\n').includes('"we\\nird.txt":1: alpha in a weird name'), text);
		});
	});

	it('stops when cancelled', async () => {
		const controller = new AbortController();
		controller.abort();
		const result = await makeHarness(tree.root).invoke('grep', { pattern: 'alpha' }, { signal: controller.signal });
		assert.equal(result.error?.code, 'cancelled');
	});
});
