import type { Sql } from 'postgres';
import type { ApiLogEntry } from '../log/entry.ts';
import { BadCursorError, type LogPage, type LogQuery, matches, validEntry } from '../log/reader.ts';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
/** A cursor is the id of a chunk and the index of a line in it, in decimal: "<chunk>.<line>". */
const CURSOR_RE = /^([1-9]\d{0,15})\.(\d{1,6})$/;
/** Chunks read by the first query of a page; each further query reads twice as many, up to the most. */
const FIRST_CHUNKS = 2;
const MOST_CHUNKS = 64;
/** Characters JSON writes as they are, in a string (log/appender.ts writes the same set plainly). */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Chunks counted at most per value when choosing which filter leads (see `leading`). */
const COUNT_CAP = 10_000;

type Kind = 't' | 'u' | 'e' | 's';
interface Position {
  chunk: string;
  line: number;
}

/**
 * One page of the API log, newest first, with log/reader.ts's filters, page size and cursor:
 * newest is the order lines were written in (chunk ids, then each chunk's lines), as in the
 * files, so lines written between calls never shift a page. The chunks that can hold a match
 * are walked newest first, a few at a time: with a token, user, endpoint or status filter,
 * only the chunks `api_log_seen` lists for it (migrations/009-api-log-chunks.sql), so a value
 * seen only long ago costs a few chunks, not every newer line. Each line is parsed and
 * filtered as the file reader does it. A page gets a cursor only when an older matching line
 * exists, so the page after a full one is never empty (the file reader cannot promise that).
 */
export async function readApiLog(sql: Sql, query: LogQuery): Promise<LogPage> {
  const limit =
    query.limit !== undefined && Number.isFinite(query.limit)
      ? Math.min(MAX_LIMIT, Math.max(1, Math.floor(query.limit)))
      : DEFAULT_LIMIT;
  const resume = query.cursor === undefined ? null : decodeCursor(query.cursor);
  const values = filterValues(query);
  // A text value cannot hold U+0000 (pg/api-log.ts stores it as U+FFFD): such a filter matches
  // no line, as in the files, and is never sent, which the database would refuse.
  if (values.some(([, v]) => v.includes('\u0000'))) return { entries: [], next: null };
  // A line that lacks a filter's string, as JSON writes it, cannot match: skipped unparsed.
  // Only strings JSON writes as they are, which every writer of a line writes alike.
  const needles = [query.token_id, query.endpoint]
    .filter((v): v is string => v !== undefined && PLAIN.test(v))
    .map((v) => `"${v}"`);
  const lead = await leading(sql, values);
  const entries: ApiLogEntry[] = [];
  let last: Position | null = null;
  // Chunks with an id up to `upTo` are still to be read (the resumed one from its cursor's line).
  let upTo = resume?.chunk ?? null;
  for (let batch = FIRST_CHUNKS; ; batch = Math.min(MOST_CHUNKS, batch * 2)) {
    const chunks = await candidates(sql, query, values, lead, upTo, batch);
    for (const chunk of chunks) {
      if (chunk.lines === null) continue;
      const lines = chunk.lines.split('\n');
      const from = resume !== null && chunk.id === resume.chunk ? Math.min(resume.line, lines.length) : lines.length;
      for (let i = from - 1; i >= 0; i--) {
        const line = lines[i] ?? '';
        if (needles.length > 0 && !needles.every((n) => line.includes(n))) continue;
        const entry = chunkEntry(line);
        if (entry === undefined || !matches(entry, query)) continue;
        if (entries.length === limit) return { entries, next: last === null ? null : encodeCursor(last) };
        entries.push(entry);
        last = { chunk: chunk.id, line: i };
      }
    }
    const oldest = chunks.at(-1);
    if (chunks.length < batch || oldest === undefined) return { entries, next: null };
    upTo = String(BigInt(oldest.id) - 1n);
  }
}

/** The filters `api_log_seen` can answer, as its kinds and values (migrations/009-api-log-chunks.sql). */
function filterValues(q: LogQuery): [Kind, string][] {
  const out: [Kind, string][] = [];
  if (q.token_id !== undefined) out.push(['t', q.token_id]);
  if (q.user_id !== undefined) out.push(['u', String(q.user_id)]);
  if (q.endpoint !== undefined) out.push(['e', q.endpoint]);
  if (q.statusClass !== undefined) out.push(['s', String(q.statusClass)]);
  return out;
}

/**
 * Which filter leads the walk: the one whose value the fewest chunks hold (counted up to
 * COUNT_CAP), so that "4xx of one user" walks the user's chunks when the user is rare and the
 * 4xx when they are. The others are checked on each of its chunks.
 */
async function leading(sql: Sql, values: [Kind, string][]): Promise<number> {
  if (values.length < 2) return 0;
  const counts = await sql<{ n: number }[]>`
    select (select count(*) from (select 1 from api_log_seen where kind = f.kind::"char" and value = f.value
      limit ${COUNT_CAP}) x)::int as n
    from unnest(${values.map((v) => v[0])}::text[], ${values.map((v) => v[1])}::text[])
      with ordinality as f(kind, value, i)
    order by f.i`;
  let best = 0;
  for (let i = 1; i < counts.length; i++) if ((counts[i]?.n ?? 0) < (counts[best]?.n ?? 0)) best = i;
  return best;
}

/**
 * Up to `batch` chunks with an id up to `upTo`, newest first, that the leading filter's
 * value is seen in (or any chunk, without one), each with its lines when it may hold a
 * match by the other filters and the time range, else null: the walk goes on from the
 * oldest either way.
 */
async function candidates(
  sql: Sql,
  q: LogQuery,
  values: [Kind, string][],
  lead: number,
  upTo: string | null,
  batch: number,
): Promise<{ id: string; lines: string | null }[]> {
  const none = sql``;
  // NaN bounds nothing, as in the file reader, where every comparison with it is false.
  const from = q.from !== undefined && !Number.isNaN(q.from) ? q.from : null;
  const to = q.to !== undefined && !Number.isNaN(q.to) ? q.to : null;
  const inRange = sql`
    ${from === null ? none : sql`and c.last_time >= to_timestamp(${from}::float8 / 1000)`}
    ${to === null ? none : sql`and c.first_time < to_timestamp(${to}::float8 / 1000)`}`;
  const led = values[lead];
  if (led === undefined)
    return await sql<{ id: string; lines: string | null }[]>`
      select c.id::text as id, c.lines from api_log_chunks c
      where true ${upTo === null ? none : sql`and c.id <= ${upTo}::bigint`} ${inRange}
      order by c.id desc limit ${batch}`;
  const others = values.filter((_, i) => i !== lead);
  return await sql<{ id: string; lines: string | null }[]>`
    select s.chunk::text as id, c.lines
    from (
      select chunk from api_log_seen where kind = ${led[0]}::"char" and value = ${led[1]}
      ${upTo === null ? none : sql`and chunk <= ${upTo}::bigint`}
      order by chunk desc limit ${batch}
    ) s
    left join api_log_chunks c on c.id = s.chunk ${inRange}
      and not exists (
      select 1 from unnest(${others.map((v) => v[0])}::text[], ${others.map((v) => v[1])}::text[]) as o(kind, value)
      where not exists (
        select 1 from api_log_seen x where x.kind = o.kind::"char" and x.value = o.value and x.chunk = s.chunk))
    order by s.chunk desc`;
}

function encodeCursor(p: Position): string {
  return `${p.chunk}.${p.line}`;
}

function decodeCursor(cursor: string): Position {
  const m = CURSOR_RE.exec(cursor);
  if (m === null || !Number.isSafeInteger(Number(m[1]))) throw new BadCursorError();
  return { chunk: m[1] as string, line: Number(m[2]) };
}

/**
 * A chunk's line (pg/api-log.ts chunkLine, or the object line the SQL of migration 9 makes)
 * as the file log's line reads back: the same fields in the same order, the optional ones
 * only when set. Undefined for anything else.
 */
export function chunkEntry(line: string): ApiLogEntry | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    // JSON.parse of a string only throws SyntaxError.
    return undefined;
  }
  if (!Array.isArray(v)) return validEntry(v);
  const [time, token_id, user_id, method, endpoint, status, ip, duration_ms, request_id, error, unlogged, cutFrom] =
    v as unknown[];
  const e: Record<string, unknown> = { time, token_id, user_id, method, endpoint };
  if (cutFrom != null) e['endpoint_length'] = cutFrom;
  Object.assign(e, { status, ip, duration_ms });
  if (request_id != null) e['request_id'] = request_id;
  if (error != null) e['error'] = error;
  if (unlogged != null) e['unlogged'] = unlogged;
  return validEntry(e);
}
