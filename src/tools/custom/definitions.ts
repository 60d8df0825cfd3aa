import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import type { Boundary, WorkspaceRoot } from '../../core/policy/boundary';
import { BoundaryError } from '../../core/results/errors';
import { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS } from '../../core/commands/process';
import { describeValue } from '../../core/schema/validate';
import { isPlainObject, toValidatingSchema } from './jsonSchema';
import { DEFINITIONS_FOLDER } from './location';

/**
 * Custom tools are JSON files in `.toolbelt/tools/` of a workspace folder, each naming a script.
 * This reads and checks them; a file with any problem is reported (file, field, what to do) and
 * left out, so a typo in one definition never hides the others or breaks a server.
 */

/** Definitions are a few hundred bytes; anything this big is not one. */
const MAX_DEFINITION_BYTES = 256 * 1024;
/** Like the built-in names (`read_file`); MCP clients accept at most 64 characters. */
const NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
const FIELDS = ['name', 'description', 'inputSchema', 'execute', 'timeoutMs', 'mutating'];

/** A definition that passed every check. */
export interface CustomToolSpec {
	readonly name: string;
	readonly description: string;
	/** As written: what models are shown. */
	readonly inputSchema: Record<string, unknown>;
	/** The same schema marked for validation. */
	readonly schema: TSchema;
	/** The definition file as the workspace names it (`.toolbelt/tools/word_count.json`). */
	readonly file: string;
	readonly script: ScriptPath;
	/** The workspace folder holding the definition: the script runs there. */
	readonly root: WorkspaceRoot;
	readonly timeoutMs: number;
	readonly mutating: boolean;
}

export interface ScriptPath {
	/** Real path (links followed), checked inside the workspace: what runs. */
	readonly absolute: string;
	readonly display: string;
}

export interface DefinitionProblem {
	readonly file: string;
	/** `execute`, `inputSchema.properties.n.type`, or `file` for the file as a whole. */
	readonly field: string;
	readonly message: string;
}

export function formatProblem(problem: DefinitionProblem): string {
	return `${problem.file}: ${problem.field}: ${problem.message}`;
}

export interface LoadedDefinitions {
	readonly specs: CustomToolSpec[];
	readonly problems: DefinitionProblem[];
}

/**
 * Reads every definition in every workspace folder, in folder order then file name order. A name
 * already taken (by a built-in tool in `reserved`, or by an earlier definition) is a problem of
 * the later file.
 */
export async function loadDefinitions(boundary: Boundary, reserved: ReadonlySet<string>): Promise<LoadedDefinitions> {
	const specs: CustomToolSpec[] = [];
	const problems: DefinitionProblem[] = [];
	const owners = new Map<string, string>();
	// Custom tools run scripts in a folder on disk: a virtual workspace's paths would name local files.
	if (!boundary.fileSystem.local) return { specs, problems };
	for (const root of boundary.roots) {
		for (const file of await definitionFiles(root, boundary, problems)) {
			const outcome = await readDefinition(file, root, boundary);
			if ('problems' in outcome) {
				problems.push(...outcome.problems);
				continue;
			}
			const spec = outcome.spec;
			const owner = reserved.has(spec.name) ? 'a built-in Toolbelt tool' : owners.get(spec.name);
			if (owner) {
				problems.push({ file: spec.file, field: 'name', message: `"${spec.name}" is already the name of ${owner}; choose another name` });
				continue;
			}
			owners.set(spec.name, spec.file);
			specs.push(spec);
		}
	}
	return { specs, problems };
}

interface DefinitionFile {
	readonly absolute: string;
	readonly display: string;
}

/** The `.json` files of one folder's definitions folder, sorted; none when it has no such folder. */
async function definitionFiles(root: WorkspaceRoot, boundary: Boundary, problems: DefinitionProblem[]): Promise<DefinitionFile[]> {
	const folder = path.join(root.path, ...DEFINITIONS_FOLDER.split('/'));
	let names: string[];
	try {
		names = (await fs.readdir(folder)).filter(name => name.endsWith('.json')).sort();
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code !== 'ENOENT' && code !== 'ENOTDIR') problems.push({ file: folder, field: 'file', message: `the folder cannot be read (${code ?? (error as Error).message})` });
		return [];
	}
	const files: DefinitionFile[] = [];
	for (const name of names) {
		const absolute = path.join(folder, name);
		try {
			// A linked definitions folder or file must not bring in a tool from outside the workspace.
			const resolved = await boundary.resolve(absolute, 'read');
			if (!resolved.root) throw new Error('it is not inside a workspace folder');
			files.push({ absolute: resolved.real, display: resolved.display });
		} catch (error) {
			problems.push({ file: absolute, field: 'file', message: `is not used: ${(error as Error).message}` });
		}
	}
	return files;
}

async function readDefinition(file: DefinitionFile, root: WorkspaceRoot, boundary: Boundary): Promise<{ spec: CustomToolSpec } | { problems: DefinitionProblem[] }> {
	const problems: DefinitionProblem[] = [];
	const problem = (field: string, message: string) => problems.push({ file: file.display, field, message });
	let data: unknown;
	try {
		const stat = await fs.stat(file.absolute);
		if (!stat.isFile()) throw new Error('it is not a regular file');
		if (stat.size > MAX_DEFINITION_BYTES) throw new Error(`it is ${stat.size} bytes; a definition is at most ${MAX_DEFINITION_BYTES}`);
		data = JSON.parse(await fs.readFile(file.absolute, 'utf8'));
	} catch (error) {
		problem('file', `cannot be read as JSON: ${(error as Error).message}`);
		return { problems };
	}
	if (!isPlainObject(data)) {
		problem('file', `must hold one JSON object with name, description, inputSchema and execute, got ${describeValue(data)}`);
		return { problems };
	}
	for (const key of Object.keys(data)) {
		if (!FIELDS.includes(key) && key !== '$schema') problem(key, `is not a known field (known: ${FIELDS.join(', ')}); remove it or fix its spelling`);
	}
	const { name, description, inputSchema, execute } = data;
	if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
		problem('name', `must be lowercase letters, digits and _ (starting with a letter, at most 64), like "word_count"; got ${describeValue(name)}`);
	} else if (name.startsWith('toolbelt_')) {
		problem('name', 'must not start with "toolbelt_", the prefix of Toolbelt\'s own tools');
	}
	if (typeof description !== 'string' || !description.trim()) problem('description', `must be a non-empty string telling a model what the tool does and when to use it; got ${describeValue(description)}`);
	const schema = toValidatingSchema(inputSchema);
	if ('problems' in schema) problems.push(...schema.problems.map(p => ({ file: file.display, ...p })));
	const timeoutMs = data.timeoutMs ?? DEFAULT_TIMEOUT_MS;
	if (!Number.isInteger(timeoutMs) || (timeoutMs as number) < 1 || (timeoutMs as number) > MAX_TIMEOUT_MS) {
		problem('timeoutMs', `must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}; got ${describeValue(data.timeoutMs)}`);
	}
	const mutating = data.mutating ?? true;
	if (typeof mutating !== 'boolean') problem('mutating', `must be true or false; got ${describeValue(data.mutating)}`);
	let script: ScriptPath | undefined;
	if (typeof execute !== 'string' || !execute.trim()) {
		problem('execute', `must be the path of a script, relative to this file (e.g. "word_count.sh"); got ${describeValue(execute)}`);
	} else if (path.isAbsolute(execute)) {
		problem('execute', `must be relative to this file, not absolute: ${execute}`);
	} else {
		try {
			script = await resolveScript(boundary, path.resolve(path.dirname(file.absolute), execute), execute);
		} catch (error) {
			problem('execute', (error as Error).message);
		}
	}
	if (problems.length || !script || 'problems' in schema) return { problems };
	return {
		spec: {
			name: name as string, description: description as string, inputSchema: inputSchema as Record<string, unknown>, schema: schema.schema,
			file: file.display, script, root, timeoutMs: timeoutMs as number, mutating: mutating as boolean,
		},
	};
}

/**
 * Checks that a script is one Toolbelt may run: inside a workspace folder (links followed), a
 * regular file, executable. Run again just before each run: the file may have changed since.
 */
export async function resolveScript(boundary: Boundary, absolute: string, written: string): Promise<ScriptPath> {
	let resolved;
	try {
		resolved = await boundary.resolve(absolute, 'read');
	} catch (error) {
		const rule = error instanceof BoundaryError ? ` (rule: ${error.rule})` : '';
		throw new Error(`"${written}" is outside the workspace${rule}; a custom tool's script must be inside the workspace folder`);
	}
	if (!resolved.root) throw new Error(`"${written}" is outside the workspace folders; a custom tool's script must be inside one`);
	let stat;
	try {
		stat = await fs.stat(resolved.real);
	} catch {
		throw new Error(`"${written}" does not exist (looked for ${resolved.display}); create the script or fix the path`);
	}
	if (!stat.isFile()) throw new Error(`"${written}" (${resolved.display}) is not a regular file; point it at a script`);
	// Windows has no execute bit: the shell decides from the extension.
	if (process.platform !== 'win32' && (stat.mode & 0o111) === 0) {
		throw new Error(`"${written}" (${resolved.display}) is not executable; run chmod +x ${resolved.display} (and give it a #! line)`);
	}
	return { absolute: resolved.real, display: resolved.display };
}
