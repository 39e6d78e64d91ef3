import type { Sql } from 'postgres';
import { type Session, sessionKey } from '../auth/sessions.ts';
import { RandomIds } from '../crypto/random.ts';
import { seal, unseal } from '../crypto/seal.ts';
import { SHOWN_ONCE_HOLD_MS, SHOWN_ONCE_KEY_LENGTH, type ShownOnceRecords } from '../auth/shown-once.ts';

/**
 * Values shown once, in `shown_once` (migrations/004-instances.sql), so the page after the
 * POST shows them whichever instance serves it (README, Running several instances). Each is
 * sealed with its session's id and the key the page names: the database holds neither in a
 * form that opens it.
 */
export class PgShownOnce implements ShownOnceRecords {
  readonly #ids = new RandomIds();

  constructor(private readonly sql: Sql) {}

  async put(session: Session, value: string, now: number): Promise<string> {
    const key = this.#ids.base62(SHOWN_ONCE_KEY_LENGTH);
    await this.sql`
      insert into shown_once (key, session_key, sealed, until)
      values (
        ${key}, ${sessionKey(session.id)}, ${seal(session.id, key, value)}, ${new Date(now + SHOWN_ONCE_HOLD_MS)})`;
    return key;
  }

  async take(key: string, session: Session, now: number): Promise<string | undefined> {
    const [row] = await this.sql`
      delete from shown_once where key = ${key} and session_key = ${sessionKey(session.id)}
      returning sealed, until`;
    if (row === undefined || (row['until'] as Date).getTime() <= now) return undefined;
    return unseal(session.id, key, row['sealed'] as Buffer) ?? undefined;
  }

  /** Forgets what waited too long (the upkeep). */
  async sweep(now: number): Promise<void> {
    await this.sql`delete from shown_once where until <= ${new Date(now)}`;
  }
}
