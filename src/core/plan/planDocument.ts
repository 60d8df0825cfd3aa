import { Static, Type } from '@sinclair/typebox';
import type { Boundary, ResolvedPath } from '../policy/boundary';
import type { FileChange, FileVersion } from '../context';
import { fieldName, fromNodeError, ToolError } from '../results/errors';
import { compactStamp, readWhole } from '../files/files';
import { stringEnum } from '../schema/stringEnum';
import { validateInput } from '../schema/validate';
import { OpenedFile, openVerified } from '../files/verifiedOpen';
import { readBounded } from '../files/fileSystem';

/**
 * The plan document (`toolbelt.planFile`, default `.toolbelt/plan.json`): an ordered list of tasks
 * the model keeps with get_plan / update_plan / complete_task and the person ticks in the Plan
 * view. Pure: reading goes through the boundary, writing is a FileChange[] the caller commits.
 */

export const TASK_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type TaskStatus = typeof TASK_STATUSES[number];

export const MAX_TASKS = 100;
export const MAX_TITLE_CHARS = 300;
export const MAX_DETAILS_CHARS = 2000;

export const taskSchema = Type.Object({
	title: Type.String({ minLength: 1, maxLength: MAX_TITLE_CHARS, description: `One short imperative line, 1–${MAX_TITLE_CHARS} characters.` }),
	status: stringEnum(TASK_STATUSES, { description: 'in_progress: the one being worked on now.' }),
	details: Type.Optional(Type.String({ maxLength: MAX_DETAILS_CHARS, description: `Notes: approach, files, what is left (at most ${MAX_DETAILS_CHARS} characters).` })),
}, { additionalProperties: false });

export type PlanTask = Static<typeof taskSchema>;

/** The file's shape. Unknown top-level fields are tolerated (a person may annotate the file). */
const planFileSchema = Type.Object({
	version: Type.Optional(Type.Literal(1)),
	updatedAt: Type.Optional(Type.String()),
	tasks: Type.Array(taskSchema, { maxItems: MAX_TASKS }),
});

export interface Plan {
	readonly tasks: readonly PlanTask[];
	readonly updatedAt?: string;
}

export const EMPTY_PLAN: Plan = { tasks: [] };

export type ParsedPlan = { readonly plan: Plan } | { readonly problem: string };

/** Reads the text of a plan file; never throws. A problem says what is wrong and where. */
export function parsePlan(text: string): ParsedPlan {
	if (text.trim() === '') return { plan: EMPTY_PLAN };
	let data: unknown;
	try {
		data = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
	} catch (error) {
		return { problem: `it is not valid JSON (${(error as Error).message})` };
	}
	if (data === null || typeof data !== 'object' || Array.isArray(data)) {
		return { problem: 'it must hold a JSON object with a "tasks" array' };
	}
	const problems = validateInput(planFileSchema, data).slice(0, 5).map(issue => `${fieldName(issue.path) || 'the file'}: ${issue.message}`);
	if (problems.length) return { problem: `it does not match the plan format (${problems.join('; ')})` };
	const file = data as Static<typeof planFileSchema>;
	return { plan: { tasks: file.tasks.map(normalTask), updatedAt: file.updatedAt } };
}

function normalTask(task: PlanTask): PlanTask {
	return task.details ? { title: task.title, status: task.status, details: task.details } : { title: task.title, status: task.status };
}

/** The bytes written for a plan: stable key order, tabs, final newline. */
export function serializePlan(plan: Plan, now = new Date()): string {
	const file = { version: 1, updatedAt: now.toISOString(), tasks: plan.tasks.map(normalTask) };
	return `${JSON.stringify(file, null, '\t')}\n`;
}

/** The plan file as it is on disk, whatever state it is in. */
export interface PlanFileState {
	readonly absolute: string;
	readonly display: string;
	readonly exists: boolean;
	/** The plan it holds; empty when the file is missing or broken. */
	readonly plan: Plan;
	/** Why the file could not be used; the next write keeps it aside and replaces it. */
	readonly problem?: string;
	/** The bytes read, for the change set and the stale-write record. */
	readonly bytes: Uint8Array | null;
	readonly version?: FileVersion;
}

/** Reads the plan file named by the setting. Only the boundary's refusals and I/O faults throw. */
export async function readPlanFile(boundary: Boundary, planFile: string | ResolvedPath, access: 'read' | 'write' = 'read'): Promise<PlanFileState> {
	// A caller that already resolved the path (to take its lock) hands it over.
	const target = typeof planFile === 'string' ? await boundary.resolve(planFile, access) : planFile;
	let bytes: Buffer;
	let version: FileVersion;
	let file: OpenedFile;
	const notRegular = { absolute: target.absolute, display: target.display, exists: true, plan: EMPTY_PLAN, bytes: null, problem: 'it is not a regular file' };
	if (!boundary.fileSystem.local) {
		const stat = await boundary.fileSystem.stat(target.absolute).catch(() => undefined);
		if (!stat) return { absolute: target.absolute, display: target.display, exists: false, plan: EMPTY_PLAN, bytes: null };
		if (!stat.isFile()) return notRegular;
		return parsedPlanFile(target, Buffer.from(await readBounded(boundary.fileSystem, target.absolute, target.display)), { mtimeMs: stat.mtimeMs, size: stat.size });
	}
	try {
		file = await openVerified(target.absolute, target.display, boundary, access);
	} catch (error) {
		if (error instanceof ToolError && error.code === 'not_found') {
			return { absolute: target.absolute, display: target.display, exists: false, plan: EMPTY_PLAN, bytes: null };
		}
		// Windows refuses to open a folder at all.
		// Stryker disable next-line all: only Windows gets here, the tests run on Linux.
		if (error instanceof ToolError && error.code === 'is_directory') return notRegular;
		throw error;
	}
	try {
		const { handle, stat } = file;
		if (!stat.isFile()) return notRegular;
		bytes = await readWhole(handle, stat.size);
		version = { mtimeMs: stat.mtimeMs, size: stat.size };
	} catch (error) {
		throw fromNodeError(error, target.display);
	} finally {
		await file.handle.close().catch(() => undefined);
	}
	return parsedPlanFile(target, bytes, version);
}

function parsedPlanFile(target: ResolvedPath, bytes: Buffer, version: FileVersion): PlanFileState {
	const parsed = parsePlan(bytes.toString('utf8'));
	const base = { absolute: target.absolute, display: target.display, exists: true, bytes, version };
	return 'plan' in parsed ? { ...base, plan: parsed.plan } : { ...base, plan: EMPTY_PLAN, problem: parsed.problem };
}

/** The name a broken plan file is kept under: `plan.json.broken-20240131-120501`. */
export function brokenCopyPath(absolute: string, now = new Date()): string {
	return `${absolute}.broken-${compactStamp(now)}`;
}

/**
 * The change set that writes a new plan. A broken file is not lost: its bytes go to a
 * `.broken-<time>` copy next to it in the same (all-or-nothing) change.
 */
export function planChanges(state: PlanFileState, plan: Plan, display: (absolute: string) => string, now = new Date()): FileChange[] {
	const after = new TextEncoder().encode(serializePlan(plan, now));
	const changes: FileChange[] = [];
	if (state.problem && state.bytes) {
		const copy = brokenCopyPath(state.absolute, now);
		changes.push({ path: copy, displayPath: display(copy), before: null, after: state.bytes });
	}
	changes.push({ path: state.absolute, displayPath: state.display, before: state.bytes, after });
	return changes;
}

/** What a broken file means to the model (and the person): what is wrong and what happens next. */
export function describeProblem(state: Pick<PlanFileState, 'display' | 'problem'>): string {
	return `The plan file ${state.display} could not be read: ${state.problem}. It is treated as an empty plan; the next update_plan replaces it and keeps the broken file as ${state.display.split('/').pop()}.broken-<time>.`;
}

export interface PlanCounts {
	readonly total: number;
	readonly completed: number;
	readonly inProgress: number;
	readonly pending: number;
}

export function countTasks(plan: Plan): PlanCounts {
	const count = (status: TaskStatus) => plan.tasks.filter(task => task.status === status).length;
	return { total: plan.tasks.length, completed: count('completed'), inProgress: count('in_progress'), pending: count('pending') };
}

export function summarize(plan: Plan): string {
	const counts = countTasks(plan);
	if (!counts.total) return 'no tasks';
	const parts = [`${counts.completed} of ${counts.total} completed`];
	if (counts.inProgress) parts.push(`${counts.inProgress} in progress`);
	return parts.join(', ');
}

const MARKS: Record<TaskStatus, string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]' };

/**
 * The plan as text. Abridged: exactly one line per task. Full: a header, then each task with its
 * details indented under it.
 */
export function renderPlan(plan: Plan, options: { abridged?: boolean; display?: string } = {}): string {
	if (!plan.tasks.length) return options.abridged ? '(no tasks)' : 'The plan is empty. Create one with update_plan.';
	const lines = plan.tasks.map((task, i) => `${i + 1}. ${MARKS[task.status]} ${oneLine(task.title)}`);
	if (options.abridged) return lines.join('\n');
	const body = plan.tasks.flatMap((task, i) => [
		lines[i],
		...(task.details ? task.details.split(/\r?\n/).map(line => `   ${line}`) : []),
	]);
	const where = options.display ? ` (${options.display})` : '';
	return [`Plan${where}: ${summarize(plan)}. Marks: [x] completed, [~] in progress, [ ] pending.`, ...body].join('\n');
}

function oneLine(text: string): string {
	return text.replace(/\s*\r?\n\s*/g, ' ').trim();
}

/** The first task not yet done, preferring the one in progress. */
export function nextTask(plan: Plan): { number: number; task: PlanTask } | undefined {
	const index = plan.tasks.findIndex(task => task.status === 'in_progress');
	const at = index >= 0 ? index : plan.tasks.findIndex(task => task.status === 'pending');
	return at >= 0 ? { number: at + 1, task: plan.tasks[at] } : undefined;
}

/** A copy of the plan with one task's status changed. */
export function withStatus(plan: Plan, taskNumber: number, status: TaskStatus): Plan {
	return { ...plan, tasks: plan.tasks.map((task, i) => (i === taskNumber - 1 ? { ...task, status } : task)) };
}
