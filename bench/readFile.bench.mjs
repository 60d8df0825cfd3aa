// read_file on generated files (1 MB, 100 MB, and a 1 GB sparse file with text only at both
// ends) beside a naive fs.readFile + split. The point: the tail of a 1 GB file must cost what
// the tail costs, not what the file costs. Then a page deep in a 30 M-line file beside
// `tail -n +A | head -n 2000`, cold and (the line index warm) the page after it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { measure, medianOf, primitive, registrySource, repo, table } from './lib/measure.mjs';

const DEEP_LINES = 30_000_000;
const DEEP_AT = 29_990_000;
const RUNS = 5;

/** 30 M numbered lines (about 400 MB), kept in bench/.data between runs. */
function deepFile() {
	const file = path.join(repo, 'bench', '.data', '30m-lines.log');
	if (fs.existsSync(file)) return file;
	fs.mkdirSync(path.dirname(file), { recursive: true });
	const fd = fs.openSync(`${file}.tmp`, 'w');
	for (let n = 1; n <= DEEP_LINES;) {
		let block = '';
		for (let k = 0; k < 100_000 && n <= DEEP_LINES; k++, n++) block += `line ${n}\n`;
		fs.writeSync(fd, block);
	}
	fs.closeSync(fd);
	fs.renameSync(`${file}.tmp`, file);
	return file;
}

function deepRows(storageDir) {
	const file = deepFile();
	const setup = registrySource(path.dirname(file), {}, { storageDir });
	const read = offset => `{
		const result = await registry.invoke('read_file', { path: ${JSON.stringify(path.basename(file))}, offset: ${offset}, limit: 2000 });
		if (result.error) throw new Error(result.error.message);
	}`;
	const cold = () => measure(read(DEEP_AT), { setup });
	// The first read leaves the line index; the next page is timed alone.
	const warm = () => {
		const run = measure(`${read(DEEP_AT)}
			const start = process.hrtime.bigint();
			${read(DEEP_AT + 2000)}
			return Number(process.hrtime.bigint() - start) / 1e6;`, { setup });
		return { ms: run.value, rssMB: run.rssMB };
	};
	const shell = offset => () => primitive(`tail -n +${offset} "${file}" | head -n 2000 > /dev/null`);
	const runs = once => medianOf(RUNS, once);
	return [
		{ name: `read_file 2000 lines at ${DEEP_AT.toLocaleString('en')} of 30M (cold)`, primitive: 'tail | head', ours: runs(cold), base: runs(shell(DEEP_AT)), target: 1.5 },
		{ name: '  the next page, line index warm', primitive: 'tail | head', ours: runs(warm), base: runs(shell(DEEP_AT + 2000)) },
	];
}

const LINE = `${'log entry with some words and a number 1234567890 '.repeat(2)}\n`;

function writeText(file, bytes) {
	const block = LINE.repeat(Math.ceil((1 << 20) / LINE.length));
	const fd = fs.openSync(file, 'w');
	for (let written = 0; written < bytes; written += block.length) fs.writeSync(fd, block);
	fs.closeSync(fd);
}

/** 1 GB on paper, about 2 MB on disk: text at the start and end, a hole in between. */
function writeSparse(file, bytes) {
	const block = LINE.repeat(Math.ceil((1 << 20) / LINE.length));
	const fd = fs.openSync(file, 'w');
	fs.writeSync(fd, block, 0);
	fs.writeSync(fd, block, bytes - Buffer.byteLength(block));
	fs.closeSync(fd);
}

export default async function () {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-read-'));
	const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-bench-read-storage-'));
	try {
		writeText(path.join(dir, '1mb.log'), 1 << 20);
		writeText(path.join(dir, '100mb.log'), 100 << 20);
		writeSparse(path.join(dir, '1gb.log'), 1 << 30);
		const setup = registrySource(dir, {}, { storageDir });
		const ours = input => measure(`
			const result = await registry.invoke('read_file', ${JSON.stringify(input)});
			if (result.error) throw new Error(result.error.message);
			return result.content[0].text.length;`, { setup });
		// The baseline reads the whole file, as a naive tool would. A 1 GB file does not fit in a
		// JS string, so it splits the buffer by hand.
		const naive = (file, tail) => measure(`
			const data = await require('node:fs').promises.readFile(${JSON.stringify(path.join(dir, file))});
			const lines = [];
			let end = data.length;
			if (${tail}) {
				for (let i = data.length - 2; i >= 0 && lines.length < 100; i--) if (data[i] === 10) { lines.push(data.subarray(i + 1, end).toString()); end = i + 1; }
			} else {
				let start = 0;
				for (let i = 0; i < data.length && lines.length < 2000; i++) if (data[i] === 10) { lines.push(data.subarray(start, i).toString()); start = i + 1; }
			}
			return lines.length;`);
		const rows = [];
		for (const file of ['1mb.log', '100mb.log', '1gb.log']) {
			rows.push({ name: `${file} first 2000 lines`, ours: ours({ path: file }), base: naive(file, false) });
			rows.push({ name: `${file} last 100 lines`, ours: ours({ path: file, offset: -100 }), base: naive(file, true) });
		}
		rows.push(...deepRows(storageDir));
		table(rows);
		console.log(`(deep rows: median of ${RUNS} runs; tail | head as a whole process under GNU time; read_file stops at its 32 KB cap, after ~1,400 of the 2,000 lines)`);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
		fs.rmSync(storageDir, { recursive: true, force: true });
	}
}
