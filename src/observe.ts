import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Reply } from './http/reply.ts';
import type { StoredFiles } from './backend.ts';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { processMetrics } from './metrics/process.ts';
import { Metrics, single, type Counter, type Histogram } from './metrics/registry.ts';
import type { RequestContext } from './pipeline/context.ts';

/** Request latency buckets, in seconds: half a millisecond to five seconds. */
const LATENCY = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** fsync buckets, in seconds. */
const FSYNC = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** How often the paste folder is walked to count what it holds. */
const SCAN_MS = 10 * 60_000;

const METHODS = new Set(['GET', 'HEAD', 'POST']);

/** Whether an Authorization header is `Bearer <token>`, compared in constant time. */
function bearerIs(header: string | undefined, token: string): boolean {
  const sent = /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1];
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What already counts, read at each scrape. */
export interface Sources {
  /** The storage's parts (backend.ts, StorageStats); a backend without one reports zero. */
  cache?: () => { hits: number; misses: number; bytes: number; entries: number };
  sweep?: () => { wiped: number; removed: number };
  pastes: () => { created: number; burned: number; deleted: number };
  log: () => { written: number; dropped: number; unwritten: number; unlogged: number };
  writes?: () => number;
  /** The web pages' parts made once and reused (web/page-parts.ts). */
  parts: () => { counts: Record<string, { made: number; reused: number }>; bytes: number };
  /** The paste files' folder, walked every 10 minutes to count pastes and bytes; none: not walked. */
  pastesDir?: string;
  /** Counts the files' bytes stored; asked a second after start, then by a scrape at most every FILE_COUNT_MS. */
  storedFiles?: () => Promise<StoredFiles>;
}

/** How old the count of stored files may be before a scrape starts another (it answers the last one meanwhile). */
export const FILE_COUNT_MS = 5_000;

/**
 * The server's metrics (README, Metrics): what the request path counts as it goes
 * (requests, latency, 429s, failed authentications, fsyncs), and what the stores, the
 * paste service and the log already count, read when scraped. Labels are bounded: a side,
 * a route pattern, a method among GET/HEAD/POST/other, a status class.
 */
export class ServerMetrics {
  readonly registry = new Metrics();
  readonly #requests: Counter;
  readonly #latency: Histogram;
  readonly #limited: Counter;
  readonly #authFailures: Counter;
  readonly fsync: Histogram;
  #connections = 0;
  readonly #perRequest = new Map<
    string,
    { count: { inc(): void }; time: { observe(v: number): void }; limited: { inc(): void } | null }
  >();
  #sources: Sources | null = null;
  #stored: { pastes: number; bytes: number; at: number } | null = null;
  #files: (StoredFiles & { at: number }) | null = null;
  #counting = false;
  readonly #stops: (() => void)[] = [];

  constructor() {
    const m = this.registry;
    this.#requests = m.counter(
      'paste_http_requests_total',
      'Requests answered, by side, route pattern, method and status class.',
      ['side', 'route', 'method', 'status'],
    );
    this.#latency = m.histogram(
      'paste_http_request_duration_seconds',
      'Time from a request reaching the app to its answer being handed to the socket.',
      ['side', 'route'],
      LATENCY,
    );
    this.#limited = m.counter(
      'paste_rate_limited_total',
      'Requests refused with 429 (a token bucket, failed authentications, wrong passwords, logins), by side.',
      ['side'],
    );
    this.#authFailures = m.counter(
      'paste_auth_failures_total',
      'Failed authentications: API tokens missing, unknown or revoked, and failed web logins.',
      ['kind'],
    );
    this.fsync = m.histogram(
      'paste_fsync_duration_seconds',
      'Time each fsync of a durable write took: the file, then its folder.',
      ['what'],
      FSYNC,
    );
    m.counter(
      'paste_durable_writes_total',
      'Durable writes: files written durably (temp file, fsync, rename or link, fsync of the folder), ' +
        'or on PostgreSQL paste changes committed.',
      [],
      () => single(this.#src().writes?.() ?? 0),
    );
    m.gauge('paste_open_connections', 'Client connections open now.', [], () => single(this.#connections));
    const pastes = (k: 'created' | 'burned' | 'deleted') => () => single(this.#src().pastes()[k]);
    m.counter('paste_pastes_created_total', 'Pastes created.', [], pastes('created'));
    m.counter('paste_pastes_burned_total', 'One-time pastes read, and so burned.', [], pastes('burned'));
    m.counter('paste_pastes_deleted_total', 'Pastes deleted by their owners or admins.', [], pastes('deleted'));
    m.counter('paste_pastes_expired_total', 'Expired pastes whose content the sweep wiped.', [], () =>
      single(this.#src().sweep?.().wiped ?? 0),
    );
    m.counter(
      'paste_tombstones_removed_total',
      'Tombstones of expired or burned pastes the sweep removed after 30 days.',
      [],
      () => single(this.#src().sweep?.().removed ?? 0),
    );
    m.gauge(
      'paste_pastes_stored',
      'Paste files on disk (tombstones included), as of the last walk of the folder.',
      [],
      () => (this.#stored === null ? [] : single(this.#stored.pastes)),
    );
    m.gauge(
      'paste_stored_bytes',
      'Bytes of paste files on disk, kept revisions included, as of the last walk of the folder.',
      [],
      () => (this.#stored === null ? [] : single(this.#stored.bytes)),
    );
    m.gauge(
      'paste_files_stored',
      "Files' bytes stored, one copy however many pastes hold them, as of the last count.",
      [],
      () => {
        const c = this.#countFiles();
        return c === null ? [] : single(c.files);
      },
    );
    m.gauge('paste_file_bytes_stored', 'Bytes of the files stored, as of the last count.', [], () =>
      this.#files === null ? [] : single(this.#files.bytes),
    );
    m.gauge('paste_stored_scan_timestamp_seconds', 'When the paste folder was last walked.', [], () =>
      this.#stored === null ? [] : single(this.#stored.at / 1000),
    );
    const cache = (k: 'hits' | 'misses' | 'bytes' | 'entries') => () => single(this.#src().cache?.()[k] ?? 0);
    m.counter('paste_cache_hits_total', 'Paste reads answered from memory.', [], cache('hits'));
    m.counter('paste_cache_misses_total', 'Paste reads that went to the disk or the database.', [], cache('misses'));
    m.gauge('paste_cache_bytes', 'Bytes the paste cache counts for what it holds.', [], cache('bytes'));
    m.gauge('paste_cache_entries', 'Pastes in the cache.', [], cache('entries'));
    const parts = (k: 'made' | 'reused') => () =>
      Object.entries(this.#src().parts().counts).map(([part, c]) => [[part], c[k]] as const);
    m.counter(
      'paste_page_parts_made_total',
      "Parts of web pages made: a QR code, a paste version's code block, an anonymous visitor's page, a home page.",
      ['part'],
      parts('made'),
    );
    m.counter(
      'paste_page_parts_reused_total',
      'Parts of web pages answered from what was made before, by part.',
      ['part'],
      parts('reused'),
    );
    m.gauge('paste_page_parts_bytes', "Bytes the web pages' parts cache counts for what it holds.", [], () =>
      single(this.#src().parts().bytes),
    );
    const log = (k: 'written' | 'dropped' | 'unwritten' | 'unlogged') => () => single(this.#src().log()[k]);
    m.counter('paste_api_log_lines_written_total', 'API log lines written.', [], log('written'));
    m.counter(
      'paste_api_log_lines_dropped_total',
      'API log lines dropped while the log could not be written.',
      [],
      log('dropped'),
    );
    m.counter(
      'paste_api_log_lines_unlogged_total',
      "API requests without a valid token not logged, past their client's budget of lines.",
      [],
      log('unlogged'),
    );
    m.gauge('paste_api_log_lines_waiting', 'API log lines waiting to be written.', [], log('unwritten'));
  }

  #src(): Sources {
    if (this.#sources === null) throw new Error('metrics scraped before the server was built');
    return this.#sources;
  }

  /** Connects what already counts, starts the process metrics and walking the paste folder (when metrics are on). */
  attach(sources: Sources): void {
    this.#sources = sources;
    this.#stops.push(processMetrics(this.registry));
    if (sources.storedFiles !== undefined) {
      // The first count, so the first scrape already has the gauges rather than none.
      const firstCount = setTimeout(() => void this.#countFiles(), 1_000);
      firstCount.unref();
      this.#stops.push(() => clearTimeout(firstCount));
    }
    const dir = sources.pastesDir;
    if (dir === undefined) return;
    const scan = (): void => void this.#scan(dir).catch(() => undefined);
    const first = setTimeout(scan, 1_000);
    const every = setInterval(scan, SCAN_MS);
    first.unref();
    every.unref();
    this.#stops.push(() => {
      clearTimeout(first);
      clearInterval(every);
    });
  }

  /** Counts a server's open connections. */
  watch(server: Server): void {
    server.on('connection', (socket) => {
      this.#connections++;
      socket.once('close', () => this.#connections--);
    });
  }

  /**
   * Counts one answered request (pipeline/run.ts `serve`). The series of each label set is
   * looked up once, then kept: a request costs one Map lookup and two additions.
   */
  request(side: 'api' | 'web', ctx: RequestContext, status: number): void {
    const key = `${side} ${ctx.method} ${status} ${ctx.pattern}`;
    let s = this.#perRequest.get(key);
    if (s === undefined) {
      const method = METHODS.has(ctx.method) ? ctx.method : 'other';
      s = {
        count: this.#requests.child([side, ctx.pattern, method, `${Math.floor(status / 100)}xx`]),
        time: this.#latency.child([side, ctx.pattern]),
        limited: status === 429 ? this.#limited.child([side]) : null,
      };
      // Methods and statuses outside the usual few are not kept: the key space stays small.
      if (METHODS.has(ctx.method) && this.#perRequest.size < 4096) this.#perRequest.set(key, s);
    }
    s.count.inc();
    s.time.observe((performance.now() - ctx.started) / 1000);
    s.limited?.inc();
  }

  /**
   * The answer to a scrape: the exposition, or 401 when `token` is set and the request does
   * not carry it as a bearer token (compared in constant time).
   */
  scrape(req: IncomingMessage, token: string | null): Reply {
    if (token !== null && !bearerIs(req.headers.authorization, token)) {
      return {
        kind: 'text',
        status: 401,
        body: 'metrics need the bearer token set in METRICS_TOKEN\n',
        headers: { 'www-authenticate': 'Bearer realm="metrics"', 'cache-control': 'no-store' },
      };
    }
    return {
      kind: 'bytes',
      status: 200,
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      body: [this.registry.expose()],
      headers: { 'cache-control': 'no-store' },
    };
  }

  authFailed(kind: 'token' | 'login'): void {
    this.#authFailures.inc([kind]);
  }

  stop(): void {
    for (const s of this.#stops) s();
  }

  /**
   * Starts a count of the stored files when the last is older than FILE_COUNT_MS (and none is
   * running), and answers the last: however often scrapes come, the store is asked at that pace.
   */
  #countFiles(): StoredFiles | null {
    const count = this.#sources?.storedFiles;
    if (
      count !== undefined &&
      !this.#counting &&
      (this.#files === null || Date.now() - this.#files.at >= FILE_COUNT_MS)
    ) {
      this.#counting = true;
      void count()
        .then((c) => void (this.#files = { ...c, at: Date.now() }))
        .catch(() => undefined)
        .finally(() => void (this.#counting = false));
    }
    return this.#files;
  }

  /** Walks the shard folders, counting paste files and their bytes. */
  async #scan(dir: string): Promise<void> {
    let pastes = 0;
    let bytes = 0;
    for (const shard of await readdir(dir).catch(() => [] as string[])) {
      for (const name of await readdir(join(dir, shard)).catch(() => [] as string[])) {
        const s = await stat(join(dir, shard, name)).catch(() => null);
        if (s === null || !s.isFile()) continue;
        // Kept revisions (`<code>.r<N>.json`) count in the bytes, not as pastes.
        if (!/\.r\d+\.json$/.test(name)) pastes++;
        bytes += s.size;
      }
    }
    this.#stored = { pastes, bytes, at: Date.now() };
  }
}
