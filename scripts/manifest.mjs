// Writes contributes.languageModelTools into package.json, and the tool and settings tables into
// README.md, from the compiled tool definitions (`npm run manifest` compiles first).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ALL_TOOLS } = require('../out/src/tools/index.js');
const { toolContributions, toolsMarkdown, parametersMarkdown, settingsMarkdown, replaceSection } = require('../out/src/tools/manifest.js');

const packageFile = new URL('../package.json', import.meta.url);
const pkg = JSON.parse(readFileSync(packageFile, 'utf8'));
pkg.contributes.languageModelTools = toolContributions(ALL_TOOLS);
writeFileSync(packageFile, `${JSON.stringify(pkg, null, '\t')}\n`);

const readmeFile = new URL('../README.md', import.meta.url);
let readme = readFileSync(readmeFile, 'utf8');
readme = replaceSection(readme, 'tools', toolsMarkdown(ALL_TOOLS));
readme = replaceSection(readme, 'parameters', parametersMarkdown(ALL_TOOLS));
readme = replaceSection(readme, 'settings', settingsMarkdown(pkg.contributes.configuration.properties));
writeFileSync(readmeFile, readme);
console.log(`package.json: ${pkg.contributes.languageModelTools.length} language model tools; README tables updated.`);
