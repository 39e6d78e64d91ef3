import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RandomIds } from '../../src/crypto/random.ts';
import { encodeContent, type Paste } from '../../src/paste/paste.ts';
import { fileText } from '../../src/store/paste-record.ts';
import { expiryEntryPath } from '../../src/store/pastes.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

/**
 * Writes `count` pastes that expire at `expireAt` straight into a data folder, with their
 * expiry index entries, as the store lays them out (not durably: a test's seed, made fast).
 * Answers their hashes.
 */
export async function seedExpiring(dataDir: string, count: number, expireAt: number, ownerId = 1): Promise<string[]> {
  const ids = new RandomIds();
  const hashes = new Set<string>();
  while (hashes.size < count) hashes.add(ids.base62(10));
  const made = new Map<string, Promise<unknown>>();
  const ensure = (dir: string): Promise<unknown> => {
    let making = made.get(dir);
    if (making === undefined) made.set(dir, (making = mkdir(dir, { recursive: true })));
    return making;
  };
  const all = [...hashes];
  for (let i = 0; i < all.length; i += 200) {
    await Promise.all(
      all.slice(i, i + 200).map(async (hash) => {
        const code = hash.slice(0, 6);
        const path = join(dataDir, 'pastes', code.slice(0, 2), `${code}.json`);
        const entry = expiryEntryPath(join(dataDir, 'expiry'), expireAt, hash);
        await Promise.all([ensure(dirname(path)), ensure(dirname(entry))]);
        const paste: Paste = pasteRecord(hash, {
          title: 'soon gone',
          content_json: encodeContent(`expiring ${hash}`),
          owner_id: ownerId,
          created_at: expireAt - 600_000,
          updated_at: expireAt - 600_000,
          expire_at: expireAt,
        });
        await Promise.all([writeFile(path, fileText(paste)), writeFile(entry, '')]);
      }),
    );
  }
  return all;
}
