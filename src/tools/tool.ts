import type { Static, TSchema } from '@sinclair/typebox';
import type { PendingCall, ToolContext } from '../core/context';
import type { ToolResult } from '../core/results/result';
import type { Settings, ToolGroup } from '../core/policy/settings';

/**
 * One tool: its schema beside its handler. `package.json`'s `languageModelTools` is generated
 * from these fields by `npm run manifest`, and a unit test keeps the two equal.
 */
export interface ToolDefinition<S extends TSchema = TSchema> {
	/** Model-facing name (`read_file`); VS Code sees it as `toolbelt_read_file`. */
	readonly name: string;
	/** What people type after `#` in chat (`tbRead`). */
	readonly referenceName: string;
	readonly displayName: string;
	readonly group: ToolGroup;
	/** Mutating tools go through approval and refuse in an untrusted workspace. */
	readonly mutating: boolean;
	/**
	 * Whether the default approval policy (`mutating`) puts the call to the person; defaults to
	 * `mutating`. The plan tools change only the plan file and do not ask (documentation only:
	 * the asking itself is decided by the approval request the tool makes).
	 */
	readonly asksByDefault?: boolean;
	/**
	 * Asks the editor's language services (`host.languages`): refused, with one sentence saying so,
	 * where the host has none (the command line).
	 */
	readonly needsVscode?: boolean;
	/** A codicon id, e.g. `file`. */
	readonly icon: string;
	readonly tags: readonly string[];
	/** For people, in the tool picker. */
	readonly userDescription: string;
	/** For the model: what it does, when to use it, its caps. */
	readonly modelDescription: string;
	readonly schema: S;
	/** The JSON Schema shown to models when it is not `schema` itself (a custom tool's, as its author wrote it). */
	readonly inputSchema?: object;
	/** A short present-tense line for progress UI: `Reading src/a.ts`. */
	describe(input: Static<S>): string;
	/**
	 * A read tool returns its result. A tool that changes something computes the change (or the
	 * command) and returns it as a PendingCall, which the registry asks about and commits; a call
	 * that turns out to change nothing (or fails) returns its result straight away.
	 */
	run(input: Static<S>, ctx: ToolContext): Promise<ToolResult | PendingCall>;
	/**
	 * `run` itself stops on a cancel and then reports it (a read-only custom tool runs its script
	 * there): the registry waits for that, up to SETTLE_AFTER_CANCEL_MS, instead of answering at
	 * once while the program may still be stopping or writing.
	 */
	readonly runSettlesOnCancel?: boolean;
}

export function defineTool<S extends TSchema>(definition: ToolDefinition<S>): ToolDefinition<S> {
	return definition;
}

/** The tool's progress line for this input; its display name when `describe` throws on odd input. */
export function safeDescribe(tool: ToolDefinition<any>, input: unknown): string {
	try {
		return tool.describe(input as never);
	} catch {
		return tool.displayName;
	}
}

/** Whether `toolbelt.disabledTools` / `toolbelt.disabledGroups` switch this tool off. */
export function isSwitchedOff(tool: Pick<ToolDefinition, 'name' | 'group'>, settings: Pick<Settings, 'disabledTools' | 'disabledGroups'>): boolean {
	return settings.disabledTools.includes(tool.name) || settings.disabledGroups.includes(tool.group);
}

/**
 * Commands and sessions run in a folder on disk, and the code tools ask language servers about
 * disk paths: in a virtual workspace they are refused with one sentence (see needsDisk).
 */
export function needsDiskFolder(tool: Pick<ToolDefinition, 'group'>): boolean {
	return tool.group === 'commands' || tool.group === 'code';
}

/** How every `path` field reads to a model (the boundary explains an empty or outside path). */
export const PATH_DESCRIPTION = 'Workspace-relative (multi-root: `folderName/…`) or absolute inside the workspace.';

export const TOOL_PREFIX = 'toolbelt_';

export function contributedName(tool: Pick<ToolDefinition, 'name'>): string {
	return TOOL_PREFIX + tool.name;
}

/** Accepts `read_file` or `toolbelt_read_file`. */
export function modelName(name: string): string {
	return name.startsWith(TOOL_PREFIX) ? name.slice(TOOL_PREFIX.length) : name;
}
