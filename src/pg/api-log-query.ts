import type { Sql } from 'postgres';
import type { ApiLogEntry } from '../log/entry.ts';
import { BadCursorError, type LogPage, type LogQuery } from '../log/reader.ts';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
/** A cursor is the id of the last line of the page before: a positive integer, in decimal. */
const CURSOR_RE = /^[1-9]\d{0,15}$/;

/**
 * One page of `api_log`, newest first, with log/reader.ts's filters, page size and cursor:
 * newest is the order lines were written in (the id), as in the files, so lines written
 * between calls never shift a page. A page gets a cursor only when an older matching line
 * exists, so the page after a full one is never empty (the file reader cannot promise that).
 */
export async function readApiLog(sql: Sql, query: LogQuery): Promise<LogPage> {
  const limit =
    query.limit !== undefined && Number.isFinite(query.limit)
      ? Math.min(MAX_LIMIT, Math.max(1, Math.floor(query.limit)))
      : DEFAULT_LIMIT;
  const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
  const none = sql``;
  // `status / 100` as well, which is what the class's index (migration 6) holds; the bounds keep the meaning exact.
  const c = query.statusClass;
  // NaN bounds nothing, as in the file reader, where every comparison with it is false.
  const from = query.from !== undefined && !Number.isNaN(query.from) ? query.from : null;
  const to = query.to !== undefined && !Number.isNaN(query.to) ? query.to : null;
  const rows = await sql`
    select id, (extract(epoch from time) * 1000)::float8 as at, token_id, user_id, method, endpoint, endpoint_length,
      status, ip, duration_ms, request_id, error, unlogged
    from api_log where true
    ${before === null ? none : sql`and id < ${before}::bigint`}
    ${query.token_id === undefined ? none : sql`and token_id = ${query.token_id}`}
    ${query.user_id === undefined ? none : sql`and user_id = ${query.user_id}::integer`}
    ${query.endpoint === undefined ? none : sql`and endpoint = ${query.endpoint}`}
    ${c === undefined ? none : sql`and status >= ${c * 100} and status < ${(c + 1) * 100} and status / 100 = ${c}::integer`}
    ${from === null ? none : sql`and time >= to_timestamp(${from}::float8 / 1000)`}
    ${to === null ? none : sql`and time < to_timestamp(${to}::float8 / 1000)`}
    order by ${(await fewerInRange(sql, from, to)) ? sql`id + 0` : sql`id`} desc limit ${limit + 1}`;
  const entries = rows.slice(0, limit).map(entryOf);
  const last = rows[limit - 1];
  return { entries, next: rows.length > limit && last !== undefined ? String(last['id']) : null };
}

/** Lines each side of a time filter's end counted at most when choosing how to read (fewerInRange). */
const COUNT_CAP = 100_000;

/**
 * Whether a time filter ending in the past holds fewer lines than were written after its end.
 * Walking the ids down from the newest, the database's usual way, reads every line after the
 * range first; then the range's lines are better read by the time index and sorted (`id + 0`
 * keeps the planner off the id index). Either way the page is the same; the counts, capped,
 * cost a few milliseconds of the time index.
 */
async function fewerInRange(sql: Sql, from: number | null, to: number | null): Promise<boolean> {
  if (to === null) return false;
  const none = sql``;
  const [row] = await sql`select
    (select count(*) from (select 1 from api_log where time < to_timestamp(${to}::float8 / 1000)
      ${from === null ? none : sql`and time >= to_timestamp(${from}::float8 / 1000)`} limit ${COUNT_CAP}) r)::int as range,
    (select count(*) from (select 1 from api_log where time >= to_timestamp(${to}::float8 / 1000) limit ${COUNT_CAP}) n)::int as newer`;
  return (row?.['range'] as number) < (row?.['newer'] as number);
}

function decodeCursor(cursor: string): string {
  if (!CURSOR_RE.test(cursor) || !Number.isSafeInteger(Number(cursor))) throw new BadCursorError();
  return cursor;
}

/** A row as the file log's line reads back: its fields in the same order, the optional ones only when set. */
function entryOf(r: Record<string, unknown>): ApiLogEntry {
  const e: ApiLogEntry = {
    time: new Date(r['at'] as number).toISOString(),
    token_id: r['token_id'] as string | null,
    user_id: r['user_id'] as number | null,
    method: r['method'] as string,
    endpoint: r['endpoint'] as string,
  } as ApiLogEntry;
  if (r['endpoint_length'] !== null) e.endpoint_length = r['endpoint_length'] as number;
  e.status = r['status'] as number;
  e.ip = r['ip'] as string;
  e.duration_ms = r['duration_ms'] as number;
  if (r['request_id'] !== null) e.request_id = r['request_id'] as string;
  if (r['error'] !== null) e.error = r['error'] as string;
  if (r['unlogged'] !== null) e.unlogged = r['unlogged'] as number;
  return e;
}
