import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { ApprovalRequest } from '../../src/core/context';
import { createNodeEnvironment } from '../../src/core/nodeHost';
import { resultText } from '../../src/core/results/result';
import { sandboxAvailability } from '../../src/core/sandbox/runtime';
import type { SettingsOverrides } from '../../src/core/policy/settings';
import { ALL_TOOLS, ToolRegistry } from '../../src/tools';
import { CustomToolCatalog } from '../../src/tools/custom/catalog';
import { formatProblem } from '../../src/tools/custom/definitions';
import { toValidatingSchema } from '../../src/tools/custom/jsonSchema';
import { validateInput } from '../../src/core/schema/validate';
import { makeTree, needsSandbox, stopProcessesIn, testStorageDir, withDeadline } from './helpers';

const ECHO = '#!/bin/sh\ncat\n';

/** A definition file's JSON: a tool that echoes its input, with these fields changed. */
function definition(fields: Record<string, unknown> = {}): string {
	return JSON.stringify({
		name: 'echo_input',
		description: 'Echoes its input.',
		inputSchema: { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'], additionalProperties: false },
		execute: 'echo.sh',
		...fields,
	});
}

interface Workspace {
	registry: ToolRegistry;
	catalog: CustomToolCatalog;
	asked: ApprovalRequest[];
}

/** A registry with the built-in tools and the custom tools of `root`, read once. */
async function open(root: string, options: { approve?: boolean; trusted?: boolean; settings?: SettingsOverrides } = {}): Promise<Workspace> {
	const asked: ApprovalRequest[] = [];
	const storageDir = testStorageDir();
	const env = createNodeEnvironment({
		roots: [root], storageDir, trusted: options.trusted, settings: options.settings,
		confirm: async request => {
			asked.push(request);
			return options.approve ?? true;
		},
	});
	const registry = new ToolRegistry(ALL_TOOLS, env);
	const catalog = new CustomToolCatalog(env.boundary);
	await catalog.reload();
	registry.setCustomTools(catalog.tools);
	return { registry, catalog, asked };
}

/** Makes every `.sh` file of a tree executable, as a person would with chmod +x. */
function executable(tree: ReturnType<typeof makeTree>, ...files: string[]): void {
	for (const file of files) fs.chmodSync(tree.file(file), 0o755);
}

describe('custom tools: definitions', () => {
	let tree: ReturnType<typeof makeTree>;
	afterEach(() => tree.cleanup());

	/** Every way a definition can be wrong, each named by file and field, and never listed. */
	const cases: { what: string; files: Record<string, string>; field: string; message: RegExp }[] = [
		{ what: 'not JSON', files: { 'bad.json': '{ name: ' }, field: 'file', message: /cannot be read as JSON/ },
		{ what: 'not an object', files: { 'bad.json': '[1]' }, field: 'file', message: /must hold one JSON object.*got an array/ },
		{ what: 'a name with capitals', files: { 'bad.json': definition({ name: 'Echo' }) }, field: 'name', message: /lowercase letters, digits and _/ },
		{ what: 'no name', files: { 'bad.json': definition({ name: undefined }) }, field: 'name', message: /got nothing/ },
		{ what: 'a built-in name', files: { 'bad.json': definition({ name: 'read_file' }) }, field: 'name', message: /"read_file" is already the name of a built-in Toolbelt tool/ },
		{ what: 'the toolbelt_ prefix', files: { 'bad.json': definition({ name: 'toolbelt_echo' }) }, field: 'name', message: /must not start with "toolbelt_"/ },
		{ what: 'an empty description', files: { 'bad.json': definition({ description: ' ' }) }, field: 'description', message: /non-empty string/ },
		{ what: 'a schema that is a string', files: { 'bad.json': definition({ inputSchema: 'object' }) }, field: 'inputSchema', message: /must be a JSON Schema object/ },
		{ what: 'a schema of type string', files: { 'bad.json': definition({ inputSchema: { type: 'string' } }) }, field: 'inputSchema.type', message: /must be "object"/ },
		{ what: 'properties as an array', files: { 'bad.json': definition({ inputSchema: { type: 'object', properties: [] } }) }, field: 'inputSchema.properties', message: /must be an object mapping/ },
		{ what: 'a $ref', files: { 'bad.json': definition({ inputSchema: { type: 'object', properties: { a: { $ref: '#/x' } } } }) }, field: 'inputSchema.properties.a.$ref', message: /not supported in custom tool schemas/ },
		{ what: 'an unknown type', files: { 'bad.json': definition({ inputSchema: { type: 'object', properties: { a: { type: 'text' } } } }) }, field: 'inputSchema.properties.a.type', message: /must be one of "object"/ },
		{ what: 'a broken pattern', files: { 'bad.json': definition({ inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } } }) }, field: 'inputSchema.properties.a.pattern', message: /valid regular expression/ },
		{ what: 'a broken pattern under a type list', files: { 'bad.json': definition({ inputSchema: { type: 'object', properties: { a: { type: ['string', 'null'], pattern: '[' } } } }) }, field: 'inputSchema.properties.a.pattern', message: /valid regular expression/ },
		{ what: 'required naming nothing', files: { 'bad.json': definition({ inputSchema: { type: 'object', properties: {}, required: ['text'] } }) }, field: 'inputSchema.required', message: /"text", which is not in properties/ },
		{ what: 'a keyword of another type', files: { 'bad.json': definition({ inputSchema: { type: 'object', properties: { n: { type: 'number', minLength: 1 } } } }) }, field: 'inputSchema.properties.n.minLength', message: /does not apply to a schema of type "number"/ },
		{ what: 'no execute', files: { 'bad.json': definition({ execute: undefined }) }, field: 'execute', message: /must be the path of a script/ },
		{ what: 'an absolute execute', files: { 'bad.json': definition({ execute: '/bin/sh' }) }, field: 'execute', message: /must be relative to this file/ },
		{ what: 'an execute that leaves the workspace', files: { 'bad.json': definition({ execute: '../../../escape.sh' }) }, field: 'execute', message: /"..\/..\/..\/escape.sh" is outside the workspace \(rule: outside_workspace\)/ },
		{ what: 'a missing script', files: { 'bad.json': definition({ execute: 'missing.sh' }) }, field: 'execute', message: /"missing.sh" does not exist/ },
		{ what: 'a folder as script', files: { 'bad.json': definition({ execute: '.' }) }, field: 'execute', message: /is not a regular file/ },
		{ what: 'a script that is not executable', files: { 'bad.json': definition({ execute: 'plain.sh' }), 'plain.sh': ECHO }, field: 'execute', message: /is not executable; run chmod \+x \.toolbelt\/tools\/plain\.sh/ },
		{ what: 'a timeout of 0', files: { 'bad.json': definition({ timeoutMs: 0 }) }, field: 'timeoutMs', message: /from 1 to 600000; got number 0/ },
		{ what: 'a fractional timeout', files: { 'bad.json': definition({ timeoutMs: 1.5 }) }, field: 'timeoutMs', message: /whole number/ },
		{ what: 'a timeout over the cap', files: { 'bad.json': definition({ timeoutMs: 600_001 }) }, field: 'timeoutMs', message: /from 1 to 600000/ },
		{ what: 'mutating as a string', files: { 'bad.json': definition({ mutating: 'yes' }) }, field: 'mutating', message: /must be true or false/ },
		{ what: 'an unknown field', files: { 'bad.json': definition({ timeout: 5 }) }, field: 'timeout', message: /is not a known field/ },
	];
	for (const { what, files, field, message } of cases) {
		it(`reports ${what} (file and field) and does not list it`, async () => {
			tree = makeTree(Object.fromEntries([...Object.entries(files), ['echo.sh', ECHO]].map(([name, text]) => [`.toolbelt/tools/${name}`, text])));
			executable(tree, '.toolbelt/tools/echo.sh');
			const { registry, catalog } = await open(tree.root);
			const problem = catalog.problems.find(p => p.field === field);
			assert.ok(problem, `no problem for ${field}: ${catalog.problems.map(formatProblem).join('\n')}`);
			assert.equal(problem.file, '.toolbelt/tools/bad.json');
			assert.match(problem.message, message);
			assert.deepEqual(catalog.tools, []);
			assert.equal(registry.listDefinitions().some(tool => tool.custom), false);
		});
	}

	it('reports a second definition of a name and keeps the first', async () => {
		tree = makeTree({ '.toolbelt/tools/a.json': definition(), '.toolbelt/tools/b.json': definition(), '.toolbelt/tools/echo.sh': ECHO });
		executable(tree, '.toolbelt/tools/echo.sh');
		const { catalog } = await open(tree.root);
		assert.deepEqual(catalog.tools.map(tool => tool.name), ['echo_input']);
		assert.deepEqual(catalog.problems.map(formatProblem), ['.toolbelt/tools/b.json: name: "echo_input" is already the name of .toolbelt/tools/a.json; choose another name']);
	});

	it('refuses a script linked to a file outside the workspace', async () => {
		const outside = makeTree({ 'evil.sh': ECHO });
		try {
			executable(outside, 'evil.sh');
			tree = makeTree({ '.toolbelt/tools/a.json': definition({ execute: 'link.sh' }) });
			fs.symlinkSync(outside.file('evil.sh'), tree.file('.toolbelt/tools/link.sh'));
			const { catalog } = await open(tree.root);
			assert.deepEqual(catalog.tools, []);
			assert.match(formatProblem(catalog.problems[0]), /^\.toolbelt\/tools\/a\.json: execute: "link\.sh" is outside the workspace/);
		} finally {
			outside.cleanup();
		}
	});

	it('reads the definitions again: a new file, an edit, a fix and a removal change what is offered', async () => {
		tree = makeTree({ '.toolbelt/tools/echo.sh': ECHO });
		executable(tree, '.toolbelt/tools/echo.sh');
		const { registry, catalog } = await open(tree.root);
		assert.deepEqual(await catalog.reload(), { tools: false, problems: false });
		fs.writeFileSync(tree.file('.toolbelt/tools/a.json'), definition());
		assert.deepEqual(await catalog.reload(), { tools: true, problems: false });
		registry.setCustomTools(catalog.tools);
		assert.ok(registry.get('echo_input'));
		fs.writeFileSync(tree.file('.toolbelt/tools/a.json'), definition({ description: 'Says it back.' }));
		assert.deepEqual(await catalog.reload(), { tools: true, problems: false });
		assert.equal(catalog.tools[0].modelDescription, 'Says it back.');
		fs.writeFileSync(tree.file('.toolbelt/tools/a.json'), definition({ timeoutMs: -1 }));
		assert.deepEqual(await catalog.reload(), { tools: true, problems: true });
		assert.deepEqual(catalog.tools, []);
		fs.rmSync(tree.file('.toolbelt/tools/a.json'));
		assert.deepEqual(await catalog.reload(), { tools: false, problems: true });
		registry.setCustomTools(catalog.tools);
		assert.equal(registry.get('echo_input'), undefined);
	});

	it('keeps the definitions of each workspace folder apart, running each script in its own folder', async () => {
		tree = makeTree({ '.toolbelt/tools/a.json': definition({ name: 'where_a', execute: 'pwd.sh' }), '.toolbelt/tools/pwd.sh': '#!/bin/sh\npwd\n' });
		const second = makeTree({ '.toolbelt/tools/b.json': definition({ name: 'where_b', execute: 'pwd.sh' }), '.toolbelt/tools/pwd.sh': '#!/bin/sh\npwd\n' });
		try {
			executable(tree, '.toolbelt/tools/pwd.sh');
			executable(second, '.toolbelt/tools/pwd.sh');
			const env = createNodeEnvironment({ roots: [tree.root, second.root], storageDir: testStorageDir(), confirm: async () => true });
			const catalog = new CustomToolCatalog(env.boundary);
			await catalog.reload();
			const registry = new ToolRegistry(ALL_TOOLS, env);
			registry.setCustomTools(catalog.tools);
			assert.equal(resultText(await registry.invoke('where_b', { text: 'x' })), second.root);
			assert.equal(resultText(await registry.invoke('where_a', { text: 'x' })), tree.root);
		} finally {
			second.cleanup();
		}
	});
});

describe('custom tools: running', function () {
	this.timeout(20_000);
	let tree: ReturnType<typeof makeTree>;
	afterEach(() => tree.cleanup());

	function workspace(fields: Record<string, unknown> = {}, script = ECHO): void {
		tree = makeTree({ '.toolbelt/tools/a.json': definition(fields), '.toolbelt/tools/echo.sh': script });
		executable(tree, '.toolbelt/tools/echo.sh');
	}

	it('gives the script its validated input as JSON on stdin, asks like run_command, and returns its stdout', async () => {
		workspace();
		const { registry, asked } = await open(tree.root);
		const result = await registry.invoke('echo_input', { text: 'héllo "there"' });
		assert.equal(result.error, undefined, resultText(result));
		assert.deepEqual(JSON.parse(resultText(result)), { text: 'héllo "there"' });
		assert.equal(result.metadata.exitCode, 0);
		assert.equal(asked.length, 1);
		assert.equal(asked[0].kind, 'command');
		assert.equal(asked[0].title, 'Running custom tool echo_input');
		assert.match((asked[0] as { command: string }).command, /^\.toolbelt\/tools\/echo\.sh\n# stdin: \{"text":"héllo \\"there\\""\}$/);
	});

	it('refuses input its schema does not allow, naming the field, and runs nothing', async () => {
		workspace({}, '#!/bin/sh\ntouch ran\n');
		const { registry, asked } = await open(tree.root);
		const result = await registry.invoke('echo_input', { text: '', extra: 1 });
		assert.equal(result.error?.code, 'invalid_input');
		assert.match(result.error!.message, /- extra: is not a known field.*\n- text: must not be empty\n/);
		assert.deepEqual(asked, []);
		assert.equal(fs.existsSync(tree.file('ran')), false);
	});

	it('runs nothing when the person declines', async () => {
		workspace({}, '#!/bin/sh\ntouch ran\n');
		const { registry } = await open(tree.root, { approve: false });
		const result = await registry.invoke('echo_input', { text: 'x' });
		assert.equal(result.error?.code, 'declined');
		assert.equal(fs.existsSync(tree.file('ran')), false);
	});

	it('runs a tool declared read-only without asking, but never in an untrusted workspace', async () => {
		workspace({ mutating: false });
		const trusted = await open(tree.root);
		assert.equal(resultText(await trusted.registry.invoke('echo_input', { text: 'x' })), '{"text":"x"}');
		assert.deepEqual(trusted.asked, []);
		const untrusted = await open(tree.root, { trusted: false });
		const refused = await untrusted.registry.invoke('echo_input', { text: 'x' });
		assert.equal(refused.error?.code, 'untrusted');
		assert.match(refused.error!.message, /runs a script from this workspace, and this workspace is not trusted/);
	});

	it('turns a non-zero exit into an error result holding stdout and stderr', async () => {
		workspace({}, '#!/bin/sh\necho partial\necho "no such thing" >&2\nexit 3\n');
		const { registry } = await open(tree.root);
		const result = await registry.invoke('echo_input', { text: 'x' });
		assert.equal(result.error?.code, 'command_failed');
		assert.match(result.error!.message, /^echo_input failed: its script exited with code 3 after [\d.]+ s\. Its output:\n--- stdout \(1 line, 8 B\) ---\npartial\n--- stderr \(1 line, 14 B\) ---\nno such thing$/);
		assert.equal((result.metadata.errorDetails as { exitCode: number }).exitCode, 3);
	});

	it('stops a script at its timeoutMs, with every process it started', async () => {
		workspace({ timeoutMs: 300 }, '#!/bin/sh\necho started\nsleep 30 &\nsleep 30\n');
		const { registry } = await open(tree.root);
		const result = await withDeadline(registry.invoke('echo_input', { text: 'x' }), 10_000, 'the custom tool did not time out');
		assert.equal(result.error?.code, 'timeout');
		assert.match(result.error!.message, /^echo_input timed out after 0\.3 s \(timeoutMs in \.toolbelt\/tools\/a\.json\): its script and every process it started were stopped\. Output so far:\n--- stdout \(1 line, 8 B\) ---\nstarted/);
	});

	it('is cancelled with its call', async () => {
		workspace({}, '#!/bin/sh\nsleep 30\n');
		const { registry } = await open(tree.root);
		const controller = new AbortController();
		setTimeout(() => controller.abort(), 200);
		const result = await withDeadline(registry.invoke('echo_input', { text: 'x' }, { signal: controller.signal }), 10_000, 'the cancelled custom tool kept running');
		assert.equal(result.error?.code, 'cancelled');
	});

	describe('a cancel while its script runs or ends: the result comes once the script is gone, and says what happened', () => {
		afterEach(() => stopProcessesIn(tree.root));

		/** Waits until `file` exists, for at most `ms`. */
		async function appears(file: string, ms: number): Promise<void> {
			const until = Date.now() + ms;
			while (!fs.existsSync(file)) {
				if (Date.now() > until) throw new Error(`${file} never appeared`);
				await new Promise(resolve => setTimeout(resolve, 5));
			}
		}

		it('a script that finished (exit 0) while its output is still draining is reported done, not cancelled', async () => {
			// A background child keeps stdout open past the script's exit (the drain window), and marks the moment the script is gone.
			workspace({}, '#!/bin/sh\necho did it\ntouch did\nparent=$$\n(while kill -0 $parent 2>/dev/null; do sleep 0.01; done; touch exited; sleep 0.6) &\nexit 0\n');
			// Unsandboxed: in bwrap's PID namespace the background child ends with the script.
			const { registry } = await open(tree.root, { settings: { sandbox: { mode: 'off' } } });
			const controller = new AbortController();
			const calling = registry.invoke('echo_input', { text: 'x' }, { signal: controller.signal });
			await appears(tree.file('exited'), 10_000);
			controller.abort();
			const result = await withDeadline(calling, 10_000, 'the call never ended');
			assert.ok(fs.existsSync(tree.file('did')));
			assert.equal(result.error, undefined, `the script ran to exit 0, yet the result says: ${result.error?.message}`);
			assert.equal(result.metadata.exitCode, 0);
			assert.match(resultText(result), /^did it/);
			await new Promise(resolve => setTimeout(resolve, 700));
		});

		for (const mutating of [true, false]) {
			it(`a script that still writes while it stops has written it before the result says cancelled (${mutating ? 'a tool that changes files' : 'one declared read-only, which runs without a plan'})`, async () => {
				// The script answers the stop signal by writing a file a moment later, inside the kill grace period.
				workspace({ mutating }, '#!/bin/sh\ntrap \'sleep 0.3; touch late; exit 1\' TERM\ntouch started\nwhile :; do sleep 0.05; done\n');
				const { registry } = await open(tree.root);
				const controller = new AbortController();
				const calling = registry.invoke('echo_input', { text: 'x' }, { signal: controller.signal });
				await appears(tree.file('started'), 10_000);
				controller.abort();
				const result = await withDeadline(calling, 10_000, 'the cancelled call never ended');
				assert.equal(result.error?.code, 'cancelled');
				const lateAtResult = fs.existsSync(tree.file('late'));
				assert.ok(lateAtResult, 'the result came while the script was still stopping (its TERM trap had not written yet)');
				await new Promise(resolve => setTimeout(resolve, 800));
				assert.equal(fs.existsSync(tree.file('late')), lateAtResult, 'the script wrote a file after the result said it was cancelled');
			});
		}
	});

	it('reports a script that went away since it was read, and runs nothing', async () => {
		workspace();
		const { registry } = await open(tree.root);
		fs.chmodSync(tree.file('.toolbelt/tools/echo.sh'), 0o644);
		const result = await registry.invoke('echo_input', { text: 'x' });
		assert.equal(result.error?.code, 'not_found');
		assert.match(result.error!.message, /^echo_input cannot run: ".toolbelt\/tools\/echo.sh" \(.toolbelt\/tools\/echo.sh\) is not executable/);
	});

	describe('in the sandbox', function () {
		before(async function () {
			needsSandbox(this, await sandboxAvailability());
		});

		it('runs sandboxed: it writes the workspace but not outside it', async () => {
			const outside = makeTree({}, '/var/tmp');
			try {
				workspace({}, `#!/bin/sh\necho in > inside.txt\necho out > ${outside.file('escape.txt')}\n`);
				const { registry } = await open(tree.root);
				const result = await registry.invoke('echo_input', { text: 'x' });
				assert.equal(result.error?.code, 'command_failed');
				assert.equal((result.metadata.errorDetails as { sandbox: string }).sandbox, 'bwrap');
				assert.match(result.error!.message, /Read-only file system/);
				assert.equal(fs.readFileSync(tree.file('inside.txt'), 'utf8'), 'in\n');
				assert.equal(fs.existsSync(outside.file('escape.txt')), false);
			} finally {
				outside.cleanup();
			}
		});
	});
});

describe('custom tools: JSON Schema input', () => {
	const check = (schema: object, input: unknown) => {
		const converted = toValidatingSchema(schema);
		if ('problems' in converted) throw new Error(converted.problems.map(p => `${p.field}: ${p.message}`).join('\n'));
		return validateInput(converted.schema, input).map(issue => `${issue.path}: ${issue.message}`);
	};
	const schema = {
		type: 'object',
		properties: {
			mode: { enum: ['fast', 'slow'] },
			level: { type: 'integer', minimum: 1, maximum: 3 },
			tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' }, maxItems: 2 },
			note: { type: ['string', 'null'] },
			url: { type: 'string', format: 'uri' },
			point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false },
			kind: { const: 'v1' },
		},
		required: ['mode'],
	};

	it('accepts what the schema allows, extra fields included unless additionalProperties is false', () => {
		assert.deepEqual(check(schema, { mode: 'fast', level: 2, tags: ['a'], note: null, url: 'not checked', point: { x: 1.5 }, kind: 'v1', other: true }), []);
	});

	it('names each wrong field the way built-in tools do', () => {
		assert.deepEqual(check(schema, { mode: 'quick', level: 1.5, tags: ['A', 'b', 'c'], note: 3, point: { y: 1 }, kind: 'v2' }), [
			'/mode: expected one of "fast", "slow", got the string "quick"',
			'/level: expected an integer, got number 1.5',
			'/tags: must hold at most 2 items',
			'/tags/0: expected text matching /^[a-z]+$/, got the string "A"',
			'/note: expected a string or null, got number 3',
			'/point/x: is required (a number)',
			'/point/y: is not a known field; remove it (check the spelling against the schema)',
			'/kind: expected "v1", got the string "v2"',
		]);
		assert.deepEqual(check(schema, {}), ['/mode: is required (one of "fast", "slow")']);
	});
});
