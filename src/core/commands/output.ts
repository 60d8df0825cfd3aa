import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { looksBinary } from '../files/files';
import { HeadTailBuffer } from '../results/truncate';

/**
 * A command's output on its way into the result (a bounded head/tail buffer) and its log file.
 *
 * Where the platform allows (not Windows), each stream is a Unix socket read into buffers of our
 * choosing (net.Socket's `onread`): straight into the log's piece being filled, or one reused
 * buffer when nothing goes to a log. Node's own pipes hand over every read as a freshly allocated
 * buffer, and for a command printing 100 MB that allocation (and the garbage it leaves) cost more
 * than the command itself. The log is written in large pieces, one write at a time and a bounded
 * number held: a command printing faster than the disk takes it waits, costing no more memory.
 */

/** The buffer a socket is read into when its bytes go to no log (none, past its cap, or failed). */
const READ_BYTES = 256 * 1024;
/** The log is written in pieces this large (fewer, larger writes than one per read)... */
const LOG_PIECE_BYTES = 1024 * 1024;
/**
 * ...and at most this many are held, filled and waiting or being written; past that the stream
 * stops being read. More than one or two: a busy machine is slow to run the writes, and a stream
 * stopped for each would wait as long again (100 MB of output: 2.4 -> 1.8 s under load).
 */
const LOG_PIECES_HELD = 8;
/** A piece with less room than this left goes to the log as it is: reads land in a fresh one. */
const MIN_SPACE_BYTES = 64 * 1024;
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
	/** The stream's first bytes, which decide whether it is binary. */
	private readonly head = Buffer.alloc(SNIFF_BYTES);
	private headLength = 0;
	private readonly log: CommandLog | undefined;
	private source: Source | undefined;

	/** `writeLog` writes the log's pieces (a test passes a slow or failing one). */
	constructor(maxBytes: number, logFile: LogFile | undefined, writeLog: LogWriter = writeAll) {
		this.buffer = new HeadTailBuffer(maxBytes, 0.25);
		this.closed = new Promise(resolve => { this.markClosed = resolve; });
		this.log = logFile && new CommandLog(logFile, writeLog, () => this.source?.resume());
	}

	/**
	 * What a socket of outputSockets reads with: each read lands straight in the log's piece being
	 * filled (CommandLog.space), or, with no log to write, in one buffer reused for every read.
	 */
	reader(): net.OnReadOpts {
		let reused: Buffer | undefined;
		return {
			buffer: () => this.log?.space() ?? (reused ??= Buffer.allocUnsafe(READ_BYTES)),
			callback: (length, buffer) => this.take(buffer.subarray(0, length), buffer !== reused),
		};
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

	/**
	 * Bytes that arrived (valid only during the call), `inLog` when they landed in the log's space.
	 * False: stop reading until the log catches up.
	 */
	private take(bytes: Uint8Array, inLog = false): boolean {
		this.buffer.push(bytes);
		// Copies only what fits: nothing once the head is full.
		this.headLength += Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).copy(this.head, this.headLength);
		if (!this.log) return true;
		return inLog ? this.log.landed(bytes.length) : this.log.append(bytes);
	}

	/** Once the stream is over (or let go): the log written out and closed. */
	async finish(): Promise<StreamCapture> {
		const log = await this.log?.finish();
		return {
			buffer: this.buffer,
			binary: looksBinary(this.head.subarray(0, this.headLength)),
			logPath: log?.path,
			logCut: log ? log.cut : false,
			logError: log?.error,
		};
	}

	/** Stops reading: a background process may hold the stream open for hours. */
	release(): void {
		this.source?.destroy();
	}
}

/**
 * A stream's log file: bytes are gathered into LOG_PIECE_BYTES pieces; full pieces queue up and go
 * out one write at a time, every piece waiting in one writev (so a stream takes at most one thread
 * of libuv's pool, as a WriteStream does). append() says false once LOG_PIECES_HELD pieces are
 * queued or being written, and `onRoom` is called when fewer are. Nothing past the cap is kept. The
 * file is created on the first append.
 */
class CommandLog {
	private file: Promise<fs.promises.FileHandle> | undefined;
	private piece: Buffer | undefined;
	private filled = 0;
	private readonly spare: Buffer[] = [];
	/** Full pieces waiting for the write in progress to end. */
	private waiting: Piece[] = [];
	/** The write in progress: settles when it is over (after starting the next, if any). */
	private writing: { readonly over: Promise<void>; readonly pieces: number } | undefined;
	/** Bytes taken into the log so far (≤ cap). */
	private kept = 0;
	/** Bytes handed to writes so far: where the next write goes. */
	private written = 0;
	private cut = false;
	private error: string | undefined;

	constructor(private readonly target: LogFile, private readonly write: LogWriter, private readonly onRoom: () => void) {}

	/**
	 * Where the next read may land to be logged without a copy: the free end of the piece being
	 * filled (a new piece when too little is left). Undefined once nothing more goes to the log.
	 */
	space(): Buffer | undefined {
		if (this.error !== undefined || this.kept >= this.target.cap) return undefined;
		if (this.piece && this.piece.length - this.filled < MIN_SPACE_BYTES) this.queuePiece();
		this.piece ??= this.spare.pop() ?? Buffer.allocUnsafe(LOG_PIECE_BYTES);
		return this.piece.subarray(this.filled);
	}

	/** `length` bytes a read put into space(); what passes the cap is not kept. As append() otherwise. */
	landed(length: number): boolean {
		// A socket asks for its next buffer right after a read, and the read lands there later: the
		// log may have failed in between, dropping its pieces (and no piece comes after a failure).
		if (!this.piece) return true;
		this.openFile();
		this.filled += this.keep(length);
		if (this.filled === this.piece.length) this.queuePiece();
		return this.held() < LOG_PIECES_HELD;
	}

	append(bytes: Uint8Array): boolean {
		if (this.error !== undefined) return true;
		this.openFile();
		let rest = bytes.subarray(0, this.keep(bytes.length));
		while (rest.length > 0) {
			this.piece ??= this.spare.pop() ?? Buffer.allocUnsafe(LOG_PIECE_BYTES);
			const taken = Math.min(rest.length, this.piece.length - this.filled);
			this.piece.set(rest.subarray(0, taken), this.filled);
			this.filled += taken;
			rest = rest.subarray(taken);
			if (this.filled === this.piece.length) this.queuePiece();
		}
		return this.held() < LOG_PIECES_HELD;
	}

	/** How many of `length` new bytes the log keeps: those up to the cap (past it, the log is cut). */
	private keep(length: number): number {
		const taken = Math.min(length, this.target.cap - this.kept);
		if (taken < length) this.cut = true;
		this.kept += taken;
		return taken;
	}

	private openFile(): void {
		if (this.file) return;
		this.file = fs.promises.open(this.target.path, 'w', 0o600);
		// Known at once, so the stream stops being copied for a log that cannot be.
		this.file.catch((error: Error) => this.fail(error));
	}

	private held(): number {
		return this.waiting.length + (this.writing?.pieces ?? 0);
	}

	/** The piece being filled joins the queue, and is written at once when no write is in progress. */
	private queuePiece(): void {
		if (!this.piece || this.filled === 0) return;
		this.waiting.push({ bytes: this.piece, length: this.filled });
		this.piece = undefined;
		this.filled = 0;
		if (!this.writing) this.writeWaiting();
	}

	private writeWaiting(): void {
		const pieces = this.waiting;
		this.waiting = [];
		const position = this.written;
		const views = pieces.map(piece => piece.bytes.subarray(0, piece.length));
		this.written += pieces.reduce((sum, piece) => sum + piece.length, 0);
		const over = this.file!
			.then(handle => this.write(handle, views, position))
			.then(() => { this.spare.push(...pieces.map(piece => piece.bytes)); }, (error: Error) => this.fail(error))
			.then(() => {
				this.writing = undefined;
				if (this.waiting.length > 0) this.writeWaiting();
				// Resuming a stream that is being read changes nothing.
				if (this.held() < LOG_PIECES_HELD) this.onRoom();
			});
		this.writing = { over, pieces: pieces.length };
	}

	private fail(error: Error): void {
		// The first failure is the one that explains; the buffers still see everything from here on.
		// A stream stopped for the log is resumed by the write in progress as it ends (it fails too).
		this.error ??= error.message;
		this.piece = undefined;
		this.waiting = [];
		this.spare.length = 0;
	}

	async finish(): Promise<{ path?: string; cut: boolean; error?: string }> {
		if (this.file === undefined) return { cut: this.cut };
		this.queuePiece();
		while (this.writing) await this.writing.over;
		// An open that failed was recorded as it did (openFile).
		const handle = await this.file.catch(() => undefined);
		if (handle) await handle.close().catch((error: Error) => this.fail(error));
		return this.error === undefined ? { path: this.target.path, cut: this.cut } : { cut: this.cut, error: this.error };
	}
}

/** A full (or last) piece of a log: its buffer and how much of it is filled. */
interface Piece {
	readonly bytes: Buffer;
	readonly length: number;
}

/** Writes a log's pieces (`views`, one after another) from `position` in its file. */
export type LogWriter = (handle: fs.promises.FileHandle, views: Buffer[], position: number) => Promise<void>;

/** Writes `views` one after another from `position`, however many calls that takes. */
export async function writeAll(handle: fs.promises.FileHandle, views: Buffer[], position: number): Promise<void> {
	for (let rest = views; rest.length > 0;) {
		const { bytesWritten } = await handle.writev(rest, position);
		if (bytesWritten === 0) throw new Error(`the log ${handle.fd} took no bytes`);
		position += bytesWritten;
		rest = after(rest, bytesWritten);
	}
}

/** What is left of `views` once their first `count` bytes are written. */
function after(views: Buffer[], count: number): Buffer[] {
	const left: Buffer[] = [];
	for (const view of views) {
		if (count >= view.length) count -= view.length;
		else {
			left.push(view.subarray(count));
			count = 0;
		}
	}
	return left;
}

/** A connected pair of Unix stream sockets: the command writes into `theirs`, we read `ours`. */
export interface OutputSocket {
	readonly ours: net.Socket;
	readonly theirs: net.Socket;
}

/** The longest path a Unix socket may have everywhere (the limit is 103 bytes on macOS, 107 on Linux). */
const MAX_SOCKET_PATH_BYTES = 103;

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
