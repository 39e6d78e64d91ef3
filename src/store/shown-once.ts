import { SHOWN_ONCE_HOLD_MS, SHOWN_ONCE_KEY_LENGTH, type ShownOnceRecords } from '../auth/shown-once.ts';
import type { Session } from '../auth/sessions.ts';
import { RandomIds } from '../crypto/random.ts';

/** At most this many wait at once in memory; the oldest go first. */
const MAX_HELD = 1_000;

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
