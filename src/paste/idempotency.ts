/**
 * What a request with an `Idempotency-Key` was (README, Safe retries): the endpoint, a
 * fingerprint of its fields, the paste it is about, and whether it was carried out. The store
 * keeps it under an id made from a hash of the token id and the key (neither is kept in
 * the clear), durably before the request's effect and again after it, so a retry after a
 * crash finds it.
 */
export interface IdempotencyRecord {
  endpoint: string;
  fingerprint: string;
  hash: string;
  done: boolean;
  /** When the key was first seen (epoch ms); it answers for 24 hours from then. */
  at: number;
  /** For an edit, the paste's revision when it began: a paste past it has the edit. */
  revision?: number;
  /** Until when the server carrying it out holds it (epoch ms; a store several servers share). */
  heldUntil?: number;
}

/** How long a key answers for, from when it was first seen. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** Where the records live (store/idempotency.ts on the data folder, pg/idempotency.ts on PostgreSQL). */
export interface IdempotencyStore {
  /** The record of `id`, or null when there is none. */
  get(id: string): Promise<IdempotencyRecord | null>;
  /** Writes the record durably before it resolves. */
  put(id: string, record: IdempotencyRecord): Promise<void>;
  remove(id: string): Promise<void>;
  /**
   * A store several servers share (pg/idempotency.ts) has these two. `claim` writes the record
   * unless the id has a live one, answering null, else the record there; `hold` keeps a record
   * not done held until `until`: this server's again (`renew`), or one whose holder's time ran
   * out by `now` (it crashed), answering whether this server holds it.
   */
  claim?(id: string, record: IdempotencyRecord): Promise<IdempotencyRecord | null>;
  hold?(id: string, until: number, now: number, renew: boolean): Promise<boolean>;
}
