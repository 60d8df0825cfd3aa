import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isProcessAlive } from '../../src/core/processAlive';

/**
 * Loaded by mocha before any test file (.mocharc.json `require`): the run gets a temp folder of its
 * own, and every `os.tmpdir()` of the tests, of the code under test and of the processes they start
 * is inside it. When the run ends, the folders handed to `removeWhenTheRunEnds` are removed, and
 * anything else left there is something a test or a tool did not clean up: the run fails naming it
 * (after removing it), so a leak shows the day it is made instead of piling up in the machine's
 * /tmp. Sticky and open to all like /tmp, since some tests run tools as another user.
 */
const PREFIX = 'toolbelt-unit-';
removeFoldersOfDeadRuns(os.tmpdir());
const runRoot = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`)));
fs.chmodSync(runRoot, 0o1777);
process.env.TMPDIR = runRoot;
process.on('exit', () => fs.rmSync(runRoot, { recursive: true, force: true }));

const removedAtEnd: string[] = [];

/** A folder the tests share until the run ends (fixtures, storage folders): removed then, not counted as left behind. */
export function removeWhenTheRunEnds(dir: string): void {
	removedAtEnd.push(dir);
}

export const mochaHooks = {
	// A test that points TMPDIR elsewhere and is abandoned before it puts it back (a mutant's run cut
	// short) must not send every later test of this process, and of Stryker's later runs in it, to a
	// folder that is gone: they would all fail on ENOENT, for a bug they do not have.
	beforeEach(): void {
		process.env.TMPDIR = runRoot;
	},
	afterAll(): void {
		process.env.TMPDIR = runRoot;
		for (const dir of removedAtEnd.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
		// An empty folder holds nothing to clean up: the user's folder of default storages, say, made by tests of the CLI's defaults.
		const left = fs.readdirSync(runRoot).filter(name => !isEmptyFolder(path.join(runRoot, name)));
		// The folder itself stays until the process ends: Stryker runs mocha many times in one process.
		for (const name of left) fs.rmSync(path.join(runRoot, name), { recursive: true, force: true });
		if (left.length > 0) throw new Error(`The tests left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in the temp folder (${left.slice(0, 8).join(', ')}${left.length > 8 ? ', …' : ''}): a test does not remove what it made, or a tool leaves temp files behind.`);
	},
};

function isEmptyFolder(at: string): boolean {
	try {
		return fs.readdirSync(at).length === 0;
	} catch {
		return false;
	}
}

/** Folders of runs whose process is gone without its exit handler (Stryker stops its test processes with a signal). */
function removeFoldersOfDeadRuns(tmp: string): void {
	for (const name of fs.readdirSync(tmp)) {
		if (!name.startsWith(PREFIX)) continue;
		const pid = Number.parseInt(name.slice(PREFIX.length), 10);
		if (pid > 0 && !isProcessAlive(pid)) fs.rmSync(path.join(tmp, name), { recursive: true, force: true });
	}
}
