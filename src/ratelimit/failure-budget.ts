import { type Limiter, type Maybe, whenReady } from './limiter.ts';

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
  constructor(private readonly limiter: Limiter) {}

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
    const refused = await this.#charge(live, 0);
    if (refused !== null) return { refused };
    let value: T;
    try {
      value = await check();
    } catch (err) {
      // A fault is not a failed guess: nothing was learnt, so nothing is spent.
      await this.#refund(live);
      throw err;
    }
    if (!failed(value)) await this.#refund(live);
    return { value };
  }

  /**
   * `attempt` for a check that answers at once (an API token's hash): look, check, and charge
   * only a failure; a client that never failed costs one map lookup (in memory, where this
   * answers without a promise). A failure whose charge finds the budget spent meanwhile (by
   * another instance sharing it) is refused, so no more failures are answered than it holds.
   */
  attemptNow<T>(budgets: readonly Budget[], check: () => T, failed: (result: T) => boolean): Maybe<Outcome<T>> {
    return whenReady(this.#spent(budgets, 0), (refused): Maybe<Outcome<T>> => {
      if (refused !== null) return { refused };
      const value = check();
      if (!failed(value)) return { value };
      return whenReady(this.#charge(budgets, 0, false), (late) => (late === null ? { value } : { refused: late }));
    });
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
    // Awaited only when the budgets are in the database: a short link's lookup in memory waits for nothing more.
    const spent = this.#spent(budgets, 0);
    const refused = spent instanceof Promise ? await spent : spent;
    if (refused !== null) return { refused };
    const value = await check();
    if (failed(value))
      for (const b of budgets) {
        if (b.limitPerMinute === 0) continue;
        const charged = this.limiter.charge(b.key, b.limitPerMinute);
        if (charged instanceof Promise) await charged;
      }
    return { value };
  }

  /**
   * The first budget with nothing left to pay, without spending anything; a client that never
   * failed costs one map lookup.
   */
  #spent(budgets: readonly Budget[], from: number): Maybe<Refusal | null> {
    for (let i = from; i < budgets.length; i++) {
      const b = budgets[i] as Budget;
      if (b.limitPerMinute === 0) continue;
      return whenReady(this.limiter.standing(b.key, b.limitPerMinute), (d) =>
        d !== null && !d.allowed
          ? { limitPerMinute: b.limitPerMinute, retryAfterSec: d.retryAfterSec }
          : this.#spent(budgets, i + 1),
      );
    }
    return null;
  }

  /**
   * Takes one token from every budget from `from` on, or none: a refusal gives back what was
   * taken (unless `giveBack` is false: a failure's charge keeps what it took).
   */
  #charge(budgets: readonly Budget[], from: number, giveBack = true): Maybe<Refusal | null> {
    for (let i = from; i < budgets.length; i++) {
      const b = budgets[i] as Budget;
      if (b.limitPerMinute === 0) continue;
      return whenReady(this.limiter.consume(b.key, b.limitPerMinute), (d): Maybe<Refusal | null> => {
        if (d.allowed) return this.#charge(budgets, i + 1, giveBack);
        const refused = { limitPerMinute: b.limitPerMinute, retryAfterSec: d.retryAfterSec };
        return giveBack ? whenReady(this.#refund(budgets.slice(0, i)), () => refused) : refused;
      });
    }
    return null;
  }

  #refund(budgets: readonly Budget[]): Maybe<void> {
    const given = budgets.map((b) => this.limiter.refund(b.key, b.limitPerMinute));
    return given.some((g) => g instanceof Promise) ? Promise.all(given).then(() => undefined) : undefined;
  }
}
