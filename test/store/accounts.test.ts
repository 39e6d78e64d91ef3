import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { AccountStore } from '../../src/store/accounts.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { eachChangeSeen } from '../contract/account-records.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

async function stores(dir: string): Promise<{ server: AccountStore; other: AccountStore }> {
  const files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
  const server = new AccountStore(dir, files);
  const other = new AccountStore(dir, files);
  await Promise.all([server.load(), other.load()]);
  return { server, other };
}

// What every backend's accounts do (without the watch among it) is in test/contract/account-records.ts.
test('a change written by another store is seen by the next fresh(), watching the folder', async () => {
  const dir = await tempDataDir();
  const { server, other } = await stores(dir);
  try {
    assert.equal(await server.watch(), true);
    await server.fresh();
    await eachChangeSeen(server, other, 40);
  } finally {
    server.unwatch();
    await cleanup(dir);
  }
});

test('a folder that cannot be watched falls back to a stat per turn', async () => {
  const dir = await tempDataDir();
  try {
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    const store = new AccountStore(join(dir, 'not-there'), files);
    assert.equal(await store.watch(), false);
    await store.fresh();
    assert.equal(store.tokens.length, 0);
  } finally {
    await cleanup(dir);
  }
});
