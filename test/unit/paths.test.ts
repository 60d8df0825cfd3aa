import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { contains, relativeTo } from '../../src/core/files/paths';

/** What relativeTo must say, by path.relative alone (the rule before its shortcut for resolved paths). */
function reference(parent: string, child: string): string | undefined {
	const relative = path.relative(parent, child);
	if (path.isAbsolute(relative)) return undefined;
	return relative.split(path.sep, 1)[0] === '..' ? undefined : relative;
}

describe('relativeTo: by path segments, resolved or not', () => {
	it('agrees with path.relative on resolved paths, spellings to resolve, and names that look alike', function () {
		if (path.sep !== '/') this.skip();
		const parents = ['/', '/ws', '/ws/', '/ws/sub', '/ws/./sub', '/ws//sub', '/ws/sub/..', '/w', '/ws-evil', '/ws/..cache'];
		const tails = ['', '/', '/a', '/a/', '/a/b.txt', '/./a', '/a/./b', '/a//b', '/a/..', '/../ws/a', '/..', '/..cache', '/...', '/.git/config', '-evil/a', 'x', 's', '/sub', '/sub/a', '/sub/../a'];
		for (const parent of parents) {
			for (const base of ['/ws', '/ws/sub', '/w', '/', '/other']) {
				for (const tail of tails) {
					const child = `${base}${tail}`;
					assert.equal(relativeTo(parent, child), reference(parent, child), `relativeTo(${parent}, ${child})`);
					assert.equal(contains(parent, child), reference(parent, child) !== undefined, `contains(${parent}, ${child})`);
				}
			}
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
