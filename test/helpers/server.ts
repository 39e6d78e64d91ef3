import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../src/cli.ts';
import { parseConfig } from '../../src/config.ts';
import type { Passwords } from '../../src/crypto/passwords.ts';
import { startServer as startApp, type RunningServer, type ServerOptions } from '../../src/server.ts';
import { backendEnv } from './backend.ts';
import { beforeClusterStops } from './postgres.ts';
import { checkApiAnswer } from './openapi.ts';
import { isHastePath } from '../../src/api/haste.ts';

export const ROOT = new URL('../../', import.meta.url).pathname;

/** A server under test, in this process or in its own. */
export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  /** What the server reported: its faults (in-process) or its stdout and stderr (a process). */
  output: () => string;
  /** Stops it (gracefully unless killed) and resolves with its exit code (0 in-process). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A server in its own process, for what needs a real one (signals, crashes, the browser). */
export interface ProcessServer extends TestServer {
  proc: ChildProcess;
}

/** A server in this process, driven by a clock the test moves. */
export interface AppServer extends TestServer {
  clock: TestClock;
  /** The METRICS_LISTEN port, when the server was given one. */
  metricsPort: number | null;
  /** Runs the background upkeep now (expiry sweep, view counts, state files). */
  upkeep(): Promise<void>;
}

/** A clock for the app's rules (expiry, buckets, sessions, grants): real time plus what the test adds. */
export class TestClock {
  #offset = 0;
  readonly now = (): number => Date.now() + this.#offset;
  advance(ms: number): void {
    this.#offset += ms;
  }
}

export const tempDataDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'paste-test-'));

/** Every server a test file started in this process, with its data folder. */
const started = new Set<{ stop(): Promise<unknown>; dataDir: string }>();

// Setup written once: whatever a test file started is stopped and removed after its tests
// (stop and cleanup may also be called earlier; both are idempotent).
async function stopAll(): Promise<void> {
  await Promise.all([...started].map((s) => s.stop()));
  await Promise.all([...started].map((s) => cleanup(s.dataDir)));
}
after(stopAll);
// Before the test PostgreSQL stops, whose after hook comes first: no pool is cut under a server.
beforeClusterStops(stopAll);

/**
 * Starts the app in this process on a free port, with its own data folder and clock, the
 * way `npm start` builds it (src/server.ts) from the same environment variables.
 */
export async function startServer(
  opts: {
    dataDir?: string;
    env?: Record<string, string>;
    clock?: TestClock;
    passwords?: Passwords;
    upkeep?: ServerOptions['upkeep'];
  } = {},
): Promise<AppServer> {
  const dataDir = opts.dataDir ?? (await tempDataDir());
  const clock = opts.clock ?? new TestClock();
  const config = parseConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...(await backendEnv(dataDir)),
    ...opts.env,
  });
  let out = '';
  const logError = (err: unknown, requestId?: string): void => {
    out += `${requestId === undefined ? '' : `request ${requestId}: `}${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`;
  };
  const warn = (message: string): void => void (out += `${message}\n`);
  const running: RunningServer = await startApp(config, {
    now: clock.now,
    logError,
    warn,
    ...(opts.passwords === undefined ? {} : { passwords: opts.passwords }),
    ...(opts.upkeep === undefined ? {} : { upkeep: opts.upkeep }),
  });
  let stopped: Promise<number> | null = null;
  const server: AppServer = {
    url: running.baseUrl,
    port: running.port,
    dataDir,
    clock,
    metricsPort: running.metricsPort,
    output: () => out,
    upkeep: running.upkeep,
    stop: () => (stopped ??= running.close().then(() => 0)),
  };
  started.add(server);
  return server;
}

/** Starts `src/main.ts` as its own process on a free port, as `npm start` would. */
export async function spawnServer(
  opts: { dataDir?: string; env?: Record<string, string> } = {},
): Promise<ProcessServer> {
  const dataDir = opts.dataDir ?? (await tempDataDir());
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ...(await backendEnv(dataDir)),
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 20_000);
    const check = (): void => {
      const m = /listening on http:\/\/(?:\[[^\]]+\]|[^:]+):(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.stdout?.off('data', check);
        resolve(Number(m[1]));
      }
    };
    proc.stdout?.on('data', check);
    void exited.then((code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  const env = { BASE_URL: `http://localhost:${port}`, ...opts.env };
  return {
    url: env.BASE_URL,
    port,
    dataDir,
    proc,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** One event of the server's own log (README, Server log). */
export interface LogEvent {
  time: string;
  level: 'info' | 'warn' | 'error';
  message: string;
  [field: string]: unknown;
}

/**
 * The events a server process printed: every line of its output must be one JSON event
 * (npm's own lines, when run through npm, are skipped).
 */
export function events(out: string): LogEvent[] {
  return out
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('>') && !line.startsWith('npm '))
    .map((line) => {
      const e = JSON.parse(line) as LogEvent;
      if (typeof e.time !== 'string' || typeof e.level !== 'string' || typeof e.message !== 'string')
        throw new Error(`not a log event: ${line}`);
      return e;
    });
}

/** Runs a CLI command in-process against a data folder; returns what it printed. */
export async function cli(
  dataDir: string,
  args: string[],
  stdin = '',
  extraEnv: Record<string, string> = {},
): Promise<string> {
  const lines: string[] = [];
  const env = { DATA_DIR: dataDir, ...(await backendEnv(dataDir)), ...extraEnv };
  await runCli(args, { env, stdout: (l) => lines.push(l), readStdin: async () => stdin });
  return lines.join('\n');
}

/** Creates a user (unless it exists) and a token for it; returns the token secret. */
export async function makeToken(
  dataDir: string,
  opts: { user?: string; scopes?: string; rate?: number; admin?: boolean } = {},
): Promise<string> {
  const user = opts.user ?? 'alice';
  try {
    await cli(dataDir, ['user', 'add', user, ...(opts.admin ? ['--admin'] : [])]);
  } catch (err) {
    if (!(err instanceof Error && err.message.includes('already exists'))) throw err;
  }
  return cli(dataDir, [
    'token',
    'create',
    '--user',
    user,
    '--scopes',
    opts.scopes ?? 'read,write',
    '--rate',
    String(opts.rate ?? 0),
  ]);
}

export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-style escape hatch avoided: tests read fields off this by name.
  json: Record<string, unknown> & { ok?: boolean; error?: string };
}

/**
 * A raw node:http request (fetch would normalise paths and hide some headers).
 * `body` objects are sent as JSON unless `form` is set.
 */
export function req(
  /** `localAddress`: the address the request comes from (another of 127.0.0.0/8, say). */
  server: { port: number; localAddress?: string },
  method: string,
  path: string,
  opts: {
    token?: string;
    headers?: Record<string, string>;
    body?: string | Buffer | Record<string, unknown>;
    form?: boolean;
  } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
  let payload: string | Buffer | undefined;
  if (typeof opts.body === 'string' || Buffer.isBuffer(opts.body)) payload = opts.body;
  else if (opts.body !== undefined) {
    if (opts.form) {
      payload = new URLSearchParams(
        Object.entries(opts.body).map(([k, v]): [string, string] => [k, String(v)]),
      ).toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    } else {
      payload = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
  }
  return new Promise((resolve, reject) => {
    const from = server.localAddress === undefined ? {} : { localAddress: server.localAddress };
    const r = httpRequest({ host: '127.0.0.1', port: server.port, method, path, headers, ...from }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Res['json'] = {};
        try {
          json = JSON.parse(text) as Res['json'];
        } catch {
          // Not every response is JSON (raw.php, pages); tests that expect JSON assert on it.
        }
        const answer = { status: res.statusCode ?? 0, headers: res.headers, text, json };
        // Every API answer a test sees must be what the OpenAPI document says it can be.
        if (path.startsWith('/api/') || isHastePath(path.split('?')[0] ?? '')) {
          try {
            checkApiAnswer(method, path, answer);
          } catch (err) {
            reject(err as Error);
            return;
          }
        }
        resolve(answer);
      });
    });
    r.on('error', reject);
    // An answer that stops short of its Content-Length would leave a test waiting for good.
    r.setTimeout(REQUEST_TIMEOUT_MS, () =>
      r.destroy(new Error(`no complete answer to ${method} ${path} within ${REQUEST_TIMEOUT_MS} ms`)),
    );
    r.end(payload);
  });
}

/** Longer than any answer takes on a slow machine; what stops short of its length waits this long, then fails. */
const REQUEST_TIMEOUT_MS = 30_000;

export const cleanup = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

/**
 * Sends the request head `head` (declaring `declared` body bytes), then streams the body
 * until it is all sent or the server closes the connection. Answers what the server sent
 * back and how many body bytes went out before it closed.
 */
export function uploadUntilClosed(
  port: number,
  head: string,
  declared: number,
): Promise<{ head: string; sent: number }> {
  return new Promise((resolve) => {
    let sent = 0;
    let received = '';
    const socket = connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const pump = (): void => {
      while (sent < declared && !socket.destroyed) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('error', () => {}); // the server closing while we still send
    socket.on('close', () => resolve({ head: received, sent }));
  });
}
