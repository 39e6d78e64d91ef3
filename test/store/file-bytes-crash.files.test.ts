import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLAIM_GRACE_MS, ClaimedFiles, sweepFiles } from '../../src/paste/files.ts';
import { DiskFileBlobs, DiskFileClaims } from '../../src/store/file-bytes.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { sha256 } from '../helpers/multipart.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';
import { storedFileBytes } from '../helpers/stored.ts';

/** The data folder's files over `files`: claims and bytes both in the folder, as without FILE_STORE. */
const diskFiles = (dir: string, files: DurableFiles): ClaimedFiles =>
  new ClaimedFiles(new DiskFileClaims(dir, files), new DiskFileBlobs(dir, files));

/** A crash after `steps` durable writes of a keep: every write after those fails. */
class CrashingFiles extends DurableFiles {
  constructor(
    tmp: string,
    private steps: number,
  ) {
    super(tmp);
  }
  #step(): void {
    if (this.steps-- <= 0) throw new Error('crash');
  }
  override async writeFile(path: string, data: string | Uint8Array): Promise<void> {
    this.#step();
    return super.writeFile(path, data);
  }
  override async moveIn(tmp: string, path: string): Promise<boolean> {
    this.#step();
    return super.moveIn(tmp, path);
  }
}

const nobody = { get: async () => null, revisions: async () => [], getRevision: async () => null };

test('a keep cut short at any of its writes leaves nothing the file sweep does not remove once its grace is over', async () => {
  for (let steps = 0; steps <= 4; steps++) {
    const dir = await tempDataDir();
    try {
      const bytes = Buffer.from(`bytes cut after ${steps} writes`);
      const path = join(dir, 'tmp', 'upload-x');
      const files = new DurableFiles(join(dir, 'tmp'));
      await files.ensureDir(join(dir, 'tmp'));
      await writeFile(path, bytes);
      const crashing = diskFiles(dir, new CrashingFiles(join(dir, 'tmp'), steps));
      const file = { name: 'a.bin', size: bytes.length, type: 'application/octet-stream', sha256: sha256(bytes), path };
      await crashing.keep(file, 'aB3dE5gH7j', 1_000).catch(() => undefined);
      // The next start: a sound store, and a sweep once the claim's grace is over.
      await sweepFiles(diskFiles(dir, files), nobody, 1_000 + CLAIM_GRACE_MS + 2);
      assert.deepEqual(await storedFileBytes(dir), [], `cut after ${steps} writes`);
      // Nothing the cut keep left holds the same bytes kept later by another paste past that paste's end.
      const again = join(dir, 'tmp', 'upload-y');
      await writeFile(again, bytes);
      const store = diskFiles(dir, files);
      await store.keep({ ...file, path: again }, 'zZ9yY8xX7w', 2_000);
      assert.equal((await storedFileBytes(dir)).length, 1, `kept again after a cut after ${steps} writes`);
      await store.release('zZ9yY8xX7w', 2_000 + CLAIM_GRACE_MS + 1);
      await sweepFiles(store, nobody, 2_000 + CLAIM_GRACE_MS + 2);
      assert.deepEqual(
        await storedFileBytes(dir),
        [],
        `removed with their last paste after a cut after ${steps} writes`,
      );
    } finally {
      await cleanup(dir);
    }
  }
});
