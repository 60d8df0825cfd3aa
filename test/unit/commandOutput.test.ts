import * as assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { LogWriter, OutputSink, outputSockets, writeAll } from '../../src/core/commands/output';
import { LOG_CAP_BYTES } from '../../src/core/commands/process';
import { withDeadline } from './helpers';

const MB = 1024 * 1024;

/** `size` bytes (a multiple of 4) in which every 4-byte word holds its own index: a byte out of place shows. */
function pattern(size: number): Buffer {
	const bytes = Buffer.alloc(size);
	for (let at = 0; at < size; at += 4) bytes.writeUInt32LE(at / 4, at);
	return bytes;
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
	const deadline = Date.now() + ms;
	while (!check() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10));
	return check();
}

const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** A log writer whose writes wait until the test lets them go, one at a time or all: a stalled disk. */
function stallingWriter() {
	const held: (() => void)[] = [];
	let flowing = false;
	const writer = {
		calls: 0,
		/** Every view handed to a write. */
		views: [] as Buffer[],
		write: (async (handle, views, position) => {
			writer.calls++;
			writer.views.push(...views);
			if (!flowing) await new Promise<void>(resolve => held.push(resolve));
			await writeAll(handle, views, position);
		}) as LogWriter,
		releaseOne: () => held.shift()?.(),
		releaseAll: () => {
			flowing = true;
			for (const resume of held.splice(0)) resume();
		},
	};
	return writer;
}

/** A log writer that fails every write, as a disk that went away; counts the writes it was given. */
function failingWriter() {
	const writer = {
		calls: 0,
		write: (async () => {
			writer.calls++;
			throw new Error('EIO: i/o error, write');
		}) as LogWriter,
	};
	return writer;
}

/** The socket a sink reads, as far as the sink sees it: its events, and pause and resume counted. */
class StandInSocket extends EventEmitter {
	resumed = 0;
	pause(): void { /* the test stops reading by itself */ }
	resume(): void { this.resumed++; }
	destroy(): void { /* nothing to close */ }
}

/** The reader's two functions as a socket calls them: buffer() for where a read lands, then callback(). */
type Reads = { buffer: () => Uint8Array; callback: (length: number, into: Uint8Array) => boolean };

/**
 * Feeds `whole` to a sink's reader as a socket would, reads of at most `readBytes` each, every one
 * landing in the buffer handed out right after the one before (as Node asks for it).
 */
function socketReads(sink: OutputSink, whole: Buffer, readBytes = 100_000) {
	const { buffer, callback } = sink.reader() as Reads;
	const feed = {
		at: 0,
		next: buffer(),
		/** The memory of every buffer handed out, and the least room one had. */
		offered: new Set<ArrayBufferLike>(),
		leastRoom: Infinity,
		/** Asks for the next read's buffer again (a socket asks once a read is over; no read between). */
		askAgain: () => {
			feed.next = buffer();
			return feed.next;
		},
		/** One read; false: the sink asks to stop reading. */
		read: () => {
			const into = feed.next;
			feed.offered.add(into.buffer);
			feed.leastRoom = Math.min(feed.leastRoom, into.length);
			const length = whole.copy(into, 0, feed.at, Math.min(whole.length, feed.at + readBytes));
			feed.at += length;
			const goOn = callback(length, into);
			feed.next = buffer();
			return goOn;
		},
	};
	return feed;
}

/** The output sink on its own: backpressure from its log, a failing log, and the sockets it reads. */
describe('command output: logs that stall or fail, and socket pairs', function () {
	this.timeout(20_000);
	let dir: string;

	beforeEach(() => { dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tb-output-'))); });
	afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

	it('takes at most 8 pieces of a Node stream while its log stalls, resumes only once fewer are held, and writes the log whole', async () => {
		const writer = stallingWriter();
		const log = path.join(dir, 'stream.log');
		const sink = new OutputSink(64 * 1024, { path: log, cap: LOG_CAP_BYTES }, writer.write);
		const stream = new PassThrough();
		sink.readStream(stream);
		// Two half chunks fill the first piece, a 1 MB chunk one piece; the 8 MB one, taken whole,
		// adds eight at once.
		const sizes = [0.5, 0.5, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, 1];
		const whole = pattern(sizes.reduce((sum, size) => sum + size, 0) * MB);
		for (let at = 0, i = 0; i < sizes.length; at += sizes[i++] * MB) stream.write(whole.subarray(at, at + sizes[i] * MB));
		stream.end();
		/** Write `calls` has started, and the stream has had time to go on if it was let. */
		const settled = async (calls: number) => {
			assert.ok(await until(() => writer.calls === calls, 5_000), `write ${calls} never started`);
			await pause(50);
			return [stream.isPaused(), sink.buffer.totalBytes / MB];
		};
		// One piece being written and seven waiting: the eighth stops the stream.
		assert.deepEqual(await settled(1), [true, 8]);
		writer.releaseOne();
		// The next write takes the seven: room for one more 1 MB chunk.
		assert.deepEqual(await settled(2), [true, 9]);
		writer.releaseOne();
		// One piece being written: the 8 MB chunk comes in whole, nine held.
		assert.deepEqual(await settled(3), [true, 17]);
		writer.releaseOne();
		// The write of those eight starts with eight held: no room yet, the stream stays stopped.
		assert.deepEqual(await settled(4), [true, 17]);
		writer.releaseAll();
		await withDeadline(sink.closed, 5_000, 'the stream was never resumed');
		const capture = await sink.finish();
		assert.deepEqual([capture.logPath, capture.logCut, capture.logError, capture.buffer.totalBytes], [log, false, undefined, whole.length]);
		assert.ok(fs.readFileSync(log).equals(whole), 'the log is the stream to the byte');
	});

	it('asks a socket to stop once 8 pieces of a stalled log are held, resumes it when one is written, and writes the log whole', async () => {
		// Reads that leave a piece too little room (1 MB is not a multiple of 100,000), and reads
		// that fill pieces exactly.
		for (const readBytes of [100_000, 256 * 1024]) {
			const label = `reads of ${readBytes} bytes`;
			const writer = stallingWriter();
			const log = path.join(dir, `socket-${readBytes}.log`);
			const sink = new OutputSink(64 * 1024, { path: log, cap: LOG_CAP_BYTES }, writer.write);
			const socket = new StandInSocket();
			sink.readSocket(socket as unknown as net.Socket);
			const whole = pattern(12 * MB);
			const feed = socketReads(sink, whole, readBytes);
			while (feed.at < whole.length && feed.read());
			assert.ok(feed.at > 7 * MB && feed.at <= 8 * MB, `${label}: asked to stop after ${feed.at} bytes`);
			assert.ok(await until(() => writer.calls === 1, 5_000), `${label}: the first write never started`);
			assert.equal(socket.resumed, 0, `${label}: resumed while every piece was still held`);
			writer.releaseOne();
			assert.ok(await until(() => socket.resumed === 1, 5_000), `${label}: not resumed once a piece was written`);
			writer.releaseAll();
			while (feed.at < whole.length) {
				const resumed = socket.resumed;
				if (!feed.read()) assert.ok(await until(() => socket.resumed > resumed, 5_000), `${label}: never resumed`);
			}
			socket.emit('end');
			await withDeadline(sink.closed, 5_000, `${label}: the end was not seen`);
			const capture = await sink.finish();
			assert.deepEqual([capture.logPath, capture.logCut, capture.logError, capture.buffer.totalBytes], [log, false, undefined, whole.length], label);
			assert.ok(fs.readFileSync(log).equals(whole), `${label}: the log is the stream to the byte`);
			// The reads landed straight in the log's pieces (nothing was copied), always with 64 KB of
			// room or more, and a written piece was used again: 8 held and 1 being filled at most.
			assert.ok(writer.views.every(view => feed.offered.has(view.buffer)), `${label}: a piece written was not one a read landed in`);
			assert.ok(feed.leastRoom >= 64 * 1024, `${label}: a read was offered ${feed.leastRoom} bytes`);
			assert.ok(feed.offered.size <= 9, `${label}: ${feed.offered.size} pieces for 12 MB`);
		}
	});

	it('ends a log on a piece\'s end with no empty write after it', async () => {
		const whole = pattern(MB);
		const log = path.join(dir, 'exact.log');
		const sink = new OutputSink(64 * 1024, { path: log, cap: LOG_CAP_BYTES });
		const feed = socketReads(sink, whole, 256 * 1024);
		while (feed.at < whole.length) feed.read();
		// The full piece is written before the stream ends; the buffer handed out after the last
		// read, a fresh piece, stays empty.
		assert.ok(await until(() => fs.existsSync(log) && fs.statSync(log).size === whole.length, 5_000), 'the piece was never written');
		const capture = await sink.finish();
		assert.deepEqual([capture.logPath, capture.logError], [log, undefined]);
		assert.ok(fs.readFileSync(log).equals(whole));
	});

	it('offers a socket one reused buffer once nothing more goes to a log: past its cap, with no log, or one that cannot be opened', async () => {
		const whole = pattern(4 * MB);
		const cap = 2.5 * MB;
		const log = path.join(dir, 'capped.log');
		const capped = new OutputSink(64 * 1024, { path: log, cap });
		const feed = socketReads(capped, whole);
		const pastCap = new Set<Uint8Array>();
		while (feed.at < whole.length) {
			if (feed.at >= cap) pastCap.add(feed.next);
			feed.read();
		}
		const capture = await capped.finish();
		assert.deepEqual([capture.logPath, capture.logCut, capture.buffer.totalBytes], [log, true, whole.length]);
		assert.ok(fs.readFileSync(log).equals(whole.subarray(0, cap)), 'the log is the output up to its cap');
		assert.equal(pastCap.size, 1, 'past the cap, reads land in one reused buffer');
		const unlogged = socketReads(new OutputSink(64 * 1024, undefined), whole);
		const offered = new Set<Uint8Array>();
		while (unlogged.at < whole.length) {
			offered.add(unlogged.next);
			unlogged.read();
		}
		assert.equal(offered.size, 1, 'with no log, reads land in one reused buffer');
		// The first read opens the log, in a folder that does not exist: known before the piece is full.
		const unopened = new OutputSink(64 * 1024, { path: path.join(dir, 'missing', 'x.log'), cap: LOG_CAP_BYTES });
		const failed = socketReads(unopened, whole);
		failed.read();
		const piece = failed.next.buffer;
		assert.ok(await until(() => failed.askAgain().buffer !== piece, 5_000), 'the failed open was not noticed before the piece was full');
		const afterFailure = new Set<Uint8Array>();
		while (failed.at < whole.length) {
			afterFailure.add(failed.next);
			failed.read();
		}
		assert.equal(afterFailure.size, 1, 'once the log cannot be opened, reads land in one reused buffer');
		const failure = await unopened.finish();
		assert.deepEqual([failure.logPath, failure.buffer.totalBytes], [undefined, whole.length]);
		assert.match(failure.logError ?? '', /^ENOENT/);
	});

	it('lets go of a sink that never read anything (its command did not start), and reports nothing for it', async () => {
		const sink = new OutputSink(1024, { path: path.join(dir, 'never.log'), cap: LOG_CAP_BYTES });
		assert.doesNotThrow(() => sink.release());
		const capture = await sink.finish();
		assert.deepEqual(
			[capture.buffer.totalBytes, capture.binary, capture.logPath, capture.logCut, capture.logError],
			[0, false, undefined, false, undefined],
		);
		assert.deepEqual(fs.readdirSync(dir), [], 'no log file for no output');
	});

	it('settles `closed` for a stream let go of or failing, whatever it printed before', async () => {
		const released = new OutputSink(1024, undefined);
		const kept = new PassThrough();
		released.readStream(kept);
		kept.write('before ');
		released.release();
		await withDeadline(released.closed, 2_000, 'a stream let go of was never seen closed');
		// A read error on a child's output: no uncaught error, the stream is over.
		const failing = new OutputSink(1024, undefined);
		const broken = new PassThrough();
		failing.readStream(broken);
		broken.write('partial');
		await pause(20);
		broken.destroy(new Error('read EIO'));
		await withDeadline(failing.closed, 2_000, 'a stream that failed was never seen closed');
		assert.equal((await failing.finish()).buffer.toText().text, 'partial');
	});

	it('writes nothing more to a log once a write failed, from a socket or a Node stream, and the buffer keeps every byte', async () => {
		const whole = pattern(4 * MB);
		// A socket: the first piece is sent off and its write fails while the next read's buffer,
		// handed out before the failure, is still waiting for its read.
		const viaSocket = failingWriter();
		const socketSink = new OutputSink(64 * 1024, { path: path.join(dir, 'socket.log'), cap: LOG_CAP_BYTES }, viaSocket.write);
		const feed = socketReads(socketSink, whole);
		while (feed.at < 1.5 * MB) feed.read();
		assert.ok(await until(() => viaSocket.calls === 1, 5_000), 'the first write never started');
		await pause(20);
		while (feed.at < whole.length) feed.read();
		// A Node stream: two pieces in one chunk, the second waiting behind the write that fails.
		const viaStream = failingWriter();
		const streamSink = new OutputSink(64 * 1024, { path: path.join(dir, 'stream.log'), cap: LOG_CAP_BYTES }, viaStream.write);
		const stream = new PassThrough();
		streamSink.readStream(stream);
		stream.write(whole.subarray(0, 2 * MB));
		assert.ok(await until(() => viaStream.calls === 1, 5_000), 'the first write never started');
		await pause(20);
		stream.end(whole.subarray(2 * MB));
		await withDeadline(streamSink.closed, 5_000, 'the stream was not read to its end');
		for (const [sink, writer] of [[socketSink, viaSocket], [streamSink, viaStream]] as const) {
			const capture = await sink.finish();
			assert.deepEqual([capture.logPath, capture.logError, capture.buffer.totalBytes], [undefined, 'EIO: i/o error, write', whole.length]);
			assert.equal(writer.calls, 1, 'written to after it failed');
		}
	});

	// Where written bytes reach the server only as the file is closed (NFS, FUSE), a close is a write
	// that can fail: the log is then not whole, and the command's result must not point to it.
	it('says the log could not be written when closing it fails, after every write succeeded', async () => {
		let closeForReal: (() => Promise<void>) | undefined;
		const writeThenFailClose: LogWriter = async (handle, views, position) => {
			await writeAll(handle, views, position);
			if (closeForReal) return;
			closeForReal = handle.close.bind(handle);
			handle.close = async () => { throw new Error('EIO: i/o error, close'); };
		};
		const log = path.join(dir, 'closing.log');
		const sink = new OutputSink(64 * 1024, { path: log, cap: LOG_CAP_BYTES }, writeThenFailClose);
		const stream = new PassThrough();
		sink.readStream(stream);
		stream.end('every byte\n');
		await withDeadline(sink.closed, 5_000, 'the stream was not read to its end');
		try {
			const capture = await sink.finish();
			assert.deepEqual([capture.logPath, capture.logError, capture.buffer.totalBytes], [undefined, 'EIO: i/o error, close', 11]);
			assert.equal(fs.readFileSync(log, 'utf8'), 'every byte\n', 'what was written is still there');
		} finally {
			await closeForReal?.();
		}
	});

	it('writes a log\'s pieces whole through writes that take only part of them, and fails on a write that takes nothing', async () => {
		const file = path.join(dir, 'short.log');
		fs.writeFileSync(file, 'head:');
		const handle = await fs.promises.open(file, 'r+');
		try {
			const taken: number[] = [];
			// A disk may take less than it is given: here at most 5 bytes a write.
			const short = {
				fd: handle.fd,
				writev: (views: Buffer[], position: number) => {
					const bytes = Buffer.concat(views).subarray(0, 5);
					taken.push(bytes.length);
					return handle.writev([bytes], position);
				},
			} as unknown as fs.promises.FileHandle;
			await writeAll(short, ['abc', '', 'defgh', 'ij', 'klmnopq'].map(text => Buffer.from(text)), 5);
			assert.equal(fs.readFileSync(file, 'utf8'), 'head:abcdefghijklmnopq');
			assert.deepEqual(taken, [5, 5, 5, 2]);
			const full = {
				fd: 99,
				writev: async () => {
					await new Promise(resolve => setImmediate(resolve));
					return { bytesWritten: 0, buffers: [] };
				},
			} as unknown as fs.promises.FileHandle;
			const writing = withDeadline(writeAll(full, [Buffer.from('x')], 0), 2_000, 'a write that took nothing was tried again and again');
			await assert.rejects(writing, /^Error: the log 99 took no bytes$/);
		} finally {
			await handle.close();
		}
	});

	it('hands out every socket pair connected at both ends, with no listener of its own left on it', async function () {
		if (process.platform === 'win32') this.skip();
		const pairs = await outputSockets(Array.from({ length: 20 }, () => new OutputSink(1024, undefined).reader()));
		try {
			assert.equal(pairs?.length, 20);
			for (const { ours, theirs } of pairs!) {
				assert.ok(theirs instanceof net.Socket, 'the accepted end is there');
				assert.deepEqual([ours.connecting, ours.readyState, theirs.readyState], [false, 'open', 'open']);
				assert.equal(ours.listenerCount('error'), 0);
			}
		} finally {
			for (const { ours, theirs } of pairs ?? []) {
				ours.destroy();
				theirs.destroy();
			}
		}
	});

	it('gives up cleanly when a socket cannot connect: no socket, open file or temp folder left', async function () {
		if (process.platform !== 'linux') this.skip();
		const temp = path.join(dir, 'tmp');
		fs.mkdirSync(temp);
		const readers = Array.from({ length: 3 }, () => new OutputSink(1024, undefined).reader());
		// The second reader is looked up once the first pair is made: the listening socket's file
		// (<TMPDIR>/toolbelt-out-XXXXXX/s) disappears then, and the next connection finds nothing.
		const second = readers[1];
		Object.defineProperty(readers, 1, {
			get: () => {
				for (const folder of fs.readdirSync(temp)) fs.rmSync(path.join(temp, folder, 's'));
				return second;
			},
		});
		const openFiles = () => fs.readdirSync('/proc/self/fd').length;
		const before = openFiles();
		const tmpdir = process.env.TMPDIR;
		process.env.TMPDIR = temp;
		let made: Awaited<ReturnType<typeof outputSockets>>;
		try {
			made = await withDeadline(outputSockets(readers), 5_000, 'outputSockets did not return');
		} finally {
			if (tmpdir === undefined) delete process.env.TMPDIR;
			else process.env.TMPDIR = tmpdir;
		}
		assert.equal(made, undefined);
		assert.deepEqual(fs.readdirSync(temp), [], 'the private folder is removed');
		// Another test's files may still be closing: fewer is fine.
		assert.ok(await until(() => openFiles() <= before, 2_000), `${openFiles() - before} more open than before`);
	});
});
