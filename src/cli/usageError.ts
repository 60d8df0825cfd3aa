/** A mistake in the command line: told with the usage text, exit code 2. */
export class UsageError extends Error {
	override readonly name = 'UsageError';
}

/** Known by its name: each of the CLI's bundles (cliMain.js, cliWorkspace.js) has its own copy of the class. */
export function isUsageError(error: unknown): error is UsageError {
	return error instanceof Error && error.name === 'UsageError';
}
