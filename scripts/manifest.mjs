// Writes contributes.languageModelTools into package.json from the compiled tool definitions
// (run through `npm run manifest`, which compiles first).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ALL_TOOLS } = require('../out/src/tools/index.js');
const { toolContributions } = require('../out/src/tools/manifest.js');

const file = new URL('../package.json', import.meta.url);
const pkg = JSON.parse(readFileSync(file, 'utf8'));
pkg.contributes.languageModelTools = toolContributions(ALL_TOOLS);
writeFileSync(file, `${JSON.stringify(pkg, null, '\t')}\n`);
console.log(`package.json: ${pkg.contributes.languageModelTools.length} language model tools written.`);
