// Spawned by race.test.ts: makes a folder name of the workspace lead alternately to an inside
// folder and to an outside one, as fast as it can, until its deadline or SIGTERM. Prints
// "swapping" once started and "flips <n>" when it stops.
//
//   swapper.js replace <place> <outside> <seconds>
//       <place> is a real folder, then a symlink to <outside>, then the folder again (renamed
//       away and back, so the name is missing for a moment between the two).
//   swapper.js retarget <place> <inside> <outside> <seconds>
//       <place> is always a symlink, pointing at <inside> or at <outside> (rename over it: never
//       missing).
import * as fs from 'node:fs';

function main(): void {
	const [mode, place, ...rest] = process.argv.slice(2);
	const seconds = Number(rest[rest.length - 1]);
	const deadline = Date.now() + seconds * 1000;
	const { flip, settle } = mode === 'retarget' ? retarget(place, rest[0], rest[1]) : replace(place, rest[0]);
	let flips = 0;
	const stop = () => {
		settle();
		process.stdout.write(`flips ${flips}\n`);
		process.exit(0);
	};
	process.on('SIGTERM', stop);
	process.stdout.write('swapping\n');
	const batch = () => {
		if (Date.now() >= deadline) return stop();
		for (let i = 0; i < 100; i++) flips += flip();
		// Back to the event loop between batches, so SIGTERM is heard.
		setImmediate(batch);
	};
	batch();
}

function replace(place: string, outside: string): { flip(): number; settle(): void } {
	const parked = `${place}.parked`;
	const link = `${place}.link`;
	fs.symlinkSync(outside, link);
	let strays = 0;
	/** Renames `from` to `place`; a tool may have made a new folder there while the name was free: move it aside. */
	const putBack = (from: string) => {
		// A tool may make the folder again between the move aside and the rename: try again.
		for (let attempt = 0; ; attempt++) {
			try {
				fs.renameSync(from, place);
				return;
			} catch (error) {
				if (attempt >= 100) throw error;
				try {
					fs.renameSync(place, `${place}.stray-${++strays}`);
				} catch {
					// Gone again meanwhile: the next attempt takes the free name.
				}
			}
		}
	};
	return {
		flip: () => {
			fs.renameSync(place, parked);
			putBack(link);
			fs.renameSync(place, link);
			putBack(parked);
			return 2;
		},
		settle: () => {
			// Leave the real folder in place, whatever state the loop was in.
			if (fs.lstatSync(place, { throwIfNoEntry: false })?.isSymbolicLink()) fs.renameSync(place, link);
			if (fs.existsSync(parked)) fs.renameSync(parked, place);
			fs.rmSync(link, { force: true });
		},
	};
}

function retarget(place: string, inside: string, outside: string): { flip(): number; settle(): void } {
	const next = `${place}.next`;
	const point = (target: string) => {
		fs.rmSync(next, { force: true });
		fs.symlinkSync(target, next);
		fs.renameSync(next, place);
	};
	point(inside);
	return {
		flip: () => {
			point(outside);
			point(inside);
			return 2;
		},
		settle: () => point(inside),
	};
}

main();
