import type { Sql } from 'postgres';
import {
  MAX_SESSIONS_PER_USER,
  newSessionId,
  newSessionRecord,
  SESSION_ID_RE,
  SESSION_TOUCH_MS,
  sessionKey,
  type Session,
  type SessionRecord,
  type SessionRecords,
} from '../auth/sessions.ts';

/**
 * The advisory lock class of a user's new sessions (with the user's id as the other key); the
 * two-key space, apart from pg/pastes.ts's class.
 */
const USER_SESSIONS_LOCK = 0x7365_7373;

/**
 * Login sessions in PostgreSQL, with the contract of store/sessions.ts: each row is keyed
 * by a SHA-256 of the session id, so whoever reads the database still cannot present a
 * session. Nothing is kept in memory: every request looks its session up by key, so a
 * logout (or a sweep) in any process ends the session everywhere at once. A refresh is an
 * UPDATE, which cannot bring back a session deleted meanwhile.
 */
export class PgSessions implements SessionRecords {
  constructor(
    private readonly sql: Sql,
    private readonly idleMs: number,
    private readonly now: () => number,
  ) {}

  async create(userId: number): Promise<Session> {
    const id = newSessionId();
    const now = this.now();
    const record = newSessionRecord(userId, now);
    // One new session of a user at a time, so that each sees the others' and no more are left.
    // The delete sees the sessions before the insert: the others, of which it keeps one fewer
    // than the most, ordered as auth/sessions.ts sessionsToEnd orders them.
    await this.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${USER_SESSIONS_LOCK}, ${userId})`;
      await tx`
        with made as (
          insert into sessions (key, user_id, csrf, created_at, last_seen)
          values (${sessionKey(id)}, ${userId}, ${record.csrf}, ${new Date(now)}, ${new Date(now)})
        )
        delete from sessions where key in (
          select key from sessions where user_id = ${userId}
          order by last_seen desc, created_at desc offset ${MAX_SESSIONS_PER_USER - 1})`;
    });
    return { id, record };
  }

  /**
   * The live session for a presented id, or null. An idle one is deleted on the spot.
   * `touched` says the stored `last_seen` moved, so the caller can renew the cookie too.
   */
  async get(id: string): Promise<{ session: Session; touched: boolean } | null> {
    if (!SESSION_ID_RE.test(id)) return null;
    const key = sessionKey(id);
    const [row] = await this.sql`select user_id, csrf, created_at, last_seen from sessions where key = ${key}`;
    if (row === undefined) return null;
    const record: SessionRecord = {
      v: 1,
      user_id: row['user_id'] as number,
      csrf: row['csrf'] as string,
      created_at: (row['created_at'] as Date).getTime(),
      last_seen: (row['last_seen'] as Date).getTime(),
    };
    const now = this.now();
    if (now - record.last_seen >= this.idleMs) {
      // Only if still idle: another process may have refreshed it since the read.
      await this.sql`delete from sessions where key = ${key} and last_seen <= ${new Date(now - this.idleMs)}`;
      return null;
    }
    if (now - record.last_seen < SESSION_TOUCH_MS) return { session: { id, record }, touched: false };
    const [touched] = await this.sql`
      update sessions set last_seen = greatest(last_seen, ${new Date(now)}) where key = ${key} returning last_seen`;
    if (touched === undefined) return null;
    const next = { ...record, last_seen: (touched['last_seen'] as Date).getTime() };
    return { session: { id, record: next }, touched: true };
  }

  async destroy(id: string): Promise<void> {
    if (SESSION_ID_RE.test(id)) await this.sql`delete from sessions where key = ${sessionKey(id)}`;
  }

  async endOthers(userId: number, keep: string): Promise<number> {
    const result = await this.sql`delete from sessions where user_id = ${userId} and key <> ${sessionKey(keep)}`;
    return result.count;
  }

  /** Removes every session idle for longer than the limit; returns how many went. */
  async sweep(): Promise<number> {
    const result = await this.sql`delete from sessions where last_seen <= ${new Date(this.now() - this.idleMs)}`;
    return result.count;
  }
}
