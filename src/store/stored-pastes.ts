import { join } from 'node:path';
import type { Paste } from '../paste/paste.ts';
import { listDir, readText } from '../storage/fs.ts';
import { DamagedRecord, parseFile } from './paste-record.ts';

/** Every stored paste's current file, in no order, for an export; `damaged` hears of files that cannot be read. */
export async function* storedPastes(
  dataDir: string,
  damaged: (path: string, reason: string) => void,
): AsyncGenerator<Paste> {
  const root = join(dataDir, 'pastes');
  for (const shard of (await listDir(root)).sort()) {
    for (const name of (await listDir(join(root, shard))).sort()) {
      // `<code>.json` only: kept revisions are `<code>.r<N>.json` (README, Revisions).
      if (!/^[A-Za-z0-9]{6}\.json$/.test(name)) continue;
      const path = join(root, shard, name);
      let text: string;
      try {
        text = await readText(path);
      } catch {
        continue; // Deleted while we walked.
      }
      try {
        yield parseFile(text);
      } catch (err) {
        if (!(err instanceof DamagedRecord)) throw err;
        damaged(path, err.reason);
      }
    }
  }
}
