// Runs inside the VS Code test host (as `extensionTestsPath`) for bench/references.bench.mjs: for each
// identifier of the opened project, find_references (VS Code's TypeScript server) against grep for the
// same word, through Toolbelt's API. Writes the figures as JSON to TOOLBELT_BENCH_OUT.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ToolResult } from '../src/core/results/result';
import type { ToolbeltApi } from '../src/vscode/api';

interface Target {
	readonly symbol: string;
	readonly path: string;
	/** The declaration's line. */
	readonly line: RegExp;
}

/** rxjs 7: operators and functions whose names are also common words, methods or import keywords. */
const TARGETS: readonly Target[] = [
	{ symbol: 'Observable', path: 'src/internal/Observable.ts', line: /^export class Observable</ },
	{ symbol: 'subscribe', path: 'src/internal/Observable.ts', line: /^ {2}subscribe\(\s*observerOrNext\?/ },
	{ symbol: 'map', path: 'src/internal/operators/map.ts', line: /^export function map<T, R>\(project: \(value: T, index: number\) => R, thisArg\?: any\)/ },
	{ symbol: 'pipe', path: 'src/internal/util/pipe.ts', line: /^export function pipe\(\.\.\.fns/ },
	{ symbol: 'from', path: 'src/internal/observable/from.ts', line: /^export function from<T>\(input: ObservableInput<T>, scheduler\?/ },
	{ symbol: 'operate', path: 'src/internal/util/lift.ts', line: /^export function operate</ },
	{ symbol: 'isFunction', path: 'src/internal/util/isFunction.ts', line: /^export function isFunction/ },
	{ symbol: 'EMPTY', path: 'src/internal/observable/empty.ts', line: /^export const EMPTY =/ },
];

/** `path:line` of every result line (`path:line: text`) of a find_references or grep page. */
function placesOf(result: ToolResult): string[] {
	const text = result.content.map(part => (part.kind === 'text' ? part.text : '')).join('\n');
	return text.split('\n').flatMap(line => {
		const match = /^([^\s[(][^:]*):(\d+):(?: |$)/.exec(line);
		return match ? [`${match[1]}:${match[2]}`] : [];
	});
}

/** Every page of a paged tool, and the wall time of all of them. */
async function allPages(api: ToolbeltApi, tool: string, input: Record<string, unknown>, limit: number) {
	const started = Date.now();
	const places = new Set<string>();
	let offset = 0;
	let last: ToolResult;
	for (;;) {
		last = await api.invoke(tool, { ...input, limit, offset });
		if (last.error) throw new Error(`${tool} failed: ${last.error.message}`);
		for (const place of placesOf(last)) places.add(place);
		if (typeof last.metadata.nextOffset !== 'number') break;
		offset = last.metadata.nextOffset;
	}
	return { ms: Date.now() - started, places, metadata: last.metadata };
}

export async function run(): Promise<void> {
	const api = await vscode.extensions.getExtension<ToolbeltApi>('toolbelt-dev.toolbelt')!.activate();
	const root = vscode.workspace.workspaceFolders![0].uri.fsPath;
	const lineOf = (target: Target) => fs.readFileSync(path.join(root, target.path), 'utf8').split('\n').findIndex(line => target.line.test(line)) + 1;

	// The first question waits for the server to start and load the project.
	const first = TARGETS[0];
	const coldStarted = Date.now();
	let cold: ToolResult;
	for (;;) {
		cold = await api.invoke('hover', { path: first.path, line: lineOf(first), symbol: first.symbol });
		if (!cold.error || Date.now() - coldStarted > 180_000) break;
	}
	const firstAnswerMs = Date.now() - coldStarted;

	const rows = [];
	for (const target of TARGETS) {
		const line = lineOf(target);
		if (line === 0) throw new Error(`${target.path} has no line matching ${target.line}`);
		const references = await allPages(api, 'find_references', { path: target.path, line, symbol: target.symbol }, 500);
		const grep = await allPages(api, 'grep', { pattern: `\\b${target.symbol}\\b`, path: 'src' }, 2000);
		const grepWithReference = [...grep.places].filter(place => references.places.has(place)).length;
		rows.push({
			symbol: target.symbol,
			at: `${target.path}:${line}`,
			references: { total: references.metadata.total, lines: references.places.size, files: references.metadata.files, ms: references.ms },
			grep: { lines: grep.places.size, files: grep.metadata.totalFiles, ms: grep.ms },
			grepLinesWithReference: grepWithReference,
			referenceLinesGrepMissed: [...references.places].filter(place => !grep.places.has(place)).length,
		});
	}
	fs.writeFileSync(process.env.TOOLBELT_BENCH_OUT!, JSON.stringify({ firstAnswerMs, coldOk: !cold.error, rows }, null, '\t'));
}
