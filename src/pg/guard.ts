import { StorageUnavailable } from '../storage/errors.ts';

/**
 * SQLSTATE classes and codes that mean "the database cannot answer now", not "the request
 * is wrong": connection exceptions (08), the server shutting down or starting (57P01-57P03),
 * a statement cancelled by statement_timeout (57014), too many connections (53300).
 */
const UNAVAILABLE_STATES = new Set(['57014', '57P01', '57P02', '57P03', '53300', '53400']);
/** The driver's own codes for a connection that failed, closed or timed out. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/** Whether a driver error says the database is out of reach rather than that a query failed. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof StorageUnavailable) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return UNAVAILABLE_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08');
}

/**
 * Every call into the database goes through one guard (pg/open.ts), which keeps three
 * promises of the README (Running on PostgreSQL): a request never waits longer than
 * DATABASE_TIMEOUT_MS for the database; the calls waiting for a connection are bounded, so a
 * pool that is all busy refuses at once instead of queueing without end; and either case,
 * like a lost connection, is a 503 `storage_unavailable` with Retry-After, never a 500.
 */
export class DbGuard {
  #inFlight = 0;
  /** The last promise tracked, and its tracked twin (#track). */
  #lastCall: Promise<unknown> | undefined;
  #lastTracked: Promise<unknown> | undefined;
  /** Whether the last call reached the database (for /healthz). */
  #answering = true;

  constructor(
    private readonly timeoutMs: number,
    /** Calls allowed in flight at once: the pool's connections and a short queue behind them. */
    private readonly maxInFlight: number,
  ) {}

  get answering(): boolean {
    return this.#answering;
  }

  /** Runs `work` (a call into the database) under the guard. */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#inFlight >= this.maxInFlight)
      return Promise.reject(new StorageUnavailable('every database connection is busy; try again in a moment'));
    return this.#track(work());
  }

  /**
   * `call` bounded by the timeout and counted in flight while it runs. One promise handed to
   * many callers (PgAccounts' `fresh()`, shared by every request of a turn) is tracked once
   * while it runs: the callers share one timer, and none waits longer than the timeout.
   */
  #track<T>(call: Promise<T>, shared = false): Promise<T> {
    if (shared && call === this.#lastCall) return this.#lastTracked as Promise<T>;
    this.#inFlight++;
    const tracked = new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        this.#inFlight--;
        // A caller that comes after gets a tracking of its own: a promise kept for long may
        // have settled since this one's timeout.
        if (this.#lastCall === call) this.#lastCall = this.#lastTracked = undefined;
        return true;
      };
      const timer = setTimeout(() => {
        if (settle()) {
          this.#answering = false;
          reject(new StorageUnavailable(`the database did not answer within ${this.timeoutMs} ms`));
        }
      }, this.timeoutMs);
      call.then(
        (out) => {
          if (!settle()) return;
          this.#answering = true;
          resolve(out);
        },
        (err: unknown) => {
          if (!settle()) return;
          if (!isUnavailable(err)) return reject(err);
          this.#answering = false;
          reject(
            err instanceof StorageUnavailable
              ? err
              : new StorageUnavailable(`the database cannot be reached (${describeCode(err)})`),
          );
        },
      );
    });
    if (shared) {
      this.#lastCall = call;
      this.#lastTracked = tracked;
    }
    return tracked;
  }

  /**
   * `target` with every method that returns a promise run through the guard; getters and
   * methods that answer at once (from memory) are left as they are. An `async` method is
   * refused before it starts when the guard is full; another that turns out to return a
   * promise is tracked from then on. An `async *` method's steps each go through the guard.
   */
  wrap<T extends object>(target: T): T {
    // Each method is wrapped once, at its first use: a request calls several.
    const wrappers = new Map<PropertyKey, { fn: unknown; wrapper: unknown }>();
    return new Proxy(target, {
      get: (obj, key) => {
        const value: unknown = Reflect.get(obj, key, obj);
        if (typeof value !== 'function') return value;
        const known = wrappers.get(key);
        if (known !== undefined && known.fn === value) return known.wrapper;
        const wrapper = this.#wrapMethod(obj, value as (...a: unknown[]) => unknown);
        wrappers.set(key, { fn: value, wrapper });
        return wrapper;
      },
    });
  }

  #wrapMethod(obj: object, fn: (...a: unknown[]) => unknown): (...a: unknown[]) => unknown {
    if (fn.constructor.name === 'AsyncGeneratorFunction')
      return (...args) => this.#each(fn.apply(obj, args) as AsyncGenerator<unknown>);
    if (fn.constructor.name === 'AsyncFunction')
      return (...args) => this.run(() => fn.apply(obj, args) as Promise<unknown>);
    return (...args) => {
      const out = fn.apply(obj, args);
      return out instanceof Promise ? this.#track(out, true) : out;
    };
  }

  /**
   * `steps` with each step run through the guard, as a call is: a search that reads many
   * batches (pg/owner-lists.ts) waits at most the timeout for each. A consumer that stops
   * early, or a step that fails, ends the generator without waiting for it.
   */
  async *#each<T>(steps: AsyncGenerator<T>): AsyncGenerator<T> {
    try {
      for (;;) {
        const step = await this.run(() => steps.next());
        if (step.done === true) return;
        yield step.value;
      }
    } finally {
      steps.return(undefined).catch(() => undefined);
    }
  }
}

const describeCode = (err: unknown): string => String((err as { code?: unknown }).code ?? 'unknown');
