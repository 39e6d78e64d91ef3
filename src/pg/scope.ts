import { AsyncLocalStorage } from 'node:async_hooks';
import { OutcomeUnknown, StorageUnavailable } from '../storage/errors.ts';

/** A query or transaction of a scope that has not settled yet (pg/scoped-sql.ts). */
export interface InFlight {
  /** Stops it if that is safe: a statement running gets the database's cancel. */
  cancel(): void;
  /** Whether it was sent and may still turn out to have changed something (a write, a COMMIT). */
  readonly mayHaveWritten: boolean;
}

/**
 * What one request (or one background call) does with the database, so that a refusal is
 * a fact (README, Running on PostgreSQL): once the scope's deadline has passed, nothing of
 * it is sent any more, a transaction of it never commits, and what is running is cancelled.
 * The scope's time is DATABASE_TIMEOUT_MS of waiting for the database: its clock runs while
 * one of its calls is in flight, so the time spent reading a body or hashing a password
 * between calls is not the database's, and a slow first call leaves less to the next.
 */
export class DbScope {
  /** When the calls in flight stop waiting (performance.now()); NaN before the first call. */
  deadline = Number.NaN;
  expired = false;
  /** A change of this scope is known to be committed: a refusal after it cannot say "nothing changed". */
  committed = false;
  /** A change of this scope may have been committed, and nothing can tell whether it was. */
  unknown = false;
  readonly live = new Set<InFlight>();
  /** Time spent waiting in calls that have ended, the calls in flight, and since when. */
  #spent = 0;
  #calls = 0;
  #busySince = 0;

  /** What is left of `timeoutMs` at `now` (all of it between calls is what the ended ones left). */
  left(timeoutMs: number, now: number): number {
    return this.#calls > 0 ? this.deadline - now : timeoutMs - this.#spent;
  }

  /** A call begins: the clock runs from now if none was in flight. Answers the deadline. */
  begin(timeoutMs: number, now: number): number {
    if (this.#calls++ === 0) {
      this.#busySince = now;
      this.deadline = now + timeoutMs - this.#spent;
    }
    return this.deadline;
  }

  /** Whether a call of the scope is in flight (its deadline is then the one that holds). */
  get busy(): boolean {
    return this.#calls > 0;
  }

  /** A call ended: with none left in flight, the clock stops. */
  end(now: number): void {
    if (--this.#calls === 0) this.#spent += now - this.#busySince;
  }

  /** The deadline has passed: nothing more of the scope starts, and what runs is cancelled. */
  expire(): void {
    if (this.expired) return;
    this.expired = true;
    for (const f of this.live) f.cancel();
  }

  /** Whether something sent may still turn out to have changed data. */
  get writing(): boolean {
    for (const f of this.live) if (f.mayHaveWritten) return true;
    return false;
  }

  /**
   * The refusal this scope's request is answered with: `storage_unavailable` when nothing
   * of it took effect, `outcome_unknown` when something may have (README, Safe retries).
   */
  refusal(why: string): StorageUnavailable {
    return this.committed || this.unknown || this.writing ? new OutcomeUnknown(why) : new StorageUnavailable(why);
  }
}

const scopes = new AsyncLocalStorage<DbScope>();

/** The scope of the request (or call) running now, if any. */
export const currentScope = (): DbScope | undefined => scopes.getStore();

/** Runs `fn` (and everything it awaits) in `scope`. */
export const inScope = <T>(scope: DbScope, fn: () => T): T => scopes.run(scope, fn);
