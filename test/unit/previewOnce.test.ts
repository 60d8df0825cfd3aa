import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { ApprovalRequest, PendingCall } from '../../src/core/context';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { resultText } from '../../src/core/results/result';
import { ALL_TOOLS, ToolRegistry } from '../../src/tools';
import { canonicalJson, MAX_PENDING_CALLS, PENDING_CALL_TTL_MS, PendingCalls } from '../../src/tools/pendingCalls';
import type { ToolDefinition } from '../../src/tools/tool';
import { makeTree, testStorageDir } from './helpers';
import { wholeBytes } from '../../src/core/files/splicedBytes';

/** Chat's flow: prepareInvocation previews the call, VS Code shows the request, invoke commits it. */
describe('preview once, commit what was approved', () => {
	let tree: ReturnType<typeof makeTree>;
	let asked: ApprovalRequest[];
	let plannings: number;
	beforeEach(() => {
		tree = makeTree({ 'a.txt': 'one\ntwo\nthree\n', '.git/config': '[core]\n' });
		asked = [];
		plannings = 0;
	});
	afterEach(() => tree.cleanup());

	/** The real tools, each counting how often its body (the planning) runs. */
	function setup(settings = {}) {
		const env = createNodeEnvironment({
			roots: [tree.root], settings, storageDir: testStorageDir(),
			confirm: async request => { asked.push(request); return true; },
		});
		const counted = ALL_TOOLS.map(tool => ({ ...tool, run: (input: never, ctx: never) => { plannings++; return tool.run(input, ctx); } }) as ToolDefinition);
		return { env, registry: new ToolRegistry(counted, env) };
	}
	const edit = { path: 'a.txt', edits: [{ oldText: 'two', newText: 'TWO' }] };
	const chat = { approval: 'preconfirmed' as const };

	it('writes exactly the bytes the preview showed, planning the call once', async () => {
		const { registry } = setup();
		const request = await registry.preview('edit_file', edit);
		assert.equal(request?.kind, 'files');
		const shown = request.kind === 'files' ? wholeBytes(request.changes[0].after!) : new Uint8Array();
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'one\ntwo\nthree\n', 'the preview writes nothing');
		const result = await registry.invoke('edit_file', edit, chat);
		assert.equal(result.error, undefined, resultText(result));
		assert.deepEqual(new Uint8Array(fs.readFileSync(tree.file('a.txt'))), new Uint8Array(shown));
		assert.equal(plannings, 1, 'the invocation committed the preview\'s plan');
		assert.equal(asked.length, 0, 'chat asked; the host does not ask again');
	});

	it('keys the plan by tool and canonical input: the same call in another key order finds it', async () => {
		const { registry } = setup();
		await registry.preview('write_file', { path: 'new.txt', content: 'hello\n', mode: 'create' });
		const result = await registry.invoke('write_file', { mode: 'create', content: 'hello\n', path: 'new.txt' }, chat);
		assert.equal(result.error, undefined, resultText(result));
		assert.equal(plannings, 1);
		assert.equal(fs.readFileSync(tree.file('new.txt'), 'utf8'), 'hello\n');
	});

	it('refuses the change when the file changed between preview and invoke, and writes nothing', async () => {
		const { registry } = setup();
		await registry.preview('edit_file', edit);
		fs.writeFileSync(tree.file('a.txt'), 'one\ntwo\nthree\nfour\n');
		const result = await registry.invoke('edit_file', edit, chat);
		assert.equal(result.error?.code, 'stale_write');
		assert.match(result.error!.message, /a\.txt changed since you were shown the change.*Nothing was written\. Read it again with read_file/);
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'one\ntwo\nthree\nfour\n');
		assert.equal(plannings, 1, 'the stale plan is refused, not silently planned again');
	});

	it('catches a same-size change with the same modification time (bytes are compared, not stats)', async () => {
		const { registry } = setup();
		const file = tree.file('a.txt');
		const { atime, mtime } = fs.statSync(file);
		await registry.preview('edit_file', edit);
		fs.writeFileSync(file, 'one\ntwo\nthreE\n');
		fs.utimesSync(file, atime, mtime);
		const result = await registry.invoke('edit_file', edit, chat);
		assert.equal(result.error?.code, 'stale_write');
		assert.equal(fs.readFileSync(file, 'utf8'), 'one\ntwo\nthreE\n');
	});

	it('refuses a new file that someone else created between preview and invoke', async () => {
		const { registry } = setup();
		const call = { path: 'b.txt', content: 'mine\n' };
		await registry.preview('write_file', call);
		fs.writeFileSync(tree.file('b.txt'), 'theirs\n');
		const result = await registry.invoke('write_file', call, chat);
		assert.equal(result.error?.code, 'already_exists');
		assert.equal(fs.readFileSync(tree.file('b.txt'), 'utf8'), 'theirs\n');
	});

	it('a preview whose invocation never comes holds no lock', async () => {
		const { env, registry } = setup();
		await registry.preview('edit_file', edit);
		assert.equal(env.state.fileLocks.size, 0);
		const later = registry.invoke('write_file', { path: 'a.txt', content: 'replaced\n' });
		const result = await Promise.race([later, new Promise<undefined>(resolve => setTimeout(resolve, 5000, undefined))]);
		assert.ok(result, 'a later call on the same file went ahead');
		assert.equal(result.error, undefined, resultText(result));
		assert.equal(fs.readFileSync(tree.file('a.txt'), 'utf8'), 'replaced\n');
		// The abandoned preview, if chat invoked it now after all, no longer fits the file.
		assert.equal((await registry.invoke('edit_file', edit, chat)).error?.code, 'stale_write');
	});

	it('holds no lock while a person decides, and holds the locks from planning to writing when no one is asked', async () => {
		const { env, registry } = setup();
		let locksWhileAsking = -1;
		const asking = await registry.invoke('edit_file', edit, { decide: async () => { locksWhileAsking = env.state.fileLocks.size; return true; } });
		assert.equal(asking.error, undefined, resultText(asking));
		assert.equal(locksWhileAsking, 0);
		const quiet = setup({ approval: 'never' });
		const calls = ['1', '2', '3'].map(n => quiet.registry.invoke('write_file', { path: 'a.txt', content: `${n}\n`, mode: 'append' }));
		assert.deepEqual((await Promise.all(calls)).map(result => result.error), [undefined, undefined, undefined], 'none was stale: each planned after the one before wrote');
		assert.equal(quiet.env.state.fileLocks.size, 0);
	});

	it('plans the call at invocation when VS Code skipped the preview, and once per call outside chat', async () => {
		const { registry } = setup();
		assert.equal((await registry.invoke('edit_file', edit, chat)).error, undefined);
		assert.equal(plannings, 1);
		assert.equal((await registry.invoke('edit_file', { path: 'a.txt', edits: [{ oldText: 'TWO', newText: '2' }] })).error, undefined);
		assert.equal(plannings, 2);
		assert.equal(asked.length, 1, 'outside chat the host asked');
	});

	it('a protected path is asked by the host at invocation, about the previewed change, which is what lands', async () => {
		const { registry } = setup({ approval: 'never' });
		const call = { path: '.git/config', edits: [{ oldText: '[core]', newText: '[core]\n\tbare = false' }] };
		const request = await registry.preview('edit_file', call);
		assert.ok(request && request.kind === 'files' && request.protectedPaths.includes('.git/config'));
		const result = await registry.invoke('edit_file', call, chat);
		assert.equal(result.error, undefined, resultText(result));
		assert.deepEqual(asked, [request], 'the host asked about the very request the preview made');
		assert.equal(plannings, 1);
		assert.equal(fs.readFileSync(tree.file('.git/config'), 'utf8'), '[core]\n\tbare = false\n');
	});

	it('a command previewed in chat runs once, at invocation', async () => {
		const { registry } = setup();
		const call = { command: 'echo ran >> log.txt', sandbox: false, justification: 'test' };
		const request = await registry.preview('run_command', call);
		assert.equal(request?.kind, 'command');
		assert.equal(fs.existsSync(tree.file('log.txt')), false, 'the preview runs nothing');
		const result = await registry.invoke('run_command', call, chat);
		assert.equal(result.error, undefined, resultText(result));
		assert.equal(fs.readFileSync(tree.file('log.txt'), 'utf8'), 'ran\n');
		assert.equal(plannings, 1);
	});
});

describe('PendingCalls', () => {
	const call = (name: string): PendingCall => ({ pending: true, request: { kind: 'call', title: name, detail: '' }, commit: async () => { throw new Error('not committed here'); } });

	it('hands a kept call out once, to the same tool and input only', () => {
		const store = new PendingCalls();
		const kept = call('a');
		store.keep('edit_file', { path: 'a', edits: [] }, kept);
		assert.equal(store.take('write_file', { path: 'a', edits: [] }), undefined);
		assert.equal(store.take('edit_file', { path: 'b', edits: [] }), undefined);
		assert.equal(store.take('edit_file', { edits: [], path: 'a' }), kept);
		assert.equal(store.take('edit_file', { path: 'a', edits: [] }), undefined, 'taken once');
	});

	it('lets a new preview of the same call supersede the old one, and expires calls never invoked', () => {
		let now = 0;
		const store = new PendingCalls(() => now);
		store.keep('t', { x: 1 }, call('old'));
		const newer = call('new');
		store.keep('t', { x: 1 }, newer);
		assert.equal(store.size, 1);
		assert.equal(store.take('t', { x: 1 }), newer);
		store.keep('t', { x: 2 }, call('late'));
		now += PENDING_CALL_TTL_MS;
		assert.equal(store.take('t', { x: 2 }), undefined);
	});

	it('keeps a bounded number, dropping the oldest', () => {
		const store = new PendingCalls();
		for (let i = 0; i < MAX_PENDING_CALLS + 5; i++) store.keep('t', { i }, call(String(i)));
		assert.equal(store.size, MAX_PENDING_CALLS);
		assert.equal(store.take('t', { i: 0 }), undefined);
		assert.ok(store.take('t', { i: MAX_PENDING_CALLS + 4 }));
	});

	it('canonical JSON sorts keys at every depth and keeps array order', () => {
		assert.equal(canonicalJson({ b: 1, a: { d: [2, 1], c: null } }), '{"a":{"c":null,"d":[2,1]},"b":1}');
	});
});
