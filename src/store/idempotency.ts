import { IDEMPOTENCY_TTL_MS, type IdempotencyRecord, type IdempotencyStore } from '../paste/idempotency.ts';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno } from '../storage/errors.ts';
import { listDir } from '../storage/fs.ts';
import { readStateFile, type DurableFiles } from './files.ts';

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

export class IdempotencyRecords implements IdempotencyStore {
  readonly #dir: string;

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
  ) {
    this.#dir = join(dataDir, 'idempotency');
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
