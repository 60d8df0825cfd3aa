// Runs inside the VS Code test host (as `extensionTestsPath`) for bench/activation.bench.mjs: activates
// Toolbelt (nothing has yet: its activation events are its tools and commands) and times loading
// its bundle, then from the activation request until activate() has returned and until every tool
// of ours is in vscode.lm.tools. File-system calls made meanwhile are counted by patching Node's fs
// for the duration. Writes JSON to TOOLBELT_BENCH_OUT.
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

export async function run(): Promise<void> {
	const extension = vscode.extensions.getExtension(EXTENSION)!;
	const wasActive = extension.isActive;
	const ours = (extension.packageJSON.contributes.languageModelTools as Array<{ name: string }>).map(tool => tool.name);
	// Loading the bundle first, by hand, puts it apart from activate() (VS Code then finds it loaded).
	const loadStart = performance.now();
	require(path.join(extension.extensionPath, 'dist', 'extension.js'));
	const loadMs = performance.now() - loadStart;
	const recorder = recordFsCalls();
	const start = performance.now();
	const { activationMs: activateBodyMs } = await extension.activate() as { activationMs: number };
	const activatedMs = performance.now() - start;
	recorder.stop();
	while (!ours.every(name => vscode.lm.tools.some(tool => tool.name === name))) await new Promise(resolve => setTimeout(resolve, 1));
	const toolsMs = performance.now() - start;
	// Built-in extensions activating alongside make VS Code set up their log folders meanwhile.
	const logs = path.dirname(path.dirname(process.env.VSCODE_LOG_DIR ?? '/nowhere/x'));
	const fileCalls = recorder.calls.filter(call => !call.includes(`(${logs}`) && !/\/logs\/[^/]+\/exthost\d+/.test(call));
	fs.writeFileSync(process.env.TOOLBELT_BENCH_OUT!, JSON.stringify({ wasActive, loadMs, activateBodyMs, activatedMs, toolsMs, tools: ours.length, fileCalls }, null, '\t'));
}
