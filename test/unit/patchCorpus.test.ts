import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyChangesAtomically } from '../../src/core/files/atomic';
import type { FileChange } from '../../src/core/context';
import { resultText } from '../../src/core/results/result';
import { makeHarness } from './helpers';

/**
 * The patch corpus: every folder of test/fixtures/patches is one case. Its `input/` is copied to a
 * temp workspace, `patch` is applied through the registry (so validation, approval and the commit
 * pipeline all take part), and the whole tree is compared byte for byte with `expected/`, or, when
 * the folder has `error.txt`, the call must fail with a message containing that text and the tree
 * must be exactly the input.
 *
 * `case.json` (optional): `symlinks` {path: target} made in the workspace (`$OUTSIDE` is a folder
 * outside it, filled from `outside` {path: content}); `failOnWrite` n makes the n-th file of the
 * commit fail to write, after the real writer has written the ones before it.
 */

const CORPUS = path.resolve(__dirname, '../../../test/fixtures/patches');

interface CaseOptions {
	symlinks?: Record<string, string>;
	outside?: Record<string, string>;
	failOnWrite?: number;
}

type Tree = Map<string, string>;

/** Every file (bytes as hex, so differences show) and symlink (its target) under a folder. */
function snapshot(root: string): Tree {
	const tree: Tree = new Map();
	const walk = (dir: string) => {
		for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
			const full = path.join(dir, entry.name);
			const rel = path.relative(root, full).split(path.sep).join('/');
			if (entry.isSymbolicLink()) tree.set(rel, `symlink → ${fs.readlinkSync(full)}`);
			else if (entry.isDirectory()) walk(full);
			else tree.set(rel, JSON.stringify(fs.readFileSync(full, 'latin1')));
		}
	};
	if (fs.existsSync(root)) walk(root);
	return tree;
}

function sorted(tree: Tree): [string, string][] {
	return [...tree.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** A change whose bytes cannot be read: the writer fails on it as it would on a full disk. */
/** Makes the commit of the n-th file (1-based) fail as a full disk would. */
function failAt(index: number, n: number): void {
	if (index === n - 1) throw Object.assign(new Error('ENOSPC: no space left on device (injected)'), { code: 'ENOSPC' });
}

describe('patch corpus (test/fixtures/patches)', () => {
	const names = fs.readdirSync(CORPUS).filter(name => fs.statSync(path.join(CORPUS, name)).isDirectory()).sort();

	it('has at least 40 cases, each with a patch and an expectation', () => {
		assert.ok(names.length >= 40, `only ${names.length} cases`);
		for (const name of names) {
			const dir = path.join(CORPUS, name);
			assert.ok(fs.existsSync(path.join(dir, 'patch')), `${name} has no patch`);
			assert.ok(fs.existsSync(path.join(dir, 'expected')) !== fs.existsSync(path.join(dir, 'error.txt')), `${name} needs expected/ or error.txt (not both)`);
		}
	});

	for (const name of names) {
		it(name, async () => {
			const dir = path.join(CORPUS, name);
			const options: CaseOptions = fs.existsSync(path.join(dir, 'case.json')) ? JSON.parse(fs.readFileSync(path.join(dir, 'case.json'), 'utf8')) : {};
			const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-corpus-')));
			const root = path.join(base, 'workspace');
			const outside = path.join(base, 'outside');
			try {
				fs.mkdirSync(root);
				if (fs.existsSync(path.join(dir, 'input'))) fs.cpSync(path.join(dir, 'input'), root, { recursive: true });
				for (const [rel, content] of Object.entries(options.outside ?? {})) {
					fs.mkdirSync(path.dirname(path.join(outside, rel)), { recursive: true });
					fs.writeFileSync(path.join(outside, rel), content);
				}
				for (const [rel, target] of Object.entries(options.symlinks ?? {})) {
					fs.symlinkSync(target.replace('$OUTSIDE', outside), path.join(root, rel));
				}
				const before = snapshot(root);
				const outsideBefore = snapshot(outside);
				const harness = makeHarness(root, {
					...(options.failOnWrite ? {
						applyChanges: (changes: readonly FileChange[], signal: AbortSignal) =>
							applyChangesAtomically(changes, signal, { beforeCommit: (_change, index) => failAt(index, options.failOnWrite!) }),
					} : {}),
				});
				const patch = fs.readFileSync(path.join(dir, 'patch'), 'utf8');
				const result = await harness.invoke('apply_patch', { patch });

				if (fs.existsSync(path.join(dir, 'error.txt'))) {
					const wanted = fs.readFileSync(path.join(dir, 'error.txt'), 'utf8').trim();
					assert.ok(result.error, `expected an error containing ${JSON.stringify(wanted)}, got success:\n${resultText(result)}`);
					assert.ok(result.error.message.includes(wanted), `error message lacks ${JSON.stringify(wanted)}:\n${result.error.message}`);
					assert.deepEqual(sorted(snapshot(root)), sorted(before), 'the workspace changed although the patch failed');
				} else {
					assert.equal(result.error, undefined, `unexpected error: ${result.error?.message}`);
					assert.deepEqual(sorted(snapshot(root)), sorted(snapshot(path.join(dir, 'expected'))));
				}
				assert.deepEqual(sorted(snapshot(outside)), sorted(outsideBefore), 'a file outside the workspace changed');
			} finally {
				fs.rmSync(base, { recursive: true, force: true });
			}
		});
	}
});
