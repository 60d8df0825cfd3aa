/** Small helpers for bytes held as Uint8Array (what file reads and changes carry). */

/** The same memory as a Buffer (no copy). */
export function asBuffer(bytes: Uint8Array): Buffer {
	return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Whether two byte arrays hold the same bytes; null (no file) equals only null. */
export function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
	if (a === null || b === null) return a === b;
	// Buffer.equals compares the lengths first.
	return asBuffer(a).equals(asBuffer(b));
}
