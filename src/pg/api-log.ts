import type { Sql } from 'postgres';
import type { ApiLog } from '../backend.ts';
import { ApiLogBuffer, type ApiLogBufferOptions, type ApiLogPort, type LogGroup } from '../log/api-log-buffer.ts';
import { type ApiLogEntry, bounded, MAX_CHARS, utcDay } from '../log/entry.ts';
import type { LineBuffer } from '../log/line-buffer.ts';
import type { LogPage, LogQuery } from '../log/reader.ts';
import { chunkEntry, readApiLog } from './api-log-query.ts';

export interface PgApiLogOptions extends ApiLogBufferOptions {
  now?: () => number;
  /**
   * Where chunks are inserted; default the pool. A server gives its log a connection of its own (pg/connect.ts,
   * logDriverOptions).
   */
  inserts?: Sql;
  /** The database, for messages (never the password). */
  where?: string;
}

const DAY_MS = 86_400_000;
/** Lines one chunk holds at most (migrations/009-api-log-chunks.sql): a page reads a few of them, not a row a line. */
export const CHUNK_LINES = 1_000;
/** Chunks one prune statement deletes at most, so none runs into the statement timeout. */
const PRUNE_SLICE = 1_000;
const CANONICAL_TIME = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/**
 * A `\u0000` escape (the log's SQL view, `api_log`, cannot make text of U+0000), or an escaped backslash, left alone.
 */
const NUL_ESCAPE = /\\(?:\\|u0000)/g;

/**
 * What a chunk's lines hold, for `api_log_seen`: each token, user, endpoint and status class
 * as the line holds it, and the span of their times (canonical ISO strings, which sort as
 * their instants do: see `storable`). After the oldest lines are dropped it may name more
 * than is left, which is allowed: a chunk listed for a value it lacks is only read for nothing.
 */
interface ChunkFacts {
  lines: number;
  first: string;
  last: string;
  tokens: Set<string>;
  users: Set<number>;
  endpoints: Set<string>;
  classes: Set<number>;
}

const newFacts = (time: string): ChunkFacts => ({
  lines: 0,
  first: time,
  last: time,
  tokens: new Set(),
  users: new Set(),
  endpoints: new Set(),
  classes: new Set(),
});

/** The lines to come are one group: chunks follow the order the lines came in. */
const ALL = '';

/**
 * The API log (README, API request log) in `api_log_chunks`. As in the data folder,
 * api-log-buffer.ts queues the lines and a timer, `flush` or `close` writes them, here a
 * chunk of up to CHUNK_LINES at a time, each one text value and a row per value it holds in
 * `api_log_seen`: far less work for the database than a row and its index entries per line,
 * on every request.
 */
export class PgApiLog extends ApiLogBuffer<ChunkFacts[]> implements ApiLog {
  constructor(
    private readonly sql: Sql,
    opts: PgApiLogOptions = {},
  ) {
    super(new Chunks(opts.inserts ?? sql, opts), opts);
  }

  read(query: LogQuery): Promise<LogPage> {
    return readApiLog(this.sql, query);
  }

  /**
   * Deletes the lines dated before (today - retentionDays), by UTC date, as the file log
   * deletes its files: the chunks wholly before that day, then the older lines of a chunk
   * that straddles it, each left as null in its place (or the chunk, when none is left).
   */
  async prune(retentionDays: number, now: number): Promise<void> {
    const cutoff = Date.parse(`${utcDay(now - retentionDays * DAY_MS)}T00:00:00.000Z`);
    for (;;) {
      const [row] = await this.sql`
        with gone as (
          delete from api_log_chunks where id in (
            select id from api_log_chunks where last_time < to_timestamp(${cutoff}::float8 / 1000) limit ${PRUNE_SLICE})
          returning id),
        seen as (delete from api_log_seen where chunk in (select id from gone))
        select count(*)::int as n from gone`;
      if ((row?.['n'] as number) < PRUNE_SLICE) break;
    }
    const straddling = await this.sql<{ id: string; lines: string }[]>`
      select id::text as id, lines from api_log_chunks where first_time < to_timestamp(${cutoff}::float8 / 1000)`;
    for (const chunk of straddling) {
      // A line deleted leaves a null in its place: a cursor names a line by its place in the chunk.
      const lines = chunk.lines.split('\n');
      const times = lines.map((line) => Date.parse(chunkEntry(line)?.time ?? ''));
      const left = times.filter((t) => t >= cutoff);
      if (left.length === 0) {
        await this.sql`
          with gone as (delete from api_log_chunks where id = ${chunk.id}::bigint returning id)
          delete from api_log_seen where chunk in (select id from gone)`;
        continue;
      }
      const kept = lines.map((line, i) => ((times[i] ?? Number.NaN) < cutoff ? 'null' : line));
      await this.sql`
        update api_log_chunks set lines = ${kept.join('\n')}, line_count = ${left.length},
          first_time = to_timestamp(${Math.min(...left)}::float8 / 1000)
        where id = ${chunk.id}::bigint`;
    }
  }
}

/** PostgreSQL's side of the API log: one group, the lines to come, and what each chunk of them holds. */
class Chunks implements ApiLogPort<ChunkFacts[]> {
  readonly where: string;
  readonly #now: () => number;

  constructor(
    private readonly inserts: Sql,
    opts: PgApiLogOptions,
  ) {
    this.#now = opts.now ?? Date.now;
    this.where = opts.where ?? 'the database';
  }

  meta(): ChunkFacts[] {
    return [];
  }

  add(entry: ApiLogEntry, group: (key: string) => LogGroup<ChunkFacts[]>): LogGroup<ChunkFacts[]> {
    const e = storable(entry, this.#now);
    // The values as the file line holds them (log/appender.ts jsonLine cuts the long ones).
    const token = e.token_id === null ? null : nulless(bounded(e.token_id, MAX_CHARS.token_id));
    const endpoint = nulless(bounded(e.endpoint, MAX_CHARS.endpoint));
    const line = chunkLine(e, token, endpoint);
    const pending = group(ALL);
    pending.lines.push(`${line.includes('\\u0000') ? line.replace(NUL_ESCAPE, nullessEscape) : line}\n`);
    let facts = pending.meta.at(-1);
    if (facts === undefined || facts.lines === CHUNK_LINES) {
      facts = newFacts(e.time);
      pending.meta.push(facts);
    }
    facts.lines += 1;
    if (e.time < facts.first) facts.first = e.time;
    if (e.time > facts.last) facts.last = e.time;
    // What a filter compares: the values as the line holds them.
    if (token !== null) facts.tokens.add(token);
    if (e.user_id !== null) facts.users.add(e.user_id);
    facts.endpoints.add(endpoint);
    facts.classes.add(Math.floor(e.status / 100));
    return pending;
  }

  ready(group: LogGroup<ChunkFacts[]>): boolean {
    return group.lines.length >= CHUNK_LINES * 5;
  }

  /** One chunk after the other, so their ids follow the order of their lines. */
  async write(_key: string, { lines, meta }: LogGroup<ChunkFacts[]>, wrote: (n: number) => void): Promise<void> {
    for (let facts = meta[0]; facts !== undefined; facts = meta[0]) {
      await this.#insertChunk(lines, facts);
      meta.shift();
      wrote(facts.lines);
    }
  }

  /** The chunks to come lose their oldest lines; what they hold is kept as it was, a superset. */
  dropped({ meta }: LogGroup<ChunkFacts[]>, n: number): void {
    let over = n;
    while (over > 0) {
      const first = meta[0];
      if (first === undefined) break;
      const k = Math.min(over, first.lines);
      first.lines -= k;
      over -= k;
      if (first.lines === 0) meta.shift();
    }
  }

  joined(older: LogGroup<ChunkFacts[]>, newer: LogGroup<ChunkFacts[]>): void {
    older.meta.push(...newer.meta);
  }

  /**
   * Inserts the oldest `facts.lines` lines of `lines` as one chunk, and a row of
   * `api_log_seen` for each value it holds, in one statement. A chunk is text of JSON (ASCII
   * escapes for what a text value cannot hold) and its times the span of a Date, so a UTF-8
   * database refuses none for what it holds: a failure is the database's, and retried.
   */
  async #insertChunk(lines: LineBuffer, facts: ChunkFacts): Promise<void> {
    const bytes = lines.bytes(0, facts.lines);
    const kinds: string[] = [];
    const values: string[] = [];
    const add = (kind: string, set: Set<string | number>): void => {
      for (const v of set) {
        kinds.push(kind);
        values.push(String(v));
      }
    };
    add('t', facts.tokens);
    add('u', facts.users);
    add('e', facts.endpoints);
    add('s', facts.classes);
    await this.inserts`
      with chunk as (
        insert into api_log_chunks (first_time, last_time, line_count, lines)
        values (${facts.first}::timestamptz, ${facts.last}::timestamptz,
          ${facts.lines}, ${bytes.toString('utf8', 0, bytes.length - 1)})
        returning id)
      insert into api_log_seen (kind, value, chunk)
      select s.kind::"char", s.value, chunk.id
      from chunk, unnest(${kinds}::text[], ${values}::text[]) as s(kind, value)`;
  }
}

/**
 * A line of a chunk: the fields of the file log's line (log/appender.ts jsonLine), cut as it
 * cuts them, as a JSON array in a fixed order (pg/api-log-query.ts chunkEntry reads it
 * back): time, token id, user id, method, endpoint, status, ip, duration, then request id,
 * error, requests not logged and the cut endpoint's length, as far as one is set. Without
 * the keys a line is half as long, and the lines cross to the database on every request.
 */
function chunkLine(e: ApiLogEntry, token: string | null, endpoint: string): string {
  const fields: unknown[] = [
    e.time,
    token,
    e.user_id,
    bounded(e.method, MAX_CHARS.method),
    endpoint,
    e.status,
    bounded(e.ip, MAX_CHARS.ip),
    e.duration_ms,
    e.request_id === undefined ? null : bounded(e.request_id, MAX_CHARS.request_id),
    e.error === undefined ? null : bounded(e.error, MAX_CHARS.error),
    e.unlogged ?? null,
    e.endpoint.length > MAX_CHARS.endpoint ? e.endpoint.length : null,
  ];
  let n = fields.length;
  while (n > 8 && fields[n - 1] === null) n--;
  return JSON.stringify(n === fields.length ? fields : fields.slice(0, n));
}

/** An escaped U+0000 becomes U+FFFD; an escaped backslash stays. */
const nullessEscape = (m: string): string => (m === '\\\\' ? m : '\\ufffd');

/**
 * `s` with U+0000, which a text value cannot hold, as U+FFFD: what a line's value reads back
 * as (its escape is replaced too), and so what `api_log_seen` lists for it.
 */
const nulless = (s: string): string => (s.includes('\u0000') ? s.replaceAll('\u0000', '\ufffd') : s);

/**
 * The entry as the log's SQL view can read it back (migrations/009-api-log-chunks.sql), with a
 * time whose string sorts as its instant does (a chunk's span is the least and the greatest):
 * a time of another shape than toISOString's in years 0 to 9999 is rewritten (the file log
 * files such a line under its parsed day, or today's), and a number JSON would write as null
 * becomes 0. Nearly every entry passes as it is, without a copy.
 */
function storable(e: ApiLogEntry, now: () => number): ApiLogEntry {
  const timeOk = CANONICAL_TIME.test(e.time);
  const numbersOk =
    Number.isInteger(e.status) &&
    Number.isFinite(e.duration_ms) &&
    (e.user_id === null || Number.isSafeInteger(e.user_id)) &&
    (e.unlogged === undefined || Number.isSafeInteger(e.unlogged));
  if (timeOk && numbersOk) return e;
  return {
    ...e,
    time: timeOk ? e.time : canonicalTime(e.time, now),
    status: Number.isInteger(e.status) ? e.status : 0,
    duration_ms: Number.isFinite(e.duration_ms) ? e.duration_ms : 0,
    user_id: e.user_id === null || Number.isSafeInteger(e.user_id) ? e.user_id : null,
    ...(e.unlogged === undefined ? {} : { unlogged: Number.isSafeInteger(e.unlogged) ? e.unlogged : 0 }),
  };
}

/** `time`'s instant as toISOString writes it, or now's when it has none in years 0 to 9999. */
function canonicalTime(time: string, now: () => number): string {
  const ms = Date.parse(time);
  const iso = Number.isFinite(ms) ? new Date(ms).toISOString() : '';
  return CANONICAL_TIME.test(iso) ? iso : new Date(now()).toISOString();
}
