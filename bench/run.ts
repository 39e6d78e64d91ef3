/**
 * `npm run bench`: our server against a bare node:http reference, same load, same run.
 * Flags: --rounds N (per side, default 2), --duration S (8), --warmup S (2),
 * --connections N (50), --only TEXT (scenarios whose name contains it), --no-startup,
 * --reference-work headers,log (the reference does that much of our per-request work too),
 * --instances 2 (reads from two instances on PostgreSQL behind HAProxy against one: bench/instances.ts).
 * --backend postgres (the data folder against PostgreSQL instead of the reference: bench/backends.ts).
 * Load comes from wrk when it is on PATH, else from autocannon (BENCH_LOADGEN=wrk|autocannon
 * forces one). BENCH_OURS_ROOT=/path/to/other/checkout benches that checkout's build as
 * "ours" (seeding, the reference and this code stay this repository's).
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import {
  cleanupAll,
  get,
  installCleanup,
  ourServerArgv,
  refServerArgv,
  ROOT,
  spawnServer,
  tempDir,
  type Child,
} from './proc.ts';
import { generator } from './load.ts';
import { loadLine, machineLine, table, type Row } from './report.ts';
import { best, runRound, SCENARIOS, type Fixture, type RoundSettings, type SideResult } from './scenarios.ts';
import { benchBackends } from './backends.ts';
import { type Credentials, makeCredentials, PAGE_PASSWORD, type Seeded, seedPastes } from './seed.ts';
import { printStartup, startupAndMemory } from './startup.ts';

interface Flags extends RoundSettings {
  rounds: number;
  only: string | null;
  startup: boolean;
  /** Work the reference does besides answering (bench/reference.ts, REF_WORK): '' for none. */
  referenceWork: string;
  /** --instances N: reads from N instances behind HAProxy against one, instead (bench/instances.ts). */
  instances: number | null;
  /** `postgres`: our server on the data folder against itself on PostgreSQL (bench/backends.ts). */
  backend: 'postgres' | null;
}

function parseFlags(argv: string[]): Flags {
  const flags: Flags = {
    rounds: 2,
    durationSec: 8,
    warmupSec: 2,
    connections: 50,
    only: null,
    startup: true,
    referenceWork: '',
    instances: null,
    backend: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const count = (min: number): number => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < min) throw new Error(`${a} must be an integer ≥ ${min}`);
      return n;
    };
    if (a === '--rounds') flags.rounds = count(1);
    else if (a === '--duration') flags.durationSec = count(1);
    else if (a === '--warmup') flags.warmupSec = count(0);
    else if (a === '--connections') flags.connections = count(1);
    else if (a === '--only') flags.only = value();
    else if (a === '--no-startup') flags.startup = false;
    else if (a === '--instances') flags.instances = count(1);
    else if (a === '--backend') {
      if (value() !== 'postgres') throw new Error('--backend: only postgres (benched against the data folder)');
      flags.backend = 'postgres';
    } else if (a === '--reference-work') {
      flags.referenceWork = value();
      for (const w of flags.referenceWork.split(','))
        if (w !== 'headers' && w !== 'log') throw new Error(`--reference-work: unknown work "${w}" (headers, log)`);
    } else throw new Error(`unknown flag ${a}`);
  }
  return flags;
}

const SEED_PASTES = 10_000;
const BIG_BYTES = 512 * 1024;
const IMAGE_BYTES = 1024 * 1024;

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.instances !== null) {
    // Loaded only here: it starts a PostgreSQL cluster, which stays up until this process exits.
    const { benchInstances } = await import('./instances.ts');
    await benchInstances({ ...flags, instances: flags.instances });
    process.exit(0);
  }
  const started = performance.now();
  const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  console.log(machineLine());
  console.log(loadLine());
  const fdLimit = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  console.log(
    'open files limit (ulimit -n): ' +
      `${fdLimit}${Number(fdLimit) < 2_200 ? ' — too low for 1000 idle sockets, raise it (ulimit -n 4096)' : ''}`,
  );

  const gen = generator();
  if (gen.note !== null) console.log(gen.note);
  const ours = await ourServerArgv();
  console.log(`our server root: ${ours.root}${ours.root === ROOT ? ' (this repository)' : ' (BENCH_OURS_ROOT)'}`);
  console.log(
    `our server: ${ours.how}; reference: node --import tsx bench/reference.ts${
      flags.referenceWork === '' ? '' : ` (REF_WORK=${flags.referenceWork}: its API reads do that work too)`
    }`,
  );
  console.log(
    `settings: load generator ${gen.label}, ${flags.connections} connections, pipelining 1, ${flags.warmupSec} ` +
      `s warm-up + ${flags.durationSec} s measured per round, ${flags.rounds} rounds per side (ABBA order), best ` +
      'round per side reported',
  );

  const dataDir = await tempDir('data');
  const refDir = await tempDir('ref');
  const t0 = performance.now();
  const creds = await makeCredentials(dataDir);
  const seeded = await seedPastes(dataDir, creds.userId, SEED_PASTES, {
    bigBytes: BIG_BYTES,
    imageBytes: IMAGE_BYTES,
    pages: true,
  });
  const manifest = join(refDir, 'manifest.json');
  await writeFile(manifest, JSON.stringify(seeded));
  console.log(
    `seeded ${SEED_PASTES.toLocaleString('en')} pastes (200 B–4 KB) + one of 512 KB + one holding a 1 MB PNG in ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  if (flags.backend === 'postgres') {
    const fixture = (port: number, tokens: Credentials) => fixtureOf(port, seeded, tokens);
    await benchBackends(ours.argv, { dataDir, seeded, tokens: creds, fixture }, flags);
    await cleanupAll();
    console.log(`\nbench finished in ${elapsed()}`);
    return;
  }
  const servers: Child[] = [];
  try {
    const our = await spawnServer('ours', ours.argv, { DATA_DIR: dataDir });
    servers.push(our);
    const ref = await spawnServer('reference', refServerArgv(), {
      REF_MANIFEST: manifest,
      REF_DIR: refDir,
      REF_WORK: flags.referenceWork,
    });
    servers.push(ref);
    const fixture = await fixtureOf(our.port, seeded, creds);
    await probe(our, ref, fixture);

    const rows: Row[] = [];
    const scenarios = SCENARIOS.filter((s) => flags.only === null || s.name.includes(flags.only));
    for (const s of scenarios) {
      const results: Record<'ours' | 'ref', SideResult[]> = { ours: [], ref: [] };
      for (let r = 0; r < flags.rounds; r++) {
        // ABBA: the side that goes first alternates, so drift in the machine's load hits both.
        const order: ('ours' | 'ref')[] = r % 2 === 0 ? ['ours', 'ref'] : ['ref', 'ours'];
        for (const side of order) {
          const res = await runRound(side === 'ours' ? our.port : ref.port, s, fixture, flags);
          results[side].push(res);
          const m = res.measure;
          const idle =
            res.idle === undefined ? '' : `, idle sockets open ${res.idle.open} (server closed ${res.idle.closed})`;
          console.log(
            `  [${elapsed()}] ${s.name} round ${r + 1} ${side}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ` +
              `${m.p99} ms, ${m.non2xx} non-2xx, ${m.errors} errors${idle}`,
          );
          for (const f of m.failures) console.log(`      refused: ${f}`);
        }
      }
      rows.push({ scenario: s.name, ours: best(results.ours).measure, ref: best(results.ref).measure, goal: s.goal });
    }
    await Promise.all(servers.map((c) => c.stop()));
    const ourLog = our.output().trim();
    if (/error/i.test(ourLog))
      console.log(`\nour server's output mentions errors:\n${ourLog.split('\n').slice(0, 40).join('\n')}`);

    const extra = flags.referenceWork === '' ? '' : `, --reference-work ${flags.referenceWork}`;
    console.log(
      `\n${machineLine()}\ncommand: npm run bench (load generator ${gen.label}, ${flags.connections} ` +
        `connections, ${flags.durationSec} s per round, best of ${flags.rounds} rounds per side${extra})\nours: ` +
        `${ours.how}\n`,
    );
    console.log(table(rows, extra === '' ? undefined : 'n/a (the reference does more)'));
    console.log(`\n${loadLine()} (other work on the machine slows both sides)`);

    if (flags.startup) printStartup(await startupAndMemory(ours.argv));
  } catch (err) {
    // A server that died mid-run shows up as refused connections; its own output says why.
    for (const c of servers)
      console.error(`\n${c.label}'s output (last 40 lines):\n${c.output().trim().split('\n').slice(-40).join('\n')}`);
    throw err;
  } finally {
    await Promise.all(servers.map((c) => c.stop()));
    await cleanupAll();
  }
  console.log(`\nbench finished in ${elapsed()}`);
}

/** What the scenarios send to our server on `port`, with `tokens` of its store. */
async function fixtureOf(port: number, seeded: Seeded, tokens: Credentials): Promise<Fixture> {
  return {
    hashes: seeded.hashes,
    bigHash: seeded.big?.hash ?? '',
    image: { hash: seeded.image?.hash ?? '', name: seeded.image?.name ?? '' },
    auth: { authorization: `Bearer ${tokens.token}` },
    limitedAuth: { authorization: `Bearer ${tokens.limitedToken}` },
    web: {
      ...(seeded.web as NonNullable<typeof seeded.web>),
      grant: await unlockGrant(port, seeded.web?.locked ?? ''),
    },
  };
}

/** One request of each kind to both servers, so a broken setup fails before minutes of load. */
async function probe(our: Child, ref: Child, f: Fixture): Promise<void> {
  const hash = f.hashes[0] ?? '';
  for (const c of [our, ref]) {
    const page = await get(c.port, `/api/v1/paste.php?hash=${hash}`, f.auth);
    const raw = await get(c.port, `/api/v1/raw.php?hash=${f.bigHash}`, f.limitedAuth);
    const file = await get(c.port, `/api/v1/file.php?hash=${f.image.hash}&name=${f.image.name}`, f.auth);
    if (page.status !== 200 || raw.status !== 200 || file.headers['content-type'] !== 'image/png')
      throw new Error(
        `${c.label}: probe failed: paste.php ${page.status} ${page.body.slice(0, 200)}; raw.php ${raw.status}; ` +
          `file.php ${file.status}`,
      );
    console.log(
      `${c.label}: listening after ${c.listeningMs.toFixed(0)} ms; paste.php body ${page.body.length} B, 512 KB ` +
        `raw.php body ${raw.body.length} B, file.php ${file.headers['content-type']} ` +
        `${file.headers['content-length']} B`,
    );
  }
}

/**
 * A cookie with our server's unlock grant for the password paste, got the way a browser
 * gets it: the page's form (with its CSRF cookie and token), then the password. The
 * reference ignores cookies.
 */
async function unlockGrant(port: number, hash: string): Promise<Record<string, string>> {
  const form = await exchange(port, 'GET', `/p/${hash}`, {});
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const cookie = cookiesOf(form.setCookie);
  const body = new URLSearchParams({ _csrf: csrf, password: PAGE_PASSWORD }).toString();
  const unlocked = await exchange(
    port,
    'POST',
    `/p/${hash}`,
    { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body,
  );
  const grant = cookiesOf(unlocked.setCookie);
  if (unlocked.status !== 200 || !grant.includes('paste_unlock_'))
    throw new Error(`could not unlock the bench's password paste: ${unlocked.status}`);
  return { cookie: grant };
}

const cookiesOf = (lines: string[]): string => lines.map((l) => l.split(';')[0]).join('; ');

function exchange(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; body: string; setCookie: string[] }> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: text, setCookie: res.headers['set-cookie'] ?? [] }),
      );
    });
    r.on('error', reject);
    r.end(body);
  });
}

installCleanup();
main().catch(async (err: unknown) => {
  console.error(err);
  await cleanupAll();
  process.exit(1);
});
