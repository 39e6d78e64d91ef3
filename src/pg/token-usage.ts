import type { Sql } from 'postgres';
import { countHour, emptyHourly, HOUR_MS, type Hourly, lastDayOf } from '../auth/token-hours.ts';
import type { TokenUses } from '../backend.ts';

/** A token's use since the last save. */
interface Pending {
  at: number;
  ip: string | null;
  /** Requests by epoch hour. */
  hours: Map<number, number>;
}

/**
 * When each token was last used, from which address, and how often in each of the last 24
 * hours, in `token_usage` and `token_usage_hourly`. As on the data folder (store/token-usage.ts)
 * a use is counted in memory, with no query (it is on every authenticated request), and saved
 * every few seconds; losing the last few seconds in a crash only makes "last used" older.
 * Instances share the rows: a save keeps the later of two last uses and adds its requests
 * to the hour's count, so neither instance overwrites the other's.
 */
export class PgTokenUsage implements TokenUses {
  #lastUsed = new Map<string, number>();
  #lastIp = new Map<string, string>();
  #hourly = new Map<string, Hourly>();
  /** What changed since the last save, by token. */
  #pending = new Map<string, Pending>();
  /** Saves, one at a time, so requests taken for one are never counted by another. */
  #chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
  ) {}

  touch(tokenId: string, now: number, ip?: string): void {
    this.#lastUsed.set(tokenId, now);
    if (ip !== undefined) this.#lastIp.set(tokenId, ip);
    const hour = Math.floor(now / HOUR_MS);
    let h = this.#hourly.get(tokenId);
    if (h === undefined) this.#hourly.set(tokenId, (h = emptyHourly()));
    countHour(h, hour);
    let p = this.#pending.get(tokenId);
    if (p === undefined) this.#pending.set(tokenId, (p = { at: now, ip: null, hours: new Map() }));
    p.at = Math.max(p.at, now);
    if (ip !== undefined) p.ip = ip;
    p.hours.set(hour, (p.hours.get(hour) ?? 0) + 1);
  }

  /** Requests authenticated with the token in the current hour and the 23 before it (README, Web pages: API Tokens). */
  lastDay(tokenId: string, now: number): number {
    return lastDayOf(this.#hourly.get(tokenId), now);
  }

  get(tokenId: string): number | undefined {
    return this.#lastUsed.get(tokenId);
  }

  /** The address the token was last used from, when known. */
  ip(tokenId: string): string | undefined {
    return this.#lastIp.get(tokenId);
  }

  /** Replaces what is held with what every instance saved (at start). */
  async load(): Promise<void> {
    const since = Math.floor(this.now() / HOUR_MS) - 23;
    const [used, hours] = await Promise.all([
      this.sql`select token_id, (extract(epoch from last_used_at) * 1000)::float8 as at, last_ip from token_usage`,
      this
        .sql`select token_id, hour::float8 as hour, count::float8 as count from token_usage_hourly where hour >= ${since}`,
    ]);
    this.#lastUsed = new Map(used.map((r) => [r['token_id'] as string, r['at'] as number]));
    this.#lastIp = new Map(
      used.flatMap((r) => (r['last_ip'] === null ? [] : [[r['token_id'] as string, r['last_ip'] as string] as const])),
    );
    this.#hourly = new Map();
    for (const r of hours) {
      const id = r['token_id'] as string;
      let h = this.#hourly.get(id);
      if (h === undefined) this.#hourly.set(id, (h = emptyHourly()));
      const hour = r['hour'] as number;
      h.hours[hour % 24] = hour;
      h.counts[hour % 24] = r['count'] as number;
    }
  }

  /**
   * Writes the uses counted since the last save in one transaction, and forgets the hours
   * older than a day. A failed save keeps them for the next one.
   */
  save(): Promise<void> {
    const run = this.#chain.then(() => this.#save());
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #save(): Promise<void> {
    const oldest = Math.floor(this.now() / HOUR_MS) - 23;
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    const ids = [...batch.keys()];
    const hourly = [...batch].flatMap(([id, p]) => [...p.hours].map(([hour, count]) => ({ id, hour, count })));
    try {
      await this.sql.begin(async (tx) => {
        await tx`
          insert into token_usage (token_id, last_used_at, last_ip)
          select id, to_timestamp(at / 1000), ip from unnest(${ids}::text[],
            ${ids.map((id) => batch.get(id)?.at ?? 0)}::float8[], ${ids.map((id) => batch.get(id)?.ip ?? null)}::text[])
            as x(id, at, ip)
          on conflict (token_id) do update set
            last_used_at = greatest(token_usage.last_used_at, excluded.last_used_at),
            last_ip = case when excluded.last_used_at >= token_usage.last_used_at
              then coalesce(excluded.last_ip, token_usage.last_ip) else token_usage.last_ip end`;
        await tx`
          insert into token_usage_hourly (token_id, hour, count)
          select * from unnest(${hourly.map((u) => u.id)}::text[], ${hourly.map((u) => u.hour)}::bigint[],
            ${hourly.map((u) => u.count)}::bigint[])
          on conflict (token_id, hour) do update set count = token_usage_hourly.count + excluded.count`;
        await tx`delete from token_usage_hourly where hour < ${oldest}`;
      });
    } catch (err) {
      this.#restorePending(batch);
      throw err;
    }
  }

  /** Puts a failed save's uses back, ahead of those counted meanwhile. */
  #restorePending(batch: Map<string, Pending>): void {
    for (const [id, newer] of this.#pending) {
      const older = batch.get(id);
      if (older === undefined) {
        batch.set(id, newer);
        continue;
      }
      older.at = Math.max(older.at, newer.at);
      if (newer.ip !== null) older.ip = newer.ip;
      for (const [hour, count] of newer.hours) older.hours.set(hour, (older.hours.get(hour) ?? 0) + count);
    }
    this.#pending = batch;
  }
}
