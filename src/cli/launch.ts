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
 * the folder check, and a key (Node, architecture, the bundle's path, size, time and inode) in
 * front of the data. Each bundle has its own cache file: with one shared by every copy of the CLI
 * on the machine (an npm install, the one inside VS Code's extension), each start of one would
 * throw away the other's cache. Any trouble with the cache only means a start without it.
 */

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
		key = Buffer.from(`${process.version} ${process.arch} ${bundle} ${stat.size} ${stat.mtimeMs} ${stat.ino}\n`);
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
	return `cli-code-cache-${path.basename(bundle, '.js')}-${hash.toString(16)}`;
}

/** Written whole under a temp name, then renamed: a concurrent start reads the old cache or the new. */
function saveCache(cache: CodeCache, script: vm.Script): void {
	const temp = `${cache.file}.${process.pid}.tmp`;
	try {
		fs.writeFileSync(temp, Buffer.concat([cache.key, script.createCachedData()]), { mode: PRIVATE_FILE_MODE, flag: 'wx' });
		fs.renameSync(temp, cache.file);
	} catch {
		fs.rmSync(temp, { force: true });
	}
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
