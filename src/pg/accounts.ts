import type { Sql } from 'postgres';
import { performance } from 'node:perf_hooks';
import type { AccountRecords } from '../auth/accounts.ts';
import { findUserByName, type AccountsDoc, type TokenRecord, type User } from '../auth/records.ts';
import { readAccounts, writeChanges } from './account-rows.ts';
import { Channel } from './channel.ts';

/** The channel every change of the accounts is announced on, with its new version. */
export const ACCOUNTS_CHANNEL = 'accounts';

/** With the listener up, the version is still read at least this often, in case a notification is lost. */
export const RECHECK_MS = 1_000;

const emptyDoc = (): AccountsDoc => ({ version: 1, next_user_id: 1, users: [], tokens: [], revoked_tokens: [] });

export interface PgAccountsOptions {
  /** Whether `load` starts the listener (the server); a short-lived process (the CLI) has no use for it. */
  listen?: boolean;
  /** Monotonic milliseconds, for the recheck. */
  clock?: () => number;
}

/**
 * Users and API tokens in PostgreSQL, with the contract of store/accounts.ts: the whole
 * document is read from memory, and every change is one read-modify-write under a lock that
 * every process takes (the `accounts_state` row, FOR UPDATE), which adds one to the version
 * and announces it (NOTIFY, sent at commit). The server sees another process's change on
 * its next request:
 * - With the listener up, a notification marks the copy stale, and `fresh()` (in the check
 *   phase of the turn, shared by every request of that turn) reloads it; the version is
 *   read anyway every RECHECK_MS, in case the listen connection dropped and lost one.
 * - Without it (the CLI, or a listen that failed), `fresh()` reads the version once a turn,
 *   shared by every request of that turn, and reloads when it moved.
 * Whoever writes these tables must do it through `mutate` (or add one to the version), or
 * the servers' copies never learn of it.
 */
export class PgAccounts implements AccountRecords {
  readonly #listenOnLoad: boolean;
  readonly #clock: () => number;
  #doc: AccountsDoc = emptyDoc();
  /** The version the copy in memory is; -1 before the first read. */
  #version = -1;
  #usersById = new Map<number, User>();
  #tokensById = new Map<string, TokenRecord>();
  #revoked = new Set<string>();
  #pendingCheck: Promise<void> | null = null;
  #reloading: Promise<void> = Promise.resolve();
  readonly #channel: Channel;
  /** Whether a change may have been announced since the version was last read. */
  #stale = true;
  #checkedAt = 0;

  constructor(
    private readonly sql: Sql,
    opts: PgAccountsOptions = {},
  ) {
    this.#listenOnLoad = opts.listen ?? true;
    this.#clock = opts.clock ?? (() => performance.now());
    this.#channel = new Channel(sql, ACCOUNTS_CHANNEL, {
      notified: (payload) => this.#announced(payload),
      // What was announced while the connection was down is lost.
      listened: () => (this.#stale = true),
    });
  }

  /** Starts the listener (unless told not to) and reads the accounts. */
  async load(): Promise<void> {
    if (this.#listenOnLoad) await this.listen();
    await this.#reload();
  }

  /**
   * Starts listening for announced changes. False (and a version read every turn) when
   * LISTEN cannot be had (pg/channel.ts).
   */
  listen(): Promise<boolean> {
    return this.#channel.start();
  }

  /** Stops listening; from now on `fresh()` reads the version every turn. */
  unlisten(): Promise<void> {
    this.#stale = true;
    return this.#channel.stop();
  }

  /**
   * Ends the listener for good; the pool is the caller's to end (the driver keeps the listen
   * connection open until then).
   */
  close(): Promise<void> {
    this.#stale = true;
    return this.#channel.close();
  }

  #announced(payload: string): void {
    // Our own changes are already in memory; anything else (or unreadable) marks the copy stale.
    if (!(Number(payload) <= this.#version)) this.#stale = true;
  }

  /**
   * Resolves once the in-memory copy reflects every change committed before this call: at
   * once without a listener; with one, each as soon as its notification is in (a trip of the
   * listen connection), and any change at the latest RECHECK_MS after its commit.
   */
  fresh(): Promise<void> {
    this.#pendingCheck ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.#pendingCheck = null;
        const now = this.#clock();
        // Nothing announced since the last read, though that read may still be running.
        if (this.#channel.listening && !this.#stale && now - this.#checkedAt < RECHECK_MS)
          return void this.#reloading.then(resolve, reject);
        // Cleared before the read: a notification arriving while it runs marks the copy stale again.
        this.#stale = false;
        this.#checkedAt = now;
        this.#reload().then(resolve, reject);
      });
    });
    return this.#pendingCheck;
  }

  /** Reads the version and, when it moved, the accounts; one at a time. A failed one is retried by the next check. */
  #reload(): Promise<void> {
    const next = this.#reloading.catch(() => undefined).then(() => this.#check());
    this.#reloading = next;
    next.catch(() => (this.#stale = true));
    return next;
  }

  async #check(): Promise<void> {
    const [row] = await this.sql`select version from accounts_state`;
    if (row !== undefined && Number(row['version']) === this.#version) return;
    const read = await this.sql.begin('isolation level repeatable read read only', (tx) => readAccounts(tx));
    this.#set(read.doc, read.version);
  }

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

  /**
   * Read-modify-write under the accounts lock, on the document as it is in the database;
   * `fn` may throw to abort, and nothing is written. Committed before it resolves.
   */
  async mutate<T>(fn: (doc: AccountsDoc) => T): Promise<T> {
    const done = await this.sql.begin(async (tx) => {
      const [state] = await tx`select version from accounts_state for update`;
      if (state === undefined) throw new Error('the accounts_state row is missing: the schema was not migrated');
      const version = Number(state['version']);
      // Under the lock, the version names the rows: an equal one means memory holds them.
      const before = version === this.#version ? this.#doc : (await readAccounts(tx)).doc;
      const doc = structuredClone(before);
      const result = fn(doc);
      if (!(await writeChanges(tx, before, doc))) return { result, doc, version };
      await tx`update accounts_state set version = ${version + 1}, next_user_id = ${doc.next_user_id}`;
      await tx`select pg_notify(${ACCOUNTS_CHANNEL}, ${String(version + 1)})`;
      return { result, doc, version: version + 1 };
    });
    this.#set(done.doc, done.version);
    return done.result as T;
  }

  /** Keeps the newest copy: a read that began before a change may end after it. */
  #set(doc: AccountsDoc, version: number): void {
    if (version < this.#version) return;
    this.#doc = doc;
    this.#version = version;
    this.#usersById = new Map(doc.users.map((u) => [u.id, u]));
    this.#tokensById = new Map(doc.tokens.map((t) => [t.id, t]));
    this.#revoked = new Set(doc.revoked_tokens ?? []);
  }
}
