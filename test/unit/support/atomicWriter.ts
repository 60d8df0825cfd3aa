// Spawned by crash.test.ts: rewrites one file atomically, alternating two contents, until killed.
// Prints "wrote <n>" after each completed write so the test knows the writer is busy.
import { writeFileAtomic } from '../../../src/core/files/atomic';

async function main(): Promise<void> {
	const [target, sizeText] = process.argv.slice(2);
	const size = Number(sizeText);
	const contents = [Buffer.alloc(size, 'A'), Buffer.alloc(size, 'B')];
	for (let n = 0; ; n++) {
		await writeFileAtomic(target, contents[n % 2]);
		process.stdout.write(`wrote ${n}\n`);
	}
}

main().catch(error => {
	process.stderr.write(`${(error as Error).stack}\n`);
	process.exit(1);
});
