import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { WHOLE_TEXT_BYTES } from '../../src/pg/paste-head.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { encodeContent } from '../../src/paste/paste.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

/** Lines as the paste page counts them: a final newline ends the last line, it starts none. */
const linesOf = (s: string): number => (s === '' ? 0 : s.split('\n').length - (s.endsWith('\n') ? 1 : 0));

test('the head of a long paste on PostgreSQL: its beginning, and the size of the whole counted on the database', async () => {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  const store = new PgPasteStore(db.sql);
  const none = { add: async () => {}, withdraw: async () => {} };
  const long = 'a'.repeat(WHOLE_TEXT_BYTES);
  const endings = [
    '',
    '\n',
    '\n\n',
    'say "hi" \\ back\\slash \\n not a newline\\',
    'tab\tcr\r\nctl\u0001\u001f end\n',
    'h\u00e9llo w\u00f6rld \u2013 \u0133 \u01c5 \u{1F600}',
    '\\\\\\"\n\\\n"',
    '\\n"',
  ];
  for (const [i, ending] of endings.entries()) {
    const text = `${i % 2 === 0 ? long : `x\n${long}`}${ending}`;
    const hash = `${String(i).padStart(6, '0')}Head`;
    await store.create(() => pasteRecord(hash, { content_json: encodeContent(text) }), none);
    const head = await store.head(hash, 10);
    assert.deepEqual(head?.size, { bytes: Buffer.byteLength(text), lines: linesOf(text) }, JSON.stringify(ending));
    assert.equal(head?.paste.content_json, encodeContent(text.slice(0, 10)));
    assert.equal((await store.head(hash, 10))?.paste, head?.paste, 'one object per version, for the page caches');
  }
  // A short one is read whole, and the same object comes back for the same version.
  await store.create(() => pasteRecord('000100Shrt', { content_json: encodeContent('short\n') }), none);
  const short = await store.head('000100Shrt', 3);
  assert.equal(short?.size, undefined);
  assert.equal(short?.paste.content_json, encodeContent('short\n'));
  assert.equal((await store.head('000100Shrt', 3))?.paste, short?.paste);
  assert.equal(await store.head('000101None', 3), null);
});

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
