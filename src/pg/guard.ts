import { OutcomeUnknown, StorageUnavailable } from '../storage/errors.ts';
import { currentScope, DbScope, inScope } from './scope.ts';

/**
 * SQLSTATE classes and codes that mean "the database cannot answer now", not "the request
 * is wrong": connection exceptions (08), the server shutting down or starting (57P01-57P03),
 * a statement cancelled by statement_timeout or by the guard (57014), a lock not had within
 * lock_timeout (55P03), too many connections (53300).
 */
const UNAVAILABLE_STATES = new Set(['57014', '55P03', '57P01', '57P02', '57P03', '53300', '53400']);
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
 * How long a call whose time is up still waits for a change it sent to say whether it was made (README, Running on
 * PostgreSQL).
 */
export const OUTCOME_WAIT_MS = 500;

/**
 * Every call into the database goes through one guard (pg/open.ts), which keeps the
 * promises of the README (Running on PostgreSQL):
 *
 * - a request waits for the database at most DATABASE_TIMEOUT_MS in all (its calls share
 *   one scope, pg/scope.ts, whose clock runs while one of them is in flight), plus
 *   OUTCOME_WAIT_MS when a change it sent must first say whether it was made;
 * - a request refused is refused for good: once its time is up, nothing more of it is
 *   sent, its transactions never commit, and what still runs is cancelled
 *   (pg/scoped-sql.ts); when a change may have been made all the same, the refusal says
 *   `outcome_unknown` instead of `storage_unavailable`;
 * - the calls waiting are bounded, so a pool that is all busy refuses at once instead of
 *   queueing without end;
 * - while the background probe finds the database down (the breaker is open), calls are
 *   refused at once instead of each waiting the whole timeout; the probe's first success
 *   closes it.
 *
 * Each case, like a lost connection, is a 503 with Retry-After, never a 500.
 */
export class DbGuard {
  #inFlight = 0;
  /** The last promise tracked as shared, its tracked twin, and the deadline it was tracked to (#track). */
  #lastCall: Promise<unknown> | undefined;
  #lastTracked: Promise<unknown> | undefined;
  #lastDeadline = 0;
  /** Whether the last call reached the database (for /healthz). */
  #answering = true;
  /** Why the probe last found the database down, or null: the breaker is closed. */
  #down: string | null = null;

  constructor(
    private readonly timeoutMs: number,
    /** Calls allowed in flight at once: the pool's connections and a short queue behind them. */
    private readonly maxInFlight: number,
    private readonly outcomeWaitMs = OUTCOME_WAIT_MS,
  ) {}

  get answering(): boolean {
    return this.#answering;
  }

  /** Whether the breaker is open: the probe found the database down and has not seen it answer since. */
  get open(): boolean {
    return this.#down !== null;
  }

  /** Runs `fn`, a request's handling, in a scope of its own: its calls share one deadline (pg/scope.ts). */
  request<T>(fn: () => T): T {
    return inScope(new DbScope(), fn);
  }

  /** Runs `work` (a call into the database) under the guard, in the running request's scope or one of its own. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const scope = currentScope();
    if (scope !== undefined) return this.#run(work, scope);
    const own = new DbScope();
    return inScope(own, () => this.#run(work, own));
  }

  /** The background probe's check (pg/open.ts, pg/probe.ts): run past the breaker, bounded by the timeout. */
  check<T>(check: () => Promise<T>): Promise<T> {
    const scope = new DbScope();
    return inScope(scope, () => this.#track(check(), scope));
  }

  /** The probe found the database down: calls are refused at once until `reset`. */
  trip(why: string): void {
    this.#down = why;
  }

  /** The probe heard the database answer: calls go through again. */
  reset(): void {
    this.#down = null;
  }

  #run<T>(work: () => Promise<T>, scope: DbScope): Promise<T> {
    const refused = this.#refusal(scope);
    if (refused !== null) return Promise.reject(refused);
    if (this.#inFlight >= this.maxInFlight)
      return Promise.reject(scope.refusal('every database connection is busy; try again in a moment'));
    return this.#track(work(), scope);
  }

  /** Why a call of `scope` must not start, or null. */
  #refusal(scope: DbScope): StorageUnavailable | null {
    if (this.#down !== null) return scope.refusal(`the database does not answer (${this.#down})`);
    if (scope.expired || scope.left(this.timeoutMs, performance.now()) <= 0) {
      scope.expire();
      return scope.refusal(this.#late());
    }
    return null;
  }

  #late(): string {
    return `the database did not answer within ${this.timeoutMs} ms`;
  }

  /**
   * `call` bounded by its scope's deadline and counted in flight while it runs. When the
   * deadline passes, the scope expires (its running statements are cancelled, its
   * transactions will not commit), and the call is refused at once, or, when a change it
   * sent may have been made, once the change says whether it was (at most OUTCOME_WAIT_MS).
   *
   * One promise handed to many callers (PgAccounts' `fresh()`, shared by every request of a
   * turn) is tracked once while it runs: the callers share one timer, and none waits past
   * its own deadline.
   */
  #track<T>(call: Promise<T>, scope: DbScope, shared = false): Promise<T> {
    const now = performance.now();
    if (shared && call === this.#lastCall && now + scope.left(this.timeoutMs, now) >= this.#lastDeadline) {
      // Joined: the wait is this scope's too.
      scope.begin(this.timeoutMs, now);
      const ended = (): void => scope.end(performance.now());
      (this.#lastTracked as Promise<T>).then(ended, ended);
      return this.#lastTracked as Promise<T>;
    }
    const deadline = scope.begin(this.timeoutMs, now);
    this.#inFlight++;
    const tracked = new Promise<T>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        this.#inFlight--;
        scope.end(performance.now());
        // A caller that comes after gets a tracking of its own: a promise kept for long may
        // have settled since this one's timeout.
        if (this.#lastCall === call) this.#lastCall = this.#lastTracked = undefined;
        return true;
      };
      const refuse = (err: StorageUnavailable): void => {
        if (!settle()) return;
        this.#answering = false;
        reject(err);
      };
      const expire = (): void => {
        scope.expire();
        // A read shared by many requests is refused plainly: it changed nothing.
        if (shared || !scope.writing) {
          refuse(shared ? new StorageUnavailable(this.#late()) : scope.refusal(this.#late()));
          return;
        }
        timer = setTimeout(
          () => refuse(new OutcomeUnknown(`${this.#late()}, and whether the change was made is not known`)),
          this.outcomeWaitMs,
        );
      };
      timer = setTimeout(expire, Math.max(0, deadline - now));
      call.then(
        (out) => {
          if (!settle()) return;
          this.#answering = true;
          resolve(out);
        },
        (err: unknown) => {
          if (settled) return;
          if (!isUnavailable(err)) {
            settle();
            return reject(err);
          }
          if (err instanceof StorageUnavailable) return refuse(err);
          refuse(
            scope.expired
              ? scope.refusal(this.#late())
              : scope.refusal(`the database cannot be reached (${describeCode(err)})`),
          );
        },
      );
    });
    if (shared) {
      this.#lastCall = call;
      this.#lastTracked = tracked;
      this.#lastDeadline = deadline;
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
      return out instanceof Promise ? this.#shared(out) : out;
    };
  }

  /** A promise a method handed out, tracked in the running scope (or one of its own) as one many callers may share. */
  #shared<T>(out: Promise<T>): Promise<T> {
    const scope = currentScope() ?? new DbScope();
    const refused = this.#refusal(scope);
    if (refused === null) return this.#track(out, scope, true);
    // Already on its way: refused here, it still settles, and nobody else waits for it.
    out.catch(() => undefined);
    return Promise.reject(refused);
  }

  /**
   * `steps` with each step run through the guard, as a call is: a search that reads many
   * batches (pg/owner-lists.ts) waits for each within the request's time. A consumer that
   * stops early, or a step that fails, ends the generator without waiting for it.
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
