import type { Sql, TransactionSql } from 'postgres';
import { refill, type RateLimiter, type StoredBucket } from '../ratelimit/bucket.ts';

/** Buckets one statement upserts at most: each conflicting row looks its spending up among them. */
const CHUNK = 500;
/** How often a save also deletes the rows no bucket can still need. */
const PRUNE_EVERY_MS = 60_000;
/**
 * A row untouched this long is full again whatever it held: `charge` takes a bucket at most
 * 60 minutes of refill below empty (ratelimit/bucket.ts), and a minute refills it from empty.
 */
const SURELY_FULL_MS = 61 * 60_000;
// As the limiter's: absorbs float drift in a refill.
const EPSILON = 1e-9;

type Limiter = Pick<RateLimiter, 'entries' | 'restore' | 'changes'>;

/** One bucket's save: where it is now, and what it spent since the last save (negative: given back). */
interface Change {
  key: string;
  bucket: StoredBucket;
  spent: number;
  /** The limiter no longer holds it (full again): saved as full, then forgotten. */
  dropped: boolean;
}

/**
 * The limiter's buckets in `rate_buckets`, shared by every instance (README, Rate limits).
 * `restore` puts them into a limiter at start; `save` (every few seconds and at close)
 * upserts only the buckets that changed since the last save. Two instances spending from one
 * key each save what they spent, not their level: the row is refilled to the later time and
 * the spending taken from it, so neither overwrites the other's requests.
 */
export class PgBuckets {
  /** Each bucket as this instance last saved or restored it: the base its spending is counted from. */
  #saved = new Map<string, StoredBucket>();
  /** The limiter's change count the table holds, or null when not known. */
  #savedChanges: number | null = null;
  #lastPrune = Number.NEGATIVE_INFINITY;
  /** Saves, one at a time, so a base is never counted from twice. */
  #chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
  ) {}

  /** Replaces the limiter's buckets with the table's (README, Rate limits: they survive a restart). */
  async restore(limiter: Limiter): Promise<void> {
    const rows = await this.sql`
      select key, tokens, (extract(epoch from updated_at) * 1000)::float8 as at, limit_per_minute from rate_buckets`;
    // Null prototype: keys are client-influenced, so "__proto__" stays a plain key.
    const snap = Object.create(null) as Record<string, StoredBucket>;
    const now = this.now();
    for (const r of rows) {
      const b = { tokens: r['tokens'] as number, updatedAt: r['at'] as number, limit: r['limit_per_minute'] as number };
      // Full by now: it carries nothing, as the limiter's prune would decide.
      if (refill(b, b.limit, now).tokens + EPSILON < b.limit) snap[r['key'] as string] = b;
    }
    limiter.restore(snap);
    this.#saved = new Map(limiter.entries());
    for (const [key, b] of this.#saved) this.#saved.set(key, { ...b });
    this.#savedChanges = limiter.changes;
  }

  save(limiter: Limiter): Promise<void> {
    const run = this.#chain.then(() => this.#save(limiter));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #save(limiter: Limiter): Promise<void> {
    // Taken before the buckets are read: a change made while they are written is saved next time.
    const changes = limiter.changes;
    const now = this.now();
    const prune = now - this.#lastPrune >= PRUNE_EVERY_MS;
    if (changes === this.#savedChanges && !prune) return;
    const batch = changes === this.#savedChanges ? [] : this.#changed(limiter, now);
    await this.sql.begin(async (tx) => {
      for (let i = 0; i < batch.length; i += CHUNK) await upsert(tx, batch.slice(i, i + CHUNK));
      // A row full again (given back by every instance that took from it) carries nothing.
      if (batch.length > 0)
        await tx`delete from rate_buckets where key = any(${batch.map((c) => c.key)}::text[]) and tokens >= limit_per_minute`;
      if (prune)
        await tx`delete from rate_buckets where updated_at < to_timestamp(${now - SURELY_FULL_MS}::float8 / 1000)`;
    });
    for (const { key, bucket, dropped } of batch) {
      if (dropped) this.#saved.delete(key);
      else this.#saved.set(key, bucket);
    }
    this.#savedChanges = changes;
    if (prune) this.#lastPrune = now;
  }

  /**
   * The buckets that differ from their last save, and those the limiter dropped since (full
   * again, pruned or given back): a dropped one is saved as a full bucket, which gives back
   * to the row what this instance had taken and never had back.
   */
  #changed(limiter: Limiter, now: number): Change[] {
    const out: Change[] = [];
    const held = new Set<string>();
    for (const [key, b] of limiter.entries()) {
      held.add(key);
      const base = this.#saved.get(key);
      if (base !== undefined && base.tokens === b.tokens && base.updatedAt === b.updatedAt && base.limit === b.limit)
        continue;
      const bucket = { tokens: b.tokens, updatedAt: b.updatedAt, limit: b.limit };
      out.push({ key, bucket, spent: levelOf(base, b.limit, b.updatedAt) - b.tokens, dropped: false });
    }
    for (const [key, base] of this.#saved) {
      if (held.has(key)) continue;
      const bucket = { tokens: base.limit, updatedAt: Math.max(now, base.updatedAt), limit: base.limit };
      out.push({ key, bucket, spent: levelOf(base, base.limit, bucket.updatedAt) - base.limit, dropped: true });
    }
    return out;
  }
}

/** The level `base` has refilled to at `at`; a bucket never saved was full. */
const levelOf = (base: StoredBucket | undefined, limit: number, at: number): number =>
  base === undefined ? limit : refill(base, limit, at).tokens;

/**
 * Inserts the new buckets as they are; for a key already there (saved before, by this instance
 * or another), refills its row to the later of the two times and takes this instance's
 * spending from it, kept between the limit and as low as `charge` goes.
 */
async function upsert(tx: TransactionSql, batch: Change[]): Promise<void> {
  await tx`
    with input as (
      select * from unnest(
        ${batch.map((c) => c.key)}::text[], ${batch.map((c) => c.bucket.tokens)}::float8[],
        ${batch.map((c) => c.bucket.updatedAt)}::float8[], ${batch.map((c) => c.bucket.limit)}::float8[],
        ${batch.map((c) => c.spent)}::float8[]) as x(key, tokens, at, lim, spent))
    insert into rate_buckets as r (key, tokens, updated_at, limit_per_minute)
    select key, tokens, to_timestamp(at / 1000), lim from input
    on conflict (key) do update set
      tokens = least(excluded.limit_per_minute, greatest(-60 * excluded.limit_per_minute,
        least(excluded.limit_per_minute,
          r.tokens + greatest(0, extract(epoch from excluded.updated_at - r.updated_at)::float8)
            * excluded.limit_per_minute / 60)
        - (select spent from input where input.key = excluded.key))),
      updated_at = greatest(r.updated_at, excluded.updated_at),
      limit_per_minute = excluded.limit_per_minute`;
}
