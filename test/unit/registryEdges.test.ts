import * as assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Type } from '@sinclair/typebox';
import type { ApprovalRequest, PendingCall, ToolEvent } from '../../src/core/context';
import { CancelledError } from '../../src/core/results/errors';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { resultText, ResultMetadata, textResult, ToolResult } from '../../src/core/results/result';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/tool';
import { makeTree, testStorageDir } from './helpers';
import { MemoryFileSystem } from './support/memoryFileSystem';

/** Tools whose behaviour a test sets: what they return, what they note, whether they wait or fail. */
function tools(behaviour: { text?: string; fail?: Error; wait?: Promise<void> }) {
	const common = { referenceName: 'tbX', displayName: 'X', icon: 'x', tags: [], userDescription: 'test', modelDescription: 'test', describe: () => 'Doing it' };
	const read = defineTool({
		...common, name: 'peek', group: 'read', mutating: false, schema: Type.Object({}),
		run: async (_input, ctx) => {
			ctx.note({ target: 'noted target' });
			await behaviour.wait;
			if (behaviour.fail) throw behaviour.fail;
			return textResult(behaviour.text ?? 'peeked');
		},
	});
	const write = defineTool({
		...common, name: 'poke', group: 'edit', mutating: true, schema: Type.Object({}),
		run: async () => ({
			pending: true as const,
			request: { kind: 'files' as const, title: 'Poke the file', changes: [], protectedPaths: [] },
			commit: async () => textResult('poked'),
		}),
	});
	return [read, write];
}

describe('ToolRegistry: events, cancellation and refusals at their edges', () => {
	let tree: ReturnType<typeof makeTree>;
	let asked: ApprovalRequest[];
	const registry = (behaviour: Parameters<typeof tools>[0] = {}, settings = {}, answer = true) => new ToolRegistry(tools(behaviour), createNodeEnvironment({
		roots: [tree.root], storageDir: testStorageDir(), settings, confirm: async request => { asked.push(request); return answer; },
	}));
	const events = (reg: ToolRegistry) => {
		const seen: ToolEvent[] = [];
		reg.onEvent(event => seen.push(event));
		return seen;
	};

	beforeEach(() => {
		tree = makeTree({ 'a.txt': 'a' });
		asked = [];
	});
	afterEach(() => tree.cleanup());

	it('gives each call its own increasing id, and a listener that was disposed hears nothing', async () => {
		const reg = registry();
		const seen = events(reg);
		const late: ToolEvent[] = [];
		reg.onEvent(event => late.push(event)).dispose();
		await reg.invoke('peek', {});
		await reg.invoke('peek', {});
		const [first, second] = [seen[0].id, seen[2].id].map(id => /^[0-9a-z]+-(\d+)$/.exec(id)![1]).map(Number);
		assert.equal(second, first + 1);
		assert.deepEqual(late, []);
	});

	it('takes what a tool notes into its end event, and cuts long result text there', async () => {
		const long = 'x'.repeat(5000);
		const reg = registry({ text: long });
		const seen = events(reg);
		await reg.invoke('peek', {});
		assert.equal(seen[1].target, 'noted target');
		assert.equal(seen[1].resultText, `${'x'.repeat(4096)}…`);
		assert.ok(seen[1].durationMs! >= 0 && seen[1].durationMs! < 60_000);
		const exact = registry({ text: 'y'.repeat(4096) });
		const exactSeen = events(exact);
		await exact.invoke('peek', {});
		assert.equal(exactSeen[1].resultText, 'y'.repeat(4096));
	});

	it('reports declined and cancelled calls with their own status', async () => {
		const declined = registry({}, {}, false);
		const declinedEvents = events(declined);
		const result = await declined.invoke('poke', {});
		assert.equal(result.error?.message, 'The user declined poke the file. Nothing was changed. Ask the user how to proceed instead of retrying the same call.');
		assert.equal(declinedEvents.find(event => event.phase === 'end')?.status, 'declined');
		const controller = new AbortController();
		controller.abort();
		const cancelled = registry();
		const cancelledEvents = events(cancelled);
		await cancelled.invoke('peek', {}, { signal: controller.signal });
		assert.equal(cancelledEvents.find(event => event.phase === 'end')?.status, 'cancelled');
	});

	it('a failure after the signal fired is a cancel; a typed error keeps its own code', async () => {
		const controller = new AbortController();
		let release!: () => void;
		const wait = new Promise<void>(resolve => { release = resolve; });
		const pending = registry({ wait, fail: new TypeError('boom') }).invoke('peek', {}, { signal: controller.signal });
		controller.abort();
		release();
		assert.equal((await pending).error?.code, 'cancelled');
		const typed = await registry({ fail: new CancelledError('Reading') }).invoke('peek', {});
		assert.equal(typed.error?.code, 'cancelled');
	});

	it('leaves no listener on the caller\'s signal once the call is over', async () => {
		const controller = new AbortController();
		await registry().invoke('peek', {}, { signal: controller.signal });
		assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
	});

	it('under "always", asks before a read unless VS Code already asked; switched-off tools say how to switch them on', async () => {
		await registry({}, { approval: 'always' }).invoke('peek', {}, { approval: 'preconfirmed' });
		assert.equal(asked.length, 0);
		await registry({}, { approval: 'mutating' }).invoke('peek', {});
		assert.equal(asked.length, 0);
		const off = await registry({}, { disabledTools: ['peek'] }).invoke('peek', {});
		assert.equal(off.error?.message, 'peek is switched off in this workspace\'s settings (toolbelt.disabledTools / toolbelt.disabledGroups). Use another tool or ask the user to enable it.');
	});
});

describe('ToolRegistry: what a call is told, what it reports, which tools it lists', () => {
	let tree: ReturnType<typeof makeTree>;
	let asked: ApprovalRequest[];
	/** How many times each tool planned, and how many plans were let go. */
	let runs: Record<string, number>;
	let released: number;
	/** What the next `exits` call returns as its metadata; what `late` waits for before planning. */
	let metadata: Partial<ResultMetadata>;
	let planLate: Promise<void>;
	/** Whether `late`'s plan holds something to let go of (PendingCall.release is optional). */
	let lateHolds: boolean;
	const common = { referenceName: 'tbX', displayName: 'X', icon: 'x', tags: [], userDescription: 'test', modelDescription: 'test', schema: Type.Object({}), describe: () => 'Doing it' };
	const counted = (name: string) => {
		runs[name] = (runs[name] ?? 0) + 1;
		return runs[name];
	};
	const pending = (title: string, commit: PendingCall['commit']): PendingCall => ({
		pending: true, request: { kind: 'files', title, changes: [], protectedPaths: [] }, commit, release: () => { released++; },
	});
	const definitions = [
		defineTool({ ...common, name: 'look', group: 'read', mutating: false, run: async () => textResult(`looked ${counted('look')}`) }),
		// Tells what it was told: whether a person confirmed its change.
		defineTool({ ...common, name: 'mark', group: 'edit', mutating: true, run: async () => {
			counted('mark');
			return pending('Mark the file', async (_ctx, confirmed) => textResult(`confirmed: ${confirmed}`));
		} }),
		// A change that finds nothing to do answers at once, without a plan.
		defineTool({ ...common, name: 'noop', group: 'edit', mutating: true, run: async () => textResult(`nothing to do (run ${counted('noop')})`) }),
		defineTool({ ...common, name: 'exits', group: 'read', mutating: false, run: async () => textResult('ran', metadata) }),
		defineTool({ ...common, name: 'late', group: 'edit', mutating: true, run: async () => {
			await planLate;
			const plan = pending('Late', async () => textResult('committed'));
			return lateHolds ? plan : { ...plan, release: undefined };
		} }),
		defineTool({ ...common, name: 'hover', group: 'read', mutating: false, needsVscode: true, run: async () => textResult('hovered') }),
		defineTool({ ...common, name: 'shell', group: 'commands', mutating: true, run: async () => textResult(`ran ${counted('shell')}`) }),
		defineTool({ ...common, name: 'sudden', group: 'read', mutating: false, run: () => { throw new TypeError('sudden'); } }),
	];
	const registry = (settings = {}, fileSystem?: MemoryFileSystem) => new ToolRegistry(definitions, createNodeEnvironment({
		roots: fileSystem ? ['/ws'] : [tree.root], storageDir: testStorageDir(), settings, fileSystem, confirm: async request => { asked.push(request); return true; },
	}));
	const endOf = async (reg: ToolRegistry, name: string, options = {}): Promise<{ result: ToolResult; end: ToolEvent }> => {
		const seen: ToolEvent[] = [];
		const listening = reg.onEvent(event => seen.push(event));
		const result = await reg.invoke(name, {}, options);
		listening.dispose();
		return { result, end: seen.find(event => event.phase === 'end')! };
	};

	beforeEach(() => {
		tree = makeTree({ 'a.txt': 'a' });
		asked = [];
		runs = {};
		released = 0;
		metadata = {};
		planLate = Promise.resolve();
		lateHolds = true;
	});
	afterEach(() => tree.cleanup());

	it('tells a change whether a person confirmed it, here or in chat', async () => {
		assert.equal(resultText(await registry().invoke('mark', {})), 'confirmed: true');
		assert.equal(asked.length, 1);
		assert.equal(resultText(await registry({ approval: 'never' }).invoke('mark', {})), 'confirmed: false', 'no one was asked');
		assert.equal(resultText(await registry().invoke('mark', {}, { approval: 'preconfirmed' })), 'confirmed: true', 'chat asked');
		assert.equal(asked.length, 1);
	});

	it('under "always", asks about a change once, with the change itself', async () => {
		await registry({ approval: 'always' }).invoke('mark', {});
		assert.deepEqual(asked.map(request => request.kind), ['files']);
	});

	it('commits the previewed plan only for the invocation chat confirmed; any other plans again', async () => {
		const reg = registry();
		assert.equal((await reg.preview('mark', {}))?.title, 'Mark the file');
		await reg.invoke('mark', {});
		assert.equal(runs.mark, 2, 'an "ask" invocation does not take the preview\'s plan');
		await reg.preview('mark', {});
		await reg.invoke('mark', {}, { approval: 'preconfirmed' });
		assert.equal(runs.mark, 3, 'the preconfirmed invocation commits the preview\'s plan');
		assert.equal(await reg.preview('noop', {}), undefined);
		assert.equal(resultText(await reg.invoke('noop', {}, { approval: 'preconfirmed' })), 'nothing to do (run 2)', 'a preview that planned nothing is not kept');
	});

	it('names a call in its events as the model knows the tool, with or without the prefix', async () => {
		const reg = registry();
		assert.equal((await endOf(reg, 'toolbelt_look')).end.tool, 'look');
		const unknown = await endOf(reg, 'nope');
		assert.deepEqual([unknown.end.tool, unknown.result.error?.code], ['nope', 'unknown_tool']);
	});

	it('reports a cancel whatever a tool throws once the signal fired, but a refusal keeps its code', async () => {
		const controller = new AbortController();
		controller.abort();
		const sudden = await registry().invoke('sudden', {}, { signal: controller.signal });
		assert.deepEqual([sudden.error?.code, sudden.error?.message], ['cancelled', 'sudden was cancelled.']);
		assert.equal((await registry().invoke('nope', {}, { signal: controller.signal })).error?.code, 'unknown_tool');
	});

	it('lets go of a plan that arrives after the call was cancelled, and quietly drops one that holds nothing', async () => {
		const cancelLate = async () => {
			let arrive!: () => void;
			planLate = new Promise(resolve => { arrive = resolve; });
			const controller = new AbortController();
			const call = registry().invoke('late', {}, { signal: controller.signal });
			controller.abort();
			assert.equal((await call).error?.code, 'cancelled');
			arrive();
			await new Promise(resolve => setImmediate(resolve));
		};
		await cancelLate();
		assert.equal(released, 1);
		const unhandled: unknown[] = [];
		const onUnhandled = (reason: unknown) => unhandled.push(reason);
		process.on('unhandledRejection', onUnhandled);
		try {
			lateHolds = false;
			await cancelLate();
			await new Promise(resolve => setImmediate(resolve));
			assert.deepEqual(unhandled, []);
		} finally {
			process.off('unhandledRejection', onUnhandled);
		}
	});

	it('gives a command\'s exit in the end event: its code, signal or timeout', async () => {
		const reg = registry();
		const exitOf = async (meta: Partial<ResultMetadata>) => {
			metadata = meta;
			return (await endOf(reg, 'exits')).end.exit;
		};
		assert.deepEqual(await exitOf({ exitCode: 2, timedOut: false }), { code: 2 });
		assert.deepEqual(await exitOf({ exitCode: null, signal: 'SIGKILL' }), { code: null, signal: 'SIGKILL' });
		assert.deepEqual(await exitOf({ timedOut: true }), { code: null, timedOut: true });
		assert.equal(await exitOf({}), undefined, 'not a command');
	});

	it('refuses a tool that needs VS Code outside it, and a disk-only tool in a virtual workspace', async () => {
		const hover = await registry().invoke('hover', {});
		assert.deepEqual([hover.error?.code, hover.error?.message.startsWith('hover needs VS Code')], ['unavailable', true]);
		const memory = new MemoryFileSystem('memfs', { '/ws/a.txt': 'a' });
		memory.folders.add('/ws');
		const shell = await registry({}, memory).invoke('shell', {}, { approval: 'preconfirmed' });
		assert.equal(shell.error?.message, 'shell needs a folder on disk (file:), this workspace is memfs:. Use the file tools (read_file, list_dir, find_files, grep, write_file, edit_file, apply_patch) here instead.');
		assert.equal(runs.shell, undefined);
	});

	it('lists the built-in tools and the workspace\'s own, which never take a built-in\'s name', async () => {
		const reg = registry();
		const own = (name: string, text: string) => defineTool({ ...common, name, group: 'commands', mutating: false, inputSchema: { type: 'object', title: name }, run: async () => textResult(text) });
		reg.setCustomTools([own('look', 'an impostor'), own('mine', 'mine ran')]);
		const listed = reg.listDefinitions();
		assert.deepEqual(listed.map(tool => [tool.name, tool.custom ?? false]), [...definitions.map(tool => [tool.name, false]), ['mine', true]]);
		const mine = listed.find(tool => tool.name === 'mine')!;
		assert.deepEqual([mine.contributedName, mine.inputSchema, mine.needsVscode, mine.mutating, mine.group], ['toolbelt_mine', { type: 'object', title: 'mine' }, false, false, 'commands']);
		assert.deepEqual(listed.find(tool => tool.name === 'look')!.inputSchema, common.schema, 'a built-in\'s schema when it has no other');
		assert.equal(listed.find(tool => tool.name === 'hover')!.needsVscode, true);
		assert.equal(resultText(await reg.invoke('look', {})), 'looked 1');
		assert.equal(resultText(await reg.invoke('mine', {})), 'mine ran');
		reg.setCustomTools([]);
		assert.equal((await reg.invoke('mine', {})).error?.code, 'unknown_tool');
	});
});

describe('ToolRegistry: a commit that stops by itself on a cancel (settlesOnCancel)', () => {
	let tree: ReturnType<typeof makeTree>;
	beforeEach(() => { tree = makeTree({ 'a.txt': 'a' }); });
	afterEach(() => tree.cleanup());

	/** A mutating tool whose commit takes `commitMs` (never stops early, cancel or not), waited for at most `limitMs` after a cancel. */
	function settlingRegistry(commitMs: number, limitMs: number): ToolRegistry {
		const common = { referenceName: 'tbSlow', displayName: 'Slow', icon: 'x', tags: [], userDescription: 'test', modelDescription: 'test', describe: () => 'Working' };
		const slow = defineTool({
			...common, name: 'slow', group: 'edit', mutating: true, schema: Type.Object({}),
			run: async (): Promise<PendingCall> => ({
				pending: true,
				request: { kind: 'files', title: 'Change slowly', changes: [], protectedPaths: [] },
				settlesOnCancel: true,
				settleLimitMs: limitMs,
				commit: () => new Promise(resolve => setTimeout(() => resolve(textResult('done slowly')), commitMs)),
			}),
		});
		return new ToolRegistry([slow], createNodeEnvironment({ roots: [tree.root], storageDir: testStorageDir(), settings: { approval: 'never' }, confirm: async () => true }));
	}

	it('waits for it after a cancel, up to its limit, then says it may still be running', async () => {
		const controller = new AbortController();
		const started = Date.now();
		const calling = settlingRegistry(5_000, 150).invoke('slow', {}, { signal: controller.signal });
		setTimeout(() => controller.abort(), 50);
		const result = await calling;
		const tookMs = Date.now() - started;
		assert.equal(result.error?.code, 'cancelled');
		assert.equal(result.error?.message, 'slow was cancelled, but had not finished stopping 0.15 s later: what it started may still be running or writing. Check before relying on the files it touches.');
		assert.ok(tookMs >= 190 && tookMs < 2_000, `answered after ${tookMs} ms`);
	});

	it('without a cancel, takes as long as it takes: the limit is for stopping, not for working', async () => {
		const result = await settlingRegistry(400, 100).invoke('slow', {});
		assert.equal(result.error, undefined, result.error?.message);
		assert.equal(resultText(result), 'done slowly');
	});
});
