import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno } from '../storage/errors.ts';
import { listDir } from '../storage/fs.ts';
import { compareLogFiles, parseLogFileName } from './entry.ts';
import type { ApiLogEntry, LogFileId } from './entry.ts';

export interface LogQuery {
  token_id?: string;
  user_id?: number;
  /** Exact path match. */
  endpoint?: string;
  statusClass?: 2 | 3 | 4 | 5;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
  /** Default 50, clamped to 1..500. */
  limit?: number;
  /** `next` from the previous page. */
  cursor?: string;
}

export interface LogPage {
  /** Newest first. */
  entries: ApiLogEntry[];
  /** Continues after the last entry; null once nothing older is left to read. */
  next: string | null;
}

/** Tuning and instrumentation; tests use them to prove the reader stops early. */
export interface ReadLogOptions {
  /** Bytes per backward read. Default 64 KiB. */
  chunkBytes?: number;
  /** Called with the size of every read from disk. */
  onRead?: (bytes: number) => void;
}

/** The `cursor` was not one this reader produced. */
export class BadCursorError extends Error {
  constructor(message = 'malformed log cursor') {
    super(message);
    this.name = 'BadCursorError';
  }
}

const DAY_MS = 86_400_000;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
const NEWLINE = 0x0a;

interface Position {
  name: string;
  id: LogFileId;
  /** Lines starting before this byte offset are still to be read. */
  offset: number;
}

/**
 * One page of the API log, newest first, filtered by `query`. Files are read backwards in
 * chunks and reading stops once the page is full, so cost follows the page, not the log.
 * The cursor is a file name and byte offset: files only grow at the end, so lines appended
 * between calls never shift a page. A full page always gets a cursor unless it ended at the
 * very first line of the log, so the page after it may be empty.
 */
export async function readLog(dir: string, query: LogQuery, opts: ReadLogOptions = {}): Promise<LogPage> {
  const limit =
    query.limit !== undefined && Number.isFinite(query.limit)
      ? Math.min(MAX_LIMIT, Math.max(1, Math.floor(query.limit)))
      : DEFAULT_LIMIT;
  const resume = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const files: { name: string; id: LogFileId }[] = [];
  for (const name of await listDir(dir)) {
    const id = parseLogFileName(name);
    if (id === undefined || !dayOverlaps(id.day, query)) continue;
    if (resume !== undefined && compareLogFiles(id, resume.id) > 0) continue;
    files.push({ name, id });
  }
  files.sort((a, b) => compareLogFiles(b.id, a.id));

  const entries: ApiLogEntry[] = [];
  for (const [i, file] of files.entries()) {
    const fh = await openIfExists(join(dir, file.name));
    if (fh === undefined) continue; // pruned since the listing
    try {
      const size = (await fh.stat()).size;
      // A cursor offset is a line start; the live end of a file may hold a half-written line.
      const fromCursor = resume !== undefined && resume.name === file.name && resume.offset <= size;
      const end = fromCursor ? resume.offset : size;
      for await (const line of linesBackward(fh, end, fromCursor, opts)) {
        const entry = parseEntry(line.text);
        if (entry === undefined || !matches(entry, query)) continue;
        entries.push(entry);
        if (entries.length === limit) {
          const atStart = line.start === 0 && i === files.length - 1;
          return { entries, next: atStart ? null : encodeCursor(file.name, line.start) };
        }
      }
    } finally {
      await fh.close();
    }
  }
  return { entries, next: null };
}

function encodeCursor(name: string, offset: number): string {
  return Buffer.from(JSON.stringify([name, offset])).toString('base64url');
}

function decodeCursor(cursor: string): Position {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw new BadCursorError();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    // JSON.parse of a string only throws SyntaxError.
    throw new BadCursorError();
  }
  if (!Array.isArray(value) || value.length !== 2) throw new BadCursorError();
  const [name, offset] = value as unknown[];
  const id = typeof name === 'string' ? parseLogFileName(name) : undefined;
  if (id === undefined || typeof name !== 'string') throw new BadCursorError();
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) throw new BadCursorError();
  return { name, id, offset };
}

/** Whether a file dated `day` (UTC) can hold entries inside [from, to). */
function dayOverlaps(day: string, q: LogQuery): boolean {
  const start = Date.parse(`${day}T00:00:00.000Z`);
  if (q.to !== undefined && start >= q.to) return false;
  if (q.from !== undefined && start + DAY_MS <= q.from) return false;
  return true;
}

/** Whether an entry passes every filter of `q` (the database backend reads its chunks with it too). */
export function matches(e: ApiLogEntry, q: LogQuery): boolean {
  if (q.token_id !== undefined && e.token_id !== q.token_id) return false;
  if (q.user_id !== undefined && e.user_id !== q.user_id) return false;
  if (q.endpoint !== undefined && e.endpoint !== q.endpoint) return false;
  if (q.statusClass !== undefined && Math.floor(e.status / 100) !== q.statusClass) return false;
  if (q.from !== undefined || q.to !== undefined) {
    const t = Date.parse(e.time);
    if (Number.isNaN(t)) return false;
    if (q.from !== undefined && t < q.from) return false;
    if (q.to !== undefined && t >= q.to) return false;
  }
  return true;
}

/** Parses one line, or undefined when it is not a log entry (torn, blank, foreign). */
function parseEntry(text: string): ApiLogEntry | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    // JSON.parse of a string only throws SyntaxError: a torn or blank line.
    return undefined;
  }
  return validEntry(v);
}

/** `v` as a log entry when it has an entry's fields of their types, else undefined. */
export function validEntry(v: unknown): ApiLogEntry | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const e = v as Record<string, unknown>;
  const ok =
    typeof e['time'] === 'string' &&
    (e['token_id'] === null || typeof e['token_id'] === 'string') &&
    (e['user_id'] === null || typeof e['user_id'] === 'number') &&
    typeof e['method'] === 'string' &&
    typeof e['endpoint'] === 'string' &&
    typeof e['status'] === 'number' &&
    typeof e['ip'] === 'string' &&
    typeof e['duration_ms'] === 'number' &&
    (e['error'] === undefined || typeof e['error'] === 'string');
  return ok ? (v as ApiLogEntry) : undefined;
}

async function openIfExists(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
}

/**
 * Yields the complete lines of bytes [0, end) last to first, with each line's start offset.
 * Only a window of one chunk plus one partial line is held. Unless `aligned`, bytes after
 * the last newline are an unfinished write and are skipped.
 */
async function* linesBackward(
  fh: FileHandle,
  end: number,
  aligned: boolean,
  opts: ReadLogOptions,
): AsyncGenerator<{ text: string; start: number }> {
  const chunkBytes = opts.chunkBytes ?? 64 * 1024;
  let winStart = end;
  // Always the bytes [winStart, lineEnd), where lineEnd is just past the next line's "\n".
  let win: Buffer = Buffer.alloc(0);
  let needAlign = !aligned;
  for (;;) {
    if (needAlign) {
      const nl = win.lastIndexOf(NEWLINE);
      if (nl >= 0) {
        win = win.subarray(0, nl + 1);
        needAlign = false;
        continue;
      }
    } else {
      const nl = win.length >= 2 ? win.lastIndexOf(NEWLINE, win.length - 2) : -1;
      if (nl >= 0 || winStart === 0) {
        const body = win.subarray(nl + 1, win.length - (win.at(-1) === NEWLINE ? 1 : 0));
        if (win.length > 0) yield { text: body.toString('utf8'), start: winStart + nl + 1 };
        if (nl < 0) return;
        win = win.subarray(0, nl + 1);
        continue;
      }
    }
    if (winStart === 0) return;
    const n = Math.min(chunkBytes, winStart);
    const chunk = Buffer.allocUnsafe(n);
    const { bytesRead } = await fh.read(chunk, 0, n, winStart - n);
    opts.onRead?.(bytesRead);
    // Bytes before a line start never change; a short read means the file was replaced.
    if (bytesRead < n) return;
    winStart -= n;
    win = Buffer.concat([chunk, win]);
  }
}
