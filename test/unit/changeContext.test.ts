import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listBackups } from '../../src/core/changes/backups';
import { commitPlan, planChange } from '../../src/core/changes/pipeline';
import { ChangeContext, createChangeState, ToolContext } from '../../src/core/context';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { ALL_TOOLS, ToolRegistry } from '../../src/tools';
import { defineTool } from '../../src/tools/tool';
import { Type } from '@sinclair/typebox';
import { textResult } from '../../src/core/results/result';
import { makeTree } from './helpers';

/** The change pipeline on its narrow context, and the one context a tool receives. */
describe('contexts: what the pipeline needs, what a tool receives', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'ws/a.txt': 'one\n' }); });
	afterEach(() => tree.cleanup());

	/** A ChangeContext as the person's restore makes one: no tool, no settings beyond showDiffs. */
	async function personContext(asked?: string[][]): Promise<ChangeContext> {
		const env = createNodeEnvironment({
			roots: [tree.file('ws')],
			storageDir: tree.file('storage'),
			...(asked ? { diagnostics: async (paths: readonly string[]) => { asked.push([...paths]); return []; } } : {}),
		});
		return {
			tool: 'restore_backup',
			boundary: await env.boundary(),
			host: env.host,
			state: createChangeState(),
			signal: new AbortController().signal,
			settings: { showDiffs: 'never' },
			note: () => undefined,
		};
	}

	it('plans and commits a change with a ChangeContext alone: written, backed up under its name, versions in its own state', async () => {
		const asked: string[][] = [];
		const ctx = await personContext(asked);
		const file = tree.file('ws/a.txt');
		const plan = await planChange(ctx, 'Restore a.txt', [{ path: file, displayPath: 'a.txt', before: Buffer.from('one\n'), after: Buffer.from('two\n') }]);
		const committed = await commitPlan(ctx, plan, true);
		assert.equal(fs.readFileSync(file, 'utf8'), 'two\n');
		assert.deepEqual(committed.stats, [{ path: 'a.txt', added: 1, removed: 1 }]);
		const [set] = await listBackups(tree.file('storage'));
		assert.deepEqual([set.tool, set.title, fs.readFileSync(committed.backups[0], 'utf8')], ['restore_backup', 'Restore a.txt', 'one\n']);
		assert.ok(ctx.state.fileVersions.has(file));
		assert.ok(asked.length > 0, 'a change of code waits for new problems');
	});

	it('names the backup set it took, so the call\'s own change can be shown later', async () => {
		const ctx = await personContext();
		const noted: Record<string, unknown>[] = [];
		const file = tree.file('ws/a.txt');
		const plan = await planChange({ ...ctx, note: fields => noted.push(fields) }, 'Edit', [{ path: file, displayPath: 'a.txt', before: Buffer.from('one\n'), after: Buffer.from('two\n') }]);
		await commitPlan({ ...ctx, note: fields => noted.push(fields) }, plan, false);
		const sets = await listBackups(tree.file('storage'));
		assert.equal(sets.length, 1);
		assert.deepEqual(noted, [{ filesTouched: ['a.txt'], backupSet: sets[0].id }]);
	});

	it('asks no diagnostics when the change says so (the plan file is not code)', async () => {
		const asked: string[][] = [];
		const ctx = await personContext(asked);
		const file = tree.file('ws/a.txt');
		const plan = await planChange(ctx, 'Plan', [{ path: file, displayPath: 'a.txt', before: Buffer.from('one\n'), after: Buffer.from('two\n') }], { diagnostics: false });
		await commitPlan(ctx, plan, false);
		assert.equal(fs.readFileSync(file, 'utf8'), 'two\n');
		assert.deepEqual(asked, []);
	});

	it('backup sets of one state keep their order within a millisecond', async () => {
		const ctx = await personContext();
		const file = tree.file('ws/a.txt');
		for (const text of ['two\n', 'three\n', 'four\n']) {
			const before = fs.readFileSync(file);
			await commitPlan(ctx, await planChange(ctx, `Write ${text.trim()}`, [{ path: file, displayPath: 'a.txt', before, after: Buffer.from(text) }]), false);
		}
		const sets = await listBackups(tree.file('storage'));
		assert.deepEqual(sets.map(set => set.title), ['Write four', 'Write three', 'Write two']);
		assert.equal(new Set(sets.map(set => set.createdAt)).size, 3);
	});

	it('gives a tool one context: its settings carry the limits, and per-call overrides reach them', async () => {
		let seen: ToolContext | undefined;
		const probe = defineTool({
			name: 'probe', referenceName: 'probe', displayName: 'Probe', group: 'read', mutating: false, icon: 'eye', tags: [],
			userDescription: 'probe', modelDescription: 'probe', schema: Type.Object({}), describe: () => 'Probing',
			run: async (_input, ctx) => { seen = ctx; return textResult('ok'); },
		});
		const env = createNodeEnvironment({ roots: [tree.file('ws')], storageDir: tree.file('storage'), settings: { approval: 'never' } });
		const registry = new ToolRegistry([...ALL_TOOLS, probe], env);
		await registry.invoke('probe', {}, { settings: { limits: { readLines: 7 } } });
		assert.ok(seen);
		assert.equal(seen.settings.limits.readLines, 7);
		assert.equal('limits' in seen, false, 'no second copy of the limits');
		assert.equal(seen.state, env.state);
		assert.equal(seen.state.commandLogs.dir, path.join(tree.file('storage'), 'commands'));
	});
});
