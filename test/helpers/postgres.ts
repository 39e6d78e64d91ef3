import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { chown, mkdir, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

/**
 * A throwaway PostgreSQL for the tests of this process, from Debian's binaries: one cluster,
 * started on first use (initdb in a temporary folder, trust on loopback and its own unix
 * socket only), a fresh database per `createTestDatabase`, stopped and removed when the
 * tests are done or the process ends.
 */
export const PG_BIN = process.env['PG_BIN'] || '/usr/lib/postgresql/15/bin';

export interface TestCluster {
  port: number;
  /** The folder holding the cluster's unix socket (`.s.PGSQL.<port>`). */
  socketDir: string;
  /** A DATABASE_URL for the `postgres` superuser on loopback, database `postgres`. */
  adminUrl: string;
}

let cluster: Promise<TestCluster> | null = null;
let created = 0;
/** What to stop and remove when done: the server, once started, and its folder. */
let running: ChildProcess | null = null;
let folder: string | null = null;

/** The cluster, started on first call; rejects (never skips) when the binaries are missing. */
export function testCluster(): Promise<TestCluster> {
  cluster ??= startCluster();
  return cluster;
}

/** A new, empty database on the cluster; resolves with its DATABASE_URL. */
export async function createTestDatabase(): Promise<string> {
  const c = await testCluster();
  const name = `test_${process.pid}_${++created}`;
  // The name is made here, of letters, digits and underscores: nothing from outside.
  psql(c, `CREATE DATABASE "${name}"`);
  return `postgres://postgres@127.0.0.1:${c.port}/${name}`;
}

/** Runs one statement as the superuser, through psql over the socket. */
export function psql(c: TestCluster, statement: string, database = 'postgres'): string {
  return execFileSync(
    join(PG_BIN, 'psql'),
    // No psqlrc, quiet, rows as bare values; stop at the first error.
    [
      '-XqtA',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      c.socketDir,
      '-p',
      `${c.port}`,
      '-U',
      'postgres',
      '-d',
      database,
      '-c',
      statement,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  ).trim();
}

/** The uid and gid to run the cluster as: `postgres` when we are root (initdb refuses root), else ourselves. */
function clusterUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      "the PostgreSQL tests run as root need a `postgres` user to run the cluster as (Debian's postgresql package makes one)",
    );
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function startCluster(): Promise<TestCluster> {
  if (!existsSync(join(PG_BIN, 'initdb')) || !existsSync(join(PG_BIN, 'postgres')))
    throw new Error(
      `PostgreSQL's binaries are not in ${PG_BIN}: install Debian's postgresql (apt-get install postgresql) or set PG_BIN`,
    );
  const user = clusterUser();
  const dir = await mkdtemp(join(tmpdir(), 'pastebin-pg-'));
  folder = dir;
  const socketDir = join(dir, 'socket');
  await mkdir(socketDir);
  if (user !== null) {
    await chown(dir, user.uid, user.gid);
    await chown(socketDir, user.uid, user.gid);
  }
  const as = user ?? {};
  const data = join(dir, 'data');
  // -N skips initdb's own fsyncs (a throwaway folder); the server itself keeps fsync on.
  execFileSync(
    join(PG_BIN, 'initdb'),
    ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '-N', '--no-instructions'],
    { ...as, stdio: ['ignore', 'ignore', 'pipe'], cwd: dir },
  );
  const port = await freePort();
  // Through a watchdog shell that holds our end of a pipe: however this process ends (even
  // SIGKILL), the pipe closes, and the shell stops the server and removes its folder.
  const proc = spawn(
    '/bin/sh',
    [
      '-c',
      '"$@" & pid=$!; read _; kill -QUIT "$pid" 2>/dev/null; wait "$pid"; rm -rf "$PG_TEST_DIR"',
      'pg-watchdog',
      join(PG_BIN, 'postgres'),
      ...['-D', data, '-k', socketDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=on'],
    ],
    { ...as, stdio: ['pipe', 'ignore', 'pipe'], cwd: dir, env: { ...process.env, PG_TEST_DIR: dir } },
  );
  running = proc;
  await new Promise<void>((resolve, reject) => {
    let log = '';
    const onExit = (code: number | null): void =>
      reject(new Error(`the test PostgreSQL stopped at start (exit ${code}):\n${log}`));
    proc.once('exit', onExit);
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (chunk: string) => {
      log += chunk;
      if (log.includes('database system is ready to accept connections')) {
        proc.off('exit', onExit);
        resolve();
      }
    });
  });
  // Its log is no longer read, but must keep draining or the server blocks on a full pipe.
  proc.stderr?.resume();
  return { port, socketDir, adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres` };
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
  const proc = running;
  running = null;
  if (proc !== null && proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.stdin?.end();
    await exited;
  }
  if (folder !== null) rmSync(folder, { recursive: true, force: true });
  folder = null;
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
  const user = clusterUser();
  const as = user ?? {};
  const dir = await mkdtemp(join(tmpdir(), 'pastebin-pg-own-'));
  const socketDir = join(dir, 'socket');
  await mkdir(socketDir);
  if (user !== null) {
    await chown(dir, user.uid, user.gid);
    await chown(socketDir, user.uid, user.gid);
  }
  const data = join(dir, 'data');
  execFileSync(
    join(PG_BIN, 'initdb'),
    ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '-N', '--no-instructions'],
    { ...as, stdio: ['ignore', 'ignore', 'pipe'], cwd: dir },
  );
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
