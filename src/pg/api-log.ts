import type { Sql } from 'postgres';
import type { ApiLog } from '../backend.ts';
import { jsonLine } from '../log/appender.ts';
import { type ApiLogEntry, utcDay } from '../log/entry.ts';
import { LineBuffer } from '../log/line-buffer.ts';
import type { LogPage, LogQuery } from '../log/reader.ts';
import { readApiLog } from './api-log-query.ts';

export interface PgApiLogOptions {
  now?: () => number;
  /** Default 1000. */
  flushIntervalMs?: number;
  /** While inserts fail, lines beyond this many are dropped, oldest first. Default 100 000. */
  maxBufferedLines?: number;
  /** Where insert failures are reported; default stderr. */
  warn?: (message: string) => void;
  /** The database, for messages (never the password). */
  where?: string;
}

const DAY_MS = 86_400_000;
/** Lines one insert takes at most: a failure keeps those not yet inserted, and no statement runs long. */
const BATCH_LINES = 5_000;
/** Rows one prune statement deletes at most, so none runs into the statement timeout. */
const PRUNE_SLICE = 10_000;
const CANONICAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A `\u0000` escape (text columns refuse U+0000), or an escaped backslash, which is left alone. */
const NUL_ESCAPE = /\\(?:\\|u0000)/g;

/**
 * The API log (README, API request log) in `api_log`. As log/appender.ts, `append` only
 * queues (the line as the file log writes it, bytes outside the heap: line-buffer.ts), and a
 * timer, `flush` or `close` inserts the queued lines in batches, so a request never waits on
 * the database. A failed insert keeps its lines, up to `maxBufferedLines`, for the next try.
 */
export class PgApiLog implements ApiLog {
  readonly #now: () => number;
  readonly #flushIntervalMs: number;
  readonly #maxBufferedLines: number;
  readonly #warn: (message: string) => void;
  readonly #where: string;
  #pending = new LineBuffer();
  /** A buffer whose lines were all inserted, kept for the next second's lines to reuse its storage. */
  #spare: LineBuffer | undefined;
  #chain: Promise<void> = Promise.resolve();
  #flushSoon = false;
  #failing = false;
  #written = 0;
  #dropped = 0;
  #droppedReported = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sql: Sql,
    opts: PgApiLogOptions = {},
  ) {
    this.#now = opts.now ?? Date.now;
    this.#flushIntervalMs = opts.flushIntervalMs ?? 1000;
    this.#maxBufferedLines = opts.maxBufferedLines ?? 100_000;
    this.#warn = opts.warn ?? ((message) => void process.stderr.write(`${message}\n`));
    this.#where = opts.where ?? 'the database';
  }

  /** Lines inserted since start (README, Metrics). */
  get written(): number {
    return this.#written;
  }

  /** Lines dropped: beyond the buffer while inserts kept failing, or refused by the database on their own. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Lines waiting in memory (after a failed insert, those kept for the next try). */
  get unwritten(): number {
    return this.#pending.length;
  }

  /** Starts the flush timer, which does not keep the process alive. */
  start(): void {
    if (this.#timer !== undefined) return;
    // flush() only rejects if the warn hook throws; a timer must not crash on that.
    this.#timer = setInterval(() => void this.flush().catch(() => undefined), this.#flushIntervalMs).unref();
  }

  /** Queues one line; the insert happens on the next flush. */
  append(entry: ApiLogEntry): void {
    this.#pending.push(`${jsonLine(storable(entry, this.#now))}\n`);
    this.#trim();
    if (this.#pending.length >= BATCH_LINES && !this.#failing && !this.#flushSoon) {
      this.#flushSoon = true;
      void this.flush().catch(() => undefined);
    }
  }

  /** Inserts everything appended so far. Never rejects: failures are reported and retried. */
  flush(): Promise<void> {
    const run = this.#chain.then(() => this.#insert());
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Stops the timer and inserts what is left. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  read(query: LogQuery): Promise<LogPage> {
    return readApiLog(this.sql, query);
  }

  /** Deletes the lines dated before (today - retentionDays), by UTC date, as the file log deletes its files. */
  async prune(retentionDays: number, now: number): Promise<void> {
    const cutoff = Date.parse(`${utcDay(now - retentionDays * DAY_MS)}T00:00:00.000Z`);
    for (;;) {
      const gone = await this.sql`
        delete from api_log where id in (
          select id from api_log where time < to_timestamp(${cutoff}::float8 / 1000) limit ${PRUNE_SLICE})`;
      if (gone.count < PRUNE_SLICE) return;
    }
  }

  async #insert(): Promise<void> {
    this.#flushSoon = false;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = this.#spare ?? new LineBuffer();
    this.#spare = undefined;
    try {
      while (batch.length > 0) {
        const n = Math.min(BATCH_LINES, batch.length);
        await this.#insertLines(batch, n);
        batch.drop(n);
      }
    } catch (err) {
      // Keep the lines not inserted, ahead of those appended meanwhile.
      batch.pushAll(this.#pending);
      this.#pending = batch;
      this.#trim();
      if (!this.#failing) {
        this.#failing = true;
        this.#warn(
          `api log: cannot write to ${this.#where} (${describe(err)}); ` +
            `keeping up to ${this.#maxBufferedLines} lines in memory and retrying`,
        );
      }
      return;
    }
    if (batch.clear()) this.#spare = batch;
    this.#recovered();
  }

  /**
   * Inserts the first `n` lines in one statement. One the database refuses for what it holds
   * (a data exception, SQLSTATE class 22) must not hold back the rest for good: those lines
   * are then inserted one by one, and the ones refused alone are dropped and reported.
   */
  async #insertLines(lines: LineBuffer, n: number): Promise<void> {
    try {
      await insert(this.sql, lines.bytes(0, n));
      this.#written += n;
      return;
    } catch (err) {
      if (!isDataException(err)) throw err;
    }
    let refused = 0;
    let reason = '';
    try {
      for (let i = 0; i < n; i++) {
        try {
          await insert(this.sql, lines.bytes(i, i + 1));
          this.#written += 1;
        } catch (err) {
          if (!isDataException(err)) {
            lines.drop(i);
            throw err;
          }
          refused += 1;
          this.#dropped += 1;
          reason = describe(err);
        }
      }
    } finally {
      if (refused > 0)
        this.#warn(`api log: ${refused} ${refused === 1 ? 'line' : 'lines'} the database refuses dropped (${reason})`);
    }
  }

  /** Drops the oldest lines beyond maxBufferedLines. */
  #trim(): void {
    const over = this.#pending.length - this.#maxBufferedLines;
    if (over <= 0) return;
    this.#pending.drop(over);
    this.#dropped += over;
  }

  #recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    const lost = this.#dropped - this.#droppedReported;
    this.#droppedReported = this.#dropped;
    this.#warn(`api log: writing again${lost > 0 ? `; ${lost} lines were dropped` : ''}`);
  }
}

/**
 * Inserts lines (JSON objects, each ending in a newline) as one JSON array, in their order.
 * U+0000, which a text column refuses, becomes U+FFFD.
 */
async function insert(sql: Sql, bytes: Buffer): Promise<void> {
  const array = `[${bytes.toString('utf8', 0, bytes.length - 1).replaceAll('\n', ',')}]`.replace(NUL_ESCAPE, (m) =>
    m === '\\\\' ? m : '\\ufffd',
  );
  await sql`
    insert into api_log (time, token_id, user_id, method, endpoint, endpoint_length, status, ip, duration_ms,
      request_id, error, unlogged)
    select time, token_id, user_id, method, endpoint, endpoint_length, status, ip, duration_ms, request_id, error, unlogged
    from rows from (json_to_recordset(${array}::text::json) as (time timestamptz, token_id text, user_id integer,
      method text, endpoint text, endpoint_length integer, status smallint, ip text, duration_ms float8,
      request_id text, error text, unlogged integer)) with ordinality as x
    order by x.ordinality`;
}

/**
 * The entry as a row can hold it: a time of another shape than toISOString's is rewritten
 * (the file log files such a line under its parsed day, or today's), and a number JSON would
 * write as null becomes 0. Nearly every entry passes as it is, without a copy.
 */
function storable(e: ApiLogEntry, now: () => number): ApiLogEntry {
  const timeOk = CANONICAL_TIME.test(e.time);
  const numbersOk =
    Number.isInteger(e.status) &&
    Number.isFinite(e.duration_ms) &&
    (e.user_id === null || Number.isSafeInteger(e.user_id)) &&
    (e.unlogged === undefined || Number.isSafeInteger(e.unlogged));
  if (timeOk && numbersOk) return e;
  const ms = Date.parse(e.time);
  return {
    ...e,
    time: timeOk ? e.time : new Date(Number.isFinite(ms) ? ms : now()).toISOString(),
    status: Number.isInteger(e.status) ? e.status : 0,
    duration_ms: Number.isFinite(e.duration_ms) ? e.duration_ms : 0,
    user_id: e.user_id === null || Number.isSafeInteger(e.user_id) ? e.user_id : null,
    ...(e.unlogged === undefined ? {} : { unlogged: Number.isSafeInteger(e.unlogged) ? e.unlogged : 0 }),
  };
}

const isDataException = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
};

function describe(err: unknown): string {
  return err instanceof Error ? err.message || String((err as { code?: unknown }).code) : String(err);
}
