import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ActivityStore } from '../../src/ui/activityStore';
import type { ToolEvent } from '../../src/core/context';
import { makeTree } from './helpers';

function start(id: string, extra: Partial<ToolEvent> = {}): ToolEvent {
	return { id, tool: 'read_file', phase: 'start', status: 'running', startedAt: 1000, input: { path: 'a.txt' }, ...extra };
}

function end(id: string, extra: Partial<ToolEvent> = {}): ToolEvent {
	return { ...start(id), phase: 'end', status: 'done', durationMs: 12, target: 'a.txt', resultText: 'ok', truncated: false, ...extra };
}

describe('activity store', () => {
	it('keeps one row per call, newest first, completing a row on its end event', () => {
		const store = ActivityStore.inMemory();
		store.record(start('1'), false);
		store.record(start('2', { tool: 'write_file' }), true);
		store.record(end('1'), false);
		const rows = store.records();
		assert.deepEqual(rows.map(row => [row.id, row.status]), [['2', 'running'], ['1', 'done']]);
		assert.equal(rows[1].durationMs, 12);
		assert.equal(rows[1].target, 'a.txt');
		assert.match(rows[1].inputText ?? '', /"path": "a.txt"/);
		assert.equal(rows[0].mutating, true);
	});

	it('keeps the backup set a change names, across a reload', async () => {
		const tree = makeTree();
		try {
			const file = path.join(tree.root, 'activity.json');
			const { store } = await ActivityStore.load(file, { saveDelayMs: 0 });
			store.record(start('1', { tool: 'write_file' }), true);
			store.record(end('1', { tool: 'write_file', filesTouched: ['a.txt'], backupSet: '20261124-abc' }), true);
			store.flushSync();
			const reloaded = (await ActivityStore.load(file)).store;
			assert.equal(reloaded.records()[0].backupSet, '20261124-abc');
		} finally {
			tree.cleanup();
		}
	});

	it('is bounded: the oldest rows go first', () => {
		const store = ActivityStore.inMemory(5);
		for (let i = 1; i <= 12; i++) store.record(start(String(i)), false);
		assert.deepEqual(store.records().map(row => row.id), ['12', '11', '10', '9', '8']);
	});

	it('keeps only the head of a huge input', () => {
		const store = ActivityStore.inMemory();
		const row = store.record(start('1', { input: { content: 'x'.repeat(1_000_000) } }), true);
		assert.ok((row.inputText ?? '').length < 10_000);
		assert.match(row.inputText ?? '', /omitted/);
	});

	it('keeps a valid file when the deactivation flush runs during a slow asynchronous write', async () => {
		const tree = makeTree();
		const promises = require('node:fs/promises');
		const writeFile = promises.writeFile;
		let release: () => void = () => undefined;
		try {
			const file = path.join(tree.root, 'activity.json');
			const { store } = await ActivityStore.load(file, { saveDelayMs: 0 });
			// The asynchronous write opens its temp, then stalls until the flush has renamed its own.
			promises.writeFile = async (target: string, text: string) => {
				const handle = await promises.open(target, 'w');
				await new Promise<void>(resolve => { release = resolve; });
				await handle.writeFile(text);
				await handle.close();
			};
			store.record(start('1'), false);
			await new Promise(resolve => setTimeout(resolve, 20));
			for (let i = 2; i <= 20; i++) store.record(start(String(i)), false);
			store.flushSync();
			release();
			promises.writeFile = writeFile;
			await store.flush();
			const again = await ActivityStore.load(file);
			assert.equal(again.problem, undefined, 'the file is still valid JSON');
			assert.equal(again.store.records().length, 20);
		} finally {
			promises.writeFile = writeFile;
			tree.cleanup();
		}
	});

	it('survives a reload, and a row left running becomes cancelled', async () => {
		const tree = makeTree();
		try {
			const file = path.join(tree.root, 'storage', 'activity.json');
			const { store, problem } = await ActivityStore.load(file, { saveDelayMs: 0 });
			assert.equal(problem, undefined);
			store.record(start('1'), false);
			store.record(end('1'), false);
			store.record(start('2'), false);
			await store.flush();
			const again = await ActivityStore.load(file);
			assert.equal(again.problem, undefined);
			assert.deepEqual(again.store.records().map(row => [row.id, row.status]), [['2', 'cancelled'], ['1', 'done']]);
			assert.match(again.store.get('2')?.error?.message ?? '', /window closed/);
		} finally {
			tree.cleanup();
		}
	});

	it('reports a corrupt file, keeps it aside and starts empty', async () => {
		const tree = makeTree({ 'activity.json': '{"records": [' });
		try {
			const file = tree.file('activity.json');
			const { store, problem } = await ActivityStore.load(file, { now: new Date('2024-02-03T04:05:06Z'), saveDelayMs: 0 });
			assert.match(problem ?? '', /unreadable \(not valid JSON.*replaced; the old file is kept as activity\.json\.broken-20240203-040506/);
			assert.equal(store.records().length, 0);
			assert.equal(fs.readFileSync(tree.file('activity.json.broken-20240203-040506'), 'utf8'), '{"records": [');
			store.record(start('1'), false);
			await store.flush();
			assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).records.length, 1);
		} finally {
			tree.cleanup();
		}
	});

	it('drops malformed entries but keeps the good ones', async () => {
		const good = { id: 'a', tool: 'grep', status: 'done', startedAt: 1, mutating: false };
		const tree = makeTree({ 'activity.json': JSON.stringify({ version: 1, records: [good, { id: 3 }, 'x'] }) });
		try {
			const { store, problem } = await ActivityStore.load(tree.file('activity.json'));
			assert.match(problem ?? '', /2 unreadable entries were dropped/);
			assert.deepEqual(store.records().map(row => row.id), ['a']);
		} finally {
			tree.cleanup();
		}
	});

	it('tells listeners about every change', () => {
		const store = ActivityStore.inMemory();
		let changes = 0;
		const subscription = store.onDidChange(() => changes++);
		store.record(start('1'), false);
		store.record(end('1'), false);
		subscription.dispose();
		store.record(start('2'), false);
		assert.equal(changes, 2);
	});
});

describe('activity store on shutdown', () => {
	it('flushSync writes what is pending before returning', async () => {
		const tree = makeTree();
		try {
			const file = path.join(tree.root, 'activity.json');
			const { store } = await ActivityStore.load(file, { saveDelayMs: 60_000 });
			store.record(start('1'), false);
			assert.equal(fs.existsSync(file), false);
			store.flushSync();
			assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).records[0].id, '1');
		} finally {
			tree.cleanup();
		}
	});
});
