import type { ServerOptions } from '../../src/server.ts';
import { createTestDatabase } from './postgres.ts';
import { until } from './until.ts';
import { type AppServer, cli, type makeToken, startServer, type TestClock } from './server.ts';

/**
 * Several instances of the service on ONE database (README, Running several instances), each
 * in this process with its own data folder, as a load balancer would have them behind it.
 * `cli` runs a command against the same database, as an operator on any machine would.
 */
export interface Instances {
  url: string;
  all: AppServer[];
  /** The instance a request number `i` goes to: round robin, as a balancer spreads them. */
  at(i: number): AppServer;
  cli(args: string[], stdin?: string): Promise<string>;
  /** A user (made when missing) and a token for them, by the CLI. */
  token(opts?: Parameters<typeof makeToken>[1]): Promise<string>;
}

/** Starts `count` instances on a new database; they stop when the test `t` ends (each holds a pool of connections). */
export async function startInstances(
  t: { after(fn: () => Promise<unknown>): void },
  count = 3,
  opts: {
    env?: Record<string, string>;
    clock?: TestClock;
    /** Each instance's upkeep options, by its number. */
    upkeep?: (i: number) => ServerOptions['upkeep'];
  } = {},
): Promise<Instances> {
  const url = await createTestDatabase();
  // One public address for all, as behind a load balancer.
  const env = { DATABASE_URL: url, BASE_URL: 'http://paste.example', ...opts.env };
  // One after the other: the first applies the schema under the migration lock, the rest find it done.
  const all: AppServer[] = [];
  for (let i = 0; i < count; i++)
    all.push(
      await startServer({
        env,
        ...(opts.clock === undefined ? {} : { clock: opts.clock }),
        ...(opts.upkeep === undefined ? {} : { upkeep: opts.upkeep(i) }),
      }),
    );
  const first = all[0] as AppServer;
  t.after(() => Promise.all(all.map((s) => s.stop())));
  return {
    url,
    all,
    at: (i) => all[i % all.length] as AppServer,
    cli: (args, stdin = '') => cli(first.dataDir, args, stdin, { DATABASE_URL: url }),
    token: async (o = {}) => {
      const user = o.user ?? 'alice';
      try {
        await cli(first.dataDir, ['user', 'add', user, ...(o.admin ? ['--admin'] : [])], '', { DATABASE_URL: url });
      } catch (err) {
        if (!(err instanceof Error && err.message.includes('already exists'))) throw err;
      }
      return cli(
        first.dataDir,
        ['token', 'create', '--user', user, '--scopes', o.scopes ?? 'read,write', '--rate', String(o.rate ?? 0)],
        '',
        { DATABASE_URL: url },
      );
    },
  };
}

/** Polls until `ok` holds and answers how long that took (ms); fails past `limitMs`. */
export function within(limitMs: number, ok: () => Promise<boolean>, what = 'the change'): Promise<number> {
  return until(ok, { timeoutMs: limitMs, what, everyMs: 5 });
}

/** Polls every instance but `except` until each sees the change; answers the slowest one's time. */
export async function seenByAll(
  servers: AppServer[],
  except: AppServer | null,
  ok: (s: AppServer) => Promise<boolean>,
  what: string,
  limitMs = 1_000,
): Promise<number> {
  const times = await Promise.all(
    servers.filter((s) => s !== except).map((s) => within(limitMs, () => ok(s), `${what} (port ${s.port})`)),
  );
  return Math.max(...times);
}
