import { RandomIds } from '../crypto/random.ts';

/** How long a new secret waits for the page that shows it. */
const HOLD_MS = 5 * 60_000;
/** At most this many wait at once; the oldest go first. */
const MAX_HELD = 1_000;

/**
 * A new token's secret, held for the one page after the POST that made it (README, Web
 * pages: POST, redirect, GET). The form's answer is a redirect to `?created=<key>`; that
 * page takes the secret out, so reloading it shows no secret and creates no second token.
 * In memory only: the secret is never written anywhere.
 */
export class ShownOnce<T> {
  readonly #held = new Map<string, { userId: number; value: T; until: number }>();
  readonly #ids = new RandomIds();

  put(userId: number, value: T, now: number): string {
    for (const [k, v] of this.#held) if (v.until <= now || this.#held.size >= MAX_HELD) this.#held.delete(k);
    const key = this.#ids.base62(22);
    this.#held.set(key, { userId, value, until: now + HOLD_MS });
    return key;
  }

  /**
   * The value held under `key` for this user, once; undefined after that, for anyone else, or
   * when it waited too long.
   */
  take(key: string, userId: number, now: number): T | undefined {
    const held = this.#held.get(key);
    if (held === undefined || held.userId !== userId) return undefined;
    this.#held.delete(key);
    return held.until > now ? held.value : undefined;
  }
}
