import { createReadStream } from 'node:fs';
import { rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CLAIM_GRACE_MS,
  type ClaimedBytes,
  type Dropped,
  type Due,
  type FileBlobs,
  type FileClaims,
  type NewFile,
  type StoredBytes,
  SNIFF_BYTES,
} from '../paste/files.ts';
import { checkSpooled, listDir, openIfThere, readTextIfThere } from '../storage/fs.ts';
import type { DurableFiles } from './files.ts';
import { KeyedMutex } from './mutex.ts';

/** A claim's file: the time it was made, and the size of the bytes it holds (README, Metrics). */
const claimText = (at: number, size: number): string => `${at} ${size}`;

/** A claim's file read back; one written before claims held a size has none. */
function claimOf(text: string): { at: number; size: number | null } {
  const [at = '0', size] = text.trim().split(' ');
  return { at: Number(at), size: size === undefined ? null : Number(size) };
}

/** Where a file's bytes are in the data folder: `files/<ab>/<sha256>`. */
const bytesPath = (filesDir: string, sha: string): string => join(filesDir, sha.slice(0, 2), sha);

/**
 * Files' bytes in the data folder, by SHA-256, moved in from the spooled file durably
 * (DurableFiles.moveIn) before the create is answered.
 */
export class DiskFileBlobs implements FileBlobs {
  readonly #dir: string;

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
  ) {
    this.#dir = join(dataDir, 'files');
  }

  async put(file: NewFile): Promise<void> {
    await checkSpooled(file);
    await this.files.moveIn(file.path, bytesPath(this.#dir, file.sha256));
  }

  async open(sha256: string): Promise<StoredBytes | null> {
    const path = bytesPath(this.#dir, sha256);
    const fh = await openIfThere(path);
    // The bytes are gone (swept): the caller answers 404.
    if (fh === null) return null;
    try {
      const { size } = await fh.stat();
      const head = Buffer.alloc(Math.min(SNIFF_BYTES, size));
      await fh.read(head, 0, head.length, 0);
      return { size, head, stream: () => createReadStream(path) };
    } finally {
      await fh.close();
    }
  }

  async remove(sha256: string): Promise<void> {
    await this.files.removeFile(bytesPath(this.#dir, sha256));
  }
}

/**
 * Files' claims in the data folder (ARCHITECTURE.md, The data folder), whatever holds the
 * bytes (FILE_STORE):
 *
 *   files/<ab>/<sha256>              the bytes (DiskFileBlobs, when FILE_STORE is unset)
 *   files/<ab>/<sha256>@<paste>      a paste's claim on them, holding the time it was made
 *   files/claims/<paste>/<sha256>    the same claim, found by paste
 *   files/due/<ms>-<paste>           a paste whose claims the sweep looks at from <ms> on
 *
 * Every write goes through DurableFiles (fsync, rename or link, fsync of the folder). Work
 * on one hash's claims runs under its lock, so a new claim and the sweep's removal of the
 * last one (with the bytes) never cross.
 */
export class DiskFileClaims implements FileClaims {
  readonly #dir: string;
  readonly #locks = new KeyedMutex();

  constructor(
    dataDir: string,
    private readonly files: DurableFiles,
  ) {
    this.#dir = join(dataDir, 'files');
    this.tmpDir = join(dataDir, 'tmp');
  }

  readonly tmpDir: string;

  claim(holder: string, { sha256, size }: ClaimedBytes, now: number): Promise<void> {
    return this.#locks.run(sha256, async () => {
      // Looked at once its grace is over, in case no record ever names it (a create that failed).
      // Written first, then the claim by paste, then by hash: a crash at any step leaves
      // something the sweep finds from the release, never a claim nothing leads it to.
      await this.release(holder, now + CLAIM_GRACE_MS + 1);
      await this.files.writeFile(join(this.#dir, 'claims', holder, sha256), '');
      await this.files.writeFile(`${bytesPath(this.#dir, sha256)}@${holder}`, claimText(now, size));
    });
  }

  /**
   * A walk of the claims by hash (`files/<ab>/<sha256>@<paste>`), one read per distinct hash;
   * a claim older than its size is sized by the bytes beside it, when they are here.
   */
  async stored(): Promise<{ files: number; bytes: number }> {
    let files = 0;
    let bytes = 0;
    for (const shard of await listDir(this.#dir)) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      const claims = new Map<string, string[]>();
      for (const name of await listDir(join(this.#dir, shard))) {
        const m = /^([0-9a-f]{64})@[A-Za-z0-9]+$/.exec(name);
        if (m === null) continue;
        const names = claims.get(m[1] as string);
        if (names === undefined) claims.set(m[1] as string, [name]);
        else names.push(name);
      }
      for (const [sha, names] of claims) {
        const size = await this.#sizeOf(shard, sha, names);
        // Every claim went (the sweep) since the listing: not counted.
        if (size === undefined) continue;
        files++;
        bytes += size;
      }
    }
    return { files, bytes };
  }

  async #sizeOf(shard: string, sha: string, names: readonly string[]): Promise<number | undefined> {
    let there = false;
    for (const name of names) {
      const text = await readTextIfThere(join(this.#dir, shard, name));
      if (text === null) continue;
      there = true;
      const { size } = claimOf(text);
      if (size !== null) return size;
    }
    if (!there) return undefined;
    const s = await stat(join(this.#dir, shard, sha)).catch(() => null);
    return s?.size ?? 0;
  }

  release(holder: string, due: number): Promise<void> {
    return this.files.writeFile(join(this.#dir, 'due', `${due}-${holder}`), '');
  }

  async #releases(): Promise<{ name: string; due: number; holder: string }[]> {
    const names = await listDir(join(this.#dir, 'due'));
    return names.flatMap((name) => {
      const m = /^(\d+)-([A-Za-z0-9]+)$/.exec(name);
      return m === null ? [] : [{ name, due: Number(m[1]), holder: m[2] as string }];
    });
  }

  async due(now: number, limit: number): Promise<Due[]> {
    const seen = new Map<string, string[]>();
    for (const r of await this.#releases()) {
      if (r.due > now) continue;
      const names = seen.get(r.holder);
      if (names !== undefined) names.push(r.name);
      else if (seen.size < limit) seen.set(r.holder, [r.name]);
    }
    // The mark is the names of the release files seen: only those go once they are settled.
    return [...seen].map(([holder, names]) => ({ holder, seen: names.join('/') }));
  }

  async claims(holder: string): Promise<string[]> {
    const names = await listDir(join(this.#dir, 'claims', holder));
    return names.filter((n) => /^[0-9a-f]{64}$/.test(n));
  }

  drop(holder: string, sha256: string, claimedBefore: number, last: () => Promise<void>): Promise<Dropped> {
    return this.#locks.run(sha256, async () => {
      const bytes = bytesPath(this.#dir, sha256);
      // A claim a crash left half made (by paste only) is dropped as an old one.
      const at = (await readTextIfThere(`${bytes}@${holder}`)) ?? '0';
      if (claimOf(at).at > claimedBefore) return 'young';
      await this.files.removeFile(`${bytes}@${holder}`);
      // No shard folder: a crash came before the claim by hash was written.
      const shard = await listDir(join(this.#dir, sha256.slice(0, 2)));
      const others = shard.some((n) => n.startsWith(`${sha256}@`));
      // The claim by paste goes last: should the removal fail or a crash cut it short, the
      // next round finds the claim from its paste again and removes the bytes then.
      if (!others) await last();
      await this.files.removeFile(join(this.#dir, 'claims', holder, sha256));
      return others ? 'dropped' : 'removed';
    });
  }

  async settled({ holder, seen }: Due): Promise<void> {
    for (const name of seen.split('/')) await this.files.removeFile(join(this.#dir, 'due', name));
    // Its folder of claims goes once empty; a claim made meanwhile keeps it (ENOTEMPTY).
    await rmdir(join(this.#dir, 'claims', holder)).catch(() => undefined);
  }
}
