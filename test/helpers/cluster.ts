import type { ChildProcess } from 'node:child_process';
import { after } from 'node:test';
import { INSTANCES, type Proxy, startProxy } from './haproxy.ts';
import { beforeClusterStops, createTestDatabase } from './postgres.ts';
import { cleanup, cli, spawnServer, tempDataDir, type ProcessServer } from './server.ts';

/**
 * Several instances on one PostgreSQL database behind HAProxy, all as real processes, the way
 * README "Running several instances" deploys them, with the shipped deploy/haproxy.cfg.
 */
export interface Cluster {
  /** Where clients connect: the proxy. */
  port: number;
  databaseUrl: string;
  /** The instances, in deploy/haproxy.cfg's order; an entry is replaced when it is started again. */
  instances: ProcessServer[];
  /** A token with read and write for the user `alice`. */
  token: string;
  proxy: Proxy;
  /** Starts instance `i` again on its port and data folder, and waits until the proxy sends it requests. */
  startAgain(i: number): Promise<void>;
  /** Stops everything: instances with SIGTERM, then the proxy. */
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
// However the test process ends, no instance outlives it.
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** Two instances (as deploy/haproxy.cfg has) on a fresh database with TRUST_PROXY=1, HAProxy in front, every one UP. */
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

  let proxy: Proxy | null = null;
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await Promise.all(instances.map((s) => s.stop()));
      await proxy?.stop();
      await Promise.all(dirs.map((d) => cleanup(d)));
    })());
  // Before the test PostgreSQL stops (postgres.ts), so no instance loses its database first.
  beforeClusterStops(stop);
  after(stop);
  proxy = await startProxy(instances.map((s) => `127.0.0.1:${s.port}`));
  const front = proxy;
  return {
    port: front.port,
    databaseUrl,
    instances,
    token,
    proxy: front,
    startAgain: async (i) => {
      instances[i] = await start(i, instances[i]?.port);
      await front.waitFor(i, 'UP');
    },
    stop,
  };
}
