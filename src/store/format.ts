import { join } from 'node:path';
import { DamagedFile, readStateFile, type DurableFiles } from './files.ts';

/**
 * The data format this version reads and writes (README, Data on disk and durability).
 * Everything older versions wrote is format 1 too: fields added since (a paste's revision
 * and receipt, the v2 state files) are read with defaults when missing.
 */
export const DATA_FORMAT = 1;

/** A data folder written by a newer version, which this one must not touch. */
export class NewerDataFormat extends Error {
  constructor(
    readonly path: string,
    readonly found: number,
  ) {
    super(`${path} says data format ${found}, and this version reads format ${DATA_FORMAT} at most: run the newer version that wrote it`);
  }
}

/**
 * Checks `DATA_DIR/format.json` before anything else is read: a newer format stops the
 * server and the CLI with one line; a missing file (a new folder, or one from before the
 * file existed) is written, durably.
 */
export async function checkDataFormat(dataDir: string, files: DurableFiles): Promise<void> {
  const path = join(dataDir, 'format.json');
  const saved = await readStateFile(path);
  if (saved === undefined) {
    await files.writeFile(path, `${JSON.stringify({ format: DATA_FORMAT })}\n`);
    return;
  }
  const found = (saved as { format?: unknown } | null)?.format;
  if (typeof found !== 'number' || !Number.isInteger(found) || found < 1) throw new DamagedFile(path, 'it does not name a data format ({"format": 1})');
  if (found > DATA_FORMAT) throw new NewerDataFormat(path, found);
}
