import { SHOWN_ONCE_KEY_LENGTH, type ShownOnceRecords } from '../auth/shown-once.ts';
import type { Session } from '../auth/sessions.ts';

const KEY_RE = new RegExp(`^[A-Za-z0-9]{${SHOWN_ONCE_KEY_LENGTH}}$`);

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
