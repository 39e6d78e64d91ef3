import type { Sql } from 'postgres';
import { HOUR_MS } from '../auth/token-hours.ts';
import { TokenUseCounts, type TokenUseChange } from '../auth/token-uses.ts';

/**
 * PostgreSQL's port of token use (auth/token-uses.ts holds the counting), in `token_usage`
 * and `token_usage_hourly`. Instances share the rows, so unlike the data folder a save writes
 * only the changes since the last one: it keeps the later of two last uses and adds its
 * requests to the hour's count, so neither instance overwrites the other's.
 */
export class PgTokenUsage extends TokenUseCounts {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
  ) {
    super();
  }

  /** Replaces what is held with what every instance saved (at start). */
  async load(): Promise<void> {
    const since = Math.floor(this.now() / HOUR_MS) - 23;
    const [used, hours] = await Promise.all([
      this.sql`select token_id, (extract(epoch from last_used_at) * 1000)::float8 as at, last_ip from token_usage`,
      this.sql`select token_id, hour::float8 as hour, count::float8 as count
        from token_usage_hourly where hour >= ${since}`,
    ]);
    this.restore(
      used.map((r) => [r['token_id'] as string, r['at'] as number, r['last_ip'] as string | null] as const),
      hours.map((r) => [r['token_id'] as string, r['hour'] as number, r['count'] as number] as const),
    );
  }

  /** Writes the changes in one transaction, and forgets the hours older than a day. */
  protected async persist(batch: ReadonlyMap<string, TokenUseChange>): Promise<void> {
    const oldest = Math.floor(this.now() / HOUR_MS) - 23;
    const ids = [...batch.keys()];
    const hourly = [...batch].flatMap(([id, p]) => [...p.hours].map(([hour, count]) => ({ id, hour, count })));
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
  }
}
