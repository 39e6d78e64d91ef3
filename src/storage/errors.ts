/**
 * What any store (the data folder, or PostgreSQL) throws when it cannot do what was asked,
 * and what the request path turns into statuses (pipeline/refusal.ts): the vocabulary both
 * backends share, so nothing above them needs to know which one answered.
 */

/** A problem whose message already names the file or service and what is wrong: shown as it is. */
export class StorageProblem extends Error {}

/**
 * A write the disk refused for want of space (ENOSPC, or EDQUOT: a quota). Nothing was
 * changed: the temp file was removed and the old file, if any, is intact (README, Security
 * and durability). Writes work again as soon as there is space.
 */
export class StorageFull extends StorageProblem {
  constructor(
    readonly path: string,
    readonly code: string,
  ) {
    super(`the disk is full (${code}) writing ${path}`);
  }
}

/** A write refused because the data folder cannot be written (EROFS, EACCES, EPERM). Nothing was changed. */
export class StorageReadOnly extends StorageProblem {
  constructor(
    readonly path: string,
    readonly code: string,
  ) {
    super(`${path} cannot be written (${code}${code === 'EROFS' ? ': read-only file system' : ': permission denied'})`);
  }
}

/**
 * The storage could not answer now (the database is down, restarting, or slower than
 * DATABASE_TIMEOUT_MS; every connection of the pool is busy): the request is refused with
 * 503 `storage_unavailable` and `Retry-After`, and whether it changed anything is what
 * the transaction says: a write either committed whole or not at all.
 */
export class StorageUnavailable extends StorageProblem {
  constructor(
    message: string,
    readonly retryAfterSec = 1,
  ) {
    super(message);
  }
}

/**
 * The storage stopped answering at a moment when a change may already have been committed
 * (a COMMIT sent on a connection that was then lost): 503 `outcome_unknown`. Retrying with
 * the same Idempotency-Key settles it (README, Safe retries).
 */
export class OutcomeUnknown extends StorageUnavailable {}

/** A file the service needs that cannot be what it should be (e.g. accounts.json cut short). */
export class DamagedFile extends StorageProblem {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} is damaged: ${problem}`);
  }
}

/** The storage refusal an errno error stands for, or the error itself. */
export function asStorageError(err: unknown, path: string): unknown {
  const code = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new StorageFull(path, code);
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return new StorageReadOnly(path, code);
  return err;
}

/** Whether `err` is a system error with this code (`ENOENT`, ...). */
export function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && (err as NodeJS.ErrnoException).code === code;
}
