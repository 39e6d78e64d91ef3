/**
 * `npm run bench:soak [-- --minutes N] [-- --rate R]`: a steady 90/10 read/write load at a
 * moderate rate against our server, sampling its RSS every 10 s; prints the samples and
 * the least-squares slope (MB/min) after the first minute. Goal: flat (|slope| < 1 MB/min).
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
  const rate = flag('rate', 500);
  console.log(machineLine());
  const ours = await ourServerArgv();
  const dir = await tempDir('soak');
  const creds = await makeCredentials(dir);
  const seeded = await seedPastes(dir, creds.userId, 10_000);
  const server = await spawnServer('ours', ours.argv, { DATA_DIR: dir });
  console.log(`soak: ${ours.how}, ${minutes} min at ${rate} req/s (90% GET paste.php, 10% POST paste_create.php, rate-limited token), 20 connections`);

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
      durationSec: Math.round(minutes * 60),
      overallRate: rate,
      requests: [mixed(0.9, seeded.hashes, { authorization: `Bearer ${creds.limitedToken}` })],
    });
    clearInterval(timer);
    await sample();
    console.log(`load: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, ${m.requests} requests, ${m.non2xx} non-2xx, ${m.errors} errors`);
    for (const f of m.failures) console.log(`  refused: ${f}`);
    const steady = samples.filter((s) => s.min >= 1);
    const all = slope(samples.map((s) => s.min), samples.map((s) => s.rss));
    const after = slope(steady.map((s) => s.min), steady.map((s) => s.rss));
    const verdict = Number.isFinite(after) ? (Math.abs(after) < 1 ? 'pass' : 'FAIL') : 'n/a (run longer than 1 min)';
    console.log(`RSS slope: ${all.toFixed(2)} MB/min over the whole run; ${after.toFixed(2)} MB/min after the first minute — goal |slope| < 1 MB/min: ${verdict}`);
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
