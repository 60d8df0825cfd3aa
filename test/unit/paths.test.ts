import * as assert from 'node:assert/strict';
import * as path from 'node:path';
// The module object itself, to watch its calls (the namespace import above is a read-only view of it).
import nodePath from 'node:path';
import { contains, relativeTo } from '../../src/core/files/paths';

/** What relativeTo must say, by path.relative alone (the rule before its shortcut for resolved paths). */
function reference(parent: string, child: string): string | undefined {
	const relative = path.relative(parent, child);
	if (path.isAbsolute(relative)) return undefined;
	return relative.split(path.sep, 1)[0] === '..' ? undefined : relative;
}

describe('relativeTo: by path segments, resolved or not', () => {
	it('agrees with path.relative on resolved paths, spellings to resolve, relative paths, and names that look alike', function () {
		if (path.sep !== '/') this.skip();
		// Relative paths are resolved against the process's folder, like the absolute base below.
		const parents = ['/', '/ws', '/ws/', '/ws/sub', '/ws/./sub', '/ws//sub', '/ws/sub/..', '/w', '/ws-evil', '/ws/..cache', 'ws', 'ws/sub'];
		const tails = ['', '/', '/a', '/a/', '/a/b.txt', '/./a', '/a/./b', '/a//b', '/a/..', '/../ws/a', '/..', '/..cache', '/...', '/.git/config', '-evil/a', 'x', 's', '/sub', '/sub/a', '/sub/../a'];
		for (const parent of parents) {
			for (const base of ['/ws', '/ws/sub', '/w', '/', '/other', path.resolve('ws'), 'ws']) {
				for (const tail of tails) {
					const child = `${base}${tail}`;
					assert.equal(relativeTo(parent, child), reference(parent, child), `relativeTo(${parent}, ${child})`);
					assert.equal(contains(parent, child), reference(parent, child) !== undefined, `contains(${parent}, ${child})`);
				}
			}
		}
	});

	it('compares resolved POSIX paths by their text, without resolving them again', function () {
		if (path.sep !== '/') this.skip();
		const relative = nodePath.relative;
		let resolved = 0;
		nodePath.relative = (from, to) => {
			resolved++;
			return relative(from, to);
		};
		try {
			assert.equal(relativeTo('/ws', '/ws/a/b.txt'), 'a/b.txt');
			assert.equal(relativeTo('/ws', '/ws-evil/a'), undefined);
			assert.equal(relativeTo('/ws/sub', '/ws/sub'), '');
			assert.equal(resolved, 0);
			// Spellings to resolve still go through path.relative.
			assert.equal(relativeTo('/ws/./sub', '/ws/sub/a'), 'a');
			assert.equal(resolved, 1);
		} finally {
			nodePath.relative = relative;
		}
	});

	it('a folder holds itself and what is below it, never a sibling whose name starts the same', () => {
		const ws = path.resolve('/ws');
		assert.equal(relativeTo(ws, ws), '');
		assert.equal(relativeTo(ws, path.join(ws, 'a', 'b.txt')), path.join('a', 'b.txt'));
		assert.equal(relativeTo(ws, path.join(ws, '..cache')), '..cache');
		assert.equal(relativeTo(ws, `${ws}-evil`), undefined);
		assert.equal(relativeTo(ws, path.dirname(ws)), undefined);
		assert.equal(relativeTo(path.join(ws, 'a'), path.join(ws, 'a', '..', 'b')), undefined);
	});
});
