import * as fs from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { cliStorageBase, ensurePrivateFolder, PRIVATE_FILE_MODE } from '../core/files/storage';

/**
 * The `toolbelt` command (dist/cli.js): loads the CLI (dist/cliMain.js) through a V8 code cache.
 * Compiling the bundle is most of a short call's start-up beyond Node's own; with the cache a
 * call starts from the bytecode the previous one left. (Node 22's module.enableCompileCache does
 * the same; this works on Node 20 too.)
 *
 * The cache lives in the CLI's private folder under the temp folder: V8 trusts cached bytecode
 * and checks only the source's length, so a cache others could write would let them run code as
 * this user, and one written for another build of the same length would run stale code. Hence
 * the folder check, and a key (Node, architecture, the bundle's size, time, inode and path) in
 * front of the data. Each bundle has its own cache file: with one shared by every copy of the CLI
 * on the machine (an npm install, the one inside VS Code's extension), each start of one would
 * throw away the other's cache. Writing one removes those of bundles that are gone (each update of
 * the extension installs it under a new path). Any trouble with the cache only means a start
 * without it.
 */

const CACHE_PREFIX = 'cli-code-cache-';

interface CodeCache {
	readonly file: string;
	readonly key: Buffer;
	readonly data?: Buffer;
}

function openCache(bundle: string, base: string): CodeCache | undefined {
	let file: string;
	let key: Buffer;
	try {
		ensurePrivateFolder(base);
		const stat = fs.statSync(bundle);
		// The path last: it may hold spaces, and pruning reads it back (bundleOfKey).
		key = Buffer.from(`${process.version} ${process.arch} ${stat.size} ${stat.mtimeMs} ${stat.ino} ${bundle}\n`);
		file = path.join(base, cacheFileName(bundle));
	} catch {
		return undefined;
	}
	let stored: Buffer | undefined;
	try {
		stored = fs.readFileSync(file);
	} catch {
		// None yet: this start writes it.
	}
	return { file, key, data: stored?.subarray(0, key.length).equals(key) ? stored.subarray(key.length) : undefined };
}

/**
 * `cli-code-cache-<bundle's name>-<hash of its path>`. A cheap hash is enough: two paths sharing a
 * name only take turns with the file, since the key inside tells them apart.
 */
export function cacheFileName(bundle: string): string {
	let hash = 0x811c9dc5;
	for (let i = 0; i < bundle.length; i++) hash = Math.imul(hash ^ bundle.charCodeAt(i), 0x01000193) >>> 0;
	return `${CACHE_PREFIX}${path.basename(bundle, '.js')}-${hash.toString(16)}`;
}

/** Written whole under a temp name, then renamed: a concurrent start reads the old cache or the new. */
function saveCache(cache: CodeCache, script: vm.Script): void {
	const temp = `${cache.file}.${process.pid}.tmp`;
	try {
		fs.writeFileSync(temp, Buffer.concat([cache.key, script.createCachedData()]), { mode: PRIVATE_FILE_MODE, flag: 'wx' });
		fs.renameSync(temp, cache.file);
	} catch {
		fs.rmSync(temp, { force: true });
		return;
	}
	removeCachesOfGoneBundles(path.dirname(cache.file), path.basename(cache.file));
}

/** Longer than any key: a bundle's path is at most a few KiB. */
const KEY_READ_LIMIT = 8192;

/**
 * Removes the caches (in the private folder `base`, other than `keep`) whose bundle no longer
 * exists. Runs only when a cache was written, which is once per build, so a start that finds its
 * cache pays nothing for it.
 */
function removeCachesOfGoneBundles(base: string, keep: string): void {
	let names: string[];
	try {
		names = fs.readdirSync(base);
	} catch {
		return;
	}
	for (const name of names) {
		if (!name.startsWith(CACHE_PREFIX) || name === keep || name.endsWith('.tmp')) continue;
		const file = path.join(base, name);
		const bundle = bundleOfKey(readStart(file));
		// A key that cannot be read back (another format, a cut file) names no bundle: it goes too.
		if (bundle === undefined || !fs.existsSync(bundle)) fs.rmSync(file, { force: true });
	}
}

function readStart(file: string): Buffer | undefined {
	let fd: number | undefined;
	try {
		fd = fs.openSync(file, 'r');
		const buffer = Buffer.alloc(KEY_READ_LIMIT);
		return buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0));
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) fs.closeSync(fd);
	}
}

/** The bundle path a cache's key names: after its first five fields, up to the line's end. */
export function bundleOfKey(start: Buffer | undefined): string | undefined {
	const end = start?.indexOf(0x0a) ?? -1;
	if (start === undefined || end < 0) return undefined;
	const fields = start.subarray(0, end).toString('utf8').split(' ');
	const bundle = fields.slice(5).join(' ');
	return fields.length > 5 && path.isAbsolute(bundle) ? bundle : undefined;
}

/** A bundle loaded through the cache; `save` writes the cache when it was missing or stale. */
export interface LoadedBundle<T> {
	readonly exports: T;
	/** Compiled from the cache. */
	readonly cached: boolean;
	/** Best called at exit, so the functions compiled on the way are in the cache too. */
	save(): void;
}

/**
 * Compiles and evaluates the bundle as CommonJS, the way require would, and returns its exports.
 * `cacheBase` is the private folder the cache is kept in.
 */
export function loadWithCodeCache<T>(bundle: string, cacheBase = cliStorageBase()): LoadedBundle<T> {
	const cache = openCache(bundle, cacheBase);
	const script = new vm.Script(Module.wrap(fs.readFileSync(bundle, 'utf8')), { filename: bundle, cachedData: cache?.data });
	const loaded = new Module(bundle, module);
	loaded.filename = bundle;
	loaded.paths = module.paths;
	script.runInThisContext()(loaded.exports, Module.createRequire(bundle), loaded, bundle, path.dirname(bundle));
	const cached = cache?.data !== undefined && !script.cachedDataRejected;
	return { exports: loaded.exports, cached, save: () => cache && !cached && saveCache(cache, script) };
}

if (require.main === module) {
	const loaded: Array<LoadedBundle<unknown>> = [];
	const load = <T>(name: string): T => {
		const bundle = loadWithCodeCache<T>(path.join(__dirname, name));
		loaded.push(bundle);
		return bundle.exports;
	};
	process.once('exit', () => loaded.forEach(bundle => bundle.save()));
	// The CLI loads the bundle of the commands that need the tools (cliWorkspace.js) the same way, when it does.
	load<typeof import('./main')>('cliMain.js').main(process.argv.slice(2), { load }).then(code => {
		process.exitCode = code;
	});
}
