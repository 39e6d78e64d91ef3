import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { newFilesOf } from '../../src/pipeline/uploads.ts';
import { checkSpooled } from '../../src/storage/fs.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

test("the spooler's files are vouched for and not read again; any other spooled file is read, and refused unless it is what it says", async () => {
  const dir = await tempDataDir();
  try {
    const bytes = Buffer.from('the bytes as spooled');
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    // Vouched for: a store takes its size and hash as the spooler counted them, without opening the file.
    const [spooled] = newFilesOf([
      { name: 'a.txt', type: 'text/plain', size: bytes.length, sha256, path: join(dir, 'not-there') },
    ]);
    await checkSpooled(spooled as NonNullable<typeof spooled>);
    // Not vouched for: read, and taken only when it is the bytes it says.
    const path = join(dir, 'by-hand');
    await writeFile(path, bytes);
    await checkSpooled({ path, size: bytes.length, sha256 });
    await writeFile(path, bytes);
    await assert.rejects(checkSpooled({ path, size: bytes.length, sha256: 'b'.repeat(64) }), /not stored/);
    await assert.rejects(access(path), 'a refused spool is removed');
    await assert.rejects(checkSpooled({ path: join(dir, 'not-there'), size: 1, sha256 }), /ENOENT/);
  } finally {
    await cleanup(dir);
  }
});
