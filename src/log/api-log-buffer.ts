import type { ApiLogEntry } from './entry.ts';
import { LineBuffer } from './line-buffer.ts';

/**
 * Lines of the API log waiting to be written together, in one place of the backend (the
 * data folder: a UTC day's file; PostgreSQL: the lines to come, one group), and what the
 * backend keeps of them besides (`meta`: PostgreSQL's chunks, the data folder nothing).
 */
export interface LogGroup<M> {
  readonly lines: LineBuffer;
  readonly meta: M;
}

/**
 * What the buffer needs of a backend (README, API request log): how an entry becomes a line
 * of one of its groups, and how a group's lines are written. Everything else (the bound,
 * dropping, counting, retrying, telling the operator) is the buffer's, once for both.
 */
export interface ApiLogPort<M> {
  /** Where lines go, for messages (never a password). */
  readonly where: string;
  /** What a new group keeps besides its lines. */
  meta(): M;
  /**
   * Pushes `entry`'s line (ending in a newline) to the group `group(key)` answers, and
   * answers that group. Groups are written, and dropped while writes fail, in the order of
   * their keys.
   */
  add(entry: ApiLogEntry, group: (key: string) => LogGroup<M>): LogGroup<M>;
  /** Whether `group` has grown enough to be written without waiting for the timer. */
  ready(group: LogGroup<M>): boolean;
  /**
   * Writes the lines of `group`, oldest first, telling `wrote(n)` as each `n` oldest land
   * (the buffer drops them from `group.lines`; the port keeps `meta` in step). A failure
   * throws, after telling what did land.
   */
  write(key: string, group: LogGroup<M>, wrote: (n: number) => void): Promise<void>;
  /** The `n` oldest lines of `group` were dropped unwritten; `meta` follows, if it must. */
  dropped?(group: LogGroup<M>, n: number): void;
  /** `newer`'s lines were appended to `older`'s (after a failed write); `meta` follows, if it must. */
  joined?(older: LogGroup<M>, newer: LogGroup<M>): void;
}

export interface ApiLogBufferOptions {
  /** Default 1000. */
  flushIntervalMs?: number;
  /**
   * While writes fail, lines beyond this many are dropped, oldest first: those of the
   * earliest group, in the order they came. Default 100 000.
   */
  maxBufferedLines?: number;
  /** Where write failures are reported; default stderr. */
  warn?: (message: string) => void;
}

/** A map's entries in the order of their keys (a UTC day sorts as it comes): earliest first. */
const byKey = <T>(m: Map<string, T>): [string, T][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The API log's lines between `append` and the backend (README, API request log): `append`
 * only queues, as bytes (line-buffer.ts), and the timer, `flush` or `close` writes the
 * groups through the port, so a request never waits on the disk or the database. A failed
 * write keeps its lines, up to `maxBufferedLines`, for the next try, and is told once.
 */
export class ApiLogBuffer<M> {
  readonly #port: ApiLogPort<M>;
  readonly #flushIntervalMs: number;
  readonly #maxBufferedLines: number;
  protected readonly warn: (message: string) => void;

  /** Lines waiting, by group. */
  #pending = new Map<string, LogGroup<M>>();
  /**
   * A buffer whose lines were all written, kept for the next group's lines to reuse its
   * storage. A fresh buffer grows by doubling to the size of a second's lines on every
   * flush, each step a new allocation outside the JS heap that only a full collection
   * frees, so under load the collector would run full collections again and again.
   */
  #spare: LineBuffer | undefined;
  /** How many lines #pending holds. */
  #held = 0;
  /** A flush was asked for because a group grew large, and has not started yet. */
  #flushSoon = false;
  #chain: Promise<void> = Promise.resolve();
  #failing = false;
  #written = 0;
  #dropped = 0;
  #droppedReported = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #group = (key: string): LogGroup<M> => {
    let group = this.#pending.get(key);
    if (group === undefined) {
      group = { lines: this.#spare ?? new LineBuffer(), meta: this.#port.meta() };
      this.#spare = undefined;
      this.#pending.set(key, group);
    }
    return group;
  };

  constructor(port: ApiLogPort<M>, opts: ApiLogBufferOptions = {}) {
    this.#port = port;
    this.#flushIntervalMs = opts.flushIntervalMs ?? 1000;
    this.#maxBufferedLines = opts.maxBufferedLines ?? 100_000;
    this.warn = opts.warn ?? ((message) => void process.stderr.write(`${message}\n`));
  }

  /** Lines written since start (README, Metrics). */
  get written(): number {
    return this.#written;
  }

  /** Lines dropped so far because the buffer was full while writes kept failing. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Lines waiting in memory (after a failed write, those kept for the next try). */
  get unwritten(): number {
    return this.#held;
  }

  /** Starts the flush timer, which does not keep the process alive. */
  start(): void {
    if (this.#timer !== undefined) return;
    // flush() only rejects if the warn hook throws; a timer must not crash on that.
    this.#timer = setInterval(() => void this.flush().catch(() => undefined), this.#flushIntervalMs).unref();
  }

  /** Queues one line; the write happens on the next flush. */
  append(entry: ApiLogEntry): void {
    const group = this.#port.add(entry, this.#group);
    this.#held += 1;
    this.#trim();
    if (!this.#failing && !this.#flushSoon && this.#port.ready(group)) {
      this.#flushSoon = true;
      void this.flush().catch(() => undefined);
    }
  }

  /** Writes everything appended so far. Never rejects: failures are reported and retried. */
  flush(): Promise<void> {
    return this.serial(() => this.#write());
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /**
   * Runs `task` after the writes and tasks before it, and before those after: writes never
   * interleave or reorder, and a task of the backend's (pruning files) never runs under one.
   */
  protected serial(task: () => Promise<void>): Promise<void> {
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
    const unwritten = new Map<string, LogGroup<M>>();
    let failure: { cause: unknown } | undefined;
    for (const [key, group] of byKey(batch)) {
      if (failure === undefined) {
        const wrote = (n: number): void => {
          group.lines.drop(n);
          this.#written += n;
        };
        try {
          await this.#port.write(key, group, wrote);
        } catch (cause) {
          failure = { cause };
        }
      }
      if (group.lines.length > 0) unwritten.set(key, group);
      else if (group.lines.clear()) this.#spare = group.lines;
    }
    if (failure === undefined) {
      this.#recovered();
      return;
    }
    // Keep the lines, ahead of anything appended meanwhile, for the next flush.
    for (const [key, newer] of this.#pending) {
      const older = unwritten.get(key);
      if (older === undefined) {
        unwritten.set(key, newer);
        continue;
      }
      older.lines.pushAll(newer.lines);
      this.#port.joined?.(older, newer);
    }
    this.#pending = unwritten;
    this.#held = 0;
    for (const group of unwritten.values()) this.#held += group.lines.length;
    this.#trim();
    if (!this.#failing) {
      this.#failing = true;
      this.warn(
        `api log: cannot write to ${this.#port.where} (${describe(failure.cause)}); ` +
          `keeping up to ${this.#maxBufferedLines} lines in memory and retrying`,
      );
    }
  }

  /** Drops the oldest lines beyond #maxBufferedLines (earliest group first). */
  #trim(): void {
    if (this.#held <= this.#maxBufferedLines) return;
    for (const [key, group] of byKey(this.#pending)) {
      const n = Math.min(group.lines.length, this.#held - this.#maxBufferedLines);
      group.lines.drop(n);
      this.#port.dropped?.(group, n);
      this.#held -= n;
      this.#dropped += n;
      if (group.lines.length === 0) this.#pending.delete(key);
      if (this.#held <= this.#maxBufferedLines) return;
    }
  }

  #recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    const lost = this.#dropped - this.#droppedReported;
    this.#droppedReported = this.#dropped;
    this.warn(`api log: writing again${lost > 0 ? `; ${lost} lines were dropped` : ''}`);
  }
}

/** An error's message, or its code where it has none (some drivers' connection errors). */
export function describe(err: unknown): string {
  return err instanceof Error ? err.message || String((err as { code?: unknown }).code) : String(err);
}
