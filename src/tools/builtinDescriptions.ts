import { describeTool, ToolDescription } from './description';
import { ALL_TOOLS } from './index';

/**
 * The built-in tools as `toolbelt list` prints them. The CLI's bundle replaces this module with
 * its result, computed when the bundle is built (esbuild.mjs): listing then evaluates none of the
 * tools' code, which is most of what a short call of the CLI would otherwise spend.
 */
export function builtinDescriptions(): ToolDescription[] {
	return ALL_TOOLS.map(tool => describeTool(tool));
}
