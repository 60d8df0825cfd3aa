import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { SessionManager } from '../../src/core/commands/sessions';
import { ALL_TOOLS } from '../../src/tools';
import { Harness, makeHarness, makeTree } from './helpers';

/** One valid call of every tool that changes files or runs commands. */
const CALLS: Record<string, object> = {
	write_file: { path: 'b.txt', content: 'written\n' },
	edit_file: { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'beta' }] },
	apply_patch: { patch: '*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch' },
	write_output: { name: 'notes', content: 'x' },
	run_command: { command: 'touch ran.txt' },
	exec_command: { command: 'touch started.txt; sleep 30', yieldMs: 200 },
	write_stdin: { sessionId: 1, chars: 'x' },
	update_plan: { tasks: [] },
	complete_task: { taskNumber: 1 },
};

describe('Workspace Trust through the real tools', function () {
	this.timeout(20_000);
	let tree: ReturnType<typeof makeTree>;
	let harnesses: Harness[];
	const harness = (trusted: boolean) => {
		const h = makeHarness(tree.root, { trusted });
		harnesses.push(h);
		return h;
	};
	const sessionsOf = (h: Harness) => (h.registry as any).env.state.sessions as SessionManager;
	const files = () => fs.readdirSync(tree.root).sort();

	beforeEach(() => {
		harnesses = [];
		tree = makeTree({
			'a.txt': 'alpha\n',
			'.toolbelt/plan.json': JSON.stringify({ tasks: [{ title: 'Write tests', status: 'pending' }] }),
		});
	});
	afterEach(async () => {
		await Promise.all(harnesses.map(h => sessionsOf(h).dispose()));
		tree.cleanup();
	});

	it('the calls below are valid ones, and cover every tool that changes files or runs commands', () => {
		assert.deepEqual(Object.keys(CALLS).sort(), ALL_TOOLS.filter(tool => tool.mutating && !tool.needsVscode).map(tool => tool.name).sort());
		const trusted = harness(true);
		for (const [name, input] of Object.entries(CALLS)) assert.doesNotThrow(() => trusted.registry.check(name, input), name);
	});

	it('refuses each of them in an untrusted workspace before it acts or asks', async () => {
		const h = harness(false);
		const before = files();
		for (const [name, input] of Object.entries(CALLS)) {
			const error = await h.error(name, input);
			assert.equal(error.code, 'untrusted', name);
			assert.ok(error.message.startsWith(`${name} changes files or runs commands, and this workspace is not trusted`), error.message);
			assert.equal(await h.registry.preview(name, input), undefined, `${name}: nothing to confirm`);
		}
		assert.deepEqual(h.asked, []);
		assert.deepEqual(files(), before);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'alpha\n');
	});

	it('run_command in an untrusted workspace runs nothing', async () => {
		const h = harness(false);
		assert.equal((await h.error('run_command', { command: 'touch ran.txt' })).code, 'untrusted');
		assert.equal((await h.error('run_command', { command: 'touch ran.txt' }, { approval: 'preconfirmed' })).code, 'untrusted');
		await new Promise(resolve => setTimeout(resolve, 200));
		assert.equal(fs.existsSync(tree.file('ran.txt')), false);
		// The same call in a trusted workspace does run: the refusal above is the trust check's.
		await harness(true).text('run_command', { command: 'touch ran.txt' });
		assert.equal(fs.existsSync(tree.file('ran.txt')), true);
	});

	it('exec_command in an untrusted workspace starts no session', async () => {
		const h = harness(false);
		assert.equal((await h.error('exec_command', { command: 'touch started.txt; sleep 30', yieldMs: 200 })).code, 'untrusted');
		assert.equal((await h.error('exec_command', { command: 'touch started.txt; sleep 30', yieldMs: 200 }, { approval: 'preconfirmed' })).code, 'untrusted');
		assert.deepEqual(sessionsOf(h).live(), []);
		assert.match(await h.text('list_sessions', {}), /^No sessions/);
		await new Promise(resolve => setTimeout(resolve, 200));
		assert.equal(fs.existsSync(tree.file('started.txt')), false);
		const trusted = harness(true);
		await trusted.text('exec_command', { command: 'touch started.txt; sleep 30', yieldMs: 200 });
		assert.equal(sessionsOf(trusted).live().length, 1);
	});

	it('leaves the read tools working', async () => {
		const h = harness(false);
		assert.match(await h.text('read_file', { path: 'a.txt' }), /alpha/);
		assert.match(await h.text('list_dir', {}), /a\.txt/);
		assert.match(await h.text('get_plan', {}), /Write tests/);
		assert.match(await h.text('list_sessions', {}), /^No sessions/);
	});
});
