import { join } from 'node:path';
import { DamagedFile, StorageProblem } from '../storage/errors.ts';
import { readTextIfThere } from '../storage/fs.ts';
import type { DurableFiles } from './files.ts';

/**
 * The data format this version reads and writes (README, Data format and upgrades).
 * 1: every version before users could be disabled. 2: users carry `disabled` and
 * `last_login_at`; an older version would let a disabled user in, so it must refuse the folder.
 * 3: pastes may hold files (`files/`); an older version would drop them from a paste it edits
 * and never remove their bytes.
 */
export const DATA_FORMAT = 3;

/** A data folder written by a newer version, which this one must not touch. */
export class NewerDataFormat extends StorageProblem {
  constructor(
    readonly path: string,
    readonly found: number,
  ) {
    super(
      `${path} says data format ${found}, and this version reads format ${DATA_FORMAT} at most: run the newer ` +
        'version that wrote it',
    );
  }
}

/** The format `DATA_DIR/format.json` names; null when there is no such file. */
export async function readDataFormat(dataDir: string): Promise<number | null> {
  const path = join(dataDir, 'format.json');
  const text = await readTextIfThere(path);
  if (text === null) return null;
  let saved: unknown;
  try {
    saved = JSON.parse(text);
  } catch {
    // Unreadable is not absent: a folder with data and no format.json is format 1, and
    // would be migrated. Say which file, as for any other damaged one (README, Run it).
    throw new DamagedFile(path, `it is not JSON ({"format": ${DATA_FORMAT}})`);
  }
  const found = (saved as { format?: unknown } | null)?.format;
  if (typeof found !== 'number' || !Number.isInteger(found) || found < 1)
    throw new DamagedFile(path, `it does not name a data format ({"format": ${DATA_FORMAT}})`);
  if (found > DATA_FORMAT) throw new NewerDataFormat(path, found);
  return found;
}

/** Records that the folder holds this version's format, durably. */
export async function writeDataFormat(dataDir: string, files: DurableFiles): Promise<void> {
  await files.writeFile(join(dataDir, 'format.json'), `${JSON.stringify({ format: DATA_FORMAT })}\n`);
}
