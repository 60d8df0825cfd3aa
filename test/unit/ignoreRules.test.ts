import * as assert from 'node:assert/strict';
import { IgnoreRules } from '../../src/core/search/ignoreRules';
import { makeTree } from './helpers';

describe('ignore rules for list_dir', () => {
	it('applies the editor excludes to names that start with two dots', async () => {
		const tree = makeTree({ '..cache/x': 'x', 'keep/y': 'y' });
		try {
			const rules = await IgnoreRules.forWalk(tree.root, tree.root, ['..cache']);
			assert.equal(rules.isIgnored(tree.file('..cache'), true), true);
			assert.equal(rules.isIgnored(tree.file('keep'), true), false);
		} finally {
			tree.cleanup();
		}
	});

	it('lets the deepest ignore file decide, and always skips .git and node_modules', async () => {
		const tree = makeTree({ '.gitignore': '*.log\n', 'sub/.gitignore': '!keep.log\n', 'sub/keep.log': '', 'a.log': '' });
		try {
			const rules = await IgnoreRules.forWalk(tree.root, tree.root, []);
			await rules.enter(tree.file('sub'));
			assert.equal(rules.isIgnored(tree.file('a.log'), false), true);
			assert.equal(rules.isIgnored(tree.file('sub/keep.log'), false), false);
			assert.equal(rules.isIgnored(tree.file('node_modules'), true), true);
		} finally {
			tree.cleanup();
		}
	});
});
