// Entry point the extension host loads as `extensionTestsPath`: runs mocha over one suite folder.
import * as fs from 'fs';
import * as path from 'path';
import Mocha from 'mocha';

export function run(): Promise<void> {
	const suite = process.env.TOOLBELT_TEST_SUITE || 'single';
	const root = path.join(__dirname, suite);
	const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 30_000, reporter: 'spec' });
	if (process.env.TOOLBELT_TEST_GREP) mocha.grep(process.env.TOOLBELT_TEST_GREP);
	const files = fs.existsSync(root) ? findTests(root) : [];
	if (!files.length) return Promise.reject(new Error(`No *.test.js files in ${root} (suite "${suite}").`));
	for (const file of files) mocha.addFile(file);
	return new Promise((resolve, reject) => {
		mocha.run(failures => failures ? reject(new Error(`${failures} test(s) failed in suite "${suite}".`)) : resolve());
	});
}

function findTests(dir: string): string[] {
	return fs.readdirSync(dir, { withFileTypes: true })
		.sort((a, b) => a.name.localeCompare(b.name))
		.flatMap(entry => {
			const file = path.join(dir, entry.name);
			if (entry.isDirectory()) return findTests(file);
			return entry.name.endsWith('.test.js') ? [file] : [];
		});
}
