#!/usr/bin/env node
// A Toolbelt custom tool: reads its input as JSON on stdin, prints its result on stdout,
// and exits with a non-zero code (its output becomes the error) when it cannot do the job.
const fs = require('node:fs');

const input = JSON.parse(fs.readFileSync(0, 'utf8'));
let text;
try {
	// The script runs in the workspace folder, so a relative path is read from there.
	text = fs.readFileSync(input.path, 'utf8');
} catch (error) {
	console.error(`Cannot read ${input.path}: ${error.code ?? error.message}. Give a workspace-relative path of a text file.`);
	process.exit(1);
}
const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
const words = text.split(/\s+/).filter(Boolean).length;
console.log(`${input.path}: ${lines} lines, ${words} words, ${[...text].length} characters`);
