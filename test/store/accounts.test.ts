import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { AccountStore } from '../../src/store/accounts.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

async function stores(dir: string): Promise<{ server: AccountStore; other: AccountStore }> {
  const files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
  const server = new AccountStore(dir, files);
  const other = new AccountStore(dir, files);
  await Promise.all([server.load(), other.load()]);
  return { server, other };
}

const addToken = (store: AccountStore, id: string): Promise<void> =>
  store.mutate((doc) => {
    doc.tokens.push({
      id,
      user_id: 1,
      label: '',
      scopes: ['read'],
      rate_limit_per_minute: 0,
      hash: 'x'.repeat(64),
      created_at: 0,
    });
  });
const removeToken = (store: AccountStore, id: string): Promise<void> =>
  store.mutate((doc) => {
    doc.tokens = doc.tokens.filter((t) => t.id !== id);
  });

// What every backend's accounts do (without the watch among it) is in test/contract/account-records.ts.
test('a change written by another store is seen by the next fresh(), watching the folder', async () => {
  const dir = await tempDataDir();
  const { server, other } = await stores(dir);
  try {
    assert.equal(await server.watch(), true);
    await server.fresh();
    for (let i = 0; i < 40; i++) {
      const id = `tok${String(i).padStart(5, '0')}`;
      await addToken(other, id);
      await server.fresh();
      assert.ok(server.token(id), `created ${id} is seen`);
      await removeToken(other, id);
      await server.fresh();
      assert.equal(server.token(id), undefined, `revoked ${id} is gone`);
    }
    // Requests arriving in one turn share one check, and all see the change.
    await addToken(other, 'shared00');
    const seen = await Promise.all(
      Array.from({ length: 5 }, () => server.fresh().then(() => server.token('shared00') !== undefined)),
    );
    assert.deepEqual(seen, [true, true, true, true, true]);
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
