import {
  MAX_SESSIONS_PER_USER,
  newSessionId,
  newSessionRecord,
  SESSION_ID_RE,
  SESSION_TOUCH_MS,
  sessionKey,
  sessionsToEnd,
  type Session,
  type SessionRecord,
} from '../auth/sessions.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno } from '../storage/errors.ts';
import { listDir } from '../storage/fs.ts';
import type { DurableFiles } from './files.ts';
import { KeyedMutex } from './mutex.ts';

const FILE_RE = /^([0-9a-f]{64})\.json$/;

/**
 * Login sessions, one small file each under DATA_DIR/sessions, so they survive a restart.
 * Files are named by a SHA-256 of the session id: someone who can read the data folder
 * still cannot present a session. All sessions are held in memory; writes go through a
 * per-session lock so that a refresh can never resurrect a session deleted meanwhile.
 */
export class SessionStore {
  readonly #byKey = new Map<string, SessionRecord>();
  /** Each user's session keys, so a new session finds the user's others without a walk of all. */
  readonly #byUser = new Map<number, Set<string>>();
  readonly #locks = new KeyedMutex();

  constructor(
    private readonly dir: string,
    private readonly files: DurableFiles,
    private readonly idleMs: number,
    private readonly now: () => number,
  ) {}

  /** Reads every stored session; expired ones go on the next sweep. */
  async load(): Promise<void> {
    await this.files.ensureDir(this.dir);
    this.#byKey.clear();
    this.#byUser.clear();
    for (const name of await listDir(this.dir)) {
      const key = FILE_RE.exec(name)?.[1];
      if (key === undefined) continue;
      const record = await readRecord(join(this.dir, name));
      if (record !== undefined) this.#add(key, record);
    }
  }

  get size(): number {
    return this.#byKey.size;
  }

  async create(userId: number): Promise<Session> {
    const id = newSessionId();
    const now = this.now();
    const record = newSessionRecord(userId, now);
    const key = sessionKey(id);
    await this.#locks.run(key, async () => {
      await this.files.writeFile(this.#path(key), JSON.stringify(record));
      this.#add(key, record);
    });
    const mine = this.#byUser.get(userId) ?? new Set<string>();
    if (mine.size > MAX_SESSIONS_PER_USER) {
      const others: [string, SessionRecord][] = [];
      for (const k of mine) {
        const r = this.#byKey.get(k);
        if (k !== key && r !== undefined) others.push([k, r]);
      }
      for (const k of sessionsToEnd(others)) await this.#remove(k);
    }
    return { id, record };
  }

  /**
   * The live session for a presented id, or null. An idle one is deleted on the spot.
   * `touched` says the stored `last_seen` moved, so the caller can renew the cookie too.
   */
  async get(id: string): Promise<{ session: Session; touched: boolean } | null> {
    if (!SESSION_ID_RE.test(id)) return null;
    const key = sessionKey(id);
    const record = this.#byKey.get(key);
    if (record === undefined) return null;
    const now = this.now();
    if (this.#expired(record, now)) {
      await this.#remove(key);
      return null;
    }
    if (now - record.last_seen < SESSION_TOUCH_MS) return { session: { id, record }, touched: false };
    const next = { ...record, last_seen: now };
    const stored = await this.#locks.run(key, async () => {
      if (!this.#byKey.has(key)) return false;
      await this.files.writeFile(this.#path(key), JSON.stringify(next));
      this.#byKey.set(key, next);
      return true;
    });
    return stored ? { session: { id, record: next }, touched: true } : null;
  }

  async destroy(id: string): Promise<void> {
    if (SESSION_ID_RE.test(id)) await this.#remove(sessionKey(id));
  }

  async endOthers(userId: number, keep: string): Promise<number> {
    const kept = sessionKey(keep);
    const ending = [...this.#byKey].filter(([key, r]) => r.user_id === userId && key !== kept).map(([key]) => key);
    for (const key of ending) await this.#remove(key);
    return ending.length;
  }

  /** Removes every session idle for longer than the limit; returns how many went. */
  async sweep(): Promise<number> {
    const now = this.now();
    const stale = [...this.#byKey].filter(([, r]) => this.#expired(r, now)).map(([key]) => key);
    for (const key of stale) await this.#remove(key);
    return stale.length;
  }

  #expired(r: SessionRecord, now: number): boolean {
    return now - r.last_seen >= this.idleMs;
  }

  #add(key: string, record: SessionRecord): void {
    this.#byKey.set(key, record);
    const mine = this.#byUser.get(record.user_id);
    if (mine === undefined) this.#byUser.set(record.user_id, new Set([key]));
    else mine.add(key);
  }

  #remove(key: string): Promise<void> {
    return this.#locks.run(key, async () => {
      const record = this.#byKey.get(key);
      this.#byKey.delete(key);
      const mine = record === undefined ? undefined : this.#byUser.get(record.user_id);
      mine?.delete(key);
      if (record !== undefined && mine?.size === 0) this.#byUser.delete(record.user_id);
      await this.files.removeFile(this.#path(key));
    });
  }

  #path(key: string): string {
    return join(this.dir, `${key}.json`);
  }
}

/** A stored session, or undefined for a file that is not one (foreign or hand-edited). */
async function readRecord(path: string): Promise<SessionRecord | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    // Gone since the listing, or not JSON: either way there is no session in it.
    if (isErrno(err, 'ENOENT') || err instanceof SyntaxError) return undefined;
    throw err;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  const ok =
    r['v'] === 1 &&
    typeof r['user_id'] === 'number' &&
    typeof r['csrf'] === 'string' &&
    typeof r['created_at'] === 'number' &&
    typeof r['last_seen'] === 'number' &&
    Number.isFinite(r['last_seen']);
  return ok ? (value as SessionRecord) : undefined;
}
