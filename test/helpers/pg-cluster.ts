import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chown, mkdir, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missing, toolPath } from './tools.ts';

/**
 * A throwaway PostgreSQL cluster from Debian's binaries (initdb in a temporary folder, trust
 * on loopback and its own unix socket only), for the tests (test/helpers/postgres.ts) and the
 * bench (bench/backends.ts). Nothing here registers a test hook.
 */
/** The folder of PostgreSQL's programs (test/helpers/tools.ts finds it), empty when missing: startCluster says so. */
export const PG_BIN = toolPath('postgresql') ?? '';

export interface TestCluster {
  port: number;
  /** The folder holding the cluster's unix socket (`.s.PGSQL.<port>`). */
  socketDir: string;
  /** A DATABASE_URL for the `postgres` superuser on loopback, database `postgres`. */
  adminUrl: string;
}

/** A started cluster and how to stop it (an immediate shutdown) and remove its folder. */
export interface RunningCluster {
  cluster: TestCluster;
  stop(): Promise<void>;
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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A new cluster's folder (owned by the user it runs as), its socket folder and its initdb'd data. */
export async function initCluster(prefix: string) {
  const user = clusterUser();
  const as = user ?? {};
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const socketDir = join(dir, 'socket');
  await mkdir(socketDir);
  if (user !== null) {
    await chown(dir, user.uid, user.gid);
    await chown(socketDir, user.uid, user.gid);
  }
  const data = join(dir, 'data');
  // -N skips initdb's own fsyncs (a throwaway folder); the server itself keeps fsync on.
  execFileSync(
    join(PG_BIN, 'initdb'),
    ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '-N', '--no-instructions'],
    { ...as, stdio: ['ignore', 'ignore', 'pipe'], cwd: dir },
  );
  return { dir, socketDir, data, as };
}

/** Tries at starting a cluster: another process may take the free port before the server binds it. */
const START_ATTEMPTS = 3;

/**
 * Starts a cluster on a free loopback port, through a watchdog shell that holds our end of
 * a pipe: however this process ends (even SIGKILL), the pipe closes, and the shell stops the
 * server and removes its folder. A server that stops by itself ends the shell too, so a
 * failed start is an error (tried again on a new port), never a wait without end.
 */
export async function startCluster(): Promise<RunningCluster> {
  if (PG_BIN === '') throw new Error(`${missing('postgresql')}, or PG_BIN naming the folder of its programs`);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce();
    } catch (err) {
      if (attempt === START_ATTEMPTS) throw err;
    }
  }
}

async function startOnce(): Promise<RunningCluster> {
  const { dir, socketDir, data, as } = await initCluster('pastebin-pg-');
  const port = await freePort();
  const proc = spawn(
    '/bin/sh',
    [
      '-c',
      // The reader waits on our pipe (fd 3: a job's own stdin is /dev/null) to stop the server;
      // the shell waits on the server, whichever way it stops, then removes its folder.
      'exec 3<&0; "$@" & pid=$!; (read _ <&3; kill -QUIT "$pid" 2>/dev/null) & wait "$pid"; rm -rf "$PG_TEST_DIR"',
      'pg-watchdog',
      join(PG_BIN, 'postgres'),
      ...['-D', data, '-k', socketDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=on'],
    ],
    { ...as, stdio: ['pipe', 'ignore', 'pipe'], cwd: dir, env: { ...process.env, PG_TEST_DIR: dir } },
  );
  await new Promise<void>((resolve, reject) => {
    let log = '';
    const onExit = (code: number | null): void => {
      // Lets the reader, still waiting on the pipe, end too.
      proc.stdin?.end();
      reject(new Error(`the test PostgreSQL stopped at start (exit ${code}):\n${log}`));
    };
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
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.stdin?.end();
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { cluster: { port, socketDir, adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres` }, stop };
}
