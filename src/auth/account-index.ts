import { performance } from 'node:perf_hooks';
import type { AccountRecords } from './accounts.ts';
import { findUserByName, type AccountsDoc, type TokenRecord, type User } from './records.ts';

/** With a watch on the stored accounts, they are still checked at least this often, in case a change notice is lost. */
export const RECHECK_MS = 1_000;

/**
 * The accounts in memory, indexed, and kept fresh, for both backends (store/accounts.ts,
 * pg/accounts.ts): every read is of the copy in memory, and every change is one
 * read-modify-write under a lock every process takes. The server sees another process's
 * change on its next request: `fresh()`, in the check phase of the turn (after every event
 * of the poll that delivered the request), shared by every request of that turn, reloads
 * when the backend's watch says the accounts changed, or at least every RECHECK_MS in case
 * a notice was lost; without a watch it checks the stored version every turn. The port is
 * how a change is noticed and read: the data folder watches the folder (inotify) and stats
 * the file; PostgreSQL listens for the NOTIFY every writer sends and reads a version row.
 */
export abstract class AccountIndex<V> implements AccountRecords {
  #doc: AccountsDoc;
  /** The version of the accounts the copy in memory is; undefined before the first read. */
  #version: V | undefined = undefined;
  #usersById = new Map<number, User>();
  #tokensById = new Map<string, TokenRecord>();
  #revoked = new Set<string>();
  #pendingCheck: Promise<void> | null = null;
  #reloading: Promise<void> = Promise.resolve();
  /** Whether the accounts may have changed since they were last checked (always, without a watch). */
  #stale = true;
  #checkedAt = 0;

  constructor(
    empty: AccountsDoc,
    /** Monotonic milliseconds, for the recheck. */
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.#doc = empty;
  }

  /** Whether the backend's watch is up: a change is then noticed (`changed()`), not looked for. */
  protected abstract readonly watching: boolean;

  /** The stored accounts and their version, or null when their version is `held` (unchanged). */
  protected abstract read(held: V | undefined): Promise<{ doc: AccountsDoc; version: V } | null>;

  /** Whether a read of `version` lands after `held` (PostgreSQL: a read begun before a change may end after it). */
  protected supersedes(_version: V, _held: V): boolean {
    return true;
  }

  /** The backend's watch noticed a change, or may have missed one. */
  protected changed(): void {
    this.#stale = true;
  }

  /** Resolves once the in-memory copy reflects every change finished before this call. */
  fresh(): Promise<void> {
    this.#pendingCheck ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.#pendingCheck = null;
        const now = this.clock();
        // Nothing changed since the last check, though that check may still be running.
        if (this.watching && !this.#stale && now - this.#checkedAt < RECHECK_MS)
          return void this.#reloading.then(resolve, reject);
        // Cleared before the check: a change noticed while it runs marks the copy stale again.
        this.#stale = false;
        this.#checkedAt = now;
        this.reload().then(resolve, reject);
      });
    });
    return this.#pendingCheck;
  }

  /**
   * `fresh()`, with the stored version checked even when the watch heard of no change: for
   * a token the copy does not know. PostgreSQL sends a change's notification at commit, and
   * it may reach this process after the request that uses the token the change made (the
   * writer's process is done by then); the data folder's inotify event is queued before the
   * rename returns, so there this check only confirms. Requests of one turn share it.
   */
  recheck(): Promise<void> {
    this.#stale = true;
    return this.fresh();
  }

  /**
   * Checks the version and, when it moved, reads the accounts; one at a time, so an older
   * read can never land after a newer one. A failed one is retried by the next check.
   */
  protected reload(): Promise<void> {
    const next = this.#reloading
      .catch(() => undefined)
      .then(async () => {
        const read = await this.read(this.#version);
        if (read !== null) this.set(read.doc, read.version);
      });
    this.#reloading = next;
    next.catch(() => (this.#stale = true));
    return next;
  }

  /** The copy in memory and its version. */
  protected get held(): { doc: AccountsDoc; version: V | undefined } {
    return { doc: this.#doc, version: this.#version };
  }

  /** Takes a copy of the accounts read or written, unless a newer one is held already. */
  protected set(doc: AccountsDoc, version: V): void {
    if (this.#version !== undefined && !this.supersedes(version, this.#version)) return;
    this.#doc = doc;
    this.#version = version;
    this.#usersById = new Map(doc.users.map((u) => [u.id, u]));
    this.#tokensById = new Map(doc.tokens.map((t) => [t.id, t]));
    this.#revoked = new Set(Array.isArray(doc.revoked_tokens) ? doc.revoked_tokens : []);
  }

  abstract mutate<T>(fn: (doc: AccountsDoc) => T): Promise<T>;

  get users(): readonly User[] {
    return this.#doc.users;
  }
  get tokens(): readonly TokenRecord[] {
    return this.#doc.tokens;
  }
  user(id: number): User | undefined {
    return this.#usersById.get(id);
  }
  userByName(name: string): User | undefined {
    return findUserByName(this.#doc.users, name);
  }
  /** Whether `id` is, or was until revoked, one of our tokens' ids. */
  knownTokenId(id: string): boolean {
    return this.#tokensById.has(id) || this.#revoked.has(id);
  }
  token(id: string): TokenRecord | undefined {
    return this.#tokensById.get(id);
  }
}
