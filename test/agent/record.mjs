// Reading what the scripted model recorded (test/agent/extension writes one JSON line per request
// Copilot sent it), and measuring what those requests cost in tool definitions.
import * as fs from 'node:fs';

function readLines(file) {
	if (!fs.existsSync(file)) return [];
	return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line));
}

/** Every recorded request, in order (none yet: an empty list). */
export function readRecord(file) {
	return readLines(file).filter(line => line.kind === 'request');
}

/** The version of Copilot Chat once the scripted model saw it active (prompts sent before then go astray). */
export function copilotChatVersion(file) {
	return readLines(file).find(line => line.kind === 'ready')?.copilotChat;
}

/** The request of `scenario` that got the closing answer (every tool result is in it), if it came. */
export function closingRequest(file, scenario) {
	return readRecord(file).filter(entry => entry.scenario === scenario && entry.reply.text !== undefined).pop();
}

/**
 * Copilot's own tools (names as the model sees them) that do the job of each of ours. Only those
 * offered in the same request count as duplicates.
 */
export const COPILOT_COUNTERPARTS = {
	toolbelt_read_file: ['read_file'],
	toolbelt_list_dir: ['list_dir'],
	toolbelt_find_files: ['file_search'],
	toolbelt_grep: ['grep_search'],
	toolbelt_get_diagnostics: ['get_errors'],
	toolbelt_write_file: ['create_file'],
	toolbelt_edit_file: ['replace_string_in_file', 'multi_replace_string_in_file', 'insert_edit_into_file'],
	toolbelt_apply_patch: ['apply_patch'],
	toolbelt_run_command: ['run_in_terminal'],
	toolbelt_exec_command: ['run_in_terminal'],
	toolbelt_write_stdin: ['send_to_terminal'],
	toolbelt_list_sessions: ['get_terminal_output'],
	toolbelt_kill_session: ['kill_terminal'],
	toolbelt_get_plan: ['manage_todo_list'],
	toolbelt_update_plan: ['manage_todo_list'],
	toolbelt_complete_task: ['manage_todo_list'],
};

const OURS = /^toolbelt_/;

/** Bytes of tool definitions as the provider received them (name, description, input schema, as JSON). */
function definitionBytes(tools) {
	return Buffer.byteLength(JSON.stringify(tools));
}

/**
 * The tool definitions of the recorded requests that offered tools: the largest request's totals,
 * ours among them, which of ours have a Copilot counterpart offered beside them, and whether every
 * request offered the same set.
 */
export function toolFootprint(entries) {
	const requests = entries.filter(entry => entry.tools.length);
	if (!requests.length) throw new Error('No recorded request offered any tools.');
	const widest = requests.reduce((best, entry) => (entry.tools.length > best.tools.length ? entry : best));
	const ours = widest.tools.filter(tool => OURS.test(tool.name));
	const offered = new Set(widest.tools.map(tool => tool.name));
	const duplicates = ours.flatMap(tool => {
		const theirs = (COPILOT_COUNTERPARTS[tool.name] ?? []).filter(name => offered.has(name));
		return theirs.length ? [{ ours: tool.name, theirs }] : [];
	});
	return {
		requests: requests.length,
		sameToolsEveryRequest: requests.every(entry => entry.tools.map(tool => tool.name).join() === widest.tools.map(tool => tool.name).join()),
		tools: widest.tools.length,
		bytes: definitionBytes(widest.tools),
		ours: ours.length,
		ourBytes: definitionBytes(ours),
		ourLargest: ours.map(tool => ({ name: tool.name, bytes: definitionBytes(tool) })).sort((a, b) => b.bytes - a.bytes),
		duplicates,
		duplicateBytes: definitionBytes(widest.tools.filter(tool => duplicates.some(pair => pair.ours === tool.name))),
		counterparts: widest.tools.filter(tool => duplicates.some(pair => pair.theirs.includes(tool.name))).map(tool => ({ name: tool.name, bytes: definitionBytes(tool) })),
	};
}

/** The footprint as the lines the e2e output prints. */
export function describeFootprint(footprint) {
	const kb = bytes => `${(bytes / 1024).toFixed(1)} KB`;
	return [
		`What the model sees, from ${footprint.requests} recorded request(s)${footprint.sameToolsEveryRequest ? ', each offering the same tools' : ' (the offered tools varied; the largest request is shown)'}:`,
		`  tools offered per request: ${footprint.tools}, ${kb(footprint.bytes)} of definitions (name, description, input schema)`,
		`  Toolbelt's: ${footprint.ours} tools, ${kb(footprint.ourBytes)} (${Math.round(100 * footprint.ourBytes / footprint.bytes)}% of the bytes)`,
		`  Toolbelt's largest: ${footprint.ourLargest.slice(0, 4).map(tool => `${tool.name.replace(OURS, '')} ${kb(tool.bytes)}`).join(', ')}`,
		`  Toolbelt tools with a Copilot built-in counterpart in the same request: ${footprint.duplicates.length} of ${footprint.ours} (${kb(footprint.duplicateBytes)})`,
		...footprint.duplicates.map(pair => `    ${pair.ours.replace(OURS, '')} ~ ${pair.theirs.join(', ')}`),
		`  those Copilot counterparts: ${footprint.counterparts.length} tools, ${kb(footprint.counterparts.reduce((sum, tool) => sum + tool.bytes, 0))} (${footprint.counterparts.map(tool => `${tool.name} ${kb(tool.bytes)}`).join(', ')})`,
	].join('\n');
}
