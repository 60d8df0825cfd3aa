import type { Boundary } from '../../core/policy/boundary';
import { ALL_TOOLS } from '../index';
import type { ToolDefinition } from '../tool';
import { customTool } from './customTool';
import { DefinitionProblem, loadDefinitions } from './definitions';

/** What a reload found different from the last one. */
export interface CatalogChange {
	/** The tools offered (names, descriptions, schemas, scripts…) differ. */
	readonly tools: boolean;
	/** The problems reported differ: time to tell the person again. */
	readonly problems: boolean;
}

const BUILT_IN_NAMES: ReadonlySet<string> = new Set(ALL_TOOLS.map(tool => tool.name));

/**
 * The custom tools of a workspace as last read, for a front end to offer (CLI, MCP server) or to
 * report on (VS Code). Reading is cheap (a folder listing and a few small files per workspace
 * folder), so a front end reloads whenever it may have changed and learns whether it did.
 */
export class CustomToolCatalog {
	private current: ToolDefinition[] = [];
	private currentProblems: DefinitionProblem[] = [];
	private toolsKey = '[]';
	private problemsKey = '[]';

	constructor(private readonly boundary: () => Promise<Boundary>) {}

	get tools(): readonly ToolDefinition[] {
		return this.current;
	}

	get problems(): readonly DefinitionProblem[] {
		return this.currentProblems;
	}

	async reload(): Promise<CatalogChange> {
		const { specs, problems } = await loadDefinitions(await this.boundary(), BUILT_IN_NAMES);
		const toolsKey = JSON.stringify(specs.map(spec => [spec.name, spec.description, spec.inputSchema, spec.script.absolute, spec.timeoutMs, spec.mutating]));
		const problemsKey = JSON.stringify(problems);
		const change = { tools: toolsKey !== this.toolsKey, problems: problemsKey !== this.problemsKey };
		if (change.tools) this.current = specs.map(customTool);
		this.currentProblems = problems;
		this.toolsKey = toolsKey;
		this.problemsKey = problemsKey;
		return change;
	}
}
