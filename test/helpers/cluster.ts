import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeClusterStops, createTestDatabase } from './postgres.ts';
import { cleanup, cli, ROOT, spawnServer, tempDataDir, type ProcessServer } from './server.ts';

/**
 * Several instances on one PostgreSQL database behind HAProxy, all as real processes, the way
 * README "Running several instances" deploys them: the shipped deploy/haproxy.cfg, unchanged,
 * with its addresses in the environment.
 */
export const HAPROXY = process.env['HAPROXY'] || '/usr/sbin/haproxy';
export const HAPROXY_CFG = join(ROOT, 'deploy/haproxy.cfg');
/** The servers deploy/haproxy.cfg names, and the variables that give their addresses. */
export const INSTANCES = [
  { name: 'paste1', variable: 'PASTE_INSTANCE_1' },
  { name: 'paste2', variable: 'PASTE_INSTANCE_2' },
] as const;

/** One instance as HAProxy's status page tells it: its state and what HAProxy did about it. */
export interface ProxyView {
  /** UP, DOWN, or a transition such as `UP 1/2`. */
  status: string;
  /** Requests HAProxy sent again (retries) and sent to another server (redispatches). */
  retries: number;
  redispatches: number;
  /** Failed connections and failed responses. */
  connectionErrors: number;
  responseErrors: number;
}

export interface Cluster {
  /** Where clients connect: the proxy. */
  port: number;
  databaseUrl: string;
  /** The instances, in deploy/haproxy.cfg's order; an entry is replaced when it is started again. */
  instances: ProcessServer[];
  /** A token with read and write for the user `alice`. */
  token: string;
  /** HAProxy's view of each instance, by name. */
  view(): Promise<Record<string, ProxyView>>;
  /** Waits until HAProxy's checks say `status` (exactly) of instance `i`. */
  waitFor(i: number, status: 'UP' | 'DOWN', limitMs?: number): Promise<void>;
  /** Starts instance `i` again on its port and data folder, and waits until the proxy sends it requests. */
  startAgain(i: number): Promise<void>;
  /** HAProxy's own output (errors only: deploy/haproxy.cfg logs no normal request). */
  proxyOutput(): string;
  /** Stops everything: instances with SIGTERM, then the proxy. */
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
// However the test process ends, no proxy or instance outlives it.
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Two instances (as deploy/haproxy.cfg has) on a fresh database, HAProxy in front; every instance UP. */
export async function startCluster(opts: { env?: Record<string, string> } = {}): Promise<Cluster> {
  const databaseUrl = await createTestDatabase();
  const env = { DATABASE_URL: databaseUrl, TRUST_PROXY: '1', ...opts.env };
  const dirs = await Promise.all(INSTANCES.map(() => tempDataDir()));
  const start = async (i: number, port = 0): Promise<ProcessServer> => {
    const s = await spawnServer({ dataDir: dirs[i] as string, env: { ...env, PORT: String(port) } });
    children.add(s.proc);
    s.proc.once('exit', () => children.delete(s.proc));
    return s;
  };
  // One at a time: the first makes the schema (it would be made once anyway).
  const instances: ProcessServer[] = [];
  for (let i = 0; i < INSTANCES.length; i++) instances.push(await start(i));
  const dbEnv = { DATABASE_URL: databaseUrl };
  await cli(dirs[0] as string, ['user', 'add', 'alice'], '', dbEnv);
  const token = await cli(
    dirs[0] as string,
    ['token', 'create', '--user', 'alice', '--scopes', 'read,write'],
    '',
    dbEnv,
  );

  const [port, statsPort] = [await freePort(), await freePort()];
  const addresses = Object.fromEntries(INSTANCES.map((d, i) => [d.variable, `127.0.0.1:${instances[i]?.port}`]));
  const proxy = spawn(HAPROXY, ['-db', '-f', HAPROXY_CFG], {
    env: { ...process.env, PASTE_LISTEN: `127.0.0.1:${port}`, PASTE_STATS: `127.0.0.1:${statsPort}`, ...addresses },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proxy);
  let proxyOut = '';
  proxy.stdout?.on('data', (d: Buffer) => (proxyOut += d.toString()));
  proxy.stderr?.on('data', (d: Buffer) => (proxyOut += d.toString()));
  const proxyExited = new Promise<void>((resolve) => proxy.once('exit', () => resolve()));

  const view = async (): Promise<Record<string, ProxyView>> => {
    const csv = await get(statsPort, '/stats;csv');
    const [head = '', ...rows] = csv.trim().split('\n');
    const columns = head.replace(/^# /, '').split(',');
    const col = (row: string[], name: string): string => row[columns.indexOf(name)] ?? '';
    const out: Record<string, ProxyView> = {};
    for (const line of rows) {
      const row = line.split(',');
      if (col(row, 'pxname') !== 'instances' || !INSTANCES.some((d) => d.name === col(row, 'svname'))) continue;
      out[col(row, 'svname')] = {
        status: col(row, 'status'),
        retries: Number(col(row, 'wretr')),
        redispatches: Number(col(row, 'wredis')),
        connectionErrors: Number(col(row, 'econ')),
        responseErrors: Number(col(row, 'eresp')),
      };
    }
    return out;
  };
  const waitFor = async (i: number, status: 'UP' | 'DOWN', limitMs = 10_000): Promise<void> => {
    const name = INSTANCES[i]?.name ?? '';
    const t0 = performance.now();
    for (;;) {
      const seen = await view().catch(() => null);
      if (seen?.[name]?.status === status) return;
      if (performance.now() - t0 > limitMs)
        throw new Error(
          `HAProxy did not see ${name} ${status} within ${limitMs} ms: ${JSON.stringify(seen)}\n${proxyOut}`,
        );
      await sleep(50);
    }
  };
  let stopped: Promise<void> | null = null;
  const cluster: Cluster = {
    port,
    databaseUrl,
    instances,
    token,
    view,
    waitFor,
    startAgain: async (i) => {
      instances[i] = await start(i, instances[i]?.port);
      await waitFor(i, 'UP');
    },
    proxyOutput: () => proxyOut,
    stop: () =>
      (stopped ??= (async () => {
        await Promise.all(instances.map((s) => s.stop()));
        proxy.kill('SIGTERM');
        await proxyExited;
        await Promise.all(dirs.map((d) => cleanup(d)));
      })()),
  };
  // Before the test PostgreSQL stops (postgres.ts), so no instance loses its database first.
  beforeClusterStops(cluster.stop);
  after(cluster.stop);
  try {
    for (let i = 0; i < INSTANCES.length; i++) await waitFor(i, 'UP');
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(text));
    });
    r.on('error', reject);
    r.setTimeout(5_000, () => r.destroy(new Error(`no answer to ${path}`)));
    r.end();
  });
}
