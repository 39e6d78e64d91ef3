import type { Job } from './job.ts';

/** The clock a scheduler reads and sleeps on: the server's, or a test's fake one. */
export interface SchedulerClock {
  now(): number;
  /** Calls `fn` once `ms` have passed; the function returned cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export interface SchedulerOptions {
  jobs: readonly Job[];
  clock: SchedulerClock;
  /** Whether this server does this round of a job done once across the servers sharing the storage. */
  turn(job: string, everyMs: number): Promise<boolean>;
  /** A round that failed (its turn included): told, and the job goes on at its period. */
  report(err: unknown, job: string): void;
}

/** A job and where it stands. */
interface Slot {
  readonly job: Job;
  /** When its next round is due, on the clock. */
  dueAt: number;
  /** Rounds begun or waiting for the one before them to end. */
  pending: number;
  /** The last round asked for: the next one waits for it, so a job never overlaps itself. */
  tail: Promise<void>;
}

/**
 * Runs every job at its period (ARCHITECTURE.md, Background jobs): a round is due `everyMs`
 * after the last one began, on the server's clock, so a test that moves the clock makes it
 * due. A job never overlaps itself; a slow or failing one holds up no other.
 */
export class Scheduler {
  readonly #slots: Slot[];
  readonly #stop = new AbortController();
  #cancel: (() => void) | null = null;

  constructor(private readonly opts: SchedulerOptions) {
    this.#slots = opts.jobs.map((job) => ({ job, dueAt: 0, pending: 0, tail: Promise.resolve() }));
  }

  /** Runs every job now, then each at its period. */
  start(): void {
    const now = this.opts.clock.now();
    for (const slot of this.#slots) slot.dueAt = now;
    this.#wake();
  }

  /**
   * A round of every job now, each after its round in progress, if any; resolves once all
   * have ended (the server's upkeep(), for tests).
   */
  async runAll(): Promise<void> {
    await Promise.all(this.#slots.map((slot) => this.#begin(slot)));
  }

  /** No round begins any more; a round in progress is told to stop, and waited for. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#cancel?.();
    this.#cancel = null;
    await Promise.all(this.#slots.map((slot) => slot.tail));
  }

  /** Begins every idle job that is due, then sleeps until the next is. */
  #wake(): void {
    this.#cancel = null;
    const now = this.opts.clock.now();
    for (const slot of this.#slots) if (slot.pending === 0 && slot.dueAt <= now) void this.#begin(slot);
    this.#plan();
  }

  /** Sleeps until the earliest idle job is due; a job in progress plans again when it ends. */
  #plan(): void {
    this.#cancel?.();
    this.#cancel = null;
    if (this.#stop.signal.aborted) return;
    const idle = this.#slots.filter((slot) => slot.pending === 0);
    if (idle.length === 0) return;
    const next = Math.min(...idle.map((slot) => slot.dueAt));
    this.#cancel = this.opts.clock.after(Math.max(0, next - this.opts.clock.now()), () => this.#wake());
  }

  #begin(slot: Slot): Promise<void> {
    slot.pending++;
    const round = slot.tail
      .then(() => this.#round(slot))
      .finally(() => {
        slot.pending--;
        this.#plan();
      });
    slot.tail = round;
    return round;
  }

  /** One round: the turn first where the job is done once across the servers; never rejects. */
  async #round(slot: Slot): Promise<void> {
    const { job } = slot;
    const stop = this.#stop.signal;
    if (stop.aborted) return;
    const now = this.opts.clock.now();
    slot.dueAt = now + job.everyMs;
    try {
      if (job.oncePerCluster && !(await this.opts.turn(job.name, job.everyMs))) return;
      await job.run(now, stop);
    } catch (err) {
      this.opts.report(err, job.name);
    }
  }
}

/** The server's clock, slept on with Node's timers, which keep no process alive. */
export function timersOn(now: () => number): SchedulerClock {
  return {
    now,
    after(ms, fn) {
      const timer = setTimeout(fn, ms);
      timer.unref();
      return () => clearTimeout(timer);
    },
  };
}
