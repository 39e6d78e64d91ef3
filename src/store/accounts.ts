import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PasswordHash } from '../auth/passwords.ts';
import type { Scope } from '../auth/tokens.ts';
import { isErrno, type DurableFiles } from './files.ts';
import { withFileLock } from './lock.ts';

export interface User {
  id: number;
  name: string;
  role: 'admin' | 'user';
  password: PasswordHash | null;
  created_at: number;
}

export interface TokenRecord {
  id: string;
  user_id: number;
  label: string;
  scopes: Scope[];
  rate_limit_per_minute: number;
  /** SHA-256 hex of the secret; the secret itself is never stored. */
  hash: string;
  created_at: number;
}

export interface AccountsDoc {
  version: 1;
  next_user_id: number;
  users: User[];
  tokens: TokenRecord[];
}

/** User names are unique ignoring case: `Alice` and `alice` are the same account. */
export const findUserByName = (users: readonly User[], name: string): User | undefined => {
  const key = name.toLowerCase();
  return users.find((u) => u.name.toLowerCase() === key);
};

const emptyDoc = (): AccountsDoc => ({ version: 1, next_user_id: 1, users: [], tokens: [] });

/**
 * Users and API tokens, one small JSON document shared by the server and the CLI.
 * Writers take a lock file and write atomically; readers notice another process's
 * write by a stat, batched so that every request arriving in the same turn of the
 * event loop shares one stat that starts after all of them arrived.
 */
export class AccountStore {
  readonly #file: string;
  readonly #lock: string;
  #doc: AccountsDoc = emptyDoc();
  #version = '';
  #pendingCheck: Promise<void> | null = null;
  #usersById = new Map<number, User>();
  #tokensById = new Map<string, TokenRecord>();

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
  ) {
    this.#file = join(dataDir, 'accounts.json');
    this.#lock = join(dataDir, 'accounts.lock');
  }

  async load(): Promise<void> {
    const version = await this.#stat();
    if (version === this.#version) return;
    let doc = emptyDoc();
    if (version !== '') doc = JSON.parse(await readFile(this.#file, 'utf8')) as AccountsDoc;
    this.#set(doc, version);
  }

  /** Resolves once the in-memory copy reflects every write finished before this call. */
  fresh(): Promise<void> {
    this.#pendingCheck ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.#pendingCheck = null;
        this.load().then(resolve, reject);
      });
    });
    return this.#pendingCheck;
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
  token(id: string): TokenRecord | undefined {
    return this.#tokensById.get(id);
  }

  /** Read-modify-write under the cross-process lock; `fn` may throw to abort. */
  async mutate<T>(fn: (doc: AccountsDoc) => T): Promise<T> {
    return withFileLock(this.#lock, async () => {
      await this.load();
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
