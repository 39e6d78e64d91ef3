import { createHash, createHmac } from 'node:crypto';
import { RandomIds } from '../../crypto/random.ts';
import { HttpError } from '../../http/errors.ts';
import { PasteError } from '../../paste/errors.ts';
import { StorageFull, StorageReadOnly } from '../../storage/errors.ts';
import { HASH_LENGTH } from '../../paste/paste.ts';

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
}

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** A stored record's id for a token's key: a hash, so neither appears in storage. */
export const idempotencyId = (tokenId: string, key: string): string =>
  createHash('sha256').update(`${tokenId}\0${key}`).digest('base64url');

/** Where the records live (store/idempotency.ts on the data folder). */
export interface IdempotencyStore {
  /** The record of `id`, or null when there is none. */
  get(id: string): Promise<IdempotencyRecord | null>;
  /** Writes the record durably before it resolves. */
  put(id: string, record: IdempotencyRecord): Promise<void>;
  remove(id: string): Promise<void>;
}

/** The header's value: 1 to 255 printable ASCII characters (a UUID is the usual choice). */
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/**
 * What an idempotent request does: carried out with `hash` as the paste's (a create's chosen
 * hash, an edit's target), it answers the paste's hash.
 */
export type Effect = (hash: string) => Promise<string>;

/** What a request asks for, reduced to what makes two requests the same one. */
export interface Ask {
  tokenId: string;
  key: string;
  endpoint: string;
  /** The request's validated fields, in a fixed order (JSON of the validated input). */
  fields: string;
  /** The paste an edit is about; a create has none until it picks one. */
  hash: string | null;
}

/**
 * Safe retries (README, Safe retries): the first answer to a token's `Idempotency-Key` is
 * the answer to every request with that key for 24 hours, the same key for another request
 * is 422, and concurrent duplicates share one execution. The record is written before the
 * effect with the hash the paste will have (an edit's, with the revision it starts from),
 * and marked done after it: a retry after a crash in between finds the paste under that
 * hash (or makes it there), never a second one, and finds an edit done when the paste has
 * moved past that revision (or makes it then), never twice.
 */
export class Idempotency {
  readonly #inFlight = new Map<string, { fingerprint: string; answer: Promise<string> }>();
  readonly #ids = new RandomIds();

  constructor(
    private readonly records: IdempotencyStore,
    /** The revision of the paste `hash` now (in any state), null when there is no such paste. */
    private readonly revisionOf: (hash: string) => Promise<number | null>,
    private readonly now: () => number,
    /**
     * Keys the fingerprints, so a record holds nothing a reader of the disk could test guesses
     * of a request against.
     */
    private readonly serverKey: Buffer,
    /** Puts a paste a retried create found made back in its owner's list (a crash may have come between the two). */
    private readonly relist: (hash: string) => Promise<void> = async () => undefined,
  ) {}

  /** The `Idempotency-Key` header, checked, or null when the request has none. */
  static keyOf(header: string | string[] | undefined): string | null {
    if (header === undefined) return null;
    if (typeof header !== 'string' || !KEY_RE.test(header)) {
      throw new HttpError('bad_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters, sent once');
    }
    return header;
  }

  /** Runs `effect` at most once per key; answers the paste's hash, the first time's on every repeat. */
  run(ask: Ask, effect: Effect): Promise<string> {
    const id = idempotencyId(ask.tokenId, ask.key);
    const fingerprint = createHmac('sha256', this.serverKey)
      .update(`${ask.endpoint}\0${ask.hash ?? ''}\0${ask.fields}`)
      .digest('base64url');
    const running = this.#inFlight.get(id);
    if (running !== undefined) {
      if (running.fingerprint !== fingerprint) throw reused();
      return running.answer;
    }
    const answer = this.#once(id, ask, fingerprint, effect).finally(() => this.#inFlight.delete(id));
    this.#inFlight.set(id, { fingerprint, answer });
    return answer;
  }

  async #once(id: string, ask: Ask, fingerprint: string, effect: Effect): Promise<string> {
    const now = this.now();
    const found = await this.records.get(id);
    let record: IdempotencyRecord;
    if (found !== null && now - found.at < IDEMPOTENCY_TTL_MS) {
      if (found.fingerprint !== fingerprint || found.endpoint !== ask.endpoint) throw reused();
      if (found.done) return found.hash;
      record = found;
      // Begun before a crash: a create that reached the disk is not made again, nor is an
      // edit once the paste has moved past the revision it began on.
      const revision = await this.revisionOf(found.hash);
      if (revision !== null && (ask.hash === null || (found.revision !== undefined && revision > found.revision))) {
        if (ask.hash === null) await this.relist(found.hash);
        await this.records.put(id, { ...record, done: true });
        return record.hash;
      }
    } else {
      const hash = ask.hash ?? this.#ids.base62(HASH_LENGTH);
      const revision = ask.hash === null ? null : await this.revisionOf(hash);
      record = {
        endpoint: ask.endpoint,
        fingerprint,
        hash,
        done: false,
        at: now,
        ...(revision === null ? {} : { revision }),
      };
      await this.records.put(id, record);
    }
    let hash: string;
    try {
      hash = await effect(record.hash);
    } catch (err) {
      // Refused, nothing was written: the key is free again, as for a request refused before
      // the record (README, Safe retries). Kept, a failed edit's record would pass for done
      // once anyone else edited the paste.
      if (err instanceof PasteError || err instanceof StorageFull || err instanceof StorageReadOnly)
        await this.records.remove(id).catch(() => undefined);
      throw err;
    }
    await this.records.put(id, { ...record, hash, done: true });
    return hash;
  }
}

const reused = (): HttpError =>
  new HttpError(
    'idempotency_key_reused',
    'This Idempotency-Key was used for a different request in the last 24 hours; use a new key for a new request',
  );
