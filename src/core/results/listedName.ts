/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators. */
const UNLISTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const LEFT_BY_JSON = /[\u007f-\u009f\u2028\u2029]/g;

/**
 * A file name or path as a listing shows it: as it is, or as a JSON string when it holds a line
 * break or another control character. A name is a line of a listing; unquoted, `a\nb.txt` would
 * show as two entries, and a crafted name could add lines of its own to what the model reads.
 * Quoted, it is one entry, and a model that passes it back as a JSON string gets the real name.
 */
export function listedName(name: string): string {
	if (!UNLISTABLE.test(name)) return name;
	// JSON.stringify escapes C0 controls, quotes and backslashes; DEL, C1 and the separators are valid in JSON as they are.
	return JSON.stringify(name).replace(LEFT_BY_JSON, char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
