/**
 * `npm run bench -- --instances 2`: API reads (GET paste.php, a random one of 1,000 pastes)
 * from one instance and from two on one PostgreSQL database, behind HAProxy running the
 * shipped deploy/haproxy.cfg and loaded directly, in one run, with where the CPU went (README,
 * Running several instances). The database is a throwaway cluster (test/helpers/postgres.ts).
 */
import { Agent, request } from 'node:http';
import { runCli } from '../src/cli.ts';
import { INSTANCES, type Proxy, startProxy } from '../test/helpers/haproxy.ts';
import { psql, startCluster } from '../test/helpers/pg-cluster.ts';
import { coresUsed, cpuSnapshot, processesWith } from './cpu.ts';
import { generator, load, type Measure, randomGet } from './load.ts';
import { type Child, ourServerArgv, spawnServer, tempDir } from './proc.ts';
import { loadLine, machineLine } from './report.ts';
import { prng, textOfSize } from './seed.ts';

export interface InstancesSettings {
  instances: number;
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number;
}

const SEED_PASTES = 1_000;
/** The goal: two instances read at least this many times what one does. */
const GOAL = 1.3;
const CPU_GROUPS = ['instances', 'PostgreSQL', 'HAProxy', 'load generator', 'rest of the machine'] as const;
const PER_READ = ['instances', 'PostgreSQL', 'HAProxy'] as const;

interface Result {
  measure: Measure;
  cores: Record<string, number>;
}

export async function benchInstances(s: InstancesSettings): Promise<void> {
  if (s.instances !== INSTANCES.length)
    throw new Error(`--instances: deploy/haproxy.cfg names ${INSTANCES.length} servers, so only ${INSTANCES.length}`);
  console.log(machineLine());
  console.log(loadLine());
  const ours = await ourServerArgv();
  // The cluster module without the test runner's hooks (test/helpers/pg-cluster.ts).
  const running = await startCluster();
  const pg = running.cluster;
  psql(pg, 'CREATE DATABASE bench');
  const databaseUrl = `postgres://postgres@127.0.0.1:${pg.port}/bench`;
  const gen = generator();
  console.log(
    `our server: ${ours.how}, DATABASE_URL on a throwaway PostgreSQL cluster, TRUST_PROXY=1; proxy: HAProxy ` +
      'with deploy/haproxy.cfg',
  );
  console.log(
    `settings: ${gen.label}, ${s.connections} connections, ${s.warmupSec} s warm-up + ${s.durationSec} s ` +
      `measured per round, ${s.rounds} rounds per setup, best round reported`,
  );
  const servers: Child[] = [];
  const proxies: Proxy[] = [];
  try {
    const env = { DATABASE_URL: databaseUrl, TRUST_PROXY: '1' };
    for (let i = 1; i <= INSTANCES.length; i++)
      servers.push(await spawnServer(`instance ${i}`, ours.argv, { ...env, DATA_DIR: await tempDir(`instance-${i}`) }));
    const [a, b] = servers as [Child, Child];
    const token = await cliLine(databaseUrl, ['user', 'add', 'bench']).then(() =>
      cliLine(databaseUrl, ['token', 'create', '--user', 'bench', '--scopes', 'read,write']),
    );
    const t0 = performance.now();
    const hashes = await seed(a.port, token);
    console.log(`seeded ${SEED_PASTES} pastes (200 B–4 KB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // The same file for one instance: both of its servers are instance 1.
    const at = (c: Child): string => `127.0.0.1:${c.port}`;
    proxies.push(await startProxy([at(a), at(a)]), await startProxy([at(a), at(b)]));
    const [alone, both] = proxies as [Proxy, Proxy];
    // Each loaded directly too: half the connections on each, so the proxy's share is seen apart.
    const setups = [
      { name: 'one instance, direct', ports: [a.port] },
      { name: 'one instance, through HAProxy', ports: [alone.port] },
      { name: 'two instances, through HAProxy', ports: [both.port] },
      { name: 'two instances, each loaded directly', ports: [a.port, b.port] },
    ];
    const groups = {
      instances: servers.map((c) => c.pid),
      PostgreSQL: processesWith(pg.socketDir),
      HAProxy: proxies.map((p) => p.pid),
    };
    const plan = randomGet('/api/v1/paste.php', hashes, { authorization: `Bearer ${token}` });
    const results = new Map<string, Result[]>(setups.map((x) => [x.name, []]));
    for (let r = 0; r < s.rounds; r++) {
      // The order alternates, so drift in the machine's load hits every setup.
      for (const setup of r % 2 === 0 ? setups : [...setups].reverse()) {
        const run = (durationSec: number): Promise<Measure> =>
          Promise.all(
            setup.ports.map((port) =>
              load({ port, plan, connections: Math.ceil(s.connections / setup.ports.length), durationSec }),
            ),
          ).then(combined);
        if (s.warmupSec > 0) await run(s.warmupSec);
        const before = cpuSnapshot(groups);
        const measure = await run(s.durationSec);
        const cores = coresUsed(before, cpuSnapshot(groups));
        results.get(setup.name)?.push({ measure, cores });
        console.log(
          `  ${setup.name} round ${r + 1}: ${measure.rps.toFixed(0)} req/s, p50 ${measure.p50} ms, p99 ` +
            `${measure.p99} ms, ${measure.non2xx} non-2xx, ${measure.errors} errors; cores: ${split(cores)}`,
        );
        for (const f of measure.failures) console.log(`      refused: ${f}`);
      }
    }
    const best = (name: string): Result =>
      (results.get(name) ?? []).reduce((x, y) => (y.measure.rps > x.measure.rps ? y : x));
    console.log(`\n${machineLine()}\ncommand: npm run bench -- --instances ${s.instances}\n`);
    console.log(
      `| setup | req/s | p50 ms | p99 ms | cores: ${CPU_GROUPS.join(' / ')} | CPU µs a read: ${PER_READ.join(' / ')} |`,
    );
    console.log('| --- | ---: | ---: | ---: | --- | --- |');
    for (const { name } of setups) {
      const { measure: m, cores } = best(name);
      // What one read costs each part, whatever else ran: cores ÷ reads a second.
      const perRead = PER_READ.map((g) => (((cores[g] ?? 0) / m.rps) * 1e6).toFixed(0)).join(' / ');
      console.log(
        `| ${name} | ${m.rps.toFixed(0)} | ${m.p50} | ${m.p99} | ` +
          `${CPU_GROUPS.map((g) => (cores[g] ?? 0).toFixed(2)).join(' / ')} | ${perRead} |`,
      );
    }
    const two = best('two instances, through HAProxy').measure.rps;
    const viaProxy = two / best('one instance, through HAProxy').measure.rps;
    const direct = best('two instances, each loaded directly').measure.rps / best('one instance, direct').measure.rps;
    console.log(
      `\ntwo instances ÷ one, both through HAProxy: ${viaProxy.toFixed(2)} (goal ≥ ${GOAL}: ` +
        `${viaProxy >= GOAL ? 'met' : 'NOT met'}); both loaded directly: ${direct.toFixed(2)}`,
    );
    console.log(`${loadLine()} (other work on the machine takes cores from every setup)`);
  } finally {
    await Promise.all([...servers.map((c) => c.stop()), ...proxies.map((p) => p.stop())]);
    await running.stop();
  }
}

/** Loads run side by side as one: rates and counts added, the worse latencies kept. */
const combined = (ms: Measure[]): Measure => ({
  rps: ms.reduce((a, m) => a + m.rps, 0),
  p50: Math.max(...ms.map((m) => m.p50)),
  p99: Math.max(...ms.map((m) => m.p99)),
  requests: ms.reduce((a, m) => a + m.requests, 0),
  non2xx: ms.reduce((a, m) => a + m.non2xx, 0),
  errors: ms.reduce((a, m) => a + m.errors, 0),
  failures: ms.flatMap((m) => m.failures),
});

const split = (cores: Record<string, number>): string =>
  CPU_GROUPS.map((g) => `${g} ${(cores[g] ?? 0).toFixed(2)}`).join(', ');

async function cliLine(databaseUrl: string, args: string[]): Promise<string> {
  const lines: string[] = [];
  await runCli(args, { env: { DATABASE_URL: databaseUrl }, stdout: (l) => lines.push(l), readStdin: async () => '' });
  return lines.join('\n');
}

/** SEED_PASTES public pastes through the API of the instance at `port`, 8 at a time; their hashes. */
async function seed(port: number, token: string): Promise<string[]> {
  const rand = prng(42);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const hashes: string[] = [];
  const one = (body: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const r = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/paste_create.php', headers, agent });
      r.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve((JSON.parse(text) as { hash: string }).hash)
            : reject(new Error(`seeding: ${res.statusCode} ${text}`)),
        );
      });
      r.on('error', reject);
      r.end(body);
    });
  try {
    for (let i = 0; i < SEED_PASTES; i += 8) {
      const bodies = Array.from({ length: Math.min(8, SEED_PASTES - i) }, () =>
        JSON.stringify({ title: 'bench', content: textOfSize(200 + Math.floor(rand() * 3800), rand) }),
      );
      hashes.push(...(await Promise.all(bodies.map(one))));
    }
  } finally {
    agent.destroy();
  }
  return hashes;
}
