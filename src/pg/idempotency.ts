import type { Sql } from 'postgres';
import { IDEMPOTENCY_TTL_MS, type IdempotencyRecord, type IdempotencyStore } from '../api/v1/idempotency.ts';

/** Rows one sweep statement deletes at most, so none runs into the statement timeout. */
const SWEEP_SLICE = 5_000;

/**
 * Idempotency-Key records in `idempotency_records` (README, Safe retries), keyed by the id
 * api/v1/idempotency.ts makes (a hash: neither the token id nor the key is stored). Each put
 * is committed before it resolves, as the file store's fsync is.
 */
export class PgIdempotency implements IdempotencyStore {
  constructor(private readonly sql: Sql) {}

  /** The record of `id`, or null when there is none. */
  async get(id: string): Promise<IdempotencyRecord | null> {
    const [row] = await this.sql`
      select endpoint, fingerprint, hash, done, (extract(epoch from at) * 1000)::float8 as at, revision
      from idempotency_records where id = ${id}`;
    if (row === undefined) return null;
    const record: IdempotencyRecord = {
      endpoint: row['endpoint'] as string,
      fingerprint: row['fingerprint'] as string,
      hash: row['hash'] as string,
      done: row['done'] as boolean,
      at: row['at'] as number,
    };
    if (row['revision'] !== null) record.revision = row['revision'] as number;
    return record;
  }

  async put(id: string, r: IdempotencyRecord): Promise<void> {
    await this.sql`
      insert into idempotency_records (id, endpoint, fingerprint, hash, done, at, revision)
      values (${id}, ${r.endpoint}, ${r.fingerprint}, ${r.hash}, ${r.done}, to_timestamp(${r.at}::float8 / 1000),
        ${r.revision ?? null}::integer)
      on conflict (id) do update set endpoint = excluded.endpoint, fingerprint = excluded.fingerprint,
        hash = excluded.hash, done = excluded.done, at = excluded.at, revision = excluded.revision`;
  }

  /** Forgets the record of `id` (a request refused without writing anything). */
  async remove(id: string): Promise<void> {
    await this.sql`delete from idempotency_records where id = ${id}`;
  }

  /**
   * Removes records older than a day. By the time the key was first seen: past it a record
   * answers nothing (Idempotency treats it as absent), whatever was written to it since.
   */
  async sweep(now: number): Promise<void> {
    const cutoff = now - IDEMPOTENCY_TTL_MS;
    for (;;) {
      const gone = await this.sql`
        delete from idempotency_records where id in (
          select id from idempotency_records where at < to_timestamp(${cutoff}::float8 / 1000) limit ${SWEEP_SLICE})`;
      if (gone.count < SWEEP_SLICE) return;
    }
  }
}
