import * as assert from 'node:assert/strict';
import { FileOperation, Hunk, PatchParseError, UpdateOperation } from '../../src/core/patch/model';
import { parsePatch } from '../../src/core/patch/parse';

/** The lines of a hunk as ' text' / '-text' / '+text', compact to compare. */
function body(hunk: Hunk): string[] {
	return hunk.lines.map(line => (line.kind === 'context' ? ' ' : line.kind === 'remove' ? '-' : '+') + line.text);
}

function update(operation: FileOperation | undefined): UpdateOperation {
	assert.ok(operation && operation.kind === 'update', `expected an update, got ${JSON.stringify(operation)}`);
	return operation;
}

function parseError(text: string): PatchParseError {
	try {
		parsePatch(text);
	} catch (error) {
		assert.ok(error instanceof PatchParseError, `expected a PatchParseError, got ${error}`);
		return error;
	}
	assert.fail('the patch parsed, but an error was expected');
}

describe('patch parsing: the Codex envelope', () => {
	it('reads every section kind with its line numbers', () => {
		const patch = parsePatch([
			'*** Begin Patch',
			'*** Add File: docs/new.md',
			'+# New',
			'+',
			'*** Delete File: old.txt',
			'*** Update File: src/a.ts',
			'*** Move to: src/b.ts',
			'@@ function f() {',
			' const a = 1;',
			'-return a;',
			'+return a + 1;',
			'*** End Patch',
		].join('\n'));
		assert.equal(patch.format, 'codex');
		assert.deepEqual(patch.operations[0], { kind: 'add', path: 'docs/new.md', patchLine: 2, lines: ['# New', ''], finalNewline: true });
		assert.deepEqual(patch.operations[1], { kind: 'delete', path: 'old.txt', patchLine: 5, hunks: [] });
		const moved = update(patch.operations[2]);
		assert.equal(moved.path, 'src/a.ts');
		assert.equal(moved.moveTo, 'src/b.ts');
		assert.equal(moved.patchLine, 6);
		assert.deepEqual(moved.hunks[0].anchors, ['function f() {']);
		assert.equal(moved.hunks[0].patchLine, 8);
		assert.deepEqual(body(moved.hunks[0]), [' const a = 1;', '-return a;', '+return a + 1;']);
	});

	it('stacks @@ anchors, reads *** End of File, and treats empty lines inside a hunk as context', () => {
		const patch = parsePatch('*** Begin Patch\n*** Update File: c.py\n@@ class B:\n@@     def run(self):\n a\n\n-b\n+c\n*** End of File\n*** End Patch');
		const hunk = update(patch.operations[0]).hunks[0];
		assert.deepEqual(hunk.anchors, ['class B:', 'def run(self):']);
		assert.deepEqual(body(hunk), [' a', ' ', '-b', '+c']);
		assert.equal(hunk.endOfFile, true);
	});

	it('drops blank lines that separate hunks instead of making them context', () => {
		const patch = parsePatch('*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n\n\n@@\n-p\n+q\n\n*** End Patch');
		const hunks = update(patch.operations[0]).hunks;
		assert.equal(hunks.length, 2);
		assert.deepEqual(body(hunks[0]), ['-x', '+y']);
		assert.deepEqual(body(hunks[1]), ['-p', '+q']);
	});

	it('lets the first hunk omit @@ but not the later ones', () => {
		assert.deepEqual(body(update(parsePatch('*** Begin Patch\n*** Update File: a\n import x\n+import y\n*** End Patch').operations[0]).hunks[0]), [' import x', '+import y']);
		const error = parseError('*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End of File\n-z\n*** End Patch');
		assert.match(error.message, /^Line 7 of the patch: expected '@@' to start hunk 2/);
	});

	it('keeps the line number of a unified @@ header written into the envelope as a hint', () => {
		const hunk = update(parsePatch('*** Begin Patch\n*** Update File: a\n@@ -40,2 +40,2 @@\n-x\n+y\n*** End Patch').operations[0]).hunks[0];
		assert.equal(hunk.oldStart, 40);
		assert.deepEqual(hunk.anchors, []);
	});

	it('tolerates padded markers, CRLF patch text and heredoc or fence wrappers', () => {
		const inner = '*** Begin Patch\n  *** Update File: a.txt  \n@@\n-x\n+y\n *** End Patch ';
		for (const wrapped of [
			inner,
			inner.replace(/\n/g, '\r\n'),
			`<<'EOF'\n${inner}\nEOF`,
			`<<"EOF"\n${inner}\nEOF\n`,
			`apply_patch <<'PATCH'\n${inner}\nPATCH`,
			`\n\n  \n${inner}\n\n`,
			'```\n' + inner + '\n```',
		]) {
			const patch = parsePatch(wrapped);
			assert.equal(update(patch.operations[0]).path, 'a.txt', JSON.stringify(wrapped));
			assert.deepEqual(body(update(patch.operations[0]).hunks[0]), ['-x', '+y']);
		}
	});

	it('counts error lines from the text as sent, heredoc line included', () => {
		const error = parseError("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a\n@@\n-x\nnot a hunk line\n*** End Patch\nEOF");
		assert.match(error.message, /^Line 6 of the patch: expected a hunk line starting with ' ' \(context\)/);
		assert.equal(error.code, 'patch_parse');
		assert.deepEqual(error.details, { line: 6 });
	});

	it('names the line and what was expected for each malformed envelope', () => {
		assert.match(parseError('*** Begin Patch\n*** Update File: a\n@@\n-x\n+y').message, /^Line 5 of the patch: expected '\*\*\* End Patch' as the last line, found "\+y"/);
		assert.match(parseError('*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Add File: b\n+x').message, /^Line 4 of the patch: nothing may follow '\*\*\* End Patch' \(line 3\)/);
		assert.match(parseError('*** Begin Patch\n*** Frobnicate File: a\n*** End Patch').message, /^Line 2 of the patch: expected a file header: '\*\*\* Add File: <path>'/);
		assert.match(parseError('*** Begin Patch\n*** Add File: a\n+x\nx\n*** End Patch').message, /^Line 4 of the patch: expected a file header/);
		assert.match(parseError('*** Begin Patch\n*** Add File:\n+x\n*** End Patch').message, /^Line 2 of the patch: '\*\*\* Add File:' needs a path/);
		assert.match(parseError('*** Begin Patch\n*** Update File: a\n@@\n-x\n*** Move to: b\n*** End Patch').message, /^Line 5 of the patch: .*'\*\*\* Move to:' must come directly after/);
		assert.match(parseError('*** Begin Patch\n*** Update File: a\n@@\n*** End Patch').message, /^Line 3 of the patch: hunk 1 has no lines/);
		assert.match(parseError('junk first\n*** Begin Patch\n*** Delete File: a\n*** End Patch').message, /^Line 1 of the patch: expected '\*\*\* Begin Patch' as the first line, found "junk first"/);
		assert.match(parseError('*** Update File: a\n@@\n-x\n+y').message, /^Line 1 of the patch: expected '\*\*\* Begin Patch'/);
	});

	it('refuses an empty patch with a message, not a line', () => {
		for (const empty of ['', '   ', '\n\n\t\n']) {
			const error = parseError(empty);
			assert.match(error.message, /^The patch is empty\./);
			assert.equal(error.line, undefined);
		}
	});
});

describe('patch parsing: unified diffs', () => {
	it('reads a git diff with new, deleted, renamed and changed files', () => {
		const patch = parsePatch([
			'diff --git a/new.txt b/new.txt',
			'new file mode 100644',
			'index 0000000..3b18e51',
			'--- /dev/null',
			'+++ b/new.txt',
			'@@ -0,0 +1,2 @@',
			'+hello',
			'+world',
			'diff --git a/gone.txt b/gone.txt',
			'deleted file mode 100644',
			'--- a/gone.txt',
			'+++ /dev/null',
			'@@ -1 +0,0 @@',
			'-bye',
			'diff --git a/from.ts b/to.ts',
			'similarity index 90%',
			'rename from from.ts',
			'rename to to.ts',
			'--- a/from.ts',
			'+++ b/to.ts',
			'@@ -3,3 +3,3 @@ function f() {',
			' a',
			'-b',
			'+c',
			' d',
			'diff --git a/same.txt b/same.txt',
			'--- a/same.txt',
			'+++ b/same.txt',
			'@@ -1 +1 @@',
			'-x',
			'+y',
		].join('\n'));
		assert.equal(patch.format, 'unified');
		assert.deepEqual(patch.operations.map(op => [op.kind, op.path, op.patchLine]), [['add', 'new.txt', 1], ['delete', 'gone.txt', 9], ['update', 'from.ts', 15], ['update', 'same.txt', 26]]);
		assert.deepEqual((patch.operations[0] as unknown as { lines: string[] }).lines, ['hello', 'world']);
		const renamed = update(patch.operations[2]);
		assert.equal(renamed.moveTo, 'to.ts');
		assert.equal(renamed.hunks[0].oldStart, 3);
		assert.deepEqual(renamed.hunks[0].anchors, [], 'the text after @@ … @@ is a label, not an anchor');
		assert.deepEqual(body(renamed.hunks[0]), [' a', '-b', '+c', ' d']);
		assert.equal(update(patch.operations[3]).moveTo, undefined);
	});

	it('reads a pure rename and notes a mode change it does not apply', () => {
		const patch = parsePatch('diff --git a/a.sh b/b.sh\nold mode 100644\nnew mode 100755\nsimilarity index 100%\nrename from a.sh\nrename to b.sh\n');
		assert.deepEqual(patch.operations, [{ kind: 'update', path: 'a.sh', patchLine: 1, moveTo: 'b.sh', hunks: [] }]);
		assert.match(patch.notes[0], /mode change of b\.sh \(100644 → 100755\) was not applied/);
	});

	it('reads `\\ No newline at end of file` for each side', () => {
		const hunks = update(parsePatch('--- a/e\n+++ b/e\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n').operations[0]).hunks;
		assert.equal(hunks[0].oldNoNewline, true);
		assert.equal(hunks[0].newNoNewline, false);
		const both = update(parsePatch('--- a/e\n+++ b/e\n@@ -1 +1 @@\n a\n\\ No newline at end of file\n').operations[0]).hunks[0];
		assert.equal(both.oldNoNewline && both.newNoNewline, true);
		const added = parsePatch('--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n').operations[0];
		assert.deepEqual(added, { kind: 'add', path: 'n', patchLine: 1, lines: ['x'], finalNewline: false });
	});

	it('tolerates miscounted hunks: short counts extend, long counts stop at the next header', () => {
		const short = update(parsePatch('--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n a\n-b\n+c\n d\n').operations[0]).hunks[0];
		assert.deepEqual(body(short), [' a', '-b', '+c', ' d']);
		const long = parsePatch('--- a/f\n+++ b/f\n@@ -1,9 +1,9 @@\n-b\n+c\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n');
		assert.deepEqual(long.operations.map(op => op.path), ['f', 'g']);
		assert.deepEqual(body(update(long.operations[0]).hunks[0]), ['-b', '+c']);
	});

	it('reads \'--- x\' and \'+++ y\' inside an unfinished hunk as removed and added lines, as git does', () => {
		const counted = parsePatch('--- a/f.sql\n+++ b/f.sql\n@@ -1,3 +1,3 @@\n-a\n+A\n--- old\n+++ new\n b\n');
		assert.equal(counted.operations.length, 1);
		assert.deepEqual(body(update(counted.operations[0]).hunks[0]), ['-a', '+A', '--- old', '+++ new', ' b']);
		const bare = parsePatch('--- a/f.sql\n+++ b/f.sql\n@@\n-a\n--- old\n+++ new\n b\n--- a/g\n+++ b/g\n@@\n-x\n+y\n');
		assert.deepEqual(bare.operations.map(op => op.path), ['f.sql', 'g']);
		assert.deepEqual(body(update(bare.operations[0]).hunks[0]), ['-a', '--- old', '+++ new', ' b']);
	});

	it('reads an empty line inside a hunk as an empty context line, but not blank lines after it', () => {
		const patch = parsePatch('--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n\n\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n');
		assert.deepEqual(body(update(patch.operations[0]).hunks[0]), [' a', ' ', '-b', '+c']);
		assert.equal(patch.operations.length, 2);
	});

	it('ignores a commit message, svn Index lines and a format-patch signature', () => {
		const patch = parsePatch([
			'From 1234 Mon Sep 17 00:00:00 2001',
			'Subject: [PATCH] fix',
			'',
			'Index: f.txt',
			'===================================================================',
			'--- a/f.txt',
			'+++ b/f.txt',
			'@@ -1 +1 @@',
			'-a',
			'+b',
			'-- ',
			'2.43.0',
		].join('\n'));
		assert.deepEqual(body(update(patch.operations[0]).hunks[0]), ['-a', '+b']);
	});

	it('handles names: a/ b/ prefixes, timestamps, quoted names, and plain diffs between two names', () => {
		assert.equal(parsePatch('--- f.c\t2024-01-01 10:00:00 +0100\n+++ f.c\t2024-01-02 10:00:00 +0100\n@@ -1 +1 @@\n-a\n+b\n').operations[0].path, 'f.c');
		assert.equal(parsePatch('diff --git "a/t\\303\\244st.txt" "b/t\\303\\244st.txt"\n--- "a/t\\303\\244st.txt"\n+++ "b/t\\303\\244st.txt"\n@@ -1 +1 @@\n-a\n+b\n').operations[0].path, 'täst.txt');
		// Only both prefixes together are git's: `a/x` against `x` is a real folder named a.
		assert.equal(parsePatch('--- a/x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n').operations[0].path, 'x');
		const plain = update(parsePatch('--- f.c.orig\n+++ f.c\n@@ -1 +1 @@\n-a\n+b\n').operations[0]);
		assert.equal(plain.path, 'f.c');
		assert.equal(plain.fallbackPath, 'f.c.orig');
		assert.equal(plain.moveTo, undefined);
		assert.equal(parsePatch('diff --git a/my file.txt b/my file.txt\nnew file mode 100644\n').operations[0].path, 'my file.txt');
	});

	it('takes a bare @@ without numbers, and @@ text as an anchor line', () => {
		const bare = update(parsePatch('--- a/f\n+++ b/f\n@@\n a\n-b\n+c\n').operations[0]).hunks[0];
		assert.equal(bare.oldStart, undefined);
		assert.deepEqual(body(bare), [' a', '-b', '+c']);
		assert.deepEqual(update(parsePatch('--- a/f\n+++ b/f\n@@ def g():\n-x\n+y\n').operations[0]).hunks[0].anchors, ['def g():']);
	});

	it('names the line and what was expected for each malformed diff', () => {
		assert.match(parseError('--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\nb\n c\n').message, /^Line 5 of the patch: expected a hunk line starting with ' ' \(context\), '-' \(removed\) or '\+' \(added\), found "b"\. The hunk at line 3 declares 3 old and 3 new lines; 2 old line\(s\) are still missing/);
		assert.match(parseError('@@ -1 +1 @@\n-a\n+b\n').message, /^Line 1 of the patch: found a hunk header "@@ -1 \+1 @@" before any file header/);
		assert.match(parseError('--- a/f\n+++ b/f\n@@ -x,1 +1 @@\n-a\n').message, /^Line 3 of the patch: expected a hunk header like '@@ -12,5 \+12,6 @@'/);
		assert.match(parseError('--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n').message, /^Line 1 of the patch: both sides of this file are \/dev\/null/);
		assert.match(parseError('--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n a\n+b\n').message, /^Line 3 of the patch: n is a new file, so its hunks may only add lines/);
		assert.match(parseError('diff --git a/x b/x\nindex 1..2\n').message, /^The diff holds no file changes/);
	});

	it('refuses binary patches precisely', () => {
		assert.match(parseError('diff --git a/i.png b/i.png\nindex 1..2 100644\nGIT binary patch\nliteral 3\nabc\n').message, /^Line 3 of the patch: binary patches are not supported \(i\.png\)/);
		assert.match(parseError('Binary files a/i.png and b/i.png differ\n').message, /^Line 1 of the patch: binary patches are not supported/);
	});

	it('tells what it is when it is neither format', () => {
		assert.match(parseError('Please rename foo to bar').message, /^Line 1 of the patch: this is neither a unified diff nor a Codex patch/);
	});
});
