import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import {
  freePort,
  initCluster,
  PG_BIN,
  psql,
  type RunningCluster,
  startCluster,
  type TestCluster,
} from './pg-cluster.ts';

export { PG_BIN, psql, type TestCluster };

/**
 * A throwaway PostgreSQL for the tests of this process (test/helpers/pg-cluster.ts): one
 * cluster, started on first use, a fresh database per `createTestDatabase`, stopped and
 * removed when the tests are done or the process ends.
 */
let cluster: Promise<RunningCluster> | null = null;
let created = 0;

/** The cluster, started on first call; rejects (never skips) when the binaries are missing. */
export async function testCluster(): Promise<TestCluster> {
  cluster ??= startCluster();
  return (await cluster).cluster;
}

/** A new, empty database on the cluster; resolves with its DATABASE_URL. */
export async function createTestDatabase(): Promise<string> {
  const c = await testCluster();
  const name = `test_${process.pid}_${++created}`;
  // The name is made here, of letters, digits and underscores: nothing from outside.
  psql(c, `CREATE DATABASE "${name}"`);
  return `postgres://postgres@127.0.0.1:${c.port}/${name}`;
}

/** What must end before the cluster stops: root `after` hooks run in the order they were registered, ours first. */
const beforeStop: (() => Promise<unknown>)[] = [];

/**
 * Runs `fn` (stopping servers, ending pools) before the cluster stops, so no connection of
 * this process is cut under it: one cut mid-query rejects where nothing is left to listen.
 */
export function beforeClusterStops(fn: () => Promise<unknown>): void {
  beforeStop.push(fn);
}

/**
 * An immediate shutdown (the watchdog sends SIGQUIT: no checkpoint, the folder is thrown
 * away), then the folder goes.
 */
async function stopCluster(): Promise<void> {
  await Promise.allSettled(beforeStop.map((fn) => fn()));
  const running = await cluster?.catch(() => null);
  await running?.stop();
}

after(stopCluster);
// Interrupted: exit, which closes the watchdog's pipe (the test runner stops a file with SIGTERM).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));

/** A cluster a test can stop and start again (a database going away under a server), and its URL. */
export interface OwnCluster {
  url: string;
  /** `pg_ctl stop -m fast`: every connection is cut, new ones are refused. */
  stop(): void;
  start(): void;
  /** `pg_ctl restart -m fast`. */
  restart(): void;
}

/**
 * A cluster of its own, run by pg_ctl rather than the watchdog, so it can be stopped and
 * started while a server uses it; stopped and removed after the test file.
 */
export async function ownCluster(): Promise<OwnCluster> {
  const { dir, socketDir, data, as } = await initCluster('pastebin-pg-own-');
  const port = await freePort();
  const ctl = (...args: string[]): void => {
    execFileSync(join(PG_BIN, 'pg_ctl'), ['-D', data, '-w', '-l', join(dir, 'log'), ...args], {
      ...as,
      stdio: ['ignore', 'ignore', 'pipe'],
      cwd: dir,
    });
  };
  const options = ['-o', `-k ${socketDir} -p ${port} -c listen_addresses=127.0.0.1`];
  ctl('start', ...options);
  after(() => {
    try {
      ctl('stop', '-m', 'immediate');
    } catch {
      // Already stopped by the test.
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => ctl('stop', '-m', 'fast'),
    start: () => ctl('start', ...options),
    restart: () => ctl('restart', '-m', 'fast', ...options),
  };
}
