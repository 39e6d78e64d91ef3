import type { Decision } from './bucket.ts';

/** An answer at hand (the limiter in memory) or to come (the one in the database). */
export type Maybe<T> = T | Promise<T>;

/**
 * Keyed token buckets as the server spends them (README, Rate limits): in memory for the
 * data folder (`RateLimiter`), in the database for instances that share one (pg/limiter.ts),
 * where each call is one atomic statement, so every instance spends from the same bucket.
 * The memory one answers at once, which keeps its callers free of a promise per request.
 * A limit of 0 is unlimited: nothing is spent and nothing is asked.
 */
export interface Limiter {
  /** Spends one token from `key`'s bucket, if it has one. */
  consume(key: string, limitPerMinute: number): Maybe<Decision>;
  /** Spends one token even from an empty bucket, into debt (FailureBudget.attemptThenCharge). */
  charge(key: string, limitPerMinute: number): Maybe<void>;
  /** Gives back one token `consume` took, never past the capacity. */
  refund(key: string, limitPerMinute: number): Maybe<void>;
  /**
   * What `consume` would decide, without spending; null when the key has no bucket (it is
   * full) or, from what the PostgreSQL limiter heard of dry buckets, when it is not dry.
   */
  standing(key: string, limitPerMinute: number): Maybe<Decision | null>;
}

/** `next(v)` at once when `v` is at hand, after it when it is a promise. */
export const whenReady = <T, U>(v: Maybe<T>, next: (v: T) => Maybe<U>): Maybe<U> =>
  v instanceof Promise ? v.then(next) : next(v);
