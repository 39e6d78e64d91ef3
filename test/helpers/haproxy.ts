import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { freePort } from './pg-cluster.ts';
import { tool } from './tools.ts';
import { until } from './until.ts';

/**
 * HAProxy running the shipped deploy/haproxy.cfg, unchanged, with its addresses in the
 * environment (README, Running several instances), for the tests (cluster.ts) and the bench
 * (bench/instances.ts).
 */
export const HAPROXY_CFG = new URL('../../deploy/haproxy.cfg', import.meta.url).pathname;
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

export interface Proxy {
  /** Where clients connect. */
  port: number;
  pid: number;
  /** HAProxy's view of each instance, by name. */
  view(): Promise<Record<string, ProxyView>>;
  /** Waits until HAProxy's checks say `status` (exactly) of instance `i`. */
  waitFor(i: number, status: 'UP' | 'DOWN', limitMs?: number): Promise<void>;
  /** What HAProxy printed (errors only: deploy/haproxy.cfg logs no normal request). */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// However the process ends, no proxy outlives it.
process.once('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

/** HAProxy in front of `addresses` (host:port, one per server of the file), once it sees every one UP. */
export async function startProxy(addresses: readonly string[]): Promise<Proxy> {
  const [port, statsPort] = [await freePort(), await freePort()];
  const servers = Object.fromEntries(INSTANCES.map((d, i) => [d.variable, addresses[i] ?? '']));
  const proc = spawn(tool('haproxy'), ['-db', '-f', HAPROXY_CFG], {
    env: { ...process.env, PASTE_LISTEN: `127.0.0.1:${port}`, PASTE_STATS: `127.0.0.1:${statsPort}`, ...servers },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      running.delete(proc);
      resolve();
    }),
  );

  const view = async (): Promise<Record<string, ProxyView>> => {
    const [head = '', ...rows] = (await get(statsPort, '/stats;csv')).trim().split('\n');
    const columns = head.replace(/^# /, '').split(',');
    const out: Record<string, ProxyView> = {};
    for (const line of rows) {
      const row = line.split(',');
      const col = (name: string): string => row[columns.indexOf(name)] ?? '';
      if (col('pxname') !== 'instances' || !INSTANCES.some((d) => d.name === col('svname'))) continue;
      out[col('svname')] = {
        status: col('status'),
        retries: Number(col('wretr')),
        redispatches: Number(col('wredis')),
        connectionErrors: Number(col('econ')),
        responseErrors: Number(col('eresp')),
      };
    }
    return out;
  };
  const waitFor = async (i: number, status: 'UP' | 'DOWN', limitMs = 10_000): Promise<void> => {
    const name = INSTANCES[i]?.name ?? '';
    let seen: Awaited<ReturnType<typeof view>> | null = null;
    await until(async () => (seen = await view().catch(() => null))?.[name]?.status === status, {
      timeoutMs: limitMs,
      what: `HAProxy to see ${name} ${status}`,
      everyMs: 50,
    }).catch(() => {
      throw new Error(`HAProxy did not see ${name} ${status} within ${limitMs} ms: ${JSON.stringify(seen)}\n${out}`);
    });
  };
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  try {
    for (let i = 0; i < INSTANCES.length; i++) await waitFor(i, 'UP');
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, pid: proc.pid ?? 0, view, waitFor, output: () => out, stop };
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
