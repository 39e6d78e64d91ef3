import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno, type DurableFiles } from './files.ts';
import { KeyedMutex } from './mutex.ts';

/**
 * Which pastes each user owns, so "My pastes" never scans the store: one append-only
 * file per user of `+hash` / `-hash` lines, fsynced before the create or delete that
 * wrote it is acknowledged. A line may outlive its paste after a crash (a create that
 * never finished), so readers check each hash against the store.
 */
export class OwnerIndex {
  readonly #dir: string;
  readonly #locks = new KeyedMutex();

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
  ) {
    this.#dir = join(dataDir, 'owners');
  }

  async init(): Promise<void> {
    await this.files.ensureDir(this.#dir);
  }

  add(userId: number, hash: string): Promise<void> {
    return this.#append(userId, `+${hash}\n`);
  }

  remove(userId: number, hash: string): Promise<void> {
    return this.#append(userId, `-${hash}\n`);
  }

  /** The user's paste hashes, newest first. */
  async list(userId: number): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(this.#file(userId), 'utf8');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return [];
      throw err;
    }
    const live = new Set<string>();
    for (const line of text.split('\n')) {
      if (line.startsWith('+')) live.add(line.slice(1));
      else if (line.startsWith('-')) live.delete(line.slice(1));
    }
    return [...live].reverse();
  }

  #file(userId: number): string {
    return join(this.#dir, `${userId}.log`);
  }

  #append(userId: number, line: string): Promise<void> {
    return this.#locks.run(String(userId), async () => {
      const file = this.#file(userId);
      const fh = await open(file, 'a', 0o600);
      try {
        await fh.appendFile(line);
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
  }
}
