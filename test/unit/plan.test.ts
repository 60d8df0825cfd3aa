import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Boundary } from '../../src/core/policy/boundary';
import {
	brokenCopyPath, countTasks, describeProblem, nextTask, parsePlan, planChanges, readPlanFile, renderPlan, serializePlan, summarize, withStatus,
} from '../../src/core/plan/planDocument';
import { makeTree } from './helpers';
import { MemoryFileSystem } from './support/memoryFileSystem';
import { wholeBytes } from '../../src/core/files/splicedBytes';

const PLAN = {
	version: 1,
	tasks: [
		{ title: 'Write the parser', status: 'completed' },
		{ title: 'Add tests', status: 'in_progress', details: 'unit first\nthen integration' },
		{ title: 'Update README', status: 'pending' },
	],
};

function boundaryFor(root: string) {
	return Boundary.create({ roots: [{ name: 'ws', path: root }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [] });
}

describe('plan document', () => {
	it('says which task field is wrong and what it accepts', () => {
		const parsed = parsePlan(JSON.stringify({ tasks: [{ title: 'a', status: 'done' }] }));
		assert.ok('problem' in parsed);
		assert.match(parsed.problem, /tasks\[0\]\.status: expected one of "pending", "in_progress", "completed", got the string "done"/);
	});

	describe('parsePlan', () => {
		it('reads a valid plan and keeps task order and details', () => {
			const parsed = parsePlan(JSON.stringify(PLAN));
			assert.ok('plan' in parsed);
			assert.deepEqual(parsed.plan.tasks.map(task => task.status), ['completed', 'in_progress', 'pending']);
			assert.equal(parsed.plan.tasks[1].details, 'unit first\nthen integration');
		});

		it('treats an empty file as an empty plan', () => {
			const parsed = parsePlan('  \n');
			assert.ok('plan' in parsed);
			assert.equal(parsed.plan.tasks.length, 0);
		});

		it('tolerates a BOM and unknown top-level fields', () => {
			const parsed = parsePlan(`\ufeff${JSON.stringify({ ...PLAN, note: 'mine' })}`);
			assert.ok('plan' in parsed);
		});

		it('says what is wrong with text that is not JSON', () => {
			const parsed = parsePlan('{ "tasks": [ ');
			assert.ok('problem' in parsed);
			assert.match(parsed.problem, /not valid JSON/);
		});

		it('names the field of a task that breaks the format', () => {
			const parsed = parsePlan(JSON.stringify({ tasks: [{ title: 'a', status: 'done' }] }));
			assert.ok('problem' in parsed);
			assert.match(parsed.problem, /tasks\[0\]\.status/);
		});

		it('holds at most 100 tasks: a file with more is a problem, not a longer plan', () => {
			const tasks = (n: number) => JSON.stringify({ tasks: Array.from({ length: n }, (_, i) => ({ title: `Task ${i + 1}`, status: 'pending' })) });
			const hundred = parsePlan(tasks(100));
			assert.ok('plan' in hundred);
			assert.equal(hundred.plan.tasks.length, 100);
			const more = parsePlan(tasks(101));
			assert.ok('problem' in more);
			assert.equal(more.problem, 'it does not match the plan format (tasks: must hold at most 100 items)');
		});

		it('refuses a top-level array', () => {
			const parsed = parsePlan('[]');
			assert.ok('problem' in parsed);
			assert.match(parsed.problem, /"tasks" array/);
			for (const text of ['null', '"tasks"', '5']) assert.deepEqual(parsePlan(text), { problem: 'it must hold a JSON object with a "tasks" array' }, text);
		});

		it('takes only the known task fields, and details up to their limit', () => {
			const task = { title: 't', status: 'pending' };
			assert.deepEqual(parsePlan(JSON.stringify({ tasks: [{ ...task, owner: 'me' }] })), { problem: 'it does not match the plan format (tasks[0].owner: is not a known field; remove it (check the spelling against the schema))' });
			assert.ok('plan' in parsePlan(JSON.stringify({ tasks: [{ ...task, details: 'd'.repeat(2000) }] })));
			assert.deepEqual(parsePlan(JSON.stringify({ tasks: [{ ...task, details: 'd'.repeat(2001) }] })), { problem: 'it does not match the plan format (tasks[0].details: must be at most 2000 characters)' });
		});

		it('names at most five problems', () => {
			const parsed = parsePlan(JSON.stringify({ tasks: Array.from({ length: 7 }, () => ({ title: '', status: 'pending' })) }));
			assert.ok('problem' in parsed);
			assert.equal(parsed.problem.split('; ').length, 5);
			assert.match(parsed.problem, /^it does not match the plan format \(tasks\[0\]\.title: must not be empty; /);
		});
	});

	describe('rendering', () => {
		const plan = { tasks: PLAN.tasks as any };

		it('abridged is exactly one line per task', () => {
			const text = renderPlan(plan, { abridged: true });
			assert.deepEqual(text.split('\n'), ['1. [x] Write the parser', '2. [~] Add tests', '3. [ ] Update README']);
		});

		it('full rendering has a summary and indented details', () => {
			const text = renderPlan(plan, { display: '.toolbelt/plan.json' });
			assert.match(text.split('\n')[0], /^Plan \(\.toolbelt\/plan\.json\): 1 of 3 completed, 1 in progress\./);
			assert.ok(text.includes('2. [~] Add tests\n   unit first\n   then integration\n3. [ ] Update README'));
		});

		it('keeps a multi-line title on one line in the abridged form', () => {
			assert.equal(renderPlan({ tasks: [{ title: 'a\n  b', status: 'pending' }] }, { abridged: true }), '1. [ ] a b');
		});

		it('says how to start when the plan is empty', () => {
			assert.equal(renderPlan({ tasks: [] }), 'The plan is empty. Create one with update_plan.');
			assert.equal(renderPlan({ tasks: [] }, { abridged: true }), '(no tasks)');
		});

		it('renders every status mark, CRLF details line by line, and no place when none is given', () => {
			const text = renderPlan({ tasks: [{ title: 'a', status: 'completed' }, { title: 'b', status: 'pending', details: 'x\r\ny' }] });
			assert.equal(text, 'Plan: 1 of 2 completed. Marks: [x] completed, [~] in progress, [ ] pending.\n1. [x] a\n2. [ ] b\n   x\n   y');
			assert.equal(summarize({ tasks: [] }), 'no tasks');
			assert.deepEqual(countTasks({ tasks: PLAN.tasks as any }), { total: 3, completed: 1, inProgress: 1, pending: 1 });
		});

		it('finds the first task too, and puts a title with line breaks on one trimmed line', () => {
			assert.equal(nextTask({ tasks: [{ title: 'x', status: 'in_progress' }] })?.number, 1);
			assert.equal(nextTask({ tasks: [{ title: 'x', status: 'pending' }] })?.number, 1);
			assert.equal(renderPlan({ tasks: [{ title: '\n  lead\n trail  \n', status: 'pending' }] }, { abridged: true }), '1. [ ] lead trail');
		});

		it('changes the status of the one task named by its number', () => {
			const parsed = parsePlan(JSON.stringify(PLAN));
			assert.ok('plan' in parsed);
			assert.deepEqual(withStatus(parsed.plan, 2, 'completed').tasks, [PLAN.tasks[0], { ...PLAN.tasks[1], status: 'completed' }, PLAN.tasks[2]]);
			assert.equal(parsed.plan.tasks[1].status, 'in_progress', 'the plan it was given is left as it was');
		});

		it('finds the task in progress first, then the first pending one', () => {
			assert.equal(nextTask(plan)?.number, 2);
			assert.equal(nextTask(withStatus(plan, 2, 'completed'))?.number, 3);
			assert.equal(nextTask({ tasks: [{ title: 'x', status: 'completed' }] }), undefined);
		});
	});

	describe('the file', () => {
		it('reads a missing file as an empty plan', async () => {
			const tree = makeTree();
			try {
				const state = await readPlanFile(await boundaryFor(tree.root), '.toolbelt/plan.json');
				assert.equal(state.exists, false);
				assert.equal(state.plan.tasks.length, 0);
				assert.equal(state.problem, undefined);
				assert.equal(state.display, '.toolbelt/plan.json');
			} finally {
				tree.cleanup();
			}
		});

		it('reads a valid file with its version for the stale-write check', async () => {
			const tree = makeTree({ '.toolbelt/plan.json': JSON.stringify(PLAN) });
			try {
				const state = await readPlanFile(await boundaryFor(tree.root), '.toolbelt/plan.json');
				assert.equal(state.plan.tasks.length, 3);
				assert.equal(state.exists, true);
				assert.equal(state.version?.size, fs.statSync(tree.file('.toolbelt/plan.json')).size);
			} finally {
				tree.cleanup();
			}
		});

		it('reports a broken file without throwing and plans to keep it aside when replaced', async () => {
			const tree = makeTree({ '.toolbelt/plan.json': '{broken' });
			try {
				const boundary = await boundaryFor(tree.root);
				const state = await readPlanFile(boundary, '.toolbelt/plan.json');
				assert.ok(state.problem);
				assert.equal(state.plan.tasks.length, 0);
				assert.match(describeProblem(state), /could not be read: it is not valid JSON.*plan\.json\.broken-<time>/);
				const now = new Date('2024-01-31T12:05:01Z');
				const changes = planChanges(state, { tasks: [{ title: 'new', status: 'pending' }] }, abs => boundary.display(abs), now);
				assert.equal(changes.length, 2);
				assert.equal(changes[0].path, brokenCopyPath(tree.file('.toolbelt/plan.json'), now));
				assert.equal(changes[0].displayPath, '.toolbelt/plan.json.broken-20240131-120501');
				assert.equal(changes[0].before, null);
				assert.equal(Buffer.from(wholeBytes(changes[0].after!)).toString(), '{broken');
				const written = parsePlan(Buffer.from(wholeBytes(changes[1].after!)).toString());
				assert.ok('plan' in written);
				assert.equal(written.plan.tasks[0].title, 'new');
			} finally {
				tree.cleanup();
			}
		});

		it('reads a folder in the plan file\'s place as a problem, and drops empty details', async () => {
			const tree = makeTree({ '.toolbelt/plan.json/inner.txt': 'x' });
			try {
				const state = await readPlanFile(await boundaryFor(tree.root), '.toolbelt/plan.json');
				assert.deepEqual([state.exists, state.problem, state.bytes, state.plan.tasks.length], [true, 'it is not a regular file', null, 0]);
				assert.equal(planChanges(state, { tasks: [] }, abs => abs).length, 1, 'nothing to keep aside');
			} finally {
				tree.cleanup();
			}
			const parsed = parsePlan(JSON.stringify({ tasks: [{ title: 't', status: 'pending', details: '' }] }));
			assert.deepEqual('plan' in parsed && parsed.plan.tasks, [{ title: 't', status: 'pending' }]);
		});

		it('reports a plan path through a file as an error, not as a missing plan', async () => {
			const tree = makeTree({ 'a.txt': 'a' });
			try {
				await assert.rejects(readPlanFile(await boundaryFor(tree.root), 'a.txt/plan.json'), (error: Error & { code?: string }) => error.code === 'not_directory');
			} finally {
				tree.cleanup();
			}
		});

		it('reads a plan whose path the caller resolved, and one kept in a read-only folder', async () => {
			const tree = makeTree({ 'ws/.toolbelt/plan.json': JSON.stringify(PLAN), 'shared/plan.json': JSON.stringify(PLAN) });
			try {
				const boundary = await Boundary.create({ roots: [{ name: 'ws', path: tree.file('ws') }], fileAccess: 'workspace', additionalReadPaths: [tree.file('shared')], protectedPaths: [] });
				const resolved = await boundary.resolve('.toolbelt/plan.json', 'write');
				assert.equal((await readPlanFile(boundary, resolved, 'write')).plan.tasks.length, 3);
				assert.equal((await readPlanFile(boundary, tree.file('shared/plan.json'))).plan.tasks.length, 3);
			} finally {
				tree.cleanup();
			}
		});

		it('reads the plan of a virtual workspace through its file system', async () => {
			const memory = new MemoryFileSystem('memfs', { '/ws/.toolbelt/plan.json': JSON.stringify(PLAN), '/ws/folder/plan.json/inner.txt': 'x' });
			const boundary = await Boundary.create({ roots: [{ name: 'ws', path: '/ws' }], fileAccess: 'workspace', additionalReadPaths: [], protectedPaths: [], fileSystem: memory });
			const state = await readPlanFile(boundary, '.toolbelt/plan.json');
			const stat = await memory.stat('/ws/.toolbelt/plan.json');
			assert.deepEqual([state.exists, state.plan.tasks.length, state.version], [true, 3, { mtimeMs: stat.mtimeMs, size: stat.size }]);
			const missing = await readPlanFile(boundary, 'none/plan.json');
			assert.deepEqual([missing.exists, missing.bytes, missing.problem, missing.display], [false, null, undefined, 'none/plan.json']);
			const folder = await readPlanFile(boundary, 'folder/plan.json');
			assert.deepEqual([folder.exists, folder.problem, folder.absolute], [true, 'it is not a regular file', path.posix.join('/ws', 'folder/plan.json')]);
		});

		it('refuses a plan file setting that leaves the workspace', async () => {
			const tree = makeTree();
			try {
				await assert.rejects(readPlanFile(await boundaryFor(tree.root), '../plan.json'), /escapes_workspace/);
			} finally {
				tree.cleanup();
			}
		});

		it('writes stable JSON that reads back the same', () => {
			const text = serializePlan({ tasks: PLAN.tasks.slice(0, 1) as any }, new Date('2024-01-01T00:00:00Z'));
			assert.equal(text, '{\n\t"version": 1,\n\t"updatedAt": "2024-01-01T00:00:00.000Z",\n\t"tasks": [\n\t\t{\n\t\t\t"title": "Write the parser",\n\t\t\t"status": "completed"\n\t\t}\n\t]\n}\n');
			const parsed = parsePlan(text);
			assert.ok('plan' in parsed);
			assert.deepEqual(parsed.plan.tasks, PLAN.tasks.slice(0, 1));
			assert.equal(parsed.plan.updatedAt, '2024-01-01T00:00:00.000Z');
		});
	});
});
