import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { looksBinary } from '../files/files';
import { HeadTailBuffer } from '../results/truncate';

/**
 * A command's output on its way into the result (a bounded head/tail buffer) and its log file.
 *
 * Where the platform allows (not Windows), each stream is a Unix socket we read with one reused
 * buffer (net.Socket's `onread`): Node's own pipes hand over every read as a freshly allocated
 * buffer, and for a command printing 100 MB that allocation (and the garbage it leaves) cost more
 * than the command itself. The log is written in large pieces at known offsets, a bounded number at
 * a time: a command printing faster than the disk takes it waits, costing no memory.
 */

/** The most one read brings: the size of the buffer each socket is read into. */
const READ_BYTES = 256 * 1024;
/** The log is written in pieces this large (fewer, larger writes than one per read)... */
const LOG_PIECE_BYTES = 1024 * 1024;
/** ...and at most this many are being written at once; past that the stream stops being read. */
const LOG_PIECES_IN_FLIGHT = 2;
/** How much of the start of a stream decides whether it is binary. */
const SNIFF_BYTES = 8192;

export interface StreamCapture {
	readonly buffer: HeadTailBuffer;
	/** NUL bytes or many control characters in the first 8 KB. */
	readonly binary: boolean;
	/** The log holding the whole stream; undefined when nothing was printed or no logDir. */
	readonly logPath?: string;
	/** The log stopped at its cap (see RunOptions.logCapBytes). */
	readonly logCut: boolean;
	/** Writing the log failed (disk full, …): the buffer still holds the head and tail. */
	readonly logError?: string;
}

/** Where a stream's log goes and where it stops growing. */
export interface LogFile {
	readonly path: string;
	readonly cap: number;
}

/** What an OutputSink reads from: a socket from outputSockets, or a Node stream. */
type Source = Pick<NodeJS.ReadableStream, 'pause' | 'resume'> & { destroy(): void };

/** One output stream: bounded buffer, binary sniffing, log file with backpressure. */
export class OutputSink {
	readonly buffer: HeadTailBuffer;
	/** Settles when the stream has ended or closed. */
	readonly closed: Promise<void>;
	private markClosed!: () => void;
	private sniffed = Buffer.alloc(0);
	private binary: boolean | undefined;
	private readonly log: CommandLog | undefined;
	private source: Source | undefined;

	constructor(maxBytes: number, logFile: LogFile | undefined) {
		this.buffer = new HeadTailBuffer(maxBytes, 0.25);
		this.closed = new Promise(resolve => { this.markClosed = resolve; });
		this.log = logFile && new CommandLog(logFile, () => this.source?.resume());
	}

	/** What a socket of outputSockets reads with: one buffer for every read, handed to take(). */
	reader(): net.OnReadOpts {
		return { buffer: Buffer.allocUnsafe(READ_BYTES), callback: (length, buffer) => this.take(buffer.subarray(0, length)) };
	}

	/** Reads a socket made with reader(). */
	readSocket(socket: net.Socket): void {
		this.follow(socket);
	}

	/** Reads a Node stream's chunks (where no socket could be made). */
	readStream(stream: NodeJS.ReadableStream & { destroy(): void }): void {
		this.follow(stream);
		stream.on('data', (chunk: Buffer) => {
			if (!this.take(chunk)) stream.pause();
		});
	}

	private follow(source: Source & NodeJS.EventEmitter): void {
		this.source = source;
		source.once('close', this.markClosed);
		source.once('end', this.markClosed);
		source.on('error', () => undefined);
	}

	/** Bytes that arrived (valid only during the call). False: stop reading until the log catches up. */
	private take(bytes: Uint8Array): boolean {
		this.buffer.push(bytes);
		if (this.binary === undefined) this.sniff(bytes);
		return this.log ? this.log.append(bytes) : true;
	}

	private sniff(chunk: Uint8Array): void {
		this.sniffed = Buffer.concat([this.sniffed, chunk.subarray(0, SNIFF_BYTES - this.sniffed.length)]);
		if (this.sniffed.length >= SNIFF_BYTES) this.binary = looksBinary(this.sniffed);
	}

	/** Once the stream is over (or let go): the log written out and closed. */
	async finish(): Promise<StreamCapture> {
		const log = await this.log?.finish();
		return {
			buffer: this.buffer,
			binary: this.binary ?? looksBinary(this.sniffed),
			logPath: log?.path,
			logCut: log?.cut ?? false,
			logError: log?.error,
		};
	}

	/** Stops reading: a background process may hold the stream open for hours. */
	release(): void {
		this.source?.destroy();
	}
}

/**
 * A stream's log file: bytes are gathered into LOG_PIECE_BYTES pieces, each written at its offset
 * once full. append() says false while LOG_PIECES_IN_FLIGHT pieces are being written; `onRoom` is
 * called when one is done. Nothing past the cap is kept. The file is created on the first append.
 */
class CommandLog {
	private file: Promise<fs.promises.FileHandle> | undefined;
	private piece: Buffer | undefined;
	private filled = 0;
	private readonly spare: Buffer[] = [];
	private readonly writes = new Set<Promise<void>>();
	/** Bytes taken into the log so far (≤ cap), and so the offset of the next piece's end. */
	private kept = 0;
	private written = 0;
	private cut = false;
	private error: string | undefined;

	constructor(private readonly target: LogFile, private readonly onRoom: () => void) {}

	append(bytes: Uint8Array): boolean {
		if (this.error !== undefined) return true;
		if (!this.file) {
			this.file = fs.promises.open(this.target.path, 'w', 0o600);
			// Known at once, so the stream stops being copied for a log that cannot be.
			this.file.catch((error: Error) => this.fail(error));
		}
		const room = this.target.cap - this.kept;
		if (bytes.length > room) this.cut = true;
		let rest = bytes.subarray(0, Math.max(0, room));
		this.kept += rest.length;
		while (rest.length > 0) {
			this.piece ??= this.spare.pop() ?? Buffer.allocUnsafe(LOG_PIECE_BYTES);
			const taken = Math.min(rest.length, this.piece.length - this.filled);
			this.piece.set(rest.subarray(0, taken), this.filled);
			this.filled += taken;
			rest = rest.subarray(taken);
			if (this.filled === this.piece.length) this.writePiece();
		}
		return this.writes.size < LOG_PIECES_IN_FLIGHT;
	}

	private writePiece(): void {
		const piece = this.piece;
		const length = this.filled;
		if (!piece || length === 0) return;
		this.piece = undefined;
		this.filled = 0;
		const position = this.written;
		this.written += length;
		const write = this.file!
			.then(handle => writeAll(handle, piece.subarray(0, length), position))
			.then(() => { this.spare.push(piece); }, (error: Error) => this.fail(error))
			.finally(() => {
				this.writes.delete(write);
				if (this.writes.size === LOG_PIECES_IN_FLIGHT - 1) this.onRoom();
			});
		this.writes.add(write);
	}

	private fail(error: Error): void {
		// The first failure is the one that explains; the buffers still see everything from here on.
		this.error ??= error.message;
		this.piece = undefined;
		this.spare.length = 0;
		this.onRoom();
	}

	async finish(): Promise<{ path?: string; cut: boolean; error?: string }> {
		if (this.file === undefined) return { cut: this.cut };
		this.writePiece();
		while (this.writes.size > 0) await Promise.all(this.writes);
		const handle = await this.file.catch((error: Error) => this.fail(error));
		if (handle) await handle.close().catch((error: Error) => this.fail(error));
		return this.error === undefined ? { path: this.target.path, cut: this.cut } : { cut: this.cut, error: this.error };
	}
}

async function writeAll(handle: fs.promises.FileHandle, bytes: Buffer, position: number): Promise<void> {
	for (let done = 0; done < bytes.length;) {
		const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
		if (bytesWritten === 0) throw new Error(`nothing could be written to ${handle.fd}`);
		done += bytesWritten;
	}
}

/** The longest path a Unix socket may have everywhere (the limit is 103 bytes on macOS, 107 on Linux). */
const MAX_SOCKET_PATH_BYTES = 103;

/** A connected pair of Unix stream sockets: the command writes into `theirs`, we read `ours`. */
export interface OutputSocket {
	readonly ours: net.Socket;
	readonly theirs: net.Socket;
}

/**
 * One socket pair per reader (from OutputSink.reader), `ours` reading with it. Node has no
 * socketpair(), so each pair is a connection to a listening socket in a fresh private folder, made
 * one after another (each accepted connection is the one just made) and removed at once. `theirs`
 * is accepted paused: we never read it, it is only handed to the command (then closed here).
 * Undefined on Windows or where the sockets cannot be made: the caller uses Node's pipes then.
 */
export async function outputSockets(readers: readonly net.OnReadOpts[]): Promise<OutputSocket[] | undefined> {
	if (process.platform === 'win32') return undefined;
	const made: OutputSocket[] = [];
	const server = net.createServer({ pauseOnConnect: true });
	let dir: string | undefined;
	try {
		dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'toolbelt-out-'));
		const address = path.join(dir, 's');
		// libuv cuts a longer path short without a word, which would put the socket elsewhere.
		if (Buffer.byteLength(address) > MAX_SOCKET_PATH_BYTES) return undefined;
		await new Promise<void>((resolve, reject) => {
			server.once('error', reject);
			server.listen(address, () => resolve());
		});
		for (const onread of readers) made.push(await connectPair(server, address, onread));
		return made;
	} catch {
		for (const pair of made) {
			pair.ours.destroy();
			pair.theirs.destroy();
		}
		return undefined;
	} finally {
		server.close();
		if (dir !== undefined) await fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined);
	}
}

function connectPair(server: net.Server, address: string, onread: net.OnReadOpts): Promise<OutputSocket> {
	return new Promise((resolve, reject) => {
		let theirs: net.Socket | undefined;
		let connected = false;
		const settle = () => {
			if (theirs && connected) {
				ours.off('error', fail);
				resolve({ ours, theirs });
			}
		};
		const fail = (error: Error) => {
			server.off('connection', accept);
			ours.destroy();
			theirs?.destroy();
			reject(error);
		};
		const accept = (socket: net.Socket) => {
			theirs = socket;
			settle();
		};
		server.once('connection', accept);
		const ours = net.connect({ path: address, onread }, () => {
			connected = true;
			settle();
		});
		ours.once('error', fail);
	});
}
