import * as assert from 'node:assert/strict';
import { confirmationDiff, confirmationTitle, describeRequest } from '../../src/core/policy/approval';
import type { ApprovalRequest } from '../../src/core/context';

const encode = (text: string) => new TextEncoder().encode(text);

const edit: ApprovalRequest = {
	kind: 'files',
	title: 'Overwrite README.md',
	protectedPaths: [],
	changes: [{ path: '/ws/README.md', displayPath: 'README.md', before: encode('old\n'), after: encode('new\n') }],
};
const command: ApprovalRequest = { kind: 'command', title: 'Running a command', command: 'npm test', cwd: '/ws' };

describe('what a confirmation says', () => {
	it('asks a question before anything runs, never "Running a command"', () => {
		assert.equal(confirmationTitle(command), 'Run this command?');
		assert.equal(confirmationTitle({ ...command, title: 'Starting an interactive session' }), 'Start an interactive session?');
		assert.equal(confirmationTitle({ ...command, title: 'Sending input to session 3 (bash)' }), 'Send input to session 3 (bash)?');
		assert.equal(confirmationTitle(edit), 'Overwrite README.md?');
		assert.equal(confirmationTitle({ kind: 'call', title: 'Run read_file: Reading a.txt', detail: '{}' }), 'Run read_file: Reading a.txt?');
		assert.equal(confirmationTitle({ ...command, title: 'Running custom tool lint' }), 'Run custom tool lint?');
		assert.equal(confirmationTitle({ kind: 'call', title: 'Reading the output of session 2', detail: '{}' }), 'Read the output of session 2?');
		assert.equal(confirmationTitle({ ...edit, title: 'Delete old.txt.' }), 'Delete old.txt?', 'a title\'s own full stop gives way to the question mark');
	});

	it('reads as plain text in a modal: no fences, no repeated title', () => {
		const plain = describeRequest(edit, 'plain', confirmationDiff(edit, 4000));
		assert.equal(plain, '--- a/README.md\n+++ b/README.md\n@@ -1,1 +1,1 @@\n-old\n+new');
		assert.equal(describeRequest(command, 'plain'), 'npm test\n\nin /ws');
		const call = describeRequest({ kind: 'call', title: 'Run look', detail: '{\n  "a": 1\n}' }, 'plain');
		assert.equal(call, '{\n  "a": 1\n}');
	});

	it('keeps its Markdown in chat, where the title is shown apart', () => {
		const markdown = describeRequest(edit, 'markdown', confirmationDiff(edit, 4000));
		assert.equal(markdown, '```diff\n--- a/README.md\n+++ b/README.md\n@@ -1,1 +1,1 @@\n-old\n+new\n```');
		assert.equal(describeRequest(command, 'markdown'), '```sh\nnpm test\n```\n\nin /ws');
	});

	it('names protected paths and the reason for running outside the sandbox first', () => {
		const guarded = describeRequest({ ...edit, protectedPaths: ['.env', '.git/config'] }, 'plain');
		assert.equal(guarded, 'Protected paths: .env, .git/config');
		const outside = describeRequest({ ...command, unsandboxed: { justification: 'needs the network' } }, 'plain');
		assert.match(outside, /^npm test\n\nin \/ws\n\nOutside the sandbox: .* Reason given: needs the network$/);
	});
});
