// read_file on generated files (1 MB, 100 MB, and a 1 GB sparse file with text only at both
// ends) beside a naive fs.readFile + split. The point: the tail of a 1 GB file must cost what
// the tail costs, not what the file costs.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { measure, registrySource, table } from './lib/measure.mjs';

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
		table(rows);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
		fs.rmSync(storageDir, { recursive: true, force: true });
	}
}
