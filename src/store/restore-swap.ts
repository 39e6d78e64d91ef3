import { readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir, listDir, mkdirp } from '../storage/fs.ts';
import { isErrno } from '../storage/errors.ts';

/**
 * The staging folder of a restore, what is moved aside from the data folder, and the mark of an
 * archive that checked out.
 */
export const STAGING = '.restore';
export const ASIDE = '.restore-old';
export const READY = '.ready';
/** Where `restore --force` keeps what it replaced, as the format migration keeps its backups. */
export const BACKUPS = 'backups';
/**
 * Never moved aside: the claim of the server or CLI doing the work, the accounts lock, and
 * the backups kept in the folder (a restore must not take the way back with it).
 */
export const STAYS = new Set([STAGING, ASIDE, BACKUPS, 'server.pid', 'accounts.lock']);

/** What a restore whose archive checked out swaps in. */
export interface Ready {
  names: string[];
  /** Whether the folder keeps its own logs (the archive brings none). */
  keepLogs: boolean;
  /** Where, relative to the folder, what it held is kept once replaced; absent or null: dropped (it held nothing). */
  keepAs?: string | null;
}

/**
 * Swaps a checked-out restore in, or finishes one a crash cut short (README, Backup and
 * restore): the server and `restore` call it first. Staging marked ready (`.restore/.ready`,
 * written durably once the archive checked out) is rolled forward: what the folder held is
 * moved aside to `.restore-old/`, then the staged entries are moved in, then what was moved
 * aside is renamed to the backup the mark names (`backups/before-restore-…/`) and staging
 * goes. Each step can be done again, so a crash at any point leaves either the old data (the
 * mark not yet written) or a swap the next call completes: never a folder with neither.
 * Staging without the mark (an archive being checked) is removed; the old data is whole.
 * Answers whether it swapped a restore in.
 */
export async function finishRestore(dataDir: string): Promise<boolean> {
  const staging = join(dataDir, STAGING);
  const aside = join(dataDir, ASIDE);
  const mark = await readFile(join(staging, READY), 'utf8').catch((err: unknown) => {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  });
  if (mark === null) {
    await rm(staging, { recursive: true, force: true });
    await rm(aside, { recursive: true, force: true });
    return false;
  }
  const ready = JSON.parse(mark) as Ready;
  const incoming = new Set(ready.names);
  const staged = new Set((await listDir(staging)).filter((n) => n !== READY));
  await mkdirp(aside);
  for (const name of await listDir(dataDir)) {
    if (STAYS.has(name) || (ready.keepLogs && name === 'logs')) continue;
    // Already moved in by the call a crash cut short.
    if (incoming.has(name) && !staged.has(name)) continue;
    await rm(join(aside, name), { recursive: true, force: true });
    await rename(join(dataDir, name), join(aside, name));
  }
  await fsyncDir(aside);
  await fsyncDir(dataDir);
  for (const name of staged) await rename(join(staging, name), join(dataDir, name));
  await fsyncDir(dataDir);
  const keepAs = ready.keepAs ?? null;
  if (keepAs !== null && (await listDir(aside)).length > 0) {
    await mkdirp(join(dataDir, BACKUPS));
    await rename(aside, join(dataDir, keepAs));
    await fsyncDir(join(dataDir, BACKUPS));
  } else {
    await rm(aside, { recursive: true, force: true });
  }
  await rm(staging, { recursive: true, force: true });
  await fsyncDir(dataDir);
  return true;
}
