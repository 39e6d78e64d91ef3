import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno, listDir, readStateFile, type DurableFiles } from './files.ts';

/**
 * What a request with an `Idempotency-Key` was (README, Safe retries): the endpoint, a
 * fingerprint of its fields, the paste it is about, and whether it was carried out. One
 * small file per key under `DATA_DIR/idempotency/`, named by a hash of the token id and
 * the key (neither is stored in the clear), written durably before the request's effect
 * and again after it, so a retry after a crash finds it.
 */
export interface IdempotencyRecord {
  endpoint: string;
  fingerprint: string;
  hash: string;
  done: boolean;
  /** When the key was first seen (epoch ms); it answers for 24 hours from then. */
  at: number;
  /** For an edit, the paste's revision when it began: a paste past it has the edit. */
  revision?: number;
}

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

const isRecord = (v: unknown): v is IdempotencyRecord => {
  const r = v as Partial<IdempotencyRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.endpoint === 'string' &&
    typeof r.fingerprint === 'string' &&
    typeof r.hash === 'string' &&
    typeof r.done === 'boolean' &&
    typeof r.at === 'number' &&
    (r.revision === undefined || typeof r.revision === 'number')
  );
};

export class IdempotencyRecords {
  readonly #dir: string;

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
  ) {
    this.#dir = join(dataDir, 'idempotency');
  }

  /** The file name for a token's key: neither appears on disk. */
  static idOf(tokenId: string, key: string): string {
    return createHash('sha256').update(`${tokenId}\0${key}`).digest('base64url');
  }

  /** The record of `id`, or null when there is none (or a torn one, which counts as none). */
  async get(id: string): Promise<IdempotencyRecord | null> {
    const v = await readStateFile(this.#path(id));
    return isRecord(v) ? v : null;
  }

  put(id: string, record: IdempotencyRecord): Promise<void> {
    return this.files.writeFile(this.#path(id), JSON.stringify(record));
  }

  /** Forgets the record of `id` (a request refused without writing anything). */
  async remove(id: string): Promise<void> {
    await this.files.removeFile(this.#path(id));
  }

  /** Removes records older than a day (by their file's time, which a rewrite only makes later). */
  async sweep(now: number): Promise<void> {
    for (const name of await listDir(this.#dir)) {
      const path = join(this.#dir, name);
      try {
        if ((await stat(path)).mtimeMs < now - IDEMPOTENCY_TTL_MS) await this.files.removeFile(path);
      } catch (err) {
        if (!isErrno(err, 'ENOENT')) throw err;
      }
    }
  }

  #path(id: string): string {
    return join(this.#dir, `${id}.json`);
  }
}
