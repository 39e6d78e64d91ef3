import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { encodeContent } from '../../src/paste/paste.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

// What every backend's head does is test/contract/paste-repository.ts; here, the database's cache.
test('the head of a short paste on PostgreSQL is read through the cache: the next page of it asks the database nothing', async () => {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  const store = new PgPasteStore(db.sql);
  assert.equal(await store.listen(), true);
  try {
    const none = { add: async () => {}, withdraw: async () => {} };
    await store.create(() => pasteRecord('0000Short1', { content_json: encodeContent('a short one') }), none);
    const first = await store.head('0000Short1', 10);
    assert.equal(first?.size, undefined, 'read whole');
    assert.notEqual(store.cached('0000Short1'), undefined, 'held by the cache after its first page');
    const asked = store.cacheStats.misses;
    const again = await store.head('0000Short1', 10);
    assert.equal(again?.paste, first?.paste, 'the same object for the same version');
    assert.equal(store.cacheStats.misses, asked);
  } finally {
    await store.close();
  }
});
