import { Value } from '@sinclair/typebox/value';
import { mustReachPerson, needsApproval } from '../core/policy/approval';
import {
	ApprovalRequest, CommandExit, isPending, PendingCall, ToolContext, ToolEnvironment, ToolEvent, ToolEventFields, ToolStatus,
} from '../core/context';
import { CancelledError, DeclinedError, throwIfAborted, ToolError, ValidationError } from '../core/results/errors';
import { resultText, toErrorResult, ToolResult } from '../core/results/result';
import { mergeSettings, Settings, SettingsOverrides } from '../core/policy/settings';
import { validateInput } from '../core/schema/validate';
import { needsVscode } from './codeSupport';
import { describeTool, ToolDescription } from './description';
import { PendingCalls } from './pendingCalls';
import { isSwitchedOff, modelName, needsDiskFolder, safeDescribe, ToolDefinition } from './tool';
import { needsDisk } from '../core/files/fileSystem';

/**
 * How approval is decided for one call:
 * - `ask`: the registry asks the host (command palette, CLI, other extensions);
 * - `preconfirmed`: VS Code already asked through `prepareInvocation` (chat), whose `preview`
 *   planned the call: the invocation commits that plan.
 */
export type ApprovalPhase = 'ask' | 'preconfirmed';

export interface InvokeOptions {
	signal?: AbortSignal;
	approval?: ApprovalPhase;
	/** Replaces the host's question: tests inject the person's decision here. */
	decide?: (request: ApprovalRequest) => Promise<boolean>;
	/** Per-call settings overrides (e.g. limits from a benchmark); nested limits merge field by field. */
	settings?: SettingsOverrides;
}

const RESULT_TEXT_IN_EVENTS = 4096;
/**
 * How long a commit that settles on cancel may take to stop once cancelled: a command's SIGTERM
 * grace, SIGKILL and drain take about 5 s; a process stuck in the kernel (a hung network mount)
 * never ends, and the call must not hang with it.
 */
export const SETTLE_AFTER_CANCEL_MS = 10_000;

export class ToolRegistry {
	private readonly tools = new Map<string, ToolDefinition>();
	/** Custom tools from the workspace's definitions (see tools/custom), replaced whole when they change. */
	private custom = new Map<string, ToolDefinition>();
	private readonly listeners = new Set<(event: ToolEvent) => void>();
	/** Calls planned by `preview`, waiting for their invocation. */
	private readonly previewed = new PendingCalls();
	private nextId = 1;

	constructor(tools: readonly ToolDefinition<any>[], private readonly env: ToolEnvironment) {
		for (const tool of tools) this.tools.set(tool.name, tool);
	}

	get(name: string): ToolDefinition | undefined {
		return this.tools.get(modelName(name)) ?? this.custom.get(name);
	}

	/** Offers these custom tools from now on, in place of the previous ones; a built-in name always means the built-in tool. */
	setCustomTools(tools: readonly ToolDefinition[]): void {
		this.custom = new Map(tools.filter(tool => !this.tools.has(tool.name)).map(tool => [tool.name, tool]));
	}

	listDefinitions(): ToolDescription[] {
		return [...this.tools.values(), ...this.custom.values()].map(tool => describeTool(tool, this.custom.has(tool.name)));
	}

	onEvent(listener: (event: ToolEvent) => void): { dispose(): void } {
		this.listeners.add(listener);
		return { dispose: () => this.listeners.delete(listener) };
	}

	/** Checks a call without running it. Throws the same errors `invoke` would report. */
	check(name: string, input: unknown): { tool: ToolDefinition; input: any } {
		const tool = this.get(name);
		if (!tool) {
			const known = [...this.tools.keys(), ...this.custom.keys()].join(', ');
			throw new ToolError('unknown_tool', `There is no tool named "${name}". Known tools: ${known}.`);
		}
		// A switched-off tool says so whatever its input: fixing the input would not help.
		const settings = this.env.settings();
		if (isSwitchedOff(tool, settings)) {
			throw new ToolError('disabled', `${tool.name} is switched off in this workspace's settings (toolbelt.disabledTools / toolbelt.disabledGroups). Use another tool or ask the user to enable it.`);
		}
		if (tool.needsVscode && !this.env.host.languages) throw needsVscode(tool.name);
		const issues = validateInput(tool.schema, input);
		if (issues.length) throw new ValidationError(tool.name, issues);
		if (tool.mutating && !this.env.host.isTrusted()) {
			throw new ToolError('untrusted', `${tool.name} changes files or runs commands, and this workspace is not trusted, so it is refused. Read tools still work. To allow it, the user can trust the workspace (command "Workspaces: Manage Workspace Trust").`);
		}
		return { tool, input: Value.Default(tool.schema, structuredClone(input)) };
	}

	/**
	 * Plans a call for chat's confirmation and keeps the plan for the `preconfirmed` invocation
	 * that follows; changes nothing. Returns what to ask the person: undefined when the call needs
	 * no confirmation (or when it would fail anyway; `invoke` then reports the failure).
	 */
	async preview(name: string, input: unknown, options: InvokeOptions = {}): Promise<ApprovalRequest | undefined> {
		let checked;
		try {
			checked = this.check(name, input);
		} catch {
			return undefined;
		}
		const settings = mergeSettings(this.env.settings(), options.settings).settings;
		if (!checked.tool.mutating) {
			return settings.approval === 'always' ? callRequest(checked.tool, checked.input) : undefined;
		}
		try {
			const ctx = await this.context(checked.tool, options, settings, () => undefined);
			const planned = await this.plan(checked.tool, checked.input, ctx);
			if (!isPending(planned)) return undefined;
			// Kept without its locks: the person may take a while, or never answer.
			planned.release?.();
			this.previewed.keep(checked.tool.name, checked.input, planned);
			return needsApproval(planned.request, settings) ? planned.request : undefined;
		} catch {
			return undefined;
		}
	}

	/** Runs a tool. Never throws: every failure comes back as a result with `error` set. */
	async invoke(name: string, input: unknown, options: InvokeOptions = {}): Promise<ToolResult> {
		const id = `${Date.now().toString(36)}-${this.nextId++}`;
		const startedAt = Date.now();
		const toolName = this.get(name)?.name ?? name;
		const fields: Partial<ToolEventFields> = {};
		// Set once a person is asked: the time spent waiting for the answer.
		let waitedMs: number | undefined;
		this.emit({ id, tool: toolName, phase: 'start', status: 'running', startedAt, input });
		// The person's time to decide is shown apart from the time the tool ran.
		const whileAsking = async <T>(ask: () => Promise<T>): Promise<T> => {
			const asked = Date.now();
			this.emit({ id, tool: toolName, phase: 'update', status: 'waiting', startedAt, ...fields });
			try {
				return await ask();
			} finally {
				waitedMs = (waitedMs ?? 0) + Date.now() - asked;
				this.emit({ id, tool: toolName, phase: 'update', status: 'running', startedAt, waitedMs, ...fields });
			}
		};
		let result: ToolResult;
		try {
			const { tool, input: checkedInput } = this.check(name, input);
			fields.target = safeDescribe(tool, checkedInput);
			const settings = mergeSettings(this.env.settings(), options.settings).settings;
			const ctx = await this.context(tool, options, settings, extra => Object.assign(fields, extra));
			const phase = options.approval ?? 'ask';
			// A read is asked about before it runs: reading is all it does.
			if (!tool.mutating && phase === 'ask') await this.approve(callRequest(tool, checkedInput), phase, settings, options, whileAsking);
			// In chat the preview planned this very call; without one (VS Code may skip prepareInvocation) it is planned now.
			const planned = (phase === 'preconfirmed' ? this.previewed.take(tool.name, checkedInput) : undefined)
				?? await this.plan(tool, checkedInput, ctx);
			result = isPending(planned) ? await this.commit(planned, ctx, phase, settings, options, whileAsking) : planned;
		} catch (error) {
			result = toErrorResult(options.signal?.aborted && !(error instanceof ToolError) ? new CancelledError(`${toolName}`) : error, toolName);
		}
		const text = resultText(result);
		this.emit({
			id, tool: toolName, phase: 'end', status: statusOf(result), startedAt, durationMs: Date.now() - startedAt, input,
			...(waitedMs !== undefined ? { waitedMs } : {}), ...commandExitOf(result),
			bytes: Buffer.byteLength(text), truncated: result.metadata.truncated,
			filesTouched: result.metadata.filesTouched, ...fields,
			error: result.error, resultText: text.length > RESULT_TEXT_IN_EVENTS ? `${text.slice(0, RESULT_TEXT_IN_EVENTS)}…` : text,
		});
		return result;
	}

	/** The one place a ToolContext is made. */
	private async context(
		tool: ToolDefinition,
		options: InvokeOptions,
		settings: Settings,
		note: (fields: Partial<ToolEventFields>) => void,
	): Promise<ToolContext> {
		return {
			tool: tool.name,
			boundary: await this.env.boundary(),
			settings,
			signal: options.signal ?? new AbortController().signal,
			host: this.env.host,
			state: this.env.state,
			note,
		};
	}

	/**
	 * Runs a tool's planning (all of a read tool); a plan that arrives after a cancel is dropped
	 * with what it holds. A run that stops by itself on a cancel is waited for (see runSettlesOnCancel).
	 */
	private plan(tool: ToolDefinition, input: unknown, ctx: ToolContext): Promise<ToolResult | PendingCall> {
		const fileSystem = ctx.boundary.fileSystem;
		if (needsDiskFolder(tool) && !fileSystem.local) return Promise.reject(needsDisk(tool.name, fileSystem.scheme));
		const planning = tool.run(input, ctx);
		planning.then(outcome => {
			if (ctx.signal.aborted && isPending(outcome)) outcome.release?.();
		}, () => undefined);
		return tool.runSettlesOnCancel ? settleAfterAbort(planning, ctx, SETTLE_AFTER_CANCEL_MS) : raceAbort(planning, ctx.signal);
	}

	/** Puts a planned call's request to the person when it must be, then commits the plan. */
	private async commit(call: PendingCall, ctx: ToolContext, phase: ApprovalPhase, settings: Settings, options: InvokeOptions, whileAsking: Asking): Promise<ToolResult> {
		let confirmed: boolean;
		try {
			// No file stays locked while a person decides: the commit takes the locks again and checks the bytes.
			if (this.asksPerson(call.request, phase, settings)) call.release?.();
			confirmed = await raceAbort(this.approve(call.request, phase, settings, options, whileAsking), ctx.signal);
			throwIfAborted(ctx.signal);
		} catch (error) {
			call.release?.();
			throw error;
		}
		const committing = call.commit(ctx, confirmed);
		return call.settlesOnCancel ? settleAfterAbort(committing, ctx, call.settleLimitMs ?? SETTLE_AFTER_CANCEL_MS) : raceAbort(committing, ctx.signal);
	}

	/**
	 * Whether deciding a request means asking someone now. In chat, VS Code asked exactly when the
	 * preview said a confirmation was needed, except for what must reach a person: chat's allowances
	 * can skip its confirmation, so the preview offers none for those and the host asks here.
	 */
	private asksPerson(request: ApprovalRequest, phase: ApprovalPhase, settings: Settings): boolean {
		return needsApproval(request, settings) && !(phase === 'preconfirmed' && !mustReachPerson(request));
	}

	/** Decides a request: true when a person confirmed it (here or in chat), false when no one needed asking; throws DeclinedError on a no. */
	private async approve(request: ApprovalRequest, phase: ApprovalPhase, settings: Settings, options: InvokeOptions, whileAsking: Asking): Promise<boolean> {
		if (!needsApproval(request, settings)) return false;
		if (!this.asksPerson(request, phase, settings)) return true;
		const approved = await whileAsking(() => (options.decide ?? (r => this.env.host.confirm(r, options.signal)))(request));
		if (!approved) throw new DeclinedError(request.title.charAt(0).toLowerCase() + request.title.slice(1));
		return true;
	}

	private emit(event: ToolEvent): void {
		for (const listener of this.listeners) {
			try {
				listener(event);
			} catch {
				// A faulty listener must not break a tool call.
			}
		}
	}
}

/** Runs the question to a person, marking the call as waiting for the answer meanwhile. */
type Asking = <T>(ask: () => Promise<T>) => Promise<T>;

function callRequest(tool: ToolDefinition, input: unknown): ApprovalRequest {
	return { kind: 'call', title: `Run ${tool.name}: ${safeDescribe(tool, input)}`, detail: JSON.stringify(input, null, 2) };
}

/** A command's exit as its result's metadata reports it; nothing for other tools or a command still running. */
function commandExitOf(result: ToolResult): { exit?: CommandExit } {
	const { exitCode, signal, timedOut } = result.metadata;
	if (typeof exitCode !== 'number' && typeof signal !== 'string' && timedOut !== true) return {};
	return {
		exit: {
			code: typeof exitCode === 'number' ? exitCode : null,
			...(typeof signal === 'string' ? { signal } : {}),
			...(timedOut === true ? { timedOut } : {}),
		},
	};
}

function statusOf(result: ToolResult): ToolStatus {
	switch (result.error?.code) {
		case undefined: return 'done';
		case 'declined': return 'declined';
		case 'cancelled': return 'cancelled';
		default: return 'failed';
	}
}

/**
 * Waits for a commit that stops by itself on a cancel; if it has not settled `limitMs` after the
 * cancel, reports the call cancelled and says that what it started may still be running.
 */
function settleAfterAbort<T>(work: Promise<T>, ctx: ToolContext, limitMs: number): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		let timer: NodeJS.Timeout | undefined;
		const onAbort = () => {
			timer = setTimeout(() => reject(new ToolError('cancelled', `${ctx.tool} was cancelled, but had not finished stopping ${limitMs / 1000} s later: what it started may still be running or writing. Check before relying on the files it touches.`)), limitMs);
		};
		if (ctx.signal.aborted) onAbort();
		else ctx.signal.addEventListener('abort', onAbort, { once: true });
		work.then(resolve, reject).finally(() => {
			clearTimeout(timer);
			ctx.signal.removeEventListener('abort', onAbort);
		});
	});
}

/** Stops waiting when the signal fires, even if a tool forgot to check it. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
	if (signal.aborted) return Promise.reject(new CancelledError());
	return new Promise<T>((resolve, reject) => {
		const onAbort = () => reject(new CancelledError());
		signal.addEventListener('abort', onAbort, { once: true });
		work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
	});
}
