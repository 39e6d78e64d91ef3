import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { IDEMPOTENCY_TTL_MS, type IdempotencyRecord } from '../../src/paste/idempotency.ts';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { PgIdempotency } from '../../src/pg/idempotency.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

let db: Database;
before(async () => {
  db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  await migrate(db.sql);
});
after(() => db.close());

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0, 123);
// What every backend does with the records is test/contract/idempotency.ts; here, the database's own sweep and claims.

test('sweep removes the records first seen more than a day ago and keeps the rest', async () => {
  const store = new PgIdempotency(db.sql);
  const at = (ms: number): IdempotencyRecord => ({
    endpoint: 'create',
    fingerprint: 'f',
    hash: 'h',
    done: true,
    at: ms,
  });
  const now = T0 + 10 * IDEMPOTENCY_TTL_MS;
  await store.put('old', at(now - IDEMPOTENCY_TTL_MS - 1));
  await store.put('edge', at(now - IDEMPOTENCY_TTL_MS));
  await store.put('young', at(now - 1000));
  await store.sweep(now);
  assert.equal(await store.get('old'), null);
  assert.notEqual(await store.get('edge'), null);
  assert.notEqual(await store.get('young'), null);
});

test('claim writes a record only where none lives; hold renews ours or takes one whose holder ran out of time', async () => {
  const store = new PgIdempotency(db.sql);
  const r: IdempotencyRecord = {
    endpoint: 'create',
    fingerprint: 'f',
    hash: 'Abc123XYZ0',
    done: false,
    at: T0,
    heldUntil: T0 + 5_000,
  };
  assert.equal(await store.claim('c-1', r), null);
  assert.deepEqual(await store.claim('c-1', { ...r, hash: 'Other00000' }), r, 'the second claim finds the first');
  assert.equal(await store.hold('c-1', T0 + 9_000, T0 + 1_000, false), false, 'still held by the first');
  assert.equal(await store.hold('c-1', T0 + 9_000, T0 + 1_000, true), true, 'renewed by its holder');
  assert.equal(await store.hold('c-1', T0 + 20_000, T0 + 9_000, false), true, 'taken over once its time ran out');
  assert.equal((await store.get('c-1'))?.heldUntil, T0 + 20_000);
  // A record a day old answers nothing: a claim replaces it.
  const later = { ...r, hash: 'Later00000', at: T0 + IDEMPOTENCY_TTL_MS };
  assert.equal(await store.claim('c-1', later), null);
  assert.equal((await store.get('c-1'))?.hash, 'Later00000');
  const { heldUntil: _h, ...done } = later;
  await store.put('c-1', { ...done, done: true });
  assert.equal(
    await store.hold('c-1', T0 + IDEMPOTENCY_TTL_MS + 9_000, T0 + IDEMPOTENCY_TTL_MS + 99_999, false),
    false,
    'a done record is never held',
  );
});
