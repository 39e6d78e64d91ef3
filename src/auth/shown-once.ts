import type { Session } from './sessions.ts';

/** How long a new secret waits for the page that shows it. */
export const SHOWN_ONCE_HOLD_MS = 5 * 60_000;
/** Characters of a key `put` makes (store/shown-once.ts, pg/shown-once.ts). */
export const SHOWN_ONCE_KEY_LENGTH = 22;

/**
 * Where a value shown once waits for its page (README, Web pages: POST, redirect, GET): in
 * memory for the data folder (store/shown-once.ts), in the database for several instances, sealed
 * with the session's id (pg/shown-once.ts), so whichever instance serves the page shows it.
 */
export interface ShownOnceRecords {
  /** Holds `value` for `session`'s next page; answers the key that page names. */
  put(session: Session, value: string, now: number): Promise<string>;
  /**
   * The value held under `key` for this session, once; undefined after that, for any other session, or when it waited
   * too long.
   */
  take(key: string, session: Session, now: number): Promise<string | undefined>;
}
