import { contributedName, ToolDefinition } from './tool';

/**
 * `contributes.languageModelTools` as package.json must hold it, derived from the tool
 * definitions. `npm run manifest` writes it; a unit test fails when the two disagree.
 */
export function toolContributions(tools: readonly ToolDefinition<any>[]): object[] {
	return tools.map(tool => ({
		name: contributedName(tool),
		toolReferenceName: tool.referenceName,
		displayName: tool.displayName,
		userDescription: tool.userDescription,
		modelDescription: tool.modelDescription,
		canBeReferencedInPrompt: true,
		icon: `$(${tool.icon})`,
		tags: ['toolbelt', ...tool.tags],
		when: whenEnabled(tool),
		inputSchema: jsonSchema(tool.schema),
	}));
}

/**
 * A switched-off tool leaves the model's list. The settings are arrays; a `=~` test sees them
 * joined by commas, so the name is matched between commas or the ends.
 */
function whenEnabled(tool: ToolDefinition<any>): string {
	return `!(config.toolbelt.disabledTools =~ /(^|,)${tool.name}(,|$)/) && !(config.toolbelt.disabledGroups =~ /(^|,)${tool.group}(,|$)/)`;
}

/** TypeBox schemas carry symbol keys; JSON round-tripping leaves the plain JSON Schema. */
function jsonSchema(schema: object): object {
	return JSON.parse(JSON.stringify(schema));
}
