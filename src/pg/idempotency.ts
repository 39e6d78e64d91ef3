import type { Sql } from 'postgres';
import { IDEMPOTENCY_TTL_MS, type IdempotencyRecord, type IdempotencyStore } from '../paste/idempotency.ts';

const heldUntil = (r: IdempotencyRecord): Date | null => (r.heldUntil === undefined ? null : new Date(r.heldUntil));

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
      select endpoint, fingerprint, hash, done, (extract(epoch from at) * 1000)::float8 as at, revision,
        (extract(epoch from held_until) * 1000)::float8 as held_until
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
    if (row['held_until'] !== null) record.heldUntil = row['held_until'] as number;
    return record;
  }

  async put(id: string, r: IdempotencyRecord): Promise<void> {
    await this.sql`
      insert into idempotency_records (id, endpoint, fingerprint, hash, done, at, revision, held_until)
      values (${id}, ${r.endpoint}, ${r.fingerprint}, ${r.hash}, ${r.done}, to_timestamp(${r.at}::float8 / 1000),
        ${r.revision ?? null}::integer, ${heldUntil(r)})
      on conflict (id) do update set endpoint = excluded.endpoint, fingerprint = excluded.fingerprint,
        hash = excluded.hash, done = excluded.done, at = excluded.at, revision = excluded.revision,
        held_until = excluded.held_until`;
  }

  /**
   * Writes `r` unless the id has a record younger than a day (one older answers nothing and is
   * replaced); answers null when it wrote, else the record there. The unique key decides between
   * instances claiming one key at once.
   */
  async claim(id: string, r: IdempotencyRecord): Promise<IdempotencyRecord | null> {
    const written = await this.sql`
      insert into idempotency_records as i (id, endpoint, fingerprint, hash, done, at, revision, held_until)
      values (${id}, ${r.endpoint}, ${r.fingerprint}, ${r.hash}, ${r.done}, to_timestamp(${r.at}::float8 / 1000),
        ${r.revision ?? null}::integer, ${heldUntil(r)})
      on conflict (id) do update set endpoint = excluded.endpoint, fingerprint = excluded.fingerprint,
        hash = excluded.hash, done = excluded.done, at = excluded.at, revision = excluded.revision,
        held_until = excluded.held_until
      where i.at <= to_timestamp(${r.at - IDEMPOTENCY_TTL_MS}::float8 / 1000)
      returning id`;
    return written.length === 1 ? null : this.get(id);
  }

  /**
   * Holds a record not done until `until`: ours again (`renew`), or another instance's whose
   * time has run out by `now` (it crashed). Answers whether this instance holds it now.
   */
  async hold(id: string, until: number, now: number, renew: boolean): Promise<boolean> {
    const held = await this.sql`
      update idempotency_records set held_until = to_timestamp(${until}::float8 / 1000)
      where id = ${id} and not done
        and (${renew} or held_until is null or held_until <= to_timestamp(${now}::float8 / 1000))
      returning id`;
    return held.length === 1;
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
