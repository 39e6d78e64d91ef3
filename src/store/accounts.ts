import { findUserByName, type AccountsDoc, type TokenRecord, type User } from '../auth/records.ts';
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat, statfs } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DamagedFile, isErrno } from '../storage/errors.ts';
import type { DurableFiles } from './files.ts';
import { withFileLock } from './lock.ts';

const emptyDoc = (): AccountsDoc => ({ version: 1, next_user_id: 1, users: [], tokens: [] });

/** With a watch on the folder, the file is still stat'ed at least this often, in case an event is lost. */
export const RECHECK_MS = 1_000;

/**
 * Filesystems (statfs f_type) whose every change goes through this kernel, so inotify sees
 * the CLI's writes: ext2-4, xfs, btrfs, tmpfs, overlayfs (Docker's layers), zfs, f2fs.
 * On anything else (NFS, SMB, 9p, virtiofs, FUSE: a Docker Desktop bind mount, say) another
 * kernel may write, unseen, so the file is stat'ed on every turn instead.
 */
const LOCAL_FILESYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010]);

/**
 * Users and API tokens, one small JSON document shared by the server and the CLI.
 * Writers take a lock file and write atomically (a rename into place). The server sees
 * another process's write on its next request:
 * - `watch()` asks the kernel (inotify) to report renames in the data folder. The rename is
 *   reported before the writer's rename() returns, so before any request it precedes.
 *   `fresh()` looks at the report in the check phase of the event loop, after every event
 *   of the poll that delivered the request has been handled, and stats and reloads the file
 *   only when it was replaced (or at least every RECHECK_MS, in case an event was lost).
 * - Without a watch (the CLI, or a folder that cannot be watched), `fresh()` stats the file:
 *   one stat per turn of the event loop, shared by every request that arrived in it.
 */
export class AccountStore {
  readonly #dir: string;
  readonly #file: string;
  readonly #lock: string;
  #doc: AccountsDoc = emptyDoc();
  #version = '';
  #pendingCheck: Promise<void> | null = null;
  #usersById = new Map<number, User>();
  #tokensById = new Map<string, TokenRecord>();
  #revoked = new Set<string>();
  #watcher: FSWatcher | null = null;
  /** Whether the file may have changed since the last stat (always, without a watch). */
  #changed = true;
  #checkedAt = 0;
  #reloading: Promise<void> = Promise.resolve();

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.#dir = dataDir;
    this.#file = join(dataDir, 'accounts.json');
    this.#lock = join(dataDir, 'accounts.lock');
  }

  async load(): Promise<void> {
    const version = await this.#stat();
    if (version === this.#version) return;
    let doc = emptyDoc();
    if (version !== '') {
      const text = await readFile(this.#file, 'utf8');
      try {
        doc = JSON.parse(text) as AccountsDoc;
      } catch {
        // JSON.parse of a string throws SyntaxError only. Users and tokens cannot be guessed: say so, start nothing.
        throw new DamagedFile(
          this.#file,
          `${text.length === 0 ? 'it is empty' : 'it is not valid JSON (cut short?)'}; restore it from a backup`,
        );
      }
      if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as Partial<AccountsDoc>).users)) {
        throw new DamagedFile(this.#file, 'it does not hold the accounts (no "users" list); restore it from a backup');
      }
    }
    this.#set(doc, version);
  }

  /**
   * Starts watching the folder for a replaced file. False (and a stat on every turn) where
   * a watch cannot be trusted: the folder is on a filesystem another kernel may write to,
   * or it cannot be watched at all. A lost event (the kernel's queue overflowed) is caught
   * by the stat every RECHECK_MS; the folder itself moved or deleted ends the watch.
   */
  async watch(): Promise<boolean> {
    if (this.#watcher !== null) return true;
    try {
      if (!LOCAL_FILESYSTEMS.has((await statfs(this.#dir)).type)) return false;
      const self = basename(this.#dir);
      this.#watcher = watch(this.#dir, { persistent: false }, (_event, name) => {
        if (name === self) this.unwatch();
        else if (name === null || name === 'accounts.json') this.#changed = true;
      });
    } catch {
      return false;
    }
    this.#watcher.on('error', () => this.unwatch());
    this.#changed = true;
    return true;
  }

  unwatch(): void {
    this.#watcher?.close();
    this.#watcher = null;
    this.#changed = true;
  }

  /** Resolves once the in-memory copy reflects every write finished before this call. */
  fresh(): Promise<void> {
    this.#pendingCheck ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.#pendingCheck = null;
        const now = this.clock();
        // Nothing replaced the file since the last stat, though that stat may still be running.
        if (this.#watcher !== null && !this.#changed && now - this.#checkedAt < RECHECK_MS)
          return void this.#reloading.then(resolve, reject);
        // Cleared before the stat: a rename reported while it runs marks the file changed again.
        this.#changed = this.#watcher === null;
        this.#checkedAt = now;
        this.#reload().then(resolve, reject);
      });
    });
    return this.#pendingCheck;
  }

  /**
   * `load`, one at a time, so an older read can never land after a newer one. A failed one is
   * retried by the next check.
   */
  #reload(): Promise<void> {
    const next = this.#reloading.catch(() => undefined).then(() => this.load());
    this.#reloading = next;
    next.catch(() => (this.#changed = true));
    return next;
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

  /** Read-modify-write under the cross-process lock; `fn` may throw to abort. */
  async mutate<T>(fn: (doc: AccountsDoc) => T): Promise<T> {
    return withFileLock(this.#lock, async () => {
      await this.#reload();
      const doc = structuredClone(this.#doc);
      const result = fn(doc);
      await this.files.writeFile(this.#file, JSON.stringify(doc, null, 1));
      this.#set(doc, await this.#stat());
      return result;
    });
  }

  #set(doc: AccountsDoc, version: string): void {
    this.#doc = doc;
    this.#version = version;
    this.#usersById = new Map(doc.users.map((u) => [u.id, u]));
    this.#tokensById = new Map(doc.tokens.map((t) => [t.id, t]));
    this.#revoked = new Set(Array.isArray(doc.revoked_tokens) ? doc.revoked_tokens : []);
  }

  /** Identity of the file's current version: every atomic write makes a new inode. */
  async #stat(): Promise<string> {
    try {
      const s = await stat(this.#file);
      return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return '';
      throw err;
    }
  }
}
