import { appendFile, mkdir, open, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno } from '../storage/errors.ts';
import { listDir } from '../storage/fs.ts';
import { bounded, dayOf, logFileName, MAX_CHARS, parseLogFileName, utcDay } from './entry.ts';
import type { ApiLogEntry } from './entry.ts';
import { LineBuffer } from './line-buffer.ts';

export interface LogAppenderOptions {
  dir: string;
  now?: () => number;
  /** Default 1000. */
  flushIntervalMs?: number;
  /** A file that would grow past this moves on to the next rotation index. Default 64 MiB. */
  maxFileBytes?: number;
  /** Files dated more than this many days before today are deleted by prune(). Default 30. */
  retentionDays?: number;
  /**
   * While writes fail, lines beyond this many are dropped, oldest first: those of the
   * earliest day, in the order they came. Default 100 000.
   */
  maxBufferedLines?: number;
  /** Where write failures are reported; default stderr. */
  warn?: (message: string) => void;
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

/** A map's entries in the order of their keys, UTC days (YYYY-MM-DD): earliest first. */
const byDay = <T>(m: Map<string, T>): [string, T][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * Buffered, append-only JSON Lines writer for the API log. `append` only queues, as bytes
 * (line-buffer.ts); the timer (or `flush`, or a megabyte queued) writes each day's lines with
 * one append per file, so a request never waits on the disk. Logs are not acknowledged
 * writes, hence no fsync.
 */
export class LogAppender {
  readonly #dir: string;
  readonly #now: () => number;
  readonly #flushIntervalMs: number;
  readonly #maxFileBytes: number;
  readonly #retentionDays: number;
  readonly #maxBufferedLines: number;
  readonly #warn: (message: string) => void;

  /** Lines waiting, by UTC day. */
  #pending = new Map<string, LineBuffer>();
  /**
   * A buffer whose lines were all written, kept for the next day's lines to reuse its
   * storage. A fresh buffer grows by doubling to the size of a second's lines on every
   * flush, each step a new allocation outside the JS heap that only a full collection
   * frees, so under load the collector would run full collections again and again.
   */
  #spare: LineBuffer | undefined;
  /** How many lines #pending holds. */
  #held = 0;
  /** A flush was asked for because a day's lines grew large, and has not started yet. */
  #flushSoon = false;
  readonly #tails = new Map<string, Tail>();
  // Days whose last write failed midway: the file may end in a torn line.
  readonly #torn = new Set<string>();
  #chain: Promise<void> = Promise.resolve();
  #dirReady = false;
  #failing = false;
  #dropped = 0;
  #written = 0;
  #droppedReported = 0;
  #flushTimer: NodeJS.Timeout | undefined;
  #pruneTimer: NodeJS.Timeout | undefined;

  constructor(opts: LogAppenderOptions) {
    this.#dir = opts.dir;
    this.#now = opts.now ?? Date.now;
    this.#flushIntervalMs = opts.flushIntervalMs ?? 1000;
    this.#maxFileBytes = opts.maxFileBytes ?? 64 * 1024 * 1024;
    this.#retentionDays = opts.retentionDays ?? 30;
    this.#maxBufferedLines = opts.maxBufferedLines ?? 100_000;
    this.#warn = opts.warn ?? ((message) => void process.stderr.write(`${message}\n`));
  }

  /** Lines waiting in memory. */
  get buffered(): number {
    return this.#held;
  }

  /** Lines dropped so far because the buffer was full while writes kept failing. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Lines written since start (README, Metrics). */
  get written(): number {
    return this.#written;
  }

  /** Lines still waiting to be written (after a failed write, those kept for the next try). */
  get unwritten(): number {
    return this.#held;
  }

  /** Starts the flush timer and a daily prune (one now). Neither keeps the process alive. */
  start(): void {
    if (this.#flushTimer !== undefined) return;
    // flush() only rejects if the caller's own warn hook throws; a timer must not crash on that.
    this.#flushTimer = setInterval(() => void this.flush().catch(() => undefined), this.#flushIntervalMs).unref();
    const prune = (): void => {
      this.prune().catch((err: unknown) => this.#warn(`api log: prune failed: ${describe(err)}`));
    };
    this.#pruneTimer = setInterval(prune, DAY_MS).unref();
    prune();
  }

  /** Queues one line; the write happens on the next flush. */
  append(entry: ApiLogEntry): void {
    let day = dayOf(entry.time);
    if (day === undefined) {
      const ms = Date.parse(entry.time);
      day = utcDay(Number.isFinite(ms) ? ms : this.#now());
    }
    // JSON.stringify escapes control characters, so a line can never contain "\n".
    let lines = this.#pending.get(day);
    if (lines === undefined) {
      lines = this.#spare ?? new LineBuffer();
      this.#spare = undefined;
      this.#pending.set(day, lines);
    }
    lines.push(`${jsonLine(entry)}\n`);
    this.#held += 1;
    this.#trim();
    if (lines.byteLength >= FLUSH_BYTES && !this.#failing && !this.#flushSoon) {
      this.#flushSoon = true;
      void this.flush().catch(() => undefined);
    }
  }

  /** Writes everything appended so far. Never rejects: failures are reported and retried. */
  flush(): Promise<void> {
    return this.#serial(() => this.#write());
  }

  /** Stops the timers and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.#flushTimer);
    clearInterval(this.#pruneTimer);
    this.#flushTimer = undefined;
    this.#pruneTimer = undefined;
    await this.flush();
  }

  /** Deletes log files dated before (today - retentionDays), by UTC date. */
  prune(): Promise<void> {
    return this.#serial(async () => {
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
    });
  }

  // Flushes and prunes run one at a time, so appends to a file never interleave or reorder
  // and prune never deletes a file under a write.
  #serial(task: () => Promise<void>): Promise<void> {
    const run = this.#chain.then(task);
    this.#chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  async #write(): Promise<void> {
    this.#flushSoon = false;
    if (this.#held === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    this.#held = 0;
    const unwritten = new Map<string, LineBuffer>();
    let failure: PartialWrite | undefined;
    for (const [day, lines] of byDay(batch)) {
      let written = 0;
      if (failure === undefined) {
        try {
          written = await this.#writeDay(day, lines);
        } catch (err) {
          failure = err instanceof PartialWrite ? err : new PartialWrite(0, err);
          written = failure.written;
        }
      }
      lines.drop(written);
      if (lines.length > 0) unwritten.set(day, lines);
      else if (lines.clear()) this.#spare = lines;
    }
    if (failure === undefined) {
      this.#recovered();
      return;
    }
    // Keep the lines, ahead of anything appended meanwhile, for the next flush.
    for (const [day, newer] of this.#pending) {
      const older = unwritten.get(day);
      if (older === undefined) unwritten.set(day, newer);
      else older.pushAll(newer);
    }
    this.#pending = unwritten;
    this.#held = 0;
    for (const lines of unwritten.values()) this.#held += lines.length;
    this.#trim();
    if (!this.#failing) {
      this.#failing = true;
      this.#warn(
        `api log: cannot write to ${this.#dir} (${describe(failure.cause)}); ` +
          `keeping up to ${this.#maxBufferedLines} lines in memory and retrying`,
      );
    }
  }

  /** Appends `lines` for `day`, moving to the next file whenever one would pass the size cap. */
  async #writeDay(day: string, lines: LineBuffer): Promise<number> {
    let written = 0;
    try {
      if (!this.#dirReady) {
        await mkdir(this.#dir, { recursive: true });
        this.#dirReady = true;
      }
      const tail = this.#tails.get(day) ?? (await this.#locate(day));
      this.#tails.set(day, tail);
      while (written < lines.length) {
        let prefix = this.#torn.has(day) && tail.size > 0 ? '\n' : '';
        if (tail.size > 0 && tail.size + prefix.length + lines.size(written) > this.#maxFileBytes) {
          tail.index += 1;
          tail.size = 0;
          prefix = '';
        }
        // Take as many lines as fit; an empty file takes at least one, however long.
        let end = written;
        let bytes = prefix.length;
        do {
          bytes += lines.size(end);
          end += 1;
        } while (end < lines.length && tail.size + bytes + lines.size(end) <= this.#maxFileBytes);
        const chunk = lines.bytes(written, end);
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
        this.#written += end - written;
        written = end;
      }
      return written;
    } catch (err) {
      // The write may have landed in part: forget what we know of the folder and its files,
      // and start the next write to this day on a fresh line so a torn one stays isolated.
      this.#dirReady = false;
      this.#tails.delete(day);
      if (!(err instanceof CutBack)) this.#torn.add(day);
      throw new PartialWrite(written, err instanceof CutBack ? err.cause : err);
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

  /** Drops the oldest lines beyond #maxBufferedLines (earliest day first). */
  #trim(): void {
    if (this.#held <= this.#maxBufferedLines) return;
    for (const [day, lines] of byDay(this.#pending)) {
      const n = Math.min(lines.length, this.#held - this.#maxBufferedLines);
      lines.drop(n);
      this.#held -= n;
      this.#dropped += n;
      if (lines.length === 0) this.#pending.delete(day);
      if (this.#held <= this.#maxBufferedLines) return;
    }
  }

  #recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    const lost = this.#dropped - this.#droppedReported;
    this.#droppedReported = this.#dropped;
    this.#warn(`api log: writing again${lost > 0 ? `; ${lost} lines were dropped` : ''}`);
  }
}

/** A failed append whose file was cut back to where it was: it ends in a whole line. */
class CutBack extends Error {
  constructor(cause: unknown) {
    super('cut back', { cause });
  }
}

/** A failed day write, with how many of its lines made it to disk before the failure. */
class PartialWrite extends Error {
  readonly written: number;

  constructor(written: number, cause: unknown) {
    super('partial write', { cause });
    this.written = written;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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
  let line = `{"time":${text(e.time)},"token_id":${token},"user_id":${num(e.user_id)},"method":${text(bounded(e.method, MAX_CHARS.method))},"endpoint":${endpoint},"status":${num(e.status)},"ip":${text(bounded(e.ip, MAX_CHARS.ip))},"duration_ms":${num(e.duration_ms)}`;
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
