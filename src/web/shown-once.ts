import type { Session } from '../auth/sessions.ts';
import { RandomIds } from '../crypto/random.ts';

/** How long a new secret waits for the page that shows it. */
export const SHOWN_ONCE_HOLD_MS = 5 * 60_000;
/** At most this many wait at once in memory; the oldest go first. */
const MAX_HELD = 1_000;
/** Characters of a key `put` makes (pg/shown-once.ts too). */
export const SHOWN_ONCE_KEY_LENGTH = 22;
const KEY_RE = new RegExp(`^[A-Za-z0-9]{${SHOWN_ONCE_KEY_LENGTH}}$`);

/**
 * Where a value shown once waits for its page (README, Web pages: POST, redirect, GET): in
 * memory for the data folder (`HeldInMemory`), in the database for several instances, sealed
 * with the session's id (pg/shown-once.ts), so whichever instance serves the page shows it.
 */
export interface ShownOnceRecords {
  /** Holds `value` for `session`'s next page; answers the key that page names. */
  put(session: Session, value: string, now: number): Promise<string>;
  /** The value held under `key` for this session, once; undefined after that, for any other session, or when it waited too long. */
  take(key: string, session: Session, now: number): Promise<string | undefined>;
}

/** The values of one process, never written anywhere. */
export class HeldInMemory implements ShownOnceRecords {
  readonly #held = new Map<string, { sessionId: string; value: string; until: number }>();
  readonly #ids = new RandomIds();

  async put(session: Session, value: string, now: number): Promise<string> {
    for (const [k, v] of this.#held) if (v.until <= now || this.#held.size >= MAX_HELD) this.#held.delete(k);
    const key = this.#ids.base62(SHOWN_ONCE_KEY_LENGTH);
    this.#held.set(key, { sessionId: session.id, value, until: now + SHOWN_ONCE_HOLD_MS });
    return key;
  }

  async take(key: string, session: Session, now: number): Promise<string | undefined> {
    const held = this.#held.get(key);
    if (held === undefined || held.sessionId !== session.id) return undefined;
    this.#held.delete(key);
    return held.until > now ? held.value : undefined;
  }
}

/**
 * A new token's secret or a new user's password, held for the one page after the POST that
 * made it. The form's answer is a redirect to `?created=<key>`; that page takes the value out,
 * so reloading it shows nothing and creates nothing a second time.
 */
export class ShownOnce<T> {
  constructor(
    private readonly records: ShownOnceRecords,
    /** What is held (a token, a user): a key made for one is never taken as the other. */
    private readonly kind: string,
  ) {}

  put(session: Session, value: T, now: number): Promise<string> {
    return this.records.put(session, JSON.stringify({ kind: this.kind, value }), now);
  }

  async take(key: string, session: Session, now: number): Promise<T | undefined> {
    // A key of another shape was never made here; PostgreSQL text would refuse some (U+0000).
    if (!KEY_RE.test(key)) return undefined;
    const held = await this.records.take(key, session, now);
    if (held === undefined) return undefined;
    const parsed = JSON.parse(held) as { kind: string; value: T };
    return parsed.kind === this.kind ? parsed.value : undefined;
  }
}
