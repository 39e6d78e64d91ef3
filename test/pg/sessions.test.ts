import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, beforeEach, describe, test } from 'node:test';
import type { Sql } from 'postgres';
import { SESSION_TOUCH_MS } from '../../src/auth/sessions.ts';
import { parseConfig } from '../../src/config.ts';
import { PgAccounts } from '../../src/pg/accounts.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgSessions } from '../../src/pg/sessions.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

const IDLE = 60 * 60_000;
const START = Date.UTC(2026, 0, 1);
let now: number;
let sql: Sql;
const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

const open = (): PgSessions => new PgSessions(sql, IDLE, () => now);
const key = (id: string): string => createHash('sha256').update(id).digest('hex');
const rows = async () =>
  (await sql`select key, user_id, csrf, created_at, last_seen from sessions order by key`).map((r) => ({ ...r }));

beforeEach(async () => {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  sql = db.sql;
  await migrate(sql);
  now = START;
  // Sessions belong to users that exist (the table refers to them).
  await sql`insert into users (id, name, role, created_at) select i, 'u' || i, 'user', now() from generate_series(1, 7) i`;
});

describe('PgSessions', () => {
  test('creates a random 43-character id and stores only its SHA-256', async () => {
    const store = open();
    const a = await store.create(7);
    const b = await store.create(7);
    assert.match(a.id, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.record.csrf, b.record.csrf);
    const stored = await rows();
    assert.deepEqual(stored.map((r) => r['key']).sort(), [key(a.id), key(b.id)].sort());
    assert.ok(!JSON.stringify(stored).includes(a.id));
    assert.equal(stored.find((r) => r['key'] === key(a.id))?.['user_id'], 7);
  });

  test('finds a live session from another process, as it was created', async () => {
    const s = await open().create(3);
    const found = await open().get(s.id);
    assert.deepEqual(found, { session: s, touched: false });
    assert.equal(await open().get('not-a-session-id'), null);
    assert.equal(await open().get('A'.repeat(43)), null);
  });

  test('refreshes last_seen in the table at most every few minutes, and says so', async () => {
    const store = open();
    const s = await store.create(1);
    const lastSeen = async () => ((await rows())[0]?.['last_seen'] as Date | undefined)?.getTime();
    now += SESSION_TOUCH_MS - 1;
    assert.equal((await store.get(s.id))?.touched, false);
    assert.equal(await lastSeen(), START);
    now += 1;
    const got = await store.get(s.id);
    assert.equal(got?.touched, true);
    assert.equal(got?.session.record.last_seen, now);
    assert.equal(await lastSeen(), now);
  });

  test('expires a session idle for the limit, deleting its row; use keeps it alive', async () => {
    const store = open();
    const busy = await store.create(1);
    const idle = await store.create(2);
    for (let i = 0; i < 3; i++) {
      now += IDLE / 2;
      assert.notEqual(await store.get(busy.id), null);
    }
    assert.equal(await store.get(idle.id), null);
    assert.deepEqual(
      (await rows()).map((r) => r['key']),
      [key(busy.id)],
    );
  });

  test('an expiry is judged by the stored last use, in any process', async () => {
    const s = await open().create(1);
    now += IDLE;
    assert.equal(await open().get(s.id), null);
    assert.deepEqual(await rows(), []);
  });

  test('sweep removes every idle session and only those', async () => {
    const store = open();
    const old = await store.create(1);
    now += IDLE - 1000;
    const fresh = await store.create(2);
    now += 1000;
    assert.equal(await store.sweep(), 1);
    assert.equal(await store.sweep(), 0);
    assert.equal(await store.get(old.id), null);
    assert.notEqual(await store.get(fresh.id), null);
  });

  test('a logout in one process ends the session in every other at once', async () => {
    const here = open();
    const there = open();
    const s = await here.create(1);
    assert.notEqual(await there.get(s.id), null);
    await here.destroy(s.id);
    assert.equal(await there.get(s.id), null);
  });

  test('destroy forgets a session at once; a refresh cannot bring it back', async () => {
    const store = open();
    const s = await store.create(1);
    now += SESSION_TOUCH_MS;
    const [got] = await Promise.all([store.get(s.id), store.destroy(s.id)]);
    assert.ok(got === null || got.session.id === s.id);
    assert.equal(await store.get(s.id), null);
    assert.deepEqual(await rows(), []);
    await store.destroy('malformed');
  });

  test('a user removed from the accounts takes its sessions along', async () => {
    const s = await open().create(2);
    const keep = await open().create(3);
    const accounts = new PgAccounts(sql, { listen: false });
    await accounts.load();
    await accounts.mutate((doc) => {
      doc.users = doc.users.filter((u) => u.id !== 2);
    });
    assert.equal(await open().get(s.id), null);
    assert.notEqual(await open().get(keep.id), null);
  });
});
