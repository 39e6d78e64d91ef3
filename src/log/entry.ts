/** One line of the API log (README, API request log). Callers build it clean: no secrets, no query string. */
export interface ApiLogEntry {
  /** ISO 8601; its UTC date picks the file the line goes to. */
  time: string;
  token_id: string | null;
  user_id: number | null;
  method: string;
  /** The path only, without the query string. */
  endpoint: string;
  status: number;
  ip: string;
  duration_ms: number;
  /** The answer's `X-Request-Id`, on the lines of refused requests (README, Request ids). */
  request_id?: string;
  error?: string;
  /** Requests of this client not logged since its previous line, past its budget (log/line-budget.ts). */
  unlogged?: number;
  /** Read back only: an `endpoint` longer than MAX_CHARS.endpoint was logged cut, and this was its length. */
  endpoint_length?: number;
}

/**
 * The most characters a line keeps of each string field (README, API request log); a
 * longer value is cut and ends in "…". The request line is the client's to choose, up to
 * the header size limit, so without these one request could write kilobytes of log.
 */
export const MAX_CHARS = {
  token_id: 64,
  method: 32,
  endpoint: 200,
  ip: 64,
  request_id: 64,
  error: 300,
} as const;

/** `s`, or its first `max` characters and "…" (never half of a surrogate pair) when longer. */
export function bounded(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${s.slice(0, end)}…`;
}

/** A log file's place in the log: its UTC day, then its rotation index (0 = no suffix). */
export interface LogFileId {
  /** YYYY-MM-DD */
  day: string;
  index: number;
}

const FILE_RE = /^api-(\d{4}-\d{2}-\d{2})(?:\.([1-9]\d{0,8}))?\.jsonl$/;

/** `api-YYYY-MM-DD.jsonl`, then `api-YYYY-MM-DD.1.jsonl`, `.2`, ... once a file is full. */
export function logFileName(id: LogFileId): string {
  return id.index === 0 ? `api-${id.day}.jsonl` : `api-${id.day}.${id.index}.jsonl`;
}

/** The inverse of `logFileName`; undefined for any other file name. */
export function parseLogFileName(name: string): LogFileId | undefined {
  const m = FILE_RE.exec(name);
  if (m === null || m[1] === undefined) return undefined;
  return { day: m[1], index: m[2] === undefined ? 0 : Number(m[2]) };
}

/** Orders log files oldest first: by day, then rotation index. */
export function compareLogFiles(a: LogFileId, b: LogFileId): number {
  if (a.day !== b.day) return a.day < b.day ? -1 : 1;
  return a.index - b.index;
}

/** The UTC day of a time as toISOString() writes it, read off its text; undefined for any other shape. */
export const dayOf = (iso: string): string | undefined => (ISO_UTC_RE.test(iso) ? iso.slice(0, 10) : undefined);
const ISO_UTC_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** toISOString() of a time, remembered for the last millisecond asked: a busy server logs many lines in one. */
export class IsoTimes {
  #ms = Number.NaN;
  #iso = '';

  of(ms: number): string {
    if (ms !== this.#ms) {
      this.#ms = ms;
      this.#iso = new Date(ms).toISOString();
    }
    return this.#iso;
  }
}

/** The UTC date (YYYY-MM-DD) of an epoch-ms instant. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * No line is longer than this, newline included, whatever its strings hold: every string
 * at its MAX_CHARS of control characters (six bytes each, written `\u0001`), the numbers
 * at their longest. Checked by test/log/appender.test.ts.
 */
export const MAX_LINE_BYTES = 4608;
