import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredFiles } from '../backend.ts';

/**
 * How many files' bytes the data folder holds, and their size (README, Metrics): a walk of
 * `files/<ab>/`, counting only the bytes (named by their SHA-256), not the claims.
 */
export async function countFileBytes(filesDir: string): Promise<StoredFiles> {
  let files = 0;
  let bytes = 0;
  for (const shard of await readdir(filesDir).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue;
    for (const name of await readdir(join(filesDir, shard)).catch(() => [] as string[])) {
      if (!/^[0-9a-f]{64}$/.test(name)) continue;
      // Removed by the sweep since the listing: not counted.
      const s = await stat(join(filesDir, shard, name)).catch(() => null);
      if (s === null) continue;
      files++;
      bytes += s.size;
    }
  }
  return { files, bytes };
}
