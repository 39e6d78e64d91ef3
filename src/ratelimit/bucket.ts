/** A token bucket as stored between requests. */
export interface BucketState {
  tokens: number;
  /** Epoch ms of the last refill. */
  updatedAt: number;
}

/** The outcome of one request against a bucket. */
export interface Decision {
  allowed: boolean;
  /** Whole requests left after this one (floor); Infinity when unlimited, 0 when refused. */
  remaining: number;
  /** Whole seconds until one token is available: >= 1 when refused, 0 when allowed. */
  retryAfterSec: number;
  state: BucketState;
}

/** A bucket plus the limit it was last used with, so pruning can tell when it is full. */
export interface StoredBucket extends BucketState {
  limit: number;
}

const WINDOW_MS = 60_000;
/** How far `charge` may take a bucket below empty: this many minutes of refill. */
const MAX_DEBT_MINUTES = 60;
// Absorbs float drift so that e.g. 1000 ms at 60/min always yields a whole token.
const EPSILON = 1e-9;

/**
 * Refills `state` up to `now` for a bucket of capacity `limitPerMinute`.
 * A new bucket starts full, and a bucket whose limit shrank is clamped to the new capacity.
 */
export function refill(state: BucketState | undefined, limitPerMinute: number, now: number): BucketState {
  if (state === undefined) return { tokens: limitPerMinute, updatedAt: now };
  const elapsed = now - state.updatedAt;
  if (elapsed < 0) {
    // The clock went backwards: mint nothing. A small step keeps the old timestamp (so
    // jitter cannot be counted twice); a big one rebases, or the bucket would freeze
    // until the clock caught up again.
    const updatedAt = elapsed < -WINDOW_MS ? now : state.updatedAt;
    return { tokens: Math.min(limitPerMinute, state.tokens), updatedAt };
  }
  const tokens = Math.min(limitPerMinute, state.tokens + (elapsed * limitPerMinute) / WINDOW_MS);
  return { tokens, updatedAt: now };
}

/**
 * Spends one token if there is one. `limitPerMinute` 0 means unlimited: always allowed,
 * with an always-full state (a later finite limit clamps it to a full bucket).
 */
export function take(state: BucketState | undefined, limitPerMinute: number, now: number): Decision {
  if (!(limitPerMinute >= 0) || !Number.isFinite(limitPerMinute)) {
    throw new RangeError(`rate limit must be a finite number >= 0, got ${limitPerMinute}`);
  }
  if (limitPerMinute === 0) {
    return {
      allowed: true,
      remaining: Number.POSITIVE_INFINITY,
      retryAfterSec: 0,
      state: { tokens: Number.POSITIVE_INFINITY, updatedAt: now },
    };
  }
  const current = refill(state, limitPerMinute, now);
  if (current.tokens + EPSILON >= 1) {
    const tokens = Math.max(0, current.tokens - 1);
    return {
      allowed: true,
      remaining: Math.floor(tokens + EPSILON),
      retryAfterSec: 0,
      state: { tokens, updatedAt: current.updatedAt },
    };
  }
  const waitSec = ((1 - current.tokens) * WINDOW_MS) / limitPerMinute / 1000;
  return {
    allowed: false,
    remaining: 0,
    retryAfterSec: Math.max(1, Math.ceil(waitSec - EPSILON)),
    state: current,
  };
}

/**
 * The decision for a bucket left at `tokens` by a take that was `allowed` or not, as `take`
 * makes it: for a level the database worked out (pg/limiter.ts).
 */
export function decisionOf(allowed: boolean, tokens: number, limitPerMinute: number, at: number): Decision {
  const state = { tokens, updatedAt: at };
  if (allowed) return { allowed, remaining: Math.floor(tokens + EPSILON), retryAfterSec: 0, state };
  const waitSec = ((1 - tokens) * WINDOW_MS) / limitPerMinute / 1000;
  return { allowed, remaining: 0, retryAfterSec: Math.max(1, Math.ceil(waitSec - EPSILON)), state };
}

/**
 * Keyed token buckets (`token:<id>`, `ip:<addr>`) in memory, the data folder's `Limiter` (limiter.ts). Call `prune()`
 * now and then
 * (e.g. every minute): a bucket that has refilled completely carries no information.
 */
export class RateLimiter {
  readonly #now: () => number;
  readonly #buckets = new Map<string, StoredBucket>();
  #changes = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  /**
   * How many times the buckets have changed (a token spent, given back or charged, a bucket
   * dropped, all of them replaced): the same number means the same buckets, so a saved copy
   * taken at that number is still current. Refilling over time changes nothing stored.
   */
  get changes(): number {
    return this.#changes;
  }

  /** Spends one token from `key`'s bucket. A limit of 0 is unlimited and stores nothing. */
  consume(key: string, limitPerMinute: number): Decision {
    const decision = take(this.#buckets.get(key), limitPerMinute, this.#now());
    if (limitPerMinute === 0) {
      if (this.#buckets.delete(key)) this.#changes++;
    } else {
      this.#changes++;
      // A literal, not a spread of the state: spread per request, such objects were promoted
      // out of the young generation (bench/README.md, Measured limits).
      this.#buckets.set(key, {
        tokens: decision.state.tokens,
        updatedAt: decision.state.updatedAt,
        limit: limitPerMinute,
      });
    }
    return decision;
  }

  /**
   * Spends one token even from an empty bucket, down to MAX_DEBT_MINUTES of refill below
   * zero: for failures found only after the check ran (FailureBudget.attemptThenCharge),
   * which must still be paid for before the next attempt is allowed.
   */
  charge(key: string, limitPerMinute: number): void {
    if (limitPerMinute === 0) return;
    const current = refill(this.#buckets.get(key), limitPerMinute, this.#now());
    const tokens = Math.max(current.tokens - 1, -MAX_DEBT_MINUTES * limitPerMinute);
    this.#changes++;
    this.#buckets.set(key, { tokens, updatedAt: current.updatedAt, limit: limitPerMinute });
  }

  /** Whether `key` has a bucket at all: one that was never spent, or has refilled and been pruned, is full. */
  holds(key: string): boolean {
    return this.#buckets.has(key);
  }

  /** `peek` for a key that has a bucket, null for one that has none (full). */
  standing(key: string, limitPerMinute: number): Decision | null {
    return this.#buckets.has(key) ? this.peek(key, limitPerMinute) : null;
  }

  /** What `consume` would decide, without spending anything. */
  peek(key: string, limitPerMinute: number): Decision {
    return take(this.#buckets.get(key), limitPerMinute, this.#now());
  }

  /**
   * Gives back one token `consume` took (never past the capacity). A bucket that is full
   * again carries no information and is dropped, as `prune` would.
   */
  refund(key: string, limitPerMinute: number): void {
    const b = this.#buckets.get(key);
    if (b === undefined || limitPerMinute === 0) return;
    const current = refill(b, limitPerMinute, this.#now());
    const tokens = Math.min(limitPerMinute, current.tokens + 1);
    this.#changes++;
    if (tokens + EPSILON >= limitPerMinute) this.#buckets.delete(key);
    else this.#buckets.set(key, { tokens, updatedAt: current.updatedAt, limit: limitPerMinute });
  }

  /** Number of buckets held (for tests and metrics). */
  get size(): number {
    return this.#buckets.size;
  }

  /** Every bucket as it is now, by key (live: read each as you come to it). */
  entries(): IterableIterator<[string, Readonly<StoredBucket>]> {
    return this.#buckets.entries();
  }

  /** A JSON-safe copy of every bucket, for persisting across a restart. */
  snapshot(): Record<string, StoredBucket> {
    // Null prototype: keys are client-influenced, so "__proto__" must stay a plain key.
    const out = Object.create(null) as Record<string, StoredBucket>;
    for (const [key, b] of this.#buckets) out[key] = { tokens: b.tokens, updatedAt: b.updatedAt, limit: b.limit };
    return out;
  }

  /** Replaces all buckets with those in `snap`, skipping any entry that is not a valid bucket. */
  restore(snap: unknown): void {
    this.#changes++;
    this.#buckets.clear();
    if (typeof snap !== 'object' || snap === null || Array.isArray(snap)) return;
    for (const [key, value] of Object.entries(snap)) {
      const bucket = parseBucket(value);
      if (bucket !== undefined) this.#buckets.set(key, bucket);
    }
  }

  /** Drops every bucket that has refilled to capacity, so memory tracks recent clients only. */
  prune(): void {
    const now = this.#now();
    for (const [key, b] of this.#buckets) {
      if (refill(b, b.limit, now).tokens + EPSILON < b.limit) continue;
      this.#buckets.delete(key);
      this.#changes++;
    }
  }
}

function parseBucket(value: unknown): StoredBucket | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { tokens, updatedAt, limit } = value as Record<string, unknown>;
  if (typeof limit !== 'number' || !Number.isFinite(limit) || limit <= 0) return undefined;
  // Below zero only as far as `charge` goes.
  if (typeof tokens !== 'number' || !Number.isFinite(tokens) || tokens < -MAX_DEBT_MINUTES * limit) return undefined;
  if (typeof updatedAt !== 'number' || !Number.isFinite(updatedAt)) return undefined;
  return { tokens, updatedAt, limit };
}
