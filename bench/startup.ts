import { generator, load, type Measure } from './load.ts';
import { get, memoryMb, removeTempDir, spawnServer, tempDir } from './proc.ts';
import { makeCredentials, seedPastes } from './seed.ts';

export interface StartupReport {
  pastes: number;
  seedMs: number;
  /** One entry per start: spawn → "listening", spawn → first 200 from /healthz and from paste.php. */
  starts: { listeningMs: number; healthMs: number; firstReadMs: number }[];
  rssIdleMb: number;
  reads: number;
  readLoad: Measure;
  rssAfterReadsMb: number;
  peakMb: number;
}

/** A seeded folder to start servers on: its pastes' hashes and a token of their owner's. */
export interface StartupSeed {
  pastes: number;
  seedMs: number;
  hashes: string[];
  userId: number;
  token: string;
}

/** Seeds `dir` with `pastes` pastes (bench/seed.ts) and the bench user's tokens. */
export async function seedForStartup(dir: string, pastes: number): Promise<StartupSeed> {
  const t0 = performance.now();
  const creds = await makeCredentials(dir);
  const seeded = await seedPastes(dir, creds.userId, pastes, { concurrency: 64, seed: 7 });
  return { pastes, seedMs: performance.now() - t0, hashes: seeded.hashes, userId: creds.userId, token: creds.token };
}

/**
 * Start-up time and resident memory at `pastes` pastes: seeds a folder, starts the server
 * `starts` times (timing each), and after the last start reads `reads` distinct random
 * pastes and takes VmRSS from /proc.
 */
export async function startupAndMemory(
  argv: string[],
  opts: { pastes?: number; reads?: number; starts?: number } = {},
): Promise<StartupReport> {
  const dir = await tempDir('startup');
  try {
    const seed = await seedForStartup(dir, opts.pastes ?? 100_000);
    return await measureStartup(argv, seed, { DATA_DIR: dir }, seed.token, opts);
  } finally {
    await removeTempDir(dir);
  }
}

/**
 * The measurements of `startupAndMemory` on a seeded store, whichever backend `env` points
 * the server at (`token` is valid there): the reads come with a cold cache, each paste once.
 */
export async function measureStartup(
  argv: string[],
  seed: StartupSeed,
  env: Record<string, string>,
  token: string,
  opts: { reads?: number; starts?: number; label?: string } = {},
): Promise<StartupReport> {
  const reads = Math.min(opts.reads ?? 20_000, seed.pastes);
  const auth = { authorization: `Bearer ${token}` };
  const starts: StartupReport['starts'] = [];
  for (let i = 0; i < (opts.starts ?? 3); i++) {
    const begun = performance.now();
    const server = await spawnServer(opts.label ?? 'ours (100k)', argv, env);
    const health = await get(server.port, '/healthz');
    const healthMs = performance.now() - begun;
    const first = await get(server.port, `/api/v1/paste.php?hash=${seed.hashes[i] ?? ''}`, auth);
    const firstReadMs = performance.now() - begun;
    if (health.status !== 200 || first.status !== 200) {
      await server.stop();
      throw new Error(`start ${i}: /healthz ${health.status}, paste.php ${first.status} ${first.body.slice(0, 200)}`);
    }
    starts.push({ listeningMs: server.listeningMs, healthMs, firstReadMs });
    const last = i === (opts.starts ?? 3) - 1;
    if (!last) {
      await server.stop();
      continue;
    }
    // Settle a moment so the idle figure is not the start-up peak.
    await new Promise((r) => setTimeout(r, 1_000));
    const idle = await memoryMb(server.pid);
    // Each of the `reads` distinct pastes once, in a random order.
    const order = shuffled(seed.hashes).slice(0, reads);
    const readLoad = await load({
      port: server.port,
      connections: 16,
      amount: reads,
      plan: {
        kinds: [{ method: 'GET', path: '/api/v1/paste.php?hash={hash}', headers: auth }],
        hashes: order,
        order: 'sequential',
      },
    });
    await new Promise((r) => setTimeout(r, 1_000));
    const after = await memoryMb(server.pid);
    await server.stop();
    return {
      pastes: seed.pastes,
      seedMs: seed.seedMs,
      starts,
      rssIdleMb: idle.rss,
      reads,
      readLoad,
      rssAfterReadsMb: after.rss,
      peakMb: after.peak,
    };
  }
  throw new Error('no start was measured');
}

function shuffled<T>(xs: readonly T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

export function printStartup(r: StartupReport, on = ''): void {
  console.log(
    `\nStart-up and memory${on === '' ? '' : ` on ${on}`} at ${r.pastes.toLocaleString('en')} pastes ` +
      `(seeded in ${(r.seedMs / 1000).toFixed(1)} s)`,
  );
  r.starts.forEach((s, i) => {
    console.log(
      `  start ${i + 1}: listening after ${s.listeningMs.toFixed(0)} ms, first /healthz 200 after ` +
        `${s.healthMs.toFixed(0)} ms, first paste.php 200 after ${s.firstReadMs.toFixed(0)} ms`,
    );
  });
  const best = Math.min(...r.starts.map((s) => s.healthMs));
  const worst = Math.max(...r.starts.map((s) => s.healthMs));
  console.log(
    `  start-up (spawn → first /healthz): best ${best.toFixed(0)} ms, worst ${worst.toFixed(0)} ms — goal < ` +
      `1000 ms: ${worst < 1000 ? 'pass' : 'FAIL'}`,
  );
  console.log(`  RSS idle after start: ${r.rssIdleMb.toFixed(1)} MB`);
  console.log(
    `  RSS after reading ${r.reads.toLocaleString('en')} distinct random pastes (${generator().name}, ` +
      `${r.readLoad.rps.toFixed(0)} req/s, ${r.readLoad.non2xx} non-2xx): ${r.rssAfterReadsMb.toFixed(1)} MB ` +
      `(peak ${r.peakMb.toFixed(1)} MB) — goal < 150 MB: ${r.peakMb < 150 ? 'pass' : 'FAIL'}`,
  );
}
