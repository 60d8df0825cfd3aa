import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleOfKey, cacheFileName, loadWithCodeCache } from '../../src/cli/launch';

interface Answers {
	answer(): number;
	dirname: string;
}

describe('CLI launcher: the bundle through a V8 code cache', () => {
	let dir: string;
	let bundle: string;
	let base: string;

	beforeEach(() => {
		dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-launch-'));
		bundle = path.join(dir, 'bundle.js');
		base = path.join(dir, 'private');
		fs.writeFileSync(bundle, 'exports.answer = () => 42; exports.dirname = __dirname;\n');
	});
	afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

	const cacheFile = () => path.join(base, cacheFileName(bundle));

	it('loads the bundle as CommonJS, writes the cache once, and starts from it next time', () => {
		const first = loadWithCodeCache<Answers>(bundle, base);
		assert.equal(first.exports.answer(), 42);
		assert.equal(first.exports.dirname, dir);
		assert.equal(first.cached, false);
		first.save();
		if (process.platform !== 'win32') assert.equal(fs.statSync(cacheFile()).mode & 0o777, 0o600);
		const second = loadWithCodeCache<Answers>(bundle, base);
		assert.equal(second.cached, true);
		assert.equal(second.exports.answer(), 42);
	});

	it('keeps one cache per bundle, so two bundles (or two copies of the CLI) loaded in turns both start cached', () => {
		const other = path.join(dir, 'other', 'bundle.js');
		fs.mkdirSync(path.dirname(other));
		fs.copyFileSync(bundle, other);
		assert.notEqual(cacheFileName(other), cacheFileName(bundle));
		loadWithCodeCache<Answers>(bundle, base).save();
		loadWithCodeCache<Answers>(other, base).save();
		assert.equal(loadWithCodeCache<Answers>(bundle, base).cached, true);
		const again = loadWithCodeCache<Answers>(other, base);
		assert.equal(again.cached, true);
		assert.equal(again.exports.dirname, path.dirname(other));
	});

	it('does not use a cache written for another build of the bundle, even one of the same length', () => {
		loadWithCodeCache<Answers>(bundle, base).save();
		fs.rmSync(bundle);
		fs.writeFileSync(bundle, 'exports.answer = () => 43; exports.dirname = __dirname;\n');
		const changed = loadWithCodeCache<Answers>(bundle, base);
		assert.equal(changed.cached, false);
		assert.equal(changed.exports.answer(), 43);
	});

	it('starts without a cache where the folder is open to others, and writes none there', function () {
		if (process.platform === 'win32') this.skip();
		fs.mkdirSync(base, { mode: 0o777 });
		fs.chmodSync(base, 0o777);
		const loaded = loadWithCodeCache<Answers>(bundle, base);
		assert.equal(loaded.exports.answer(), 42);
		loaded.save();
		assert.equal(fs.existsSync(cacheFile()), false);
	});

	it('removes the caches of bundles that are gone when it writes one, and keeps those of bundles still there', () => {
		const copy = (folder: string) => {
			const other = path.join(dir, folder, 'bundle.js');
			fs.mkdirSync(path.dirname(other));
			fs.copyFileSync(bundle, other);
			return other;
		};
		const kept = copy('kept');
		const gone = copy('old version');
		loadWithCodeCache<Answers>(kept, base).save();
		loadWithCodeCache<Answers>(gone, base).save();
		fs.writeFileSync(path.join(base, 'cli-code-cache-unreadable-1'), 'no key line');
		fs.rmSync(path.dirname(gone), { recursive: true });
		// A start that finds its cache writes none, and so removes nothing.
		assert.equal(fs.readdirSync(base).length, 3);
		loadWithCodeCache<Answers>(bundle, base).save();
		assert.deepEqual(fs.readdirSync(base).sort(), [cacheFileName(bundle), cacheFileName(kept)].sort());
		assert.equal(loadWithCodeCache<Answers>(kept, base).cached, true);
	});

	it('reads the bundle path back from a key, spaces included', () => {
		assert.equal(bundleOfKey(Buffer.from('v22.1.0 x64 120 1700000000000.5 42 /opt/a b/cli.js\nDATA')), '/opt/a b/cli.js');
		assert.equal(bundleOfKey(Buffer.from('v22.1.0 x64 120 1 42 relative.js\n')), undefined);
		assert.equal(bundleOfKey(Buffer.from('v22.1.0 x64 /opt/cli.js 120')), undefined);
		assert.equal(bundleOfKey(undefined), undefined);
	});
});
