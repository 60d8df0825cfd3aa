/**
 * Where a grep result's matches are, so its editor can mark them: the result lists matching lines
 * (`path:12: text`) but not where on the line the pattern matched. Pure: text in, ranges out.
 */

/** `src/a.ts:12: ` — a matching line's prefix (context lines are `src/a.ts-12- `). */
const MATCH_PREFIX = /^[^\t\n]*?:\d+: /;

/**
 * The search of a grep call as a JavaScript regex, or undefined when there is none or it is not
 * one JavaScript can read (ripgrep's syntax is close but not the same: then nothing is marked).
 */
export function grepMatcher(input: unknown): RegExp | undefined {
	const { pattern, fixedStrings, ignoreCase } = (input ?? {}) as { pattern?: unknown; fixedStrings?: unknown; ignoreCase?: unknown };
	if (typeof pattern !== 'string' || pattern === '') return undefined;
	const source = fixedStrings === true ? pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : pattern;
	try {
		return new RegExp(source, `g${ignoreCase === true ? 'i' : ''}`);
	} catch {
		return undefined;
	}
}

/** The spans `[start, end)` of a matching line (its text after the `path:N: ` prefix) that the matcher finds. */
export function matchSpans(line: string, matcher: RegExp): [number, number][] {
	const prefix = MATCH_PREFIX.exec(line);
	if (!prefix) return [];
	const spans: [number, number][] = [];
	const text = line.slice(prefix[0].length);
	matcher.lastIndex = 0;
	for (let match = matcher.exec(text); match; match = matcher.exec(text)) {
		if (match[0] === '') {
			// An empty match marks nothing and must not stop the scan.
			matcher.lastIndex++;
			continue;
		}
		spans.push([prefix[0].length + match.index, prefix[0].length + match.index + match[0].length]);
	}
	return spans;
}
