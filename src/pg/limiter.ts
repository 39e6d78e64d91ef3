import type { Sql } from 'postgres';
import { type Decision, decisionOf } from '../ratelimit/bucket.ts';
import type { Limiter } from '../ratelimit/limiter.ts';

/**
 * A row untouched this long is full again whatever it held: `charge` takes a bucket at most
 * 60 minutes of refill below empty (ratelimit/bucket.ts), and a minute refills it from empty.
 */
const SURELY_FULL_MS = 61 * 60_000;

type Mode = 'consume' | 'charge' | 'refund' | 'peek';

/**
 * The rate-limit buckets of every instance on one database (README, Running several
 * instances): each spending is one call of `rate_bucket_take` (migrations/004-instances.sql),
 * which locks the key's row in `rate_buckets`, refills it to now and spends from it, so a
 * token of 30 a minute gets 30 through any number of instances, not 30 each. An unlimited
 * key (limit 0) costs no query. Each method is async, so the guard (pg/guard.ts) bounds it
 * and an outage answers 503 like any other call into the database.
 */
export class PgLimiter implements Limiter {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
  ) {}

  async consume(key: string, limitPerMinute: number): Promise<Decision> {
    if (limitPerMinute === 0) return decisionOf(true, Number.POSITIVE_INFINITY, 0, this.now());
    const at = this.now();
    const { allowed, tokens } = await this.#take(key, limitPerMinute, at, 'consume');
    return decisionOf(allowed, tokens ?? limitPerMinute, limitPerMinute, at);
  }

  async charge(key: string, limitPerMinute: number): Promise<void> {
    if (limitPerMinute > 0) await this.#take(key, limitPerMinute, this.now(), 'charge');
  }

  async refund(key: string, limitPerMinute: number): Promise<void> {
    if (limitPerMinute > 0) await this.#take(key, limitPerMinute, this.now(), 'refund');
  }

  async standing(key: string, limitPerMinute: number): Promise<Decision | null> {
    if (limitPerMinute === 0) return null;
    const at = this.now();
    const { allowed, tokens } = await this.#take(key, limitPerMinute, at, 'peek');
    return tokens === null ? null : decisionOf(allowed, tokens, limitPerMinute, at);
  }

  /** Deletes the rows no bucket can still need (the upkeep, on one instance at a time). */
  async prune(): Promise<number> {
    const gone = await this.sql`
      delete from rate_buckets where updated_at < to_timestamp(${this.now() - SURELY_FULL_MS}::float8 / 1000)`;
    return gone.count;
  }

  async #take(
    key: string,
    limit: number,
    at: number,
    mode: Mode,
  ): Promise<{ allowed: boolean; tokens: number | null }> {
    const [row] = await this.sql`
      select allowed, tokens from rate_bucket_take(${key}, ${limit}::float8, ${at}::float8, ${mode})`;
    return { allowed: row?.['allowed'] === true, tokens: (row?.['tokens'] as number | null | undefined) ?? null };
  }
}
