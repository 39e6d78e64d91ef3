/**
 * `npm run bench:soak [-- --minutes N] [-- --warmup W] [-- --rate R]`: a steady 90/10
 * read/write load at a moderate rate against our server, sampling its RSS every 10 s. The
 * first W minutes (default 5) fill the paste cache with the read set (at the default rate
 * this takes minutes, and the heap settles at its working size a few minutes later; see
 * bench/README.md) and are reported apart; the goal is on the N minutes after them (default
 * 10): flat, |least-squares slope| < 1 MB/min.
 */
import { load, mixed } from './load.ts';
import { cleanupAll, installCleanup, memoryMb, ourServerArgv, spawnServer, tempDir } from './proc.ts';
import { machineLine, slope } from './report.ts';
import { makeCredentials, seedPastes } from './seed.ts';

const SAMPLE_MS = 10_000;

function flag(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const n = Number(args[i + 1]);
  if (!(n > 0)) throw new Error(`--${name} needs a positive number`);
  return n;
}

async function main(): Promise<void> {
  const minutes = flag('minutes', 10);
  const warmup = flag('warmup', 5);
  const rate = flag('rate', 500);
  console.log(machineLine());
  const ours = await ourServerArgv();
  const dir = await tempDir('soak');
  const creds = await makeCredentials(dir);
  const seeded = await seedPastes(dir, creds.userId, 10_000);
  const server = await spawnServer('ours', ours.argv, { DATA_DIR: dir });
  console.log(
    `soak: ${ours.how}, ${warmup} min warm-up + ${minutes} min measured at ${rate} req/s (90% GET paste.php, ` +
      '10% POST paste_create.php, rate-limited token), 20 connections, autocannon (it paces the rate; plain wrk ' +
      'cannot)',
  );

  const samples: { min: number; rss: number }[] = [];
  const t0 = performance.now();
  const sample = async (): Promise<void> => {
    const { rss } = await memoryMb(server.pid);
    const min = (performance.now() - t0) / 60_000;
    samples.push({ min, rss });
    console.log(`  t=${min.toFixed(2)} min  RSS ${rss.toFixed(1)} MB`);
  };
  await sample();
  const timer = setInterval(() => void sample(), SAMPLE_MS);
  try {
    const m = await load({
      port: server.port,
      connections: 20,
      durationSec: Math.round((warmup + minutes) * 60),
      overallRate: rate,
      plan: mixed(0.9, seeded.hashes, { authorization: `Bearer ${creds.limitedToken}` }),
    });
    clearInterval(timer);
    await sample();
    console.log(
      `load: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, ${m.requests} requests, ${m.non2xx} ` +
        `non-2xx, ${m.errors} errors`,
    );
    for (const f of m.failures) console.log(`  refused: ${f}`);
    const warm = samples.filter((s) => s.min <= warmup);
    const steady = samples.filter((s) => s.min >= warmup);
    const after = slope(
      steady.map((s) => s.min),
      steady.map((s) => s.rss),
    );
    const verdict = Number.isFinite(after)
      ? Math.abs(after) < 1
        ? 'pass'
        : 'FAIL'
      : 'n/a (no samples after the warm-up)';
    const first = warm[0]?.rss ?? NaN;
    const filled = warm.at(-1)?.rss ?? NaN;
    console.log(
      `RSS: ${first.toFixed(1)} MB at start, ${filled.toFixed(1)} MB after the ${warmup} min warm-up, ` +
        `${(samples.at(-1)?.rss ?? NaN).toFixed(1)} MB at the end`,
    );
    console.log(
      `RSS slope over the ${minutes} measured minutes: ${after.toFixed(2)} MB/min — goal |slope| < 1 MB/min: ` +
        `${verdict}`,
    );
  } finally {
    clearInterval(timer);
    await server.stop();
    await cleanupAll();
  }
}

installCleanup();
main().catch(async (err: unknown) => {
  console.error(err);
  await cleanupAll();
  process.exit(1);
});
