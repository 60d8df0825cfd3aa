import * as assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import type { ApprovalRequest, ToolEvent } from '../../src/core/context';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { resultText, textResult } from '../../src/core/results/result';
import { stringEnum } from '../../src/core/schema/stringEnum';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool } from '../../src/tools/tool';
import { makeHarness, makeTree, testStorageDir } from './helpers';

/** A mutating tool that records what it would write, to test the approval flow without files. */
function fakeTools(log: string[], plans: string[] = []) {
	const touch = defineTool({
		name: 'touch', referenceName: 'tbTouch', displayName: 'Touch', group: 'edit', mutating: true, icon: 'edit', tags: [],
		userDescription: 'test', modelDescription: 'test',
		schema: Type.Object({
			path: Type.String({ minLength: 1 }),
			times: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
			mode: Type.Optional(stringEnum(['a', 'b'])),
		}, { additionalProperties: false }),
		describe: input => `Touching ${input.path}`,
		run: async (input, ctx) => {
			const target = await ctx.boundary.resolve(input.path, 'write');
			plans.push(target.display);
			return {
				pending: true,
				request: {
					kind: 'files', title: `Touch ${target.display}`, protectedPaths: target.isProtected ? [target.display] : [],
					changes: [{ path: target.absolute, displayPath: target.display, before: null, after: new Uint8Array() }],
				},
				commit: async () => {
					log.push(`touched ${target.display}`);
					return textResult(`touched ${target.display}`, { filesTouched: [target.display] });
				},
			};
		},
	});
	const look = defineTool({
		name: 'look', referenceName: 'tbLook', displayName: 'Look', group: 'read', mutating: false, icon: 'eye', tags: [],
		userDescription: 'test', modelDescription: 'test', schema: Type.Object({}, { additionalProperties: false }),
		describe: () => 'Looking',
		run: async (_input, ctx) => {
			if (ctx.signal.aborted) throw new Error('should not run');
			log.push('looked');
			return textResult('looked');
		},
	});
	const slow = defineTool({
		name: 'slow', referenceName: 'tbSlow', displayName: 'Slow', group: 'read', mutating: false, icon: 'clock', tags: [],
		userDescription: 'test', modelDescription: 'test', schema: Type.Object({}), describe: () => 'Waiting',
		run: () => new Promise(() => undefined),
	});
	const broken = defineTool({
		name: 'broken', referenceName: 'tbBroken', displayName: 'Broken', group: 'read', mutating: false, icon: 'bug', tags: [],
		userDescription: 'test', modelDescription: 'test', schema: Type.Object({}), describe: () => 'Breaking',
		run: async () => { throw new TypeError('x is undefined'); },
	});
	return [touch, look, slow, broken];
}

describe('ToolRegistry', () => {
	let tree: ReturnType<typeof makeTree>;
	let log: string[];
	let asked: ApprovalRequest[];
	let answer: boolean;
	const registry = (settings = {}, trusted = true) => new ToolRegistry(fakeTools(log), createNodeEnvironment({
		roots: [tree.root], storageDir: testStorageDir(), settings, trusted,
		confirm: async request => { asked.push(request); return answer; },
	}));

	beforeEach(() => {
		tree = makeTree({ 'a.txt': 'a', '.git/config': '[core]' });
		log = [];
		asked = [];
		answer = true;
	});
	afterEach(() => tree.cleanup());

	describe('validation', () => {
		it('names every wrong field and what it expected', async () => {
			const result = await registry().invoke('touch', { path: 7, times: 9, mode: 'c', extra: true });
			assert.equal(result.error?.code, 'invalid_input');
			const text = result.error!.message;
			assert.match(text, /- path: expected a string, got number 7/);
			assert.match(text, /- times: must be ≤ 5, got number 9/);
			assert.match(text, /- mode: expected one of "a", "b", got the string "c"/);
			assert.match(text, /- extra: is not a known field/);
			assert.deepEqual(log, [], 'nothing ran');
		});

		it('reports a missing required field and an empty string', async () => {
			assert.match((await registry().invoke('touch', {})).error!.message, /- path: is required/);
			assert.match((await registry().invoke('touch', { path: '' })).error!.message, /- path: must not be empty/);
		});

		it('refuses input that is not an object', async () => {
			for (const input of [null, 'a.txt', [1], 3]) {
				const result = await registry().invoke('touch', input);
				assert.equal(result.error?.code, 'invalid_input');
				assert.match(result.error!.message, /expected a JSON object/);
			}
		});

		it('names unknown tools and lists the known ones, with or without the contributed prefix', async () => {
			const result = await registry().invoke('nope', {});
			assert.equal(result.error?.code, 'unknown_tool');
			assert.match(result.error!.message, /Known tools: touch, look/);
			assert.equal((await registry().invoke('toolbelt_look', {})).error, undefined);
		});
	});

	describe('switches and trust', () => {
		it('refuses a switched-off tool or group', async () => {
			assert.equal((await registry({ disabledTools: ['look'] }).invoke('look', {})).error?.code, 'disabled');
			assert.equal((await registry({ disabledGroups: ['edit'] }).invoke('touch', { path: 'b' })).error?.code, 'disabled');
			assert.deepEqual(log, []);
		});

		it('refuses mutating tools in an untrusted workspace but lets reads run', async () => {
			const untrusted = registry({}, false);
			const result = await untrusted.invoke('touch', { path: 'b' });
			assert.equal(result.error?.code, 'untrusted');
			assert.match(result.error!.message, /Manage Workspace Trust/);
			assert.equal((await untrusted.invoke('look', {})).error, undefined);
			assert.deepEqual(log, ['looked']);
		});
	});

	describe('approval', () => {
		it('asks before a mutation under the default policy, and a no changes nothing', async () => {
			answer = false;
			const result = await registry().invoke('touch', { path: 'b' });
			assert.equal(result.error?.code, 'declined');
			assert.match(result.error!.message, /declined touch b/i);
			assert.equal(asked.length, 1);
			assert.deepEqual(log, []);
		});

		it('does not ask under "never", except for protected paths', async () => {
			const never = registry({ approval: 'never' });
			await never.invoke('touch', { path: 'b' });
			assert.equal(asked.length, 0);
			await never.invoke('touch', { path: '.git/config' });
			assert.equal(asked.length, 1);
			assert.deepEqual(asked[0].kind === 'files' && asked[0].protectedPaths, ['.git/config']);
		});

		it('asks before reads too under "always"', async () => {
			await registry({ approval: 'always' }).invoke('look', {});
			assert.equal(asked[0].kind, 'call');
		});

		it('uses an injected decision instead of the host', async () => {
			const result = await registry().invoke('touch', { path: 'b' }, { decide: async () => false });
			assert.equal(result.error?.code, 'declined');
			assert.equal(asked.length, 0);
		});

		it('previews the request without running the change', async () => {
			const request = await registry().preview('touch', { path: 'b' });
			assert.equal(request?.kind, 'files');
			assert.equal(request?.title, 'Touch b');
			assert.deepEqual(log, []);
			assert.equal(await registry({ approval: 'never' }).preview('touch', { path: 'b' }), undefined);
			assert.equal(await registry().preview('touch', { path: 3 }), undefined, 'invalid input: invoke reports it');
			assert.equal(await registry().preview('look', {}), undefined);
		});

		it('does not ask again when VS Code already confirmed', async () => {
			await registry().invoke('touch', { path: 'b' }, { approval: 'preconfirmed' });
			assert.equal(asked.length, 0);
			assert.deepEqual(log, ['touched b']);
		});

		it('asks the host itself for a protected path even when VS Code "already confirmed" (chat allowances skip that)', async () => {
			const declined = await registry({ approval: 'never' }).invoke('touch', { path: '.git/hooks/pre-commit' }, { approval: 'preconfirmed', decide: async request => {
				asked.push(request);
				return false;
			} });
			assert.equal(declined.error?.code, 'declined');
			assert.equal(asked.length, 1);
			assert.deepEqual(log, []);
			await registry().invoke('touch', { path: '.git/hooks/pre-commit' }, { approval: 'preconfirmed' });
			assert.equal(asked.length, 2, 'the host was asked for the second call too');
		});
	});

	describe('results and events', () => {
		it('emits a start and an end event with status, duration and size', async () => {
			const reg = registry();
			const events: ToolEvent[] = [];
			reg.onEvent(event => events.push(event));
			await reg.invoke('touch', { path: 'b' });
			await reg.invoke('touch', { path: 5 });
			assert.deepEqual(events.map(e => `${e.phase}:${e.status}`), ['start:running', 'update:waiting', 'update:running', 'end:done', 'start:running', 'end:failed']);
			const end = events[3];
			assert.equal(end.tool, 'touch');
			assert.equal(end.target, 'Touching b');
			assert.deepEqual(end.filesTouched, ['b']);
			assert.equal(end.bytes, Buffer.byteLength('touched b'));
			assert.ok(end.durationMs! >= 0);
			assert.equal(events[5].error?.code, 'invalid_input');
		});

		it('says while a call waits for the person, and keeps that time apart from the run', async () => {
			const reg = registry();
			const events: ToolEvent[] = [];
			reg.onEvent(event => events.push(event));
			await reg.invoke('touch', { path: 'c' }, { decide: async () => {
				assert.equal(events.at(-1)?.status, 'waiting', 'the call waits while the person decides');
				assert.equal(events.at(-1)?.target, 'Touching c');
				await new Promise(resolve => setTimeout(resolve, 30));
				return true;
			} });
			const end = events.at(-1)!;
			assert.equal(end.phase, 'end');
			assert.ok(end.waitedMs! >= 25 && end.waitedMs! <= end.durationMs!, `waited ${end.waitedMs} of ${end.durationMs} ms`);
			await reg.invoke('touch', { path: 'd' }, { approval: 'preconfirmed' });
			assert.equal(events.at(-1)!.waitedMs, undefined, 'a call no one was asked about did not wait');
		});

		it('turns an unexpected exception into a result without a stack trace', async () => {
			const result = await registry().invoke('broken', {});
			assert.equal(result.error?.code, 'io');
			assert.match(resultText(result), /broken failed unexpectedly: x is undefined/);
			assert.doesNotMatch(resultText(result), /at .*\.js:\d+/);
		});

		it('stops waiting when the call is cancelled', async () => {
			const controller = new AbortController();
			const pending = registry().invoke('slow', {}, { signal: controller.signal });
			setTimeout(() => controller.abort(), 10);
			const result = await pending;
			assert.equal(result.error?.code, 'cancelled');
		});

		it('does not start a call whose signal already fired', async () => {
			const controller = new AbortController();
			controller.abort();
			const result = await registry().invoke('look', {}, { signal: controller.signal });
			assert.equal(result.error?.code, 'cancelled');
			assert.deepEqual(log, []);
		});
	});

	it('previews a read tool as a call request when approval is "always", and as nothing otherwise', async () => {
		const h = makeHarness(tree.root, { settings: { approval: 'always' } });
		const request = await h.registry.preview('read_file', { path: 'a.txt', offset: 1 });
		assert.ok(request, 'a read needs confirmation under approval: always');
		assert.equal(request.kind, 'call');
		if (request.kind === 'call') {
			assert.equal(request.title, 'Run read_file: Reading a.txt from line 1');
			assert.deepEqual(JSON.parse(request.detail), { path: 'a.txt', offset: 1 });
		}
		assert.equal(h.asked.length, 0, 'a preview asks nobody');
		assert.equal(await makeHarness(tree.root).registry.preview('read_file', { path: 'a.txt' }), undefined, 'the default policy does not ask for reads');
		const perCall = await makeHarness(tree.root).registry.preview('read_file', { path: 'a.txt' }, { settings: { approval: 'always' } });
		assert.equal(perCall?.kind, 'call', 'a per-call approval: always counts too');
		assert.equal(await h.registry.preview('read_file', { path: 'a.txt', offset: 'x' }), undefined, 'invalid input: invoke reports it');
	});
});

describe('mergeSettings', () => {
	const { defaultSettings, mergeSettings } = require('../../src/core/policy/settings') as typeof import('../../src/core/policy/settings');

	it('merges nested limits field by field and keeps valid values only', () => {
		const { settings, ignored } = mergeSettings(defaultSettings(), {
			limits: { readLines: 10, grepMatches: 0, bogus: 3 }, approval: 'never', showDiffs: 'sometimes', protectedPaths: ['x/**'], planFile: 7,
		});
		assert.equal(settings.limits.readLines, 10);
		assert.equal(settings.limits.readBytes, defaultSettings().limits.readBytes, 'untouched limits keep their defaults');
		assert.equal(settings.limits.grepMatches, 100, 'a non-positive limit falls back');
		assert.equal(settings.approval, 'never');
		assert.equal(settings.showDiffs, 'onConfirm');
		assert.deepEqual(settings.protectedPaths, ['x/**']);
		assert.equal(settings.planFile, '.toolbelt/plan.json');
		assert.deepEqual(ignored.sort(), ['limits.bogus', 'limits.grepMatches', 'planFile', 'showDiffs']);
	});

	it('applies per-call overrides without dropping the other limits', async () => {
		const tree = makeTree({ 'a.txt': 'one\ntwo\nthree\n' });
		try {
			const registry = new ToolRegistry((await import('../../src/tools')).ALL_TOOLS, createNodeEnvironment({ roots: [tree.root], storageDir: testStorageDir() }));
			const result = await registry.invoke('read_file', { path: 'a.txt' }, { settings: { limits: { readLines: 2 } } as any });
			assert.match(resultText(result), /^a\.txt: lines 1–2 of 3\n1\tone\n2\ttwo\n/);
		} finally {
			tree.cleanup();
		}
	});
});
