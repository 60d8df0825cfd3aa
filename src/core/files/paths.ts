import * as path from 'node:path';

/**
 * A path tail holding something path.relative would resolve away: an empty segment (`//`, a
 * trailing slash), `.` or `..`.
 */
const UNRESOLVED = /(?:^|\/)\.{0,2}(?:\/|$)/;

/** A POSIX absolute path already in the form path.resolve gives (the root itself aside). */
function isResolvedPosix(absolute: string): boolean {
	return path.sep === '/' && absolute.charCodeAt(0) === 0x2f && !UNRESOLVED.test(absolute.slice(1));
}

/**
 * The path relative to a folder when the folder holds it ('' for the folder itself), else undefined.
 * By path segments (path.relative), never by string prefix, so /ws-evil is not inside /ws and a
 * name that starts with two dots (`..cache`) is inside.
 */
export function relativeTo(parent: string, child: string): string | undefined {
	// Both already resolved (the usual case: the boundary's own paths): a segment boundary after the
	// folder's whole path is what path.relative would find, without resolving both paths again.
	if (isResolvedPosix(parent) && isResolvedPosix(child)) {
		if (child === parent) return '';
		return child.charCodeAt(parent.length) === 0x2f && child.startsWith(parent) ? child.slice(parent.length + 1) : undefined;
	}
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
	// Stryker disable next-line all: path.sep is '/' on POSIX, where the other branch never runs.
	return path.sep === '/' ? relative : relative.split(path.sep).join('/');
}
