import autocannon, { type RawRequest, type RequestSpec } from 'autocannon';
import { connect, type Socket } from 'node:net';

/** What one autocannon run measured. */
export interface Measure {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** A few refused requests, for the report (request line, status, body). */
  failures: string[];
}

export interface LoadOptions {
  port: number;
  requests: RequestSpec[];
  connections: number;
  durationSec?: number;
  amount?: number;
  overallRate?: number;
}

const MAX_FAILURES = 5;

/**
 * One autocannon run. Each request spec may pick its path in `setupRequest`; the path is
 * kept in the client's context so a refused request can be reported exactly.
 */
export async function load(opts: LoadOptions): Promise<Measure> {
  const failures: string[] = [];
  const requests = opts.requests.map((spec): RequestSpec => {
    const setup = spec.setupRequest;
    return {
      ...spec,
      setupRequest: (req, ctx) => {
        const r = setup === undefined ? req : setup(req, ctx);
        ctx['line'] = `${r.method} ${r.path}`;
        return r;
      },
      onResponse: (status, body, ctx) => {
        if ((status < 200 || status > 299) && failures.length < MAX_FAILURES) {
          failures.push(`${String(ctx['line'])} → ${status} ${body.slice(0, 300)}`);
        }
      },
    };
  });
  const result = await autocannon({
    url: `http://127.0.0.1:${opts.port}`,
    connections: opts.connections,
    pipelining: 1,
    timeout: 10,
    requests,
    ...(opts.amount !== undefined ? { amount: opts.amount } : { duration: opts.durationSec ?? 8 }),
    ...(opts.overallRate !== undefined ? { overallRate: opts.overallRate } : {}),
  });
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    failures,
  };
}

export const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

/** A GET of a random hash from `hashes` on every request. */
export function randomGet(path: string, hashes: readonly string[], headers: Record<string, string>): RequestSpec {
  return {
    method: 'GET',
    headers,
    setupRequest: (req: RawRequest) => ({ ...req, path: `${path}?hash=${pick(hashes)}` }),
  };
}

/** A 1 KB JSON create body (title + content, language detected by the server). */
export function createBody(): string {
  const content = 'function add(a, b) {\n  return a + b;\n}\n'.repeat(24).slice(0, 960);
  return JSON.stringify({ title: 'bench create', content });
}

/** `readShare` of requests read a random paste, the rest create one. */
export function mixed(readShare: number, hashes: readonly string[], headers: Record<string, string>): RequestSpec {
  const body = createBody();
  const postHeaders = { ...headers, 'content-type': 'application/json' };
  return {
    setupRequest: (req: RawRequest) =>
      Math.random() < readShare
        ? { ...req, method: 'GET', path: `/api/v1/paste.php?hash=${pick(hashes)}`, headers: { ...req.headers, ...headers }, body: Buffer.alloc(0) }
        : { ...req, method: 'POST', path: '/api/v1/paste_create.php', headers: { ...req.headers, ...postHeaders }, body },
  };
}

/** A pool of keep-alive sockets that sit idle while a measurement runs. */
export interface IdlePool {
  /** Sockets open right now. */
  open(): number;
  /** Sockets the server closed on us (each is reopened). */
  closedByServer(): number;
  close(): void;
}

const REFRESH_MS = 4_000;

/**
 * Opens `n` sockets, each with one `Connection: keep-alive` request, then leaves them idle.
 * Both servers drop a keep-alive socket after 5 s of silence, so each socket sends one
 * /healthz every 4 s (n/4 requests a second in all) to stay open; a socket closed anyway
 * is counted and reopened.
 */
export async function openIdlePool(port: number, n: number): Promise<IdlePool> {
  // Each socket refreshes in its own slot of the 4 s cycle, so the pings are spread evenly.
  const sockets = new Map<Socket, number>();
  const slices = 40;
  let opened = 0;
  let closed = 0;
  let stopping = false;
  const requestLine = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n\r\n`;
  const openOne = (): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      s.setNoDelay(true);
      s.once('error', reject);
      s.once('connect', () => {
        s.off('error', reject);
        s.on('error', () => s.destroy());
        sockets.set(s, opened++ % slices);
        s.write(requestLine);
        s.once('data', () => resolve(s));
        s.on('data', () => undefined);
        s.once('close', () => {
          sockets.delete(s);
          if (stopping) return;
          closed++;
          void openOne().catch(() => undefined);
        });
      });
    });
  // Open in batches so the listen backlog never overflows.
  for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: Math.min(100, n - i) }, openOne));
  let turn = 0;
  const timer = setInterval(() => {
    const slot = turn++ % slices;
    for (const [s, at] of sockets) if (at === slot) s.write(requestLine);
  }, REFRESH_MS / slices);
  return {
    open: () => sockets.size,
    closedByServer: () => closed,
    close: () => {
      stopping = true;
      clearInterval(timer);
      for (const s of sockets.keys()) s.destroy();
      sockets.clear();
    },
  };
}
