import { createHash, randomBytes } from 'node:crypto';

/**
 * Web login sessions as the web side speaks of them and every store (store/, pg/) keeps
 * them: the records of the sessions seam (`SessionRecords`, below).
 */

/** A session id: 32 random bytes in base64url, 43 characters, 256 bits, unguessable. */
export const SESSION_ID_RE = /^[A-Za-z0-9_-]{43}$/;

export const newSessionId = (): string => randomBytes(32).toString('base64url');

/** What is stored instead of the id: a leaked data folder must not hand out sessions. */
export const sessionKey = (id: string): string => createHash('sha256').update(id).digest('hex');

/** One login session as stored at `sessions/<sha256 of the id>.json`. Times are epoch ms. */
export interface SessionRecord {
  v: 1;
  user_id: number;
  /** The CSRF token of this session's forms; random, so it tells nothing about the id. */
  csrf: string;
  created_at: number;
  last_seen: number;
}

/** A new session's record: both stores make it the same way (store/sessions.ts, pg/sessions.ts). */
export const newSessionRecord = (userId: number, now: number): SessionRecord => ({
  v: 1,
  user_id: userId,
  csrf: randomBytes(32).toString('base64url'),
  created_at: now,
  last_seen: now,
});

export interface Session {
  /** The secret id, as the cookie carries it. Never written to disk. */
  id: string;
  record: SessionRecord;
}

/** What the web needs of the login sessions, as each backend keeps them (store/sessions.ts, pg/sessions.ts). */
export interface SessionRecords {
  /** The live session for an id (an idle one is ended on the spot); `touched`: its last use moved. */
  get(id: string): Promise<{ session: Session; touched: boolean } | null>;
  /** A new session; the user's least recently used beyond MAX_SESSIONS_PER_USER end with it. */
  create(userId: number): Promise<Session>;
  destroy(id: string): Promise<void>;
  /** Ends every session of a user but the one with id `keep` (a password change); returns how many ended. */
  endOthers(userId: number, keep: string): Promise<number>;
}

/**
 * Sessions a user holds at most: a new one ends the least recently used beyond it (README,
 * Web pages), so sign-ins that never keep their cookie (a script behind a signing-in proxy)
 * cannot pile up sessions without end.
 */
export const MAX_SESSIONS_PER_USER = 20;

/** Of a user's other sessions, those a new one ends: all but the `MAX_SESSIONS_PER_USER - 1` most recently used. */
export function sessionsToEnd<K>(others: readonly [K, SessionRecord][]): K[] {
  return [...others]
    .sort(([, a], [, b]) => b.last_seen - a.last_seen || b.created_at - a.created_at)
    .slice(MAX_SESSIONS_PER_USER - 1)
    .map(([key]) => key);
}

/**
 * `last_seen` is refreshed on disk at most this often, so a busy user does not cost a
 * durable write per request; expiry is therefore accurate to within this margin.
 */
export const SESSION_TOUCH_MS = 5 * 60_000;
