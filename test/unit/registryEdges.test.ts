import * as assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Type } from '@sinclair/typebox';
import type { ApprovalRequest, ToolEvent } from '../../src/core/context';
import { CancelledError } from '../../src/core/results/errors';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { textResult } from '../../src/core/results/result';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/tool';
import { makeTree } from './helpers';

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
		roots: [tree.root], settings, confirm: async request => { asked.push(request); return answer; },
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
