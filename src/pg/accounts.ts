import type { FSWatcher } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sql } from 'postgres';
import { AccountIndex, RECHECK_MS } from '../auth/account-index.ts';
import type { AccountsDoc } from '../auth/records.ts';
import { readAccounts, writeChanges } from './account-rows.ts';
import { Channel } from './channel.ts';
import { watchEntry } from '../storage/folder-watch.ts';

export { RECHECK_MS };

/** The channel every change of the accounts is announced on, with its new version. */
export const ACCOUNTS_CHANNEL = 'accounts';

const emptyDoc = (): AccountsDoc => ({ version: 1, next_user_id: 1, users: [], tokens: [], revoked_tokens: [] });

export interface PgAccountsOptions {
  /** Whether `load` starts the listener (the server); a short-lived process (the CLI) has no use for it. */
  listen?: boolean;
  /** Monotonic milliseconds, for the recheck. */
  clock?: () => number;
  /**
   * The data folder (DATA_DIR) this process shares with the CLI run beside it: the server
   * watches its NUDGE_FILE; a process without the listener writes it after each change.
   */
  dataDir?: string;
}

/**
 * The file in DATA_DIR the CLI writes after each change to the accounts, and the server of
 * that folder watches: a notification is sent at commit and may reach the server after the
 * next request, while the kernel reports the write before the CLI's call returns, so the
 * server beside the CLI sees its change on the very next request (CONTRACT, Command line).
 * Its content (the new version) is for a reader; only the change counts.
 */
export const NUDGE_FILE = 'accounts.changed';

/**
 * PostgreSQL's port of the accounts index (auth/account-index.ts holds the index and its
 * freshness): every change is one read-modify-write under a lock every process takes (the
 * `accounts_state` row, FOR UPDATE), which adds one to the version and announces it (NOTIFY,
 * sent at commit). Unlike the data folder's watch, which sees one machine's folder, the
 * notification reaches every instance: with the listener up a notification marks the copy
 * stale; without it (the CLI, or a listen that failed) a check reads the version every turn.
 * Whoever writes these tables must do it through `mutate` (or add one to the version), or
 * the servers' copies never learn of it.
 */
export class PgAccounts extends AccountIndex<number> {
  readonly #listenOnLoad: boolean;
  readonly #channel: Channel;
  readonly #dataDir: string | undefined;
  #nudges: FSWatcher | null = null;

  constructor(
    private readonly sql: Sql,
    opts: PgAccountsOptions = {},
  ) {
    super(emptyDoc(), opts.clock);
    this.#listenOnLoad = opts.listen ?? true;
    this.#dataDir = opts.dataDir;
    this.#channel = new Channel(sql, ACCOUNTS_CHANNEL, {
      notified: (payload) => this.#announced(payload),
      // What was announced while the connection was down is lost.
      listened: () => this.changed(),
    });
  }

  protected get watching(): boolean {
    return this.#channel.listening;
  }

  /** Starts the listener and the watch of NUDGE_FILE (unless told not to) and reads the accounts. */
  async load(): Promise<void> {
    if (this.#listenOnLoad) {
      await this.listen();
      if (this.#dataDir !== undefined) this.#nudges = await watchEntry(this.#dataDir, NUDGE_FILE, this.#nudged);
    }
    await this.reload();
  }

  readonly #nudged = { changed: () => this.changed(), ended: () => (this.#nudges = null) };

  /**
   * Starts listening for announced changes. False (and a version read every turn) when
   * LISTEN cannot be had (pg/channel.ts).
   */
  listen(): Promise<boolean> {
    return this.#channel.start();
  }

  /** Stops listening; from now on `fresh()` reads the version every turn. */
  unlisten(): Promise<void> {
    this.changed();
    return this.#channel.stop();
  }

  /**
   * Ends the listener for good; the pool is the caller's to end (the driver keeps the listen
   * connection open until then).
   */
  close(): Promise<void> {
    this.changed();
    this.#nudges?.close();
    this.#nudges = null;
    return this.#channel.close();
  }

  #announced(payload: string): void {
    // Our own changes are already in memory; anything else (or unreadable) marks the copy stale.
    if (!(Number(payload) <= (this.held.version ?? -1))) this.changed();
  }

  protected async read(held: number | undefined): Promise<{ doc: AccountsDoc; version: number } | null> {
    const [row] = await this.sql`select version from accounts_state`;
    if (row !== undefined && Number(row['version']) === held) return null;
    return this.sql.begin('isolation level repeatable read read only', (tx) => readAccounts(tx));
  }

  /** Keeps the newest copy: a read that began before a change may end after it. */
  protected override supersedes(version: number, held: number): boolean {
    return version >= held;
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
      const before = version === this.held.version ? this.held.doc : (await readAccounts(tx)).doc;
      const doc = structuredClone(before);
      const result = fn(doc);
      if (!(await writeChanges(tx, before, doc))) return { result, doc, version, wrote: false };
      await tx`update accounts_state set version = ${version + 1}, next_user_id = ${doc.next_user_id}`;
      await tx`select pg_notify(${ACCOUNTS_CHANNEL}, ${String(version + 1)})`;
      return { result, doc, version: version + 1, wrote: true };
    });
    this.set(done.doc, done.version);
    if (done.wrote && !this.#listenOnLoad && this.#dataDir !== undefined)
      await nudgeServer(this.#dataDir, done.version);
    return done.result as T;
  }
}

/**
 * Writes NUDGE_FILE, after the change it tells of was committed. A failure is not the
 * change's: that is made, and the notification still tells the server within RECHECK_MS.
 */
export async function nudgeServer(dataDir: string, version: number): Promise<void> {
  await writeFile(join(dataDir, NUDGE_FILE), `${version}\n`).catch(() => undefined);
}
