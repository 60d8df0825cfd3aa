import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { makeHarness, makeTree } from './helpers';

const TASKS = [
	{ title: 'Write the parser', status: 'completed' },
	{ title: 'Add tests', status: 'in_progress', details: 'unit first' },
	{ title: 'Update README', status: 'pending' },
];

function readPlan(file: string) {
	return JSON.parse(fs.readFileSync(file, 'utf8'));
}

describe('plan tools', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'src/a.ts': 'x' }); });
	afterEach(() => tree.cleanup());

	it('get_plan on a fresh workspace says the plan is empty and how to start', async () => {
		const h = makeHarness(tree.root);
		const text = await h.text('get_plan', {});
		assert.match(text, /empty.*update_plan/);
		assert.equal(fs.existsSync(tree.file('.toolbelt/plan.json')), false);
	});

	it('update_plan writes the file (creating .toolbelt/) and get_plan reads it back', async () => {
		const h = makeHarness(tree.root);
		const result = await h.invoke('update_plan', { tasks: TASKS });
		assert.equal(result.error, undefined);
		assert.deepEqual(result.metadata.filesTouched, ['.toolbelt/plan.json']);
		assert.deepEqual(readPlan(tree.file('.toolbelt/plan.json')).tasks, TASKS);
		const text = await h.text('get_plan', {});
		assert.match(text, /^Plan \(\.toolbelt\/plan\.json\): 1 of 3 completed, 1 in progress/);
		assert.match(text, /2\. \[~\] Add tests\n {3}unit first/);
		assert.equal(await h.text('get_plan', { abridged: true }), '1. [x] Write the parser\n2. [~] Add tests\n3. [ ] Update README');
	});

	it('does not ask under the default policy, asks under "always", refuses when untrusted', async () => {
		const quiet = makeHarness(tree.root);
		await quiet.text('update_plan', { tasks: TASKS });
		assert.equal(quiet.asked.length, 0);

		const careful = makeHarness(tree.root, { settings: { approval: 'always' }, approve: false });
		const declined = await careful.error('complete_task', { taskNumber: 3 });
		assert.equal(declined.code, 'declined');
		assert.equal(careful.asked[0].kind, 'files');
		assert.equal(readPlan(tree.file('.toolbelt/plan.json')).tasks[2].status, 'pending');

		const untrusted = makeHarness(tree.root, { trusted: false });
		assert.equal((await untrusted.error('update_plan', { tasks: [] })).code, 'untrusted');
		assert.match(await untrusted.text('get_plan', {}), /Update README/);
	});

	it('a plan file inside protectedPaths still asks', async () => {
		const h = makeHarness(tree.root, { settings: { protectedPaths: ['.toolbelt/**'] } });
		await h.text('update_plan', { tasks: TASKS });
		assert.equal(h.asked.length, 1);
		assert.equal(h.asked[0].kind, 'files');
	});

	it('the preview (chat confirmation) of a plan update asks nothing and writes nothing', async () => {
		const h = makeHarness(tree.root);
		assert.equal(await h.registry.preview('update_plan', { tasks: TASKS }), undefined);
		assert.equal(fs.existsSync(tree.file('.toolbelt/plan.json')), false);
	});

	it('complete_task marks one task and names the next; completing twice changes nothing', async () => {
		const h = makeHarness(tree.root);
		await h.text('update_plan', { tasks: TASKS });
		const text = await h.text('complete_task', { taskNumber: 2, abridged: true });
		assert.match(text, /^Task 2 completed: Add tests\nNext: 3\. Update README \(pending\)\. Plan: 2 of 3 completed\./);
		assert.ok(text.endsWith('1. [x] Write the parser\n2. [x] Add tests\n3. [ ] Update README'));
		assert.deepEqual(readPlan(tree.file('.toolbelt/plan.json')).tasks.map((t: any) => t.status), ['completed', 'completed', 'pending']);
		const mtime = fs.statSync(tree.file('.toolbelt/plan.json')).mtimeMs;
		assert.match(await h.text('complete_task', { taskNumber: 2 }), /already completed; nothing changed/);
		assert.equal(fs.statSync(tree.file('.toolbelt/plan.json')).mtimeMs, mtime);
		assert.match(await h.text('complete_task', { taskNumber: 3 }), /All 3 tasks are completed/);
	});

	it('complete_task explains a task number out of range and an empty plan', async () => {
		const h = makeHarness(tree.root);
		assert.match((await h.error('complete_task', { taskNumber: 1 })).message, /has no tasks\. Create one with update_plan/);
		await h.text('update_plan', { tasks: TASKS });
		const error = await h.error('complete_task', { taskNumber: 7 });
		assert.equal(error.code, 'not_found');
		assert.match(error.message, /no task 7: the plan has 3 tasks \(numbers 1–3\)/);
		assert.equal((await h.error('complete_task', { taskNumber: 0 })).code, 'invalid_input');
	});

	it('bad tasks are refused by the schema and the file is not touched', async () => {
		const h = makeHarness(tree.root);
		await h.text('update_plan', { tasks: TASKS });
		const before = fs.readFileSync(tree.file('.toolbelt/plan.json'), 'utf8');
		const error = await h.error('update_plan', { tasks: [{ title: 'x', status: 'done' }] });
		assert.equal(error.code, 'invalid_input');
		assert.match(error.message, /tasks\[0\]\.status/);
		assert.equal((await h.error('update_plan', { tasks: [{ title: '', status: 'pending' }] })).code, 'invalid_input');
		assert.equal(fs.readFileSync(tree.file('.toolbelt/plan.json'), 'utf8'), before);
	});

	it('a broken plan file: get_plan explains, complete_task refuses, update_plan replaces it and keeps the old one', async () => {
		fs.mkdirSync(tree.file('.toolbelt'));
		fs.writeFileSync(tree.file('.toolbelt/plan.json'), '{"tasks": [oops');
		const h = makeHarness(tree.root);
		const got = await h.invoke('get_plan', {});
		assert.equal(got.error, undefined);
		assert.match(got.content[0].kind === 'text' ? got.content[0].text : '', /could not be read: it is not valid JSON/);
		assert.ok(got.metadata.problem);
		assert.match((await h.error('complete_task', { taskNumber: 1 })).message, /could not be read.*Call update_plan with the full task list/);
		const text = await h.text('update_plan', { tasks: TASKS });
		assert.match(text, /The broken plan file was kept as \.toolbelt\/plan\.json\.broken-\d{8}-\d{6}\./);
		const kept = fs.readdirSync(tree.file('.toolbelt')).filter(name => name.startsWith('plan.json.broken-'));
		assert.equal(kept.length, 1);
		assert.equal(fs.readFileSync(tree.file(`.toolbelt/${kept[0]}`), 'utf8'), '{"tasks": [oops');
		assert.equal(readPlan(tree.file('.toolbelt/plan.json')).tasks.length, 3);
	});

	it('a plan file of more than 100 tasks (written by hand) is read as broken, not used', async () => {
		const tasks = Array.from({ length: 101 }, (_, i) => ({ title: `Task ${i + 1}`, status: 'pending' }));
		fs.mkdirSync(tree.file('.toolbelt'));
		fs.writeFileSync(tree.file('.toolbelt/plan.json'), JSON.stringify({ tasks }));
		const h = makeHarness(tree.root);
		const got = await h.invoke('get_plan', {});
		assert.match(got.content[0].kind === 'text' ? got.content[0].text : '', /could not be read: it does not match the plan format \(tasks: must hold at most 100 items\)/);
		assert.match((await h.error('complete_task', { taskNumber: 101 })).message, /could not be read/);
	});

	it('honours a planFile setting and refuses one outside the workspace', async () => {
		const h = makeHarness(tree.root, { settings: { planFile: 'docs/PLAN.json' } });
		await h.text('update_plan', { tasks: TASKS.slice(0, 1) });
		assert.equal(readPlan(tree.file('docs/PLAN.json')).tasks.length, 1);
		const outside = makeHarness(tree.root, { settings: { planFile: '../plan.json' } });
		assert.equal((await outside.error('update_plan', { tasks: [] })).code, 'outside_boundary');
	});

	it('notes when more than one task is in progress', async () => {
		const h = makeHarness(tree.root);
		const text = await h.text('update_plan', { tasks: [{ title: 'a', status: 'in_progress' }, { title: 'b', status: 'in_progress' }] });
		assert.match(text, /2 tasks are in progress; keep one in progress at a time/);
	});

	it('a person editing the file between calls is not overwritten blindly: the next call reads it fresh', async () => {
		const h = makeHarness(tree.root);
		await h.text('update_plan', { tasks: TASKS });
		const file = tree.file('.toolbelt/plan.json');
		const edited = readPlan(file);
		edited.tasks.push({ title: 'Added by hand', status: 'pending' });
		fs.writeFileSync(file, JSON.stringify(edited));
		await h.text('complete_task', { taskNumber: 4 });
		assert.deepEqual(readPlan(file).tasks.map((t: any) => t.title), ['Write the parser', 'Add tests', 'Update README', 'Added by hand']);
		assert.equal(readPlan(file).tasks[3].status, 'completed');
	});
});

describe('plan tools under concurrency', () => {
	it('ten complete_task calls at once all land (no lost update, no stale error)', async () => {
		const tree = makeTree();
		try {
			const h = makeHarness(tree.root);
			await h.text('update_plan', { tasks: Array.from({ length: 10 }, (_, i) => ({ title: `t${i + 1}`, status: 'pending' })) });
			const results = await Promise.all(Array.from({ length: 10 }, (_, i) => h.invoke('complete_task', { taskNumber: i + 1 })));
			assert.deepEqual(results.map(result => result.error?.message), Array(10).fill(undefined));
			const plan = JSON.parse(fs.readFileSync(tree.file('.toolbelt/plan.json'), 'utf8'));
			assert.ok(plan.tasks.every((task: any) => task.status === 'completed'));
		} finally {
			tree.cleanup();
		}
	});
});

describe('plan tools and diffs', () => {
	it('a plan update that asked no one opens no diff editor; under "always" it does', async () => {
		const tree = makeTree();
		try {
			const shown: string[][] = [];
			const quiet = makeHarness(tree.root);
			(quiet.registry as any).env.host.showDiffs = async (changes: { displayPath: string }[]) => { shown.push(changes.map(change => change.displayPath)); };
			await quiet.text('update_plan', { tasks: [{ title: 'a', status: 'pending' }] });
			await quiet.text('complete_task', { taskNumber: 1 });
			assert.equal(shown.length, 0);
			const careful = makeHarness(tree.root, { settings: { approval: 'always' } });
			(careful.registry as any).env.host.showDiffs = async (changes: { displayPath: string }[]) => { shown.push(changes.map(change => change.displayPath)); };
			await careful.text('update_plan', { tasks: [{ title: 'b', status: 'pending' }] });
			assert.deepEqual(shown, [['.toolbelt/plan.json']]);
		} finally {
			tree.cleanup();
		}
	});
});
