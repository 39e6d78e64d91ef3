import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { DurableFiles } from '../../src/store/files.ts';
import { readUsage, TokenUsage } from '../../src/store/token-usage.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

// What every backend's token use does is in test/contract/token-uses.ts; this tests the data folder's file.
test("a token's last use and address are saved and read back; the older file (times only) still reads", async () => {
  const dir = await tempDataDir();
  try {
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    const file = join(dir, 'usage.json');
    const usage = new TokenUsage(files, file);
    usage.touch('tok1', 1_000, '10.0.0.7');
    usage.touch('tok2', 2_000);
    await usage.save();
    const again = new TokenUsage(files, file);
    await again.load();
    assert.deepEqual(
      [again.get('tok1'), again.ip('tok1'), again.get('tok2'), again.ip('tok2')],
      [1_000, '10.0.0.7', 2_000, undefined],
    );
    assert.deepEqual(await readUsage(file), { tok1: 1_000, tok2: 2_000 });
    await writeFile(file, '{"old":3000}');
    const old = new TokenUsage(files, file);
    await old.load();
    assert.deepEqual([old.get('old'), old.ip('old')], [3_000, undefined]);
  } finally {
    await cleanup(dir);
  }
});
