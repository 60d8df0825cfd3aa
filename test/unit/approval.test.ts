import * as assert from 'node:assert/strict';
import { confirmationDiff, describeRequest, fence, mustReachPerson, needsApproval } from '../../src/core/policy/approval';
import type { ApprovalRequest } from '../../src/core/context';
import { defaultSettings, Settings } from '../../src/core/policy/settings';

const settings = (approval: Settings['approval']): Settings => ({ ...defaultSettings(), approval });
const change = { path: '/w/a.txt', displayPath: 'a.txt', before: Buffer.from('one\n'), after: Buffer.from('two\n') };
const files = (protectedPaths: string[] = []): ApprovalRequest => ({ kind: 'files', title: 'Edit a.txt', changes: [change], protectedPaths });
const command = (unsandboxed?: { justification: string }): ApprovalRequest => ({ kind: 'command', title: 'Run a command', command: 'make test', cwd: '/w', ...(unsandboxed ? { unsandboxed } : {}) });
const call: ApprovalRequest = { kind: 'call', title: 'Run read_file: Reading a.txt', detail: '{\n  "path": "a.txt"\n}' };

describe('approval rules', () => {
	it('asks per policy: never nothing, edits for changes and unsandboxed commands, mutating for changes and commands, always everything', () => {
		const sandboxed: ApprovalRequest = { ...command(), sandboxed: true } as ApprovalRequest;
		const table = (['never', 'edits', 'mutating', 'always'] as const).map(policy => [files(), command(), sandboxed, call].map(request => needsApproval(request, settings(policy))));
		assert.deepEqual(table, [[false, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]);
	});

	it('always asks for protected paths and for commands outside the sandbox, whatever the policy', () => {
		for (const policy of ['never', 'mutating', 'always'] as const) {
			assert.equal(needsApproval(files(['.git/config']), settings(policy)), true, policy);
			assert.equal(needsApproval(command({ justification: 'needs the network' }), settings(policy)), true, policy);
		}
		assert.deepEqual([files(['.env']), files(), command({ justification: 'x' }), command(), call].map(mustReachPerson), [true, false, true, false, false]);
	});

	it('describes each request for chat with the command or diff fenced, and never repeats the title', () => {
		assert.equal(describeRequest(command(), 'markdown'), '```sh\nmake test\n```\n\nin /w');
		assert.equal(
			describeRequest(command({ justification: 'needs the network' }), 'markdown'),
			'```sh\nmake test\n```\n\nin /w\n\nOutside the sandbox: it can read and write anything you can, and reach the network. Reason given: needs the network',
		);
		assert.equal(describeRequest(call, 'markdown'), '```json\n{\n  "path": "a.txt"\n}\n```');
		assert.equal(describeRequest(files(), 'markdown'), '');
		assert.equal(describeRequest(files(), 'markdown', '-one\n+two\n'), '```diff\n-one\n+two\n```');
		assert.equal(describeRequest(files(['.env']), 'markdown'), 'Protected path: .env');
		assert.equal(describeRequest(files(['.env', '.git/config']), 'markdown'), 'Protected paths: .env, .git/config');
		assert.equal(describeRequest(files(['.env']), 'markdown', '-one\n+two\n'), 'Protected path: .env\n\n```diff\n-one\n+two\n```');
		assert.equal(
			describeRequest({ ...command(), sandboxed: true } as ApprovalRequest, 'markdown'),
			'```sh\nmake test\n```\n\nin /w\n\nIn the sandbox: it can change only the workspace (not its protected paths) and its own temp folder.',
		);
	});

	it('gives the diff of a change whole, or its head with a marker pointing at the diff editor', () => {
		assert.equal(confirmationDiff(command(), 100), undefined);
		assert.equal(confirmationDiff(call, 100), undefined);
		assert.equal(confirmationDiff(files(), 10_000), '--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n');
		const big = { ...change, before: Buffer.from(Array.from({ length: 400 }, (_, i) => `line ${i}\n`).join('')), after: Buffer.from('') };
		const cut = confirmationDiff({ kind: 'files', title: 't', changes: [big], protectedPaths: [] }, 200)!;
		assert.ok(Buffer.byteLength(cut) < 400, cut);
		assert.match(cut, /^--- a\/a\.txt\n/);
		assert.match(cut, /\[… [\d,]+ lines \/ [\d.]+ KB omitted; the diff editor \("Show Diff"\) shows all of it …\]$/);
	});

	it('fences text with more backticks than it holds, ending it with a newline', () => {
		assert.equal(fence('plain'), '```\nplain\n```');
		assert.equal(fence('ends\n', 'sh'), '```sh\nends\n```');
		assert.equal(fence('a ``` b ```` c'), '`````\na ``` b ```` c\n`````');
		assert.equal(fence('one `tick`'), '```\none `tick`\n```');
	});
});
