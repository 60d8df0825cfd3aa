import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ALL_TOOLS, ToolRegistry } from '../../../src/tools';
import { safeDescribe } from '../../../src/tools/tool';
import { createVscodeEnvironment } from '../../../src/vscode/environment';
import { createVscodeHost } from '../../../src/vscode/host';
import { prepare } from '../../../src/vscode/lmTools';
import { applyWithWorkspaceEdit, showDiffs } from '../../../src/vscode/mutation';
import { workspace } from '../helpers';

/** A registry of our own over the VS Code host, for prepareInvocation. */
function ownRegistry(subscriptions: vscode.Disposable[]): ToolRegistry {
	const host = createVscodeHost({ storageDir: path.join(workspace(), '..', 'vscode-layer-storage'), applyChanges: applyWithWorkspaceEdit, showDiffs });
	return new ToolRegistry(ALL_TOOLS, createVscodeEnvironment(host, subscriptions));
}

describe('the VS Code layer', () => {
	const subscriptions: vscode.Disposable[] = [];

	before(async () => {
		await vscode.extensions.getExtension('toolbelt-dev.toolbelt')!.activate();
	});

	after(() => {
		for (const subscription of subscriptions.splice(0)) subscription.dispose();
	});

	it('a describe that throws on odd input falls back to the display name, in chat as elsewhere', async () => {
		const readFile = ALL_TOOLS.find(tool => tool.name === 'read_file')!;
		const fragile = { ...readFile, describe: () => { throw new Error('no path'); } };
		assert.equal(safeDescribe(fragile, {}), readFile.displayName);
		assert.equal(safeDescribe(readFile, { path: 'README.md' }), 'Reading README.md');
		const prepared = await prepare(ownRegistry(subscriptions), fragile, {});
		assert.equal(prepared.invocationMessage, readFile.displayName);
	});
});
