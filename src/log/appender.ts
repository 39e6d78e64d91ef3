import { appendFile, mkdir, open, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno } from '../storage/errors.ts';
import { listDir } from '../storage/fs.ts';
import { ApiLogBuffer, type ApiLogBufferOptions, type ApiLogPort, describe, type LogGroup } from './api-log-buffer.ts';
import { bounded, dayOf, logFileName, MAX_CHARS, parseLogFileName, utcDay } from './entry.ts';
import type { ApiLogEntry } from './entry.ts';
import { type LogPage, type LogQuery, readLog } from './reader.ts';

export interface LogAppenderOptions extends ApiLogBufferOptions {
  dir: string;
  now?: () => number;
  /** A file that would grow past this moves on to the next rotation index. Default 64 MiB. */
  maxFileBytes?: number;
  /** Files dated more than this many days before today are deleted by prune(). Default 30. */
  retentionDays?: number;
}

/** Where the next line of a day goes. */
interface Tail {
  index: number;
  size: number;
}

const DAY_MS = 86_400_000;
/** A day's lines reaching this many bytes are written without waiting for the timer. */
const FLUSH_BYTES = 1024 * 1024;
const NEWLINE = Buffer.from('\n');

/**
 * The API log in the data folder's JSON Lines files, a file a UTC day (README, API request
 * log): api-log-buffer.ts queues the lines and writes each day's with one append per file.
 * Logs are not acknowledged writes, hence no fsync.
 */
export class LogAppender extends ApiLogBuffer<undefined> {
  readonly #files: DayFiles;
  readonly #dir: string;
  #pruneTimer: NodeJS.Timeout | undefined;

  constructor(opts: LogAppenderOptions) {
    const files = new DayFiles(opts);
    super(files, opts);
    this.#files = files;
    this.#dir = opts.dir;
  }

  /** Lines waiting in memory. */
  get buffered(): number {
    return this.unwritten;
  }

  /** Starts the flush timer and a daily prune (one now). Neither keeps the process alive. */
  override start(): void {
    if (this.#pruneTimer !== undefined) return;
    super.start();
    const prune = (): void => {
      this.prune().catch((err: unknown) => this.warn(`api log: prune failed: ${describe(err)}`));
    };
    this.#pruneTimer = setInterval(prune, DAY_MS).unref();
    prune();
  }

  /** Stops the timers and writes what is left. */
  override async close(): Promise<void> {
    clearInterval(this.#pruneTimer);
    this.#pruneTimer = undefined;
    await super.close();
  }

  /** Deletes log files dated before (today - retentionDays), by UTC date; never under a write. */
  prune(): Promise<void> {
    return this.serial(() => this.#files.prune());
  }

  read(query: LogQuery): Promise<LogPage> {
    return readLog(this.#dir, query);
  }
}

/** The data folder's side of the API log: a group is a UTC day, written to that day's files. */
class DayFiles implements ApiLogPort<undefined> {
  readonly where: string;
  readonly #dir: string;
  readonly #now: () => number;
  readonly #maxFileBytes: number;
  readonly #retentionDays: number;
  readonly #tails = new Map<string, Tail>();
  // Days whose last write failed midway: the file may end in a torn line.
  readonly #torn = new Set<string>();
  #dirReady = false;

  constructor(opts: LogAppenderOptions) {
    this.#dir = opts.dir;
    this.where = opts.dir;
    this.#now = opts.now ?? Date.now;
    this.#maxFileBytes = opts.maxFileBytes ?? 64 * 1024 * 1024;
    this.#retentionDays = opts.retentionDays ?? 30;
  }

  meta(): undefined {
    return undefined;
  }

  add(entry: ApiLogEntry, group: (key: string) => LogGroup<undefined>): LogGroup<undefined> {
    let day = dayOf(entry.time);
    if (day === undefined) {
      const ms = Date.parse(entry.time);
      day = utcDay(Number.isFinite(ms) ? ms : this.#now());
    }
    // JSON.stringify escapes control characters, so a line can never contain "\n".
    const lines = group(day);
    lines.lines.push(`${jsonLine(entry)}\n`);
    return lines;
  }

  ready(group: LogGroup<undefined>): boolean {
    return group.lines.byteLength >= FLUSH_BYTES;
  }

  async prune(): Promise<void> {
    const cutoff = utcDay(this.#now() - this.#retentionDays * DAY_MS);
    for (const name of await listDir(this.#dir)) {
      const id = parseLogFileName(name);
      if (id === undefined || id.day >= cutoff) continue;
      try {
        await unlink(join(this.#dir, name));
      } catch (err) {
        // Someone else removed it first; that is what we wanted.
        if (!isErrno(err, 'ENOENT')) throw err;
      }
      this.#tails.delete(id.day);
    }
  }

  /** Appends the day's lines, moving to the next file whenever one would pass the size cap. */
  async write(day: string, { lines }: LogGroup<undefined>, wrote: (n: number) => void): Promise<void> {
    try {
      if (!this.#dirReady) {
        await mkdir(this.#dir, { recursive: true });
        this.#dirReady = true;
      }
      const tail = this.#tails.get(day) ?? (await this.#locate(day));
      this.#tails.set(day, tail);
      while (lines.length > 0) {
        let prefix = this.#torn.has(day) && tail.size > 0 ? '\n' : '';
        if (tail.size > 0 && tail.size + prefix.length + lines.size(0) > this.#maxFileBytes) {
          tail.index += 1;
          tail.size = 0;
          prefix = '';
        }
        // Take as many lines as fit; an empty file takes at least one, however long.
        let end = 0;
        let bytes = prefix.length;
        do {
          bytes += lines.size(end);
          end += 1;
        } while (end < lines.length && tail.size + bytes + lines.size(end) <= this.#maxFileBytes);
        const chunk = lines.bytes(0, end);
        const file = join(this.#dir, logFileName({ day, index: tail.index }));
        try {
          await appendFile(file, prefix === '' ? chunk : Buffer.concat([NEWLINE, chunk]));
        } catch (err) {
          // Part of the chunk may have landed (a full disk): cut the file back to where it
          // was, so no torn line is left in it. If even that fails, the next write to this
          // day starts on a fresh line (below), isolating the torn one.
          const clean = await truncate(file, tail.size).then(
            () => true,
            () => false,
          );
          throw clean ? new CutBack(err) : err;
        }
        this.#torn.delete(day);
        tail.size += bytes;
        wrote(end);
      }
    } catch (err) {
      // The write may have landed in part: forget what we know of the folder and its files,
      // and start the next write to this day on a fresh line so a torn one stays isolated.
      this.#dirReady = false;
      this.#tails.delete(day);
      if (!(err instanceof CutBack)) this.#torn.add(day);
      throw err instanceof CutBack ? err.cause : err;
    }
  }

  /**
   * Finds the newest file of `day` on disk and its size, so a restart continues there. A
   * file that does not end its last line (a crash cut it) gets its next line on a line of
   * its own, so the cut one stays isolated.
   */
  async #locate(day: string): Promise<Tail> {
    let index = 0;
    for (const name of await listDir(this.#dir)) {
      const id = parseLogFileName(name);
      if (id !== undefined && id.day === day && id.index > index) index = id.index;
    }
    let file;
    try {
      file = await open(join(this.#dir, logFileName({ day, index })), 'r');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return { index, size: 0 };
      throw err;
    }
    try {
      const { size } = await file.stat();
      if (size > 0) {
        const last = Buffer.alloc(1);
        await file.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) this.#torn.add(day);
      }
      return { index, size };
    } finally {
      await file.close();
    }
  }
}

/** A failed append whose file was cut back to where it was: it ends in a whole line. */
class CutBack extends Error {
  constructor(cause: unknown) {
    super('cut back', { cause });
  }
}

/**
 * An entry as one line of JSON, its fields in the README's order, each string cut to its
 * MAX_CHARS (entry.ts), a cut endpoint followed by its full length. Written field by field,
 * where `JSON.stringify(entry)` has to discover the object's keys on every request
 * (measured: see bench/README.md). JSON.stringify escapes control characters but leaves
 * U+2028 and U+2029 raw (valid JSON), and some readers (JavaScript's own line splitting,
 * editors) take those as line breaks; escaped, every consumer sees one line per entry.
 */
export function jsonLine(e: ApiLogEntry): string {
  const token = e.token_id === null ? 'null' : text(bounded(e.token_id, MAX_CHARS.token_id));
  const long = e.endpoint.length > MAX_CHARS.endpoint;
  const endpoint = long
    ? `${text(bounded(e.endpoint, MAX_CHARS.endpoint))},"endpoint_length":${e.endpoint.length}`
    : text(e.endpoint);
  let line =
    `{"time":${text(e.time)},"token_id":${token},"user_id":${num(e.user_id)},` +
    `"method":${text(bounded(e.method, MAX_CHARS.method))},"endpoint":${endpoint},"status":${num(e.status)},` +
    `"ip":${text(bounded(e.ip, MAX_CHARS.ip))},"duration_ms":${num(e.duration_ms)}`;
  if (e.request_id !== undefined) line += `,"request_id":${text(bounded(e.request_id, MAX_CHARS.request_id))}`;
  if (e.error !== undefined) line += `,"error":${text(bounded(e.error, MAX_CHARS.error))}`;
  if (e.unlogged !== undefined) line += `,"unlogged":${num(e.unlogged)}`;
  return `${line}}`;
}

/** Printable ASCII but `"` and `\`: a string JSON writes as it is, between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const LINE_SEPARATORS = /[\u2028\u2029]/g;

/**
 * A string as a JSON literal, with U+2028 and U+2029 escaped too. Most of a line's strings
 * (the time, the method, the address, a path) need no escape: one test instead of a
 * JSON.stringify each.
 */
function text(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`;
  return JSON.stringify(s).replace(LINE_SEPARATORS, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

/**
 * A number as JSON writes it (null for one that is not finite), or null. A duration in
 * hundredths of a ms is written from its integer parts: String() of a fraction goes through
 * V8's slower general double conversion.
 */
function num(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return 'null';
  const hundredths = Math.round(n * 100);
  if (hundredths < 0 || hundredths > 0x7fff_ffff || hundredths / 100 !== n) return String(n);
  const whole = Math.floor(hundredths / 100);
  const cents = hundredths - whole * 100;
  if (cents === 0) return String(whole);
  return cents % 10 === 0 ? `${whole}.${cents / 10}` : `${whole}.${cents < 10 ? '0' : ''}${cents}`;
}
