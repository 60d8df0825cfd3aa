import * as path from 'node:path';

/**
 * The path relative to a folder when the folder holds it ('' for the folder itself), else undefined.
 * By path segments (path.relative), never by string prefix, so /ws-evil is not inside /ws and a
 * name that starts with two dots (`..cache`) is inside.
 */
export function relativeTo(parent: string, child: string): string | undefined {
	const relative = path.relative(parent, child);
	// Stryker disable next-line ConditionalExpression: path.relative gives an absolute path only across Windows drives.
	if (path.isAbsolute(relative)) return undefined;
	const first = relative.split(path.sep, 1)[0];
	return first === '..' ? undefined : relative;
}

/** Whether `child` is `parent` or below it. */
export function contains(parent: string, child: string): boolean {
	return relativeTo(parent, child) !== undefined;
}

export function toPosix(relative: string): string {
	return relative.split(path.sep).join('/');
}
