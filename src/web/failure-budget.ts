import type { Decision, RateLimiter } from '../ratelimit/bucket.ts';

/** One rate-limit bucket an attempt is charged to; a limit of 0 is unlimited. */
export interface Budget {
  key: string;
  limitPerMinute: number;
}

export type Attempt<T> = { refused: Decision } | { value: T };

/** Attempts under way, per limiter and bucket key; they count as spent until they settle. */
const pendingBy = new WeakMap<RateLimiter, Map<string, number>>();

/**
 * Runs `attempt` if every budget can pay for it, and charges the budgets only when it
 * `failed`: a right password spends nothing, so the owner is not locked out by their own
 * logins. The check still comes before the (slow) attempt, and attempts still running are
 * counted as if they had failed, so a burst of concurrent guesses cannot all pass the check
 * before the first failure is recorded.
 */
export async function chargeFailures<T>(limiter: RateLimiter, budgets: readonly Budget[], attempt: () => Promise<T>, failed: (result: T) => boolean): Promise<Attempt<T>> {
  let pending = pendingBy.get(limiter);
  if (pending === undefined) pendingBy.set(limiter, (pending = new Map()));
  const live = budgets.filter((b) => b.limitPerMinute > 0);
  for (const b of live) {
    const d = limiter.peek(b.key, b.limitPerMinute);
    if (!d.allowed) return { refused: d };
    // `remaining` is what is left after this attempt; those in flight may still take theirs.
    if (d.remaining < (pending.get(b.key) ?? 0)) return { refused: { ...d, allowed: false, remaining: 0, retryAfterSec: 1 } };
  }
  for (const b of live) pending.set(b.key, (pending.get(b.key) ?? 0) + 1);
  let result: T;
  try {
    result = await attempt();
  } finally {
    for (const b of live) {
      const n = (pending.get(b.key) ?? 1) - 1;
      if (n === 0) pending.delete(b.key);
      else pending.set(b.key, n);
    }
  }
  if (failed(result)) for (const b of live) limiter.consume(b.key, b.limitPerMinute);
  return { value: result };
}
