import { createHash, createHmac } from 'node:crypto';
import { RandomIds } from '../../crypto/random.ts';
import { HttpError } from '../../http/errors.ts';
import { PasteError } from '../../paste/errors.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageFull, StorageReadOnly, StorageUnavailable } from '../../storage/errors.ts';
import { HASH_LENGTH } from '../../paste/paste.ts';
import { IDEMPOTENCY_TTL_MS, type IdempotencyRecord, type IdempotencyStore } from '../../paste/idempotency.ts';

/** A stored record's id for a token's key: a hash, so neither appears in storage. */
export const idempotencyId = (tokenId: string, key: string): string =>
  createHash('sha256').update(`${tokenId}\0${key}`).digest('base64url');

/** How long a server holds a request it carries out before another may take it over; renewed while it runs. */
const HOLD_MS = 5_000;
/** How often a retry on another server looks whether the first answer is there. */
const POLL_MS = 20;
/** How long a retry waits for another server's answer before it gives up (503). */
const WAIT_MS = 60_000;

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
    const shared = this.records.claim !== undefined && this.records.hold !== undefined;
    const started = this.now();
    for (;;) {
      const now = this.now();
      let found = await this.records.get(id);
      if (found === null || now - found.at >= IDEMPOTENCY_TTL_MS) {
        const record = await this.#fresh(ask, fingerprint, now);
        if (!shared) {
          await this.records.put(id, record);
          return this.#carryOut(id, record, effect, false);
        }
        // Another server may claim the key at the same moment: the store lets one of us.
        found = (await this.records.claim?.(id, { ...record, heldUntil: now + HOLD_MS })) ?? null;
        if (found === null) return this.#carryOut(id, record, effect, true);
      }
      if (found.fingerprint !== fingerprint || found.endpoint !== ask.endpoint) throw reused();
      if (found.done) return found.hash;
      if (shared) {
        // In flight on another server: its answer is the answer (README, Running several instances).
        if (found.heldUntil !== undefined && found.heldUntil > now) {
          if (now - started > WAIT_MS)
            throw new StorageUnavailable('the first request with this Idempotency-Key is still running');
          await sleep(POLL_MS);
          continue;
        }
        // Its holder stopped (a crash): one of the servers waiting takes it over.
        if (!(await this.records.hold?.(id, now + HOLD_MS, now, false))) continue;
      }
      // Begun before a crash: a create that reached the disk is not made again, nor is an
      // edit once the paste has moved past the revision it began on.
      const revision = await this.revisionOf(found.hash);
      if (revision !== null && (ask.hash === null || (found.revision !== undefined && revision > found.revision))) {
        if (ask.hash === null) await this.relist(found.hash);
        await this.records.put(id, withoutHold({ ...found, done: true }));
        return found.hash;
      }
      return this.#carryOut(id, withoutHold(found), effect, shared);
    }
  }

  /** The record of a key seen for the first time, with the hash the paste will have. */
  async #fresh(ask: Ask, fingerprint: string, now: number): Promise<IdempotencyRecord> {
    const hash = ask.hash ?? this.#ids.base62(HASH_LENGTH);
    const revision = ask.hash === null ? null : await this.revisionOf(hash);
    return {
      endpoint: ask.endpoint,
      fingerprint,
      hash,
      done: false,
      at: now,
      ...(revision === null ? {} : { revision }),
    };
  }

  /** Runs the effect for a record written (and, when `held`, held by this server, renewed while it runs). */
  async #carryOut(id: string, record: IdempotencyRecord, effect: Effect, held: boolean): Promise<string> {
    const renew = held
      ? setInterval(
          () => void this.records.hold?.(id, this.now() + HOLD_MS, this.now(), true).catch(() => undefined),
          HOLD_MS / 3,
        )
      : undefined;
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
    } finally {
      clearInterval(renew);
    }
    await this.records.put(id, { ...record, hash, done: true });
    return hash;
  }
}

const withoutHold = (r: IdempotencyRecord): IdempotencyRecord => {
  const { heldUntil: _held, ...rest } = r;
  return rest;
};

const reused = (): HttpError =>
  new HttpError(
    'idempotency_key_reused',
    'This Idempotency-Key was used for a different request in the last 24 hours; use a new key for a new request',
  );
