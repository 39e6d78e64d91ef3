import type { RateLimiter } from './bucket.ts';

/** One rate-limit bucket that failed attempts spend; a limit of 0 is unlimited. */
export interface Budget {
  key: string;
  limitPerMinute: number;
}

/** An attempt the budgets refused: how long until one of them can pay again. */
export interface Refusal {
  /** The limit of the first budget that could not pay. */
  limitPerMinute: number;
  retryAfterSec: number;
}

export type Outcome<T> = { refused: Refusal } | { value: T };

/**
 * Failed attempts (an unknown API token, a wrong paste password, a wrong login) spend
 * budgets; successful ones cost nothing. The one rule, for every caller:
 *
 *   charge every budget BEFORE the check, and give the charge back when it succeeds.
 *
 * Each attempt holds its charge while its (slow) check runs, so a burst of concurrent
 * guesses can never run more checks than the budgets have left, and a refused attempt
 * costs no check at all; a right answer returns its token, so an owner is not locked out
 * by their own logins. The exception is a cheap check (`attemptThenCharge`): it runs first
 * and a failure is charged after, into debt, so concurrent successes never hold each
 * other's tokens.
 */
export class FailureBudget {
  constructor(private readonly limiter: Pick<RateLimiter, 'consume' | 'refund' | 'peek' | 'holds' | 'charge'>) {}

  /**
   * Charges every budget, runs `check`, and gives the charge back unless `failed(result)`.
   * Refused, without running `check`, when a budget is spent.
   */
  async attempt<T>(
    budgets: readonly Budget[],
    check: () => Promise<T>,
    failed: (result: T) => boolean,
  ): Promise<Outcome<T>> {
    const live = budgets.filter((b) => b.limitPerMinute > 0);
    const refused = this.#charge(live);
    if (refused !== null) return { refused };
    let value: T;
    try {
      value = await check();
    } catch (err) {
      // A fault is not a failed guess: nothing was learnt, so nothing is spent.
      this.#refund(live);
      throw err;
    }
    if (!failed(value)) this.#refund(live);
    return { value };
  }

  /**
   * `attempt` for a check that answers at once (an API token's hash), without a promise.
   * Nothing can run between the charge and the check, so the rule comes down to: look,
   * check, and charge only a failure; a client that never failed costs one map lookup.
   */
  attemptNow<T>(budgets: readonly Budget[], check: () => T, failed: (result: T) => boolean): Outcome<T> {
    const refused = this.#spent(budgets);
    if (refused !== null) return { refused };
    const value = check();
    if (failed(value)) for (const b of budgets) if (b.limitPerMinute > 0) this.limiter.consume(b.key, b.limitPerMinute);
    return { value };
  }

  /**
   * `attempt` for a check too cheap to be worth holding a charge while it waits (a short
   * link's lookup, which may still wait for the disk): refused when a budget is spent, else
   * the check runs and a failure is charged after it, past empty if need be. A burst of
   * concurrent failures is so paid for in full before the next attempt is let through,
   * while successes touch no bucket and never refuse each other however many run at once.
   */
  async attemptThenCharge<T>(
    budgets: readonly Budget[],
    check: () => Promise<T>,
    failed: (result: T) => boolean,
  ): Promise<Outcome<T>> {
    const refused = this.#spent(budgets);
    if (refused !== null) return { refused };
    const value = await check();
    if (failed(value)) for (const b of budgets) if (b.limitPerMinute > 0) this.limiter.charge(b.key, b.limitPerMinute);
    return { value };
  }

  /**
   * The first budget with nothing left to pay, without spending anything; a client that never
   * failed costs one map lookup.
   */
  #spent(budgets: readonly Budget[]): Refusal | null {
    for (const b of budgets) {
      if (b.limitPerMinute === 0 || !this.limiter.holds(b.key)) continue;
      const d = this.limiter.peek(b.key, b.limitPerMinute);
      if (!d.allowed) return { limitPerMinute: b.limitPerMinute, retryAfterSec: d.retryAfterSec };
    }
    return null;
  }

  /** Takes one token from every budget, or none: a refusal gives back what was taken. */
  #charge(budgets: readonly Budget[]): Refusal | null {
    for (let i = 0; i < budgets.length; i++) {
      const b = budgets[i] as Budget;
      const d = this.limiter.consume(b.key, b.limitPerMinute);
      if (!d.allowed) {
        this.#refund(budgets.slice(0, i));
        return { limitPerMinute: b.limitPerMinute, retryAfterSec: d.retryAfterSec };
      }
    }
    return null;
  }

  #refund(budgets: readonly Budget[]): void {
    for (const b of budgets) this.limiter.refund(b.key, b.limitPerMinute);
  }
}
