import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno, listDir, type DurableFiles } from './files.ts';
import { KeyedMutex } from './mutex.ts';

/** A session id: 32 random bytes in base64url, 43 characters, 256 bits, unguessable. */
export const SESSION_ID_RE = /^[A-Za-z0-9_-]{43}$/;

const newSessionId = (): string => randomBytes(32).toString('base64url');

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

export interface Session {
  /** The secret id, as the cookie carries it. Never written to disk. */
  id: string;
  record: SessionRecord;
}

/**
 * `last_seen` is refreshed on disk at most this often, so a busy user does not cost a
 * durable write per request; expiry is therefore accurate to within this margin.
 */
export const SESSION_TOUCH_MS = 5 * 60_000;

const FILE_RE = /^([0-9a-f]{64})\.json$/;

/**
 * Login sessions, one small file each under DATA_DIR/sessions, so they survive a restart.
 * Files are named by a SHA-256 of the session id: someone who can read the data folder
 * still cannot present a session. All sessions are held in memory; writes go through a
 * per-session lock so that a refresh can never resurrect a session deleted meanwhile.
 */
export class SessionStore {
  readonly #byKey = new Map<string, SessionRecord>();
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
    for (const name of await listDir(this.dir)) {
      const key = FILE_RE.exec(name)?.[1];
      if (key === undefined) continue;
      const record = await readRecord(join(this.dir, name));
      if (record !== undefined) this.#byKey.set(key, record);
    }
  }

  get size(): number {
    return this.#byKey.size;
  }

  async create(userId: number): Promise<Session> {
    const id = newSessionId();
    const now = this.now();
    const record: SessionRecord = {
      v: 1,
      user_id: userId,
      csrf: randomBytes(32).toString('base64url'),
      created_at: now,
      last_seen: now,
    };
    const key = sessionKey(id);
    await this.#locks.run(key, async () => {
      await this.files.writeFile(this.#path(key), JSON.stringify(record));
      this.#byKey.set(key, record);
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

  #remove(key: string): Promise<void> {
    return this.#locks.run(key, async () => {
      this.#byKey.delete(key);
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
