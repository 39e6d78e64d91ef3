import { join } from 'node:path';
import { AccountStore } from './accounts.ts';
import type { AccountsDoc } from '../auth/records.ts';
import { writeBackup } from './backup.ts';
import { listDir } from '../storage/fs.ts';
import type { DurableFiles } from './files.ts';
import { DATA_FORMAT, readDataFormat, writeDataFormat } from './format.ts';

/** One step from format N to N+1. Each must be safe to run again: a crash before format.json is written repeats it. */
type Migration = (dataDir: string, files: DurableFiles) => Promise<void>;

/** The steps, by the format each starts from (README, Data format and upgrades). */
const MIGRATIONS: Record<number, Migration> = {
  // 1 → 2: every user says whether it is disabled and when it last logged in, explicitly.
  1: async (dataDir, files) => {
    // No accounts yet: nothing to write (mutate would create the file).
    if (!(await listDir(dataDir)).includes('accounts.json')) return;
    // The store reads it first, so a damaged file is named as one and stops the start.
    await new AccountStore(dataDir, files).mutate((doc: AccountsDoc) => {
      for (const u of doc.users) {
        u.disabled = u.disabled === true;
        u.last_login_at ??= null;
      }
    });
  },
  // 2 → 3: files came with nothing to rewrite; the number alone keeps older versions away.
  2: async () => undefined,
};

/** Whether a folder without format.json holds data already (then it is format 1), or is new. */
async function holdsData(dataDir: string): Promise<boolean> {
  const names = await listDir(dataDir);
  return names.includes('accounts.json') || (await listDir(join(dataDir, 'pastes'))).length > 0;
}

/**
 * Brings a data folder to this version's format before anything else reads it (server and
 * CLI alike): a newer format stops both with one line (NewerDataFormat); a new folder is
 * marked current; an older one is first backed up whole to `DATA_DIR/backups/`, then
 * migrated one format at a time, and only then marked current. Returns what was done, for
 * the log, or null when nothing was.
 */
export async function checkDataFormat(dataDir: string, files: DurableFiles): Promise<string | null> {
  let found = await readDataFormat(dataDir);
  if (found === DATA_FORMAT) return null;
  if (found === null) {
    if (!(await holdsData(dataDir))) {
      await writeDataFormat(dataDir, files);
      return null;
    }
    // Written before format.json existed: format 1.
    found = 1;
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = join(dataDir, 'backups', `before-format-${DATA_FORMAT}-${stamp}.tar.gz`);
  await files.ensureDir(join(dataDir, 'backups'));
  await writeBackup(dataDir, file, { withLogs: true });
  for (let f = found; f < DATA_FORMAT; f++) await (MIGRATIONS[f] as Migration)(dataDir, files);
  await writeDataFormat(dataDir, files);
  return `data format ${found} migrated to ${DATA_FORMAT}; the data as it was is backed up in ${file}`;
}
