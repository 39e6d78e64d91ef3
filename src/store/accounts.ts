import type { FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AccountIndex, RECHECK_MS } from '../auth/account-index.ts';
import type { AccountsDoc } from '../auth/records.ts';
import { DamagedFile, isErrno } from '../storage/errors.ts';
import { watchEntry } from '../storage/folder-watch.ts';
import type { DurableFiles } from './files.ts';
import { withFileLock } from './lock.ts';

export { RECHECK_MS };

const emptyDoc = (): AccountsDoc => ({ version: 1, next_user_id: 1, users: [], tokens: [] });

/**
 * The data folder's port of the accounts index (auth/account-index.ts holds the index and
 * its freshness): users and API tokens in one small JSON document shared by the server and
 * the CLI. Writers take a lock file and write atomically (a rename into place). A change is
 * noticed by `watch()`, which asks the kernel (inotify) to report renames in the data folder:
 * the rename is reported before the writer's rename() returns, so before any request it
 * precedes. A check stats the file, and reads it only when it was replaced; without a watch
 * (the CLI, or a folder that cannot be watched) the file is stat'ed once a turn.
 */
export class AccountStore extends AccountIndex<string> {
  readonly #dir: string;
  readonly #file: string;
  readonly #lock: string;
  #watcher: FSWatcher | null = null;

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
    clock?: () => number,
  ) {
    super(emptyDoc(), clock);
    this.#dir = dataDir;
    this.#file = join(dataDir, 'accounts.json');
    this.#lock = join(dataDir, 'accounts.lock');
  }

  protected get watching(): boolean {
    return this.#watcher !== null;
  }

  load(): Promise<void> {
    return this.reload();
  }

  protected async read(held: string | undefined): Promise<{ doc: AccountsDoc; version: string } | null> {
    const version = await this.#stat();
    if (version === held) return null;
    if (version === '') return { doc: emptyDoc(), version };
    const text = await readFile(this.#file, 'utf8');
    let doc: AccountsDoc;
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
    return { doc, version };
  }

  /**
   * Starts watching the folder for a replaced file. False (and a stat on every turn) where
   * a watch cannot be trusted: the folder is on a filesystem another kernel may write to,
   * or it cannot be watched at all. A lost event (the kernel's queue overflowed) is caught
   * by the stat every RECHECK_MS; the folder itself moved or deleted ends the watch.
   */
  async watch(): Promise<boolean> {
    if (this.#watcher !== null) return true;
    this.#watcher = await watchEntry(this.#dir, 'accounts.json', {
      changed: () => this.changed(),
      ended: () => {
        this.#watcher = null;
        this.changed();
      },
    });
    this.changed();
    return this.#watcher !== null;
  }

  unwatch(): void {
    this.#watcher?.close();
    this.#watcher = null;
    this.changed();
  }

  /** Read-modify-write under the cross-process lock; `fn` may throw to abort. */
  async mutate<T>(fn: (doc: AccountsDoc) => T): Promise<T> {
    return withFileLock(this.#lock, async () => {
      await this.reload();
      const doc = structuredClone(this.held.doc);
      const result = fn(doc);
      await this.files.writeFile(this.#file, JSON.stringify(doc, null, 1));
      this.set(doc, await this.#stat());
      return result;
    });
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
