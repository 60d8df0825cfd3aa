/**
 * Whether a process with this pid exists (this one included). EPERM means it exists but belongs to
 * someone else. Kept apart from atomic.ts so the unit tests' root hook can use it without loading a
 * mutation-tested module before the tests (its constants would then escape Stryker's mutants).
 */
export function isProcessAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === 'EPERM';
	}
}
