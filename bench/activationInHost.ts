// Runs inside the VS Code test host (as `extensionTestsPath`) for bench/activation.bench.mjs: activates
// Toolbelt (nothing has yet: its activation events are its tools and commands) and times, on our
// clock, the request to activate until activate() has returned and until every tool of ours is in
// vscode.lm.tools; on VS Code's own clock (the extension host's performance marks, the figures
// "Developer: Show Running Extensions" and "Developer: Startup Performance" come from), when it began
// and finished loading our code and calling activate(). File-system calls made meanwhile are counted
// by patching Node's fs for the duration. With TOOLBELT_BENCH_SETTLE_MS it waits that long first. Then the first two tool calls, as chat makes them
// (lm.invokeTool): the first one loads the tools. Writes JSON to TOOLBELT_BENCH_OUT.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXTENSION = 'toolbelt-dev.toolbelt';

/** Wraps every function of fs and fs.promises to record the calls and their first argument. */
function recordFsCalls(): { calls: string[]; stop(): void } {
	const calls: string[] = [];
	const restores: Array<() => void> = [];
	for (const [label, target] of [['fs', fs], ['fs.promises', fs.promises]] as const) {
		for (const name of Object.keys(target)) {
			const original = (target as any)[name];
			// Classes stay as they are, and so do exports the host froze (they cannot be wrapped).
			if (typeof original !== 'function' || /^[A-Z]/.test(name) || !Object.getOwnPropertyDescriptor(target, name)?.writable) continue;
			(target as any)[name] = function (this: unknown, ...args: unknown[]) {
				calls.push(`${label}.${name}(${typeof args[0] === 'string' ? args[0] : ''})`);
				return original.apply(this, args);
			};
			restores.push(() => { (target as any)[name] = original; });
		}
	}
	return { calls, stop: () => restores.forEach(restore => restore()) };
}

/** VS Code's marks (Date.now() milliseconds) for one extension's activation, by the step they end. */
function activationMarks(id: string): Record<string, number> {
	const marks: Array<{ name: string; startTime: number }> = (globalThis as any).MonacoPerformanceMarks?.getMarks() ?? [];
	const steps: Record<string, number> = {};
	for (const step of ['willLoadExtensionCode', 'didLoadExtensionCode', 'willActivateExtension', 'didActivateExtension']) {
		const mark = marks.find(m => m.name === `code/extHost/${step}/${id}`);
		if (mark) steps[step] = mark.startTime;
	}
	return steps;
}

async function timedCall(input: object): Promise<number> {
	const start = performance.now();
	const result = await vscode.lm.invokeTool('toolbelt_read_file', { input, toolInvocationToken: undefined });
	const ms = performance.now() - start;
	if (!(result.content[0] instanceof vscode.LanguageModelTextPart) || !result.content[0].value.startsWith('bench.txt')) throw new Error('read_file did not answer');
	return ms;
}

export async function run(): Promise<void> {
	const extension = vscode.extensions.getExtension(EXTENSION)!;
	const wasActive = extension.isActive;
	const ours = (extension.packageJSON.contributes.languageModelTools as Array<{ name: string }>).map(tool => tool.name);
	const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
	fs.writeFileSync(path.join(folder, 'bench.txt'), 'one\ntwo\nthree\n');
	// The settled runs ask later, as a first tool call in an open window does.
	const settleMs = Number(process.env.TOOLBELT_BENCH_SETTLE_MS ?? 0);
	if (settleMs > 0) await new Promise(resolve => setTimeout(resolve, settleMs));
	const recorder = recordFsCalls();
	const requested = Date.now();
	const start = performance.now();
	const { activationMs: activateBodyMs } = await extension.activate() as { activationMs: number };
	const activatedMs = performance.now() - start;
	recorder.stop();
	while (!ours.every(name => vscode.lm.tools.some(tool => tool.name === name))) await new Promise(resolve => setTimeout(resolve, 1));
	const toolsMs = performance.now() - start;
	const marks = Object.fromEntries(Object.entries(activationMarks(EXTENSION)).map(([step, time]) => [step, time - requested]));
	const firstCallMs = await timedCall({ path: 'bench.txt', limit: 1 });
	const secondCallMs = await timedCall({ path: 'bench.txt', offset: 2, limit: 1 });
	// Reading our own bundle is VS Code loading our code, counted apart; built-in extensions
	// activating alongside make VS Code set up their log folders meanwhile.
	const logs = path.dirname(path.dirname(process.env.VSCODE_LOG_DIR ?? '/nowhere/x'));
	const others = recorder.calls.filter(call => !call.includes(`(${logs}`) && !/\/logs\/[^/]+\/exthost\d+/.test(call));
	const codeLoading = others.filter(call => call.includes(`(${extension.extensionPath}`));
	const fileCalls = others.filter(call => !codeLoading.includes(call));
	fs.writeFileSync(process.env.TOOLBELT_BENCH_OUT!, JSON.stringify({ wasActive, activateBodyMs, activatedMs, toolsMs, marks, firstCallMs, secondCallMs, tools: ours.length, codeLoading, fileCalls }, null, '\t'));
}
