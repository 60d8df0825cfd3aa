import * as assert from 'node:assert/strict';
import type { ActivityRecord } from '../../src/ui/activityStore';
import { ActivityStore } from '../../src/ui/activityStore';
import { detailsText, detailsTitle, rowDescription, statusLabel } from '../../src/ui/activityText';
import type { ToolEvent } from '../../src/core/context';
import { makeHarness, makeTree } from './helpers';

const record = (extra: Partial<ActivityRecord>): ActivityRecord => ({
	id: 'lz1x2-7', tool: 'run_command', status: 'done', startedAt: Date.UTC(2025, 0, 2, 3, 4, 5), mutating: true, ...extra,
});

describe('Activity view wording', () => {
	it('a command that exits non-zero, is killed or times out is not "done"', () => {
		assert.deepEqual(statusLabel(record({ exit: { code: 0 } })), { text: 'done', tone: 'ok' });
		assert.deepEqual(statusLabel(record({ exit: { code: 2 } })), { text: 'exit 2', tone: 'warning' });
		assert.deepEqual(statusLabel(record({ exit: { code: null, signal: 'SIGTERM' } })), { text: 'killed (SIGTERM)', tone: 'warning' });
		assert.deepEqual(statusLabel(record({ exit: { code: null, signal: 'SIGKILL', timedOut: true } })), { text: 'timed out', tone: 'warning' });
		assert.deepEqual(statusLabel(record({ status: 'failed' })), { text: 'failed', tone: 'error' });
	});

	it('a call waiting for the person says so', () => {
		assert.deepEqual(statusLabel(record({ status: 'waiting' })), { text: 'waiting for you', tone: 'waiting' });
		assert.equal(rowDescription(record({ status: 'waiting', target: 'Running npm test' })), 'waiting for you · npm test');
		assert.match(detailsText(record({ status: 'waiting' })), /## Result\n\(waiting for you to confirm\)/);
	});

	it('keeps the time spent waiting for approval apart from the run, status first', () => {
		assert.equal(rowDescription(record({ durationMs: 9_300, waitedMs: 8_000, exit: { code: 1 }, target: 'Running npm test' })), 'exit 1 1.3 s · waited 8.0 s · npm test');
		assert.equal(rowDescription(record({ durationMs: 400, target: 'Running ls' })), 'done 400 ms · ls');
		assert.equal(rowDescription(record({ status: 'declined', durationMs: 5_020, waitedMs: 5_000 })), 'declined after 5.0 s');
	});

	it('a details tab is titled by tool and time, not by an internal id', () => {
		const title = detailsTitle(record({}));
		assert.match(title, /^run_command at \d\d:\d\d:\d\d$/);
		assert.doesNotMatch(title, /lz1x2/);
	});

	it('a failing command run through the registry ends as "exit 3" in the Activity store', async () => {
		const tree = makeTree({ 'a.txt': 'x' });
		const h = makeHarness(tree.root);
		const store = ActivityStore.inMemory();
		const events: ToolEvent[] = [];
		h.registry.onEvent(event => {
			events.push(event);
			store.record(event, true);
		});
		try {
			await h.invoke('run_command', { command: 'exit 3' });
			await h.invoke('read_file', { path: 'a.txt' });
		} finally {
			tree.cleanup();
		}
		const [read, row] = store.records();
		assert.equal(read.exit, undefined, 'tools that run no command report no exit');
		assert.deepEqual(row.exit, { code: 3 });
		assert.equal(statusLabel(row).text, 'exit 3');
		assert.ok(row.waitedMs !== undefined, 'the confirmation was timed apart');
		assert.deepEqual(events.slice(0, 4).map(event => event.status), ['running', 'waiting', 'running', 'done']);
	});
});
