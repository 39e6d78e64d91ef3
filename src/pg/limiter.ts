import type { Sql } from 'postgres';
import { type Decision, decisionOf } from '../ratelimit/bucket.ts';
import type { Limiter } from '../ratelimit/limiter.ts';
import { Channel } from './channel.ts';

/**
 * A row untouched this long is full again whatever it held: `charge` takes a bucket at most
 * 60 minutes of refill below empty (ratelimit/bucket.ts), and a minute refills it from empty.
 */
const SURELY_FULL_MS = 61 * 60_000;

type Mode = 'consume' | 'charge' | 'refund' | 'peek';

/** Spent buckets this server keeps in mind at most; past it, `standing` asks the database. */
const MAX_SPENT = 100_000;
// As the limiter's: absorbs float drift in a refill.
const EPSILON = 1e-9;

/**
 * The rate-limit buckets of every instance on one database (README, Running several
 * instances): each spending is one call of `rate_bucket_take` (migrations/004-instances.sql),
 * which locks the key's row in `rate_buckets`, refills it to now and spends from it, so a
 * token of 30 a minute gets 30 through any number of instances, not 30 each. An unlimited
 * key (limit 0) costs no query. Each method is async, so the guard (pg/guard.ts) bounds it
 * and an outage answers 503 like any other call into the database.
 */
export class PgLimiter implements Limiter {
  /** Buckets run dry, by key: until when (epoch ms), as announced on channel `buckets` (migration 8). */
  readonly #spent = new Map<string, number>();
  /** Whether every announcement committed a moment ago has been heard (the paste cache's ping). */
  readonly #heard: () => boolean;
  readonly #channel: Channel;
  /** Whether #spent holds every spent bucket: false until the table is read after each LISTEN. */
  #complete = false;
  /** Keys announced while the table was being read: what was read of them may be older. */
  #touched: Set<string> | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
    heard: () => boolean = () => false,
  ) {
    this.#heard = heard;
    this.#channel = new Channel(sql, 'buckets', {
      notified: (payload) => this.#notified(payload),
      listened: () => void this.#reload(),
    });
  }

  /** Starts hearing which buckets run dry; false when LISTEN cannot be had (`standing` then asks). */
  listen(): Promise<boolean> {
    return this.#channel.start();
  }

  close(): Promise<void> {
    this.#complete = false;
    return this.#channel.close();
  }

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

  /**
   * What `consume` would decide, without spending. Every API request asks it of the client's
   * failure budget, so it is answered from the announcements of spent buckets when they can
   * be trusted (README, Running several instances), and from the database otherwise.
   */
  standing(key: string, limitPerMinute: number): Decision | null | Promise<Decision | null> {
    if (limitPerMinute === 0) return null;
    if (this.#complete && this.#channel.listening && this.#spent.size <= MAX_SPENT && this.#heard()) {
      const now = this.now();
      const until = this.#spent.get(key);
      if (until === undefined || until <= now) return null;
      return decisionOf(false, 1 - ((until - now) * limitPerMinute) / 60_000, limitPerMinute, now);
    }
    return this.#peek(key, limitPerMinute);
  }

  async #peek(key: string, limitPerMinute: number): Promise<Decision | null> {
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
    const tokens = (row?.['tokens'] as number | null | undefined) ?? null;
    // This server's own spending is known at once, before its announcement comes back.
    if (mode !== 'peek')
      this.#note(key, tokens !== null && tokens + EPSILON < 1 ? at + ((1 - tokens) * 60_000) / limit : 0);
    return { allowed: row?.['allowed'] === true, tokens };
  }

  /** "<until ms> <key>": the bucket is dry until then (0: it is not). */
  #notified(payload: string): void {
    const space = payload.indexOf(' ');
    if (space <= 0) return;
    const until = Number(payload.slice(0, space));
    const key = payload.slice(space + 1);
    this.#touched?.add(key);
    this.#note(key, Number.isFinite(until) ? until : 0);
  }

  #note(key: string, until: number): void {
    if (until > this.now()) this.#spent.set(key, until);
    else this.#spent.delete(key);
    if (this.#spent.size > MAX_SPENT) this.#forgetRefilled();
  }

  #forgetRefilled(): void {
    const now = this.now();
    for (const [key, until] of this.#spent) if (until <= now) this.#spent.delete(key);
  }

  /**
   * After each LISTEN (at start, and after the driver reconnected: announcements were lost
   * meanwhile), the buckets dry now are read from the table; until then `standing` asks.
   */
  async #reload(): Promise<void> {
    this.#complete = false;
    const touched = new Set<string>();
    this.#touched = touched;
    try {
      const rows = await this.sql<{ key: string; until: number }[]>`
        select key, (extract(epoch from updated_at) * 1000
          + (1 - tokens) * 60000 / limit_per_minute)::float8 as until
        from rate_buckets where tokens < 1 and limit_per_minute > 0`;
      for (const r of rows) if (!touched.has(r.key)) this.#note(r.key, r.until);
      if (this.#touched === touched) this.#complete = true;
    } catch {
      // Left incomplete: `standing` keeps asking the database, which is always right.
    } finally {
      if (this.#touched === touched) this.#touched = null;
    }
  }
}
