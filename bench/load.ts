import autocannon, { type RawRequest, type RequestSpec } from 'autocannon';
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { delimiter, join } from 'node:path';
import { removeTempDir, spawnTracked, tempDir } from './proc.ts';

/** What one load run measured. */
export interface Measure {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** A few refused requests, for the report (request line when known, status, body). */
  failures: string[];
}

/** One kind of request. `{hash}` in the path stands for a hash of the plan's `hashes`. */
export interface RequestKind {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Relative share of the requests that are of this kind (default 1). */
  share?: number;
}

/**
 * What a load sends, as data rather than callbacks, so that both generators can run it:
 * autocannon in this process, wrk through a generated Lua script.
 */
export interface LoadPlan {
  kinds: RequestKind[];
  /** The values of `{hash}`: a random one per request, or each in turn when `order` is 'sequential'. */
  hashes?: readonly string[];
  order?: 'random' | 'sequential';
  /**
   * The answers are large (hundreds of KB). wrk then skips its per-response Lua hook, which
   * would copy every body into a Lua string and take the generator's CPU from the server's
   * (measured: see bench/README.md), and counts as non-2xx the statuses
   * ≥ 400 it counts natively; a 1xx or 3xx would go uncounted, and refused requests are
   * counted but not shown.
   */
  largeResponses?: boolean;
  /** The status every answer should have (a short link's 302); any 2xx when absent. Others count as refused. */
  expect?: number;
}

export interface LoadOptions {
  port: number;
  plan: LoadPlan;
  connections: number;
  durationSec?: number;
  /** Stop after this many responses instead of after a duration. */
  amount?: number;
  /** Requests a second in all (autocannon only: plain wrk cannot pace requests). */
  overallRate?: number;
}

const MAX_FAILURES = 5;
const HASH = '{hash}';

export type GeneratorName = 'wrk' | 'autocannon';

export interface Generator {
  name: GeneratorName;
  /** For the report, e.g. "wrk 4.1.0-3+b2, 1 thread". */
  label: string;
  /** Why the choice was made when it is not the default (wrk), else null. */
  note: string | null;
}

/**
 * wrk's thread count: 1. The machine has 2 cores, shared by the server under test, the
 * generator and the kernel's loopback and fsync work. One wrk thread (an epoll loop in C,
 * no garbage collector) drives the reference's paste.php reads until the reference fills
 * its core; two threads gave the same rate and took more CPU, which would come out of what
 * our server's libuv and GC threads get (measured: see bench/README.md). Our server is
 * slower than the reference, so one thread is never what limits a run.
 */
export const WRK_THREADS = 1;

function onPath(cmd: string): string | null {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, cmd);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Absent or not executable in this folder: look in the next one.
    }
  }
  return null;
}

function wrkVersion(file: string): string {
  // `wrk --version` prints "wrk <version> [epoll] Copyright ..." and exits 1.
  const r = spawnSync(file, ['--version'], { encoding: 'utf8' });
  return /^wrk (\S+)/.exec(r.stdout ?? '')?.[1] ?? 'unknown version';
}

/**
 * wrk when it is on PATH, else autocannon. BENCH_LOADGEN=wrk or =autocannon forces one
 * (wrk then has to be installed).
 */
export function chooseGenerator(): Generator {
  const forced = process.env['BENCH_LOADGEN'];
  if (forced !== undefined && forced !== '' && forced !== 'wrk' && forced !== 'autocannon')
    throw new Error(`BENCH_LOADGEN must be wrk or autocannon, not ${forced}`);
  const autocannonLabel = 'autocannon 8 (in the bench process)';
  if (forced === 'autocannon')
    return { name: 'autocannon', label: autocannonLabel, note: 'autocannon forced by BENCH_LOADGEN=autocannon' };
  const wrk = onPath('wrk');
  if (wrk === null) {
    if (forced === 'wrk') throw new Error('BENCH_LOADGEN=wrk but wrk is not on PATH (apt-get install wrk)');
    return {
      name: 'autocannon',
      label: autocannonLabel,
      note:
        'wrk not found on PATH, falling back to autocannon, which shares the 2 cores with the servers and ' +
        'flatters the ratios: apt-get install wrk',
    };
  }
  return {
    name: 'wrk',
    label: `wrk ${wrkVersion(wrk)}, ${WRK_THREADS} thread${WRK_THREADS === 1 ? '' : 's'}`,
    note: null,
  };
}

let chosen: Generator | null = null;

/** The generator this process uses (chosen once). */
export function generator(): Generator {
  chosen ??= chooseGenerator();
  return chosen;
}

/** One load run, by the chosen generator; a paced run (overallRate) always by autocannon. */
export async function load(opts: LoadOptions): Promise<Measure> {
  if (opts.overallRate === undefined && generator().name === 'wrk') return loadWrk(opts);
  return loadAutocannon(opts);
}

/** For the autocannon path: picks each request's kind by share, and its hash. */
function picker(plan: LoadPlan): () => { kind: RequestKind; path: string } {
  const total = plan.kinds.reduce((a, k) => a + (k.share ?? 1), 0);
  const hashes = plan.hashes ?? [];
  let next = 0;
  const hash = (): string => (plan.order === 'sequential' ? (hashes[next++ % hashes.length] as string) : pick(hashes));
  return () => {
    let r = Math.random() * total;
    let kind = plan.kinds[plan.kinds.length - 1] as RequestKind;
    for (const k of plan.kinds) {
      r -= k.share ?? 1;
      if (r < 0) {
        kind = k;
        break;
      }
    }
    return { kind, path: kind.path.includes(HASH) ? kind.path.replace(HASH, hash()) : kind.path };
  };
}

/**
 * One autocannon run. The request line of each request is kept in the client's context so
 * a refused request can be reported exactly.
 */
async function loadAutocannon(opts: LoadOptions): Promise<Measure> {
  const failures: string[] = [];
  const next = picker(opts.plan);
  const expect = opts.plan.expect;
  let refused = 0;
  const spec: RequestSpec = {
    setupRequest: (req: RawRequest, ctx) => {
      const { kind, path } = next();
      ctx['line'] = `${kind.method} ${path}`;
      const out: RawRequest = { ...req, method: kind.method, path, headers: { ...req.headers, ...kind.headers } };
      // A GET after a POST on the same client must not inherit the POST's body.
      if (kind.body !== undefined) out.body = kind.body;
      else if (req.body !== undefined) out.body = Buffer.alloc(0);
      return out;
    },
    onResponse: (status, body, ctx) => {
      if (expect === undefined ? status >= 200 && status <= 299 : status === expect) return;
      refused++;
      if (failures.length < MAX_FAILURES) failures.push(`${String(ctx['line'])} → ${status} ${body.slice(0, 300)}`);
    },
  };
  const result = await autocannon({
    url: `http://127.0.0.1:${opts.port}`,
    connections: opts.connections,
    pipelining: 1,
    timeout: 10,
    requests: [spec],
    ...(opts.amount !== undefined ? { amount: opts.amount } : { duration: opts.durationSec ?? 8 }),
    ...(opts.overallRate !== undefined ? { overallRate: opts.overallRate } : {}),
  });
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: refused,
    errors: result.errors,
    failures,
  };
}

/** A Lua string literal of `s`'s bytes: printable ASCII as is, anything else as \ddd. */
function luaString(s: string): string {
  let out = '"';
  for (const b of Buffer.from(s, 'utf8'))
    out +=
      b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, '0')}`;
  return `${out}"`;
}

/** The raw HTTP/1.1 request of `kind` with `path`, as wrk sends it. */
function rawRequest(kind: RequestKind, path: string, port: number): string {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...kind.headers };
  if (kind.body !== undefined) headers['content-length'] = String(Buffer.byteLength(kind.body));
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `${kind.method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n${kind.body ?? ''}`;
}

/** The line done() prints, JSON after this marker; nothing is read from wrk's human text. */
const RESULT_MARK = 'BENCH_WRK_RESULT ';
/** What a thread prints to stderr when it has had `amount` responses. */
const AMOUNT_MARK = 'BENCH_WRK_AMOUNT_REACHED';

interface WrkResult {
  duration_us: number;
  requests: number;
  bytes: number;
  errors: { connect: number; read: number; write: number; timeout: number; status: number };
  p50_us: number;
  p99_us: number;
  non2xx: number;
  failures: string[];
}

/**
 * The wrk script for a plan. Every request string is built once in init() (a hash-bearing
 * kind as one string per hash), so request() only picks one. response() counts non-2xx
 * answers per thread and keeps the first few (a cost per answer, so left out for
 * `largeResponses`); done() (in wrk's main Lua state, after the run) sums the threads and
 * prints one JSON line with the percentiles read from wrk's latency histogram (1 µs
 * buckets). wrk 4 corrects that histogram for coordinated omission before done() sees it
 * (each latency above twice the mean time between a connection's requests adds samples for
 * the requests a waiting client would have sent), so its p99 is higher than a raw p99 of
 * the same run, as autocannon reports it; compare p99s of one generator only.
 */
export function wrkScript(plan: LoadPlan, port: number, amount: number): string {
  const large = plan.largeResponses === true;
  if (large && amount > 0)
    throw new Error('a run bounded by amount needs the response hook, which largeResponses leaves out');
  const total = plan.kinds.reduce((a, k) => a + (k.share ?? 1), 0);
  let upto = 0;
  const kinds = plan.kinds.map((k, i) => {
    upto += (k.share ?? 1) / total;
    // The last kind takes whatever the float sum of the shares left below 1.
    const bound = i === plan.kinds.length - 1 ? '2' : String(upto);
    if (!k.path.includes(HASH)) return `  { upto = ${bound}, whole = ${luaString(rawRequest(k, k.path, port))} },`;
    const [pre, post] = rawRequest(k, k.path.replace(HASH, '\u0000'), port).split('\u0000') as [string, string];
    return `  { upto = ${bound}, pre = ${luaString(pre)}, post = ${luaString(post)} },`;
  });
  const hashes = plan.hashes ?? [];
  if (hashes.some((h) => !/^[A-Za-z0-9_-]+$/.test(h))) throw new Error('hashes must match [A-Za-z0-9_-]+');
  const responseHook = large
    ? '-- No response() hook: the answers are large; done() takes the count of statuses >= 400 that wrk keeps itself.'
    : `function response(status, headers, body)
  if ${plan.expect === undefined ? 'status < 200 or status > 299' : `status ~= ${plan.expect}`} then
    non2xx = non2xx + 1
    if #failures < max_failures then failures[#failures + 1] = status .. " " .. string.sub(body or "", 1, 300) end
  end
  responses = responses + 1
  if amount > 0 and responses == amount then
    io.stderr:write("${AMOUNT_MARK}\\n")
    io.stderr:flush()
    wrk.thread:stop()
  end
end`;
  return `-- Written by bench/load.ts for one wrk run.
local kinds = {
${kinds.join('\n')}
}
local all_hashes = ${luaString(hashes.join(','))}
local sequential = ${plan.order === 'sequential' ? 'true' : 'false'}
local amount = ${amount}
local max_failures = ${MAX_FAILURES}
local counted_by_wrk = ${large ? 'true' : 'false'}

-- Per-thread state, read by done() through thread:get().
non2xx = 0
failures = {}
local responses = 0
local next_index = 0

function init(args)
  math.randomseed(os.time() + 7919 * (thread_id or 0))
  local hashes = {}
  for h in string.gmatch(all_hashes, "[^,]+") do hashes[#hashes + 1] = h end
  for _, k in ipairs(kinds) do
    if k.pre ~= nil then
      local list = {}
      for i, h in ipairs(hashes) do list[i] = k.pre .. h .. k.post end
      k.list = list
      k.n = #list
    end
  end
end

function request()
  local k = kinds[1]
  if #kinds > 1 then
    local r = math.random()
    for _, c in ipairs(kinds) do
      if r < c.upto then k = c break end
    end
  end
  if k.list == nil then return k.whole end
  if sequential then
    next_index = next_index % k.n + 1
    return k.list[next_index]
  end
  return k.list[math.random(k.n)]
end

${responseHook}

local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
  thread:set("thread_id", #threads)
end

local function json_string(s)
  return '"' .. string.gsub(s, '[%c"\\\\]', function(c) return string.format("\\\\u%04x", string.byte(c)) end) .. '"'
end

function done(summary, latency, requests)
  local bad, fails = 0, {}
  if counted_by_wrk then bad = summary.errors.status end
  for _, t in ipairs(threads) do
    bad = bad + t:get("non2xx")
    for _, f in ipairs(t:get("failures")) do fails[#fails + 1] = json_string(f) end
  end
  local e = summary.errors
  io.write(string.format(
    '${RESULT_MARK}{"duration_us":%d,"requests":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d},' ..
      '"p50_us":%d,"p99_us":%d,"non2xx":%d,"failures":[%s]}\\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), bad, table.concat(fails, ",")))
  io.flush()
end
`;
}

/**
 * One wrk run as a child process: `-t WRK_THREADS -c connections -d duration --latency -s
 * script`. A run bounded by `amount` gets a long -d; the thread stops itself at the amount
 * and says so on stderr, and a SIGINT then ends wrk's wait (wrk reports and runs done()).
 */
async function loadWrk(opts: LoadOptions): Promise<Measure> {
  const dir = await tempDir('wrk');
  try {
    const script = join(dir, 'load.lua');
    await writeFile(script, wrkScript(opts.plan, opts.port, opts.amount ?? 0));
    const durationSec = opts.amount !== undefined ? 600 : (opts.durationSec ?? 8);
    const args = [
      '-t',
      String(WRK_THREADS),
      '-c',
      String(Math.max(opts.connections, WRK_THREADS)),
      '-d',
      `${durationSec}s`,
      '--timeout',
      '10s',
      '--latency',
      '-s',
      script,
      `http://127.0.0.1:${opts.port}`,
    ];
    const proc = spawnTracked('wrk', args);
    let stdout = '';
    let stderr = '';
    let interrupter: NodeJS.Timeout | undefined;
    proc.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (interrupter === undefined && stderr.includes(AMOUNT_MARK)) {
        proc.kill('SIGINT');
        // wrk ignores SIGINT until its threads are started; ask again until it exits.
        interrupter = setInterval(() => proc.kill('SIGINT'), 1_000);
      }
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      proc.once('error', reject);
      proc.once('close', (c) => resolve(c));
    });
    clearInterval(interrupter);
    const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARK));
    if (line === undefined)
      throw new Error(`wrk ${args.join(' ')} exited ${code} without a result:\n${stdout}\n${stderr}`);
    const r = JSON.parse(line.slice(RESULT_MARK.length)) as WrkResult;
    const e = r.errors;
    const errors = e.connect + e.read + e.write + e.timeout;
    const failures =
      errors === 0
        ? r.failures
        : [
            `wrk socket errors: connect ${e.connect}, read ${e.read}, write ${e.write}, timeout ${e.timeout}`,
            ...r.failures,
          ];
    return {
      rps: r.requests / (r.duration_us / 1e6),
      p50: r.p50_us / 1000,
      p99: r.p99_us / 1000,
      requests: r.requests,
      non2xx: r.non2xx,
      errors,
      failures,
    };
  } finally {
    await removeTempDir(dir);
  }
}

export const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

/** A GET of a random hash from `hashes` on every request. */
export function randomGet(path: string, hashes: readonly string[], headers: Record<string, string>): LoadPlan {
  return { kinds: [{ method: 'GET', path: `${path}?hash=${HASH}`, headers }], hashes };
}

/** A 1 KB JSON create body (title + content, language detected by the server). */
export function createBody(): string {
  const content = 'function add(a, b) {\n  return a + b;\n}\n'.repeat(24).slice(0, 960);
  return JSON.stringify({ title: 'bench create', content });
}

/** POSTs of the 1 KB create body. */
export function createRequest(headers: Record<string, string>, share = 1): RequestKind {
  return {
    method: 'POST',
    path: '/api/v1/paste_create.php',
    headers: { ...headers, 'content-type': 'application/json' },
    body: createBody(),
    share,
  };
}

/** `readShare` of requests read a random paste, the rest create one. */
export function mixed(readShare: number, hashes: readonly string[], headers: Record<string, string>): LoadPlan {
  return {
    kinds: [
      { method: 'GET', path: `/api/v1/paste.php?hash=${HASH}`, headers, share: readShare },
      createRequest(headers, 1 - readShare),
    ],
    hashes,
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
