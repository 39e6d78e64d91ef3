import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { PgOwnerLists } from '../../src/pg/owner-lists.ts';
import { PgPasteStore } from '../../src/pg/pastes.ts';
import { PgRecentList } from '../../src/pg/recent.ts';
import { PgViewCounts } from '../../src/pg/views.ts';
import type { Viewer } from '../../src/paste/access.ts';
import { PasteError } from '../../src/paste/errors.ts';
import { contentOf } from '../../src/paste/paste.ts';
import { TOMBSTONE_MS } from '../../src/paste/repository.ts';
import { PasteService } from '../../src/paste/service.ts';
import type { CreateInput } from '../../src/paste/validate.ts';
import { RateLimiter } from '../../src/ratelimit/bucket.ts';
import { FailureBudget } from '../../src/ratelimit/failure-budget.ts';
import { createTestDatabase } from '../helpers/postgres.ts';

/** The paste service on the PostgreSQL classes, as a server on DATABASE_URL builds it. */
const opened: Database[] = [];
after(() => Promise.all(opened.map((d) => d.close())));

const owner: Viewer = { userId: 1, isAdmin: false };
const other: Viewer = { userId: 2, isAdmin: false };
let now = Date.UTC(2026, 0, 1, 12, 0, 0);

async function open() {
  const db = await openDatabase(parseConfig({ DATABASE_URL: await createTestDatabase(), DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  await migrate(db.sql);
  const store = new PgPasteStore(db.sql);
  const views = new PgViewCounts(db.sql);
  const owners = new PgOwnerLists(db.sql);
  const recent = new PgRecentList(db.sql);
  const service = new PasteService({
    store,
    views,
    owners,
    recent,
    budget: new FailureBudget(new RateLimiter(() => now)),
    now: () => now,
    maxRevisions: 2,
  });
  return { store, views, owners, recent, service };
}

const input = (over: Partial<CreateInput> = {}): CreateInput => ({
  title: '',
  content: 'hello',
  language: 'text',
  privacy: 'public',
  expiry: 'never',
  password: null,
  highlight: 1,
  burn_after_read: 0,
  ...over,
});

const read = (service: PasteService, hash: string, viewer: Viewer | null) =>
  Promise.resolve(service.read(hash, viewer, { client: '127.0.0.1', consume: true }));

test('20 concurrent reads of a one-time paste through the service: one gets it, the rest are told it is burned', async () => {
  const { service, store } = await open();
  const p = await service.create(input({ content: 'once', burn_after_read: 1 }), 1);
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => read(service, p.hash, other)));
  const got = outcomes.filter((o) => o.status === 'fulfilled').map((o) => contentOf(o.value.paste));
  assert.deepEqual(got, ['once']);
  for (const o of outcomes)
    if (o.status === 'rejected')
      assert.ok(o.reason instanceof PasteError && o.reason.kind === 'burned', String(o.reason));
  const tomb = await store.get(p.hash);
  assert.equal(tomb?.burned, true);
  assert.deepEqual(tomb?.receipt, { at: now, via: 'web', token_id: null });
  assert.equal(tomb?.view_count, 1);
});

test('create, views, edits with their history, the lists, expiry and delete, through the service', async () => {
  const { service, store, views, recent } = await open();
  const p = await service.create(input({ content: 'first', expiry: '1h' }), 1);
  const q = await service.create(input({ content: 'private', privacy: 'private' }), 1);
  assert.deepEqual(recent.list(), [p.hash]);

  await read(service, p.hash, other);
  const counted = await read(service, p.hash, other);
  assert.equal(counted.viewCount, 2);
  assert.equal((await store.get(p.hash))?.view_count, 0, 'counted in memory until the upkeep folds them');
  await views.drain();
  assert.equal((await store.get(p.hash))?.view_count, 2);
  assert.equal((await read(service, p.hash, other)).viewCount, 3);

  for (const text of ['second', 'third', 'fourth']) {
    now += 1000;
    await service.edit(p.hash, { content: text, expiry: 'keep', clear_password: 0 }, owner);
  }
  // MAX_REVISIONS 2: the two versions before the current one.
  assert.deepEqual(await store.revisions(p.hash), [2, 3]);
  const second = await service.revision(p.hash, 2, other, { client: '127.0.0.1', consume: false });
  assert.equal(contentOf(second.paste), 'second');

  const mine = await service.listOwned(1, 0, 10);
  assert.deepEqual(
    mine.pastes.map((x) => x.hash),
    [q.hash, p.hash],
  );
  assert.equal(mine.total, 2);
  assert.equal(mine.pastes[1]?.view_count, 3, 'pending views counted');
  assert.equal(await service.countOwned(1), 2);
  assert.deepEqual(
    (await service.listRecent(10)).map((x) => x.hash),
    [p.hash],
  );

  // An hour on, the sweep leaves a tombstone that answers "expired", and no history.
  now += 3_600_000;
  assert.deepEqual(await store.sweepSlice(now, 100), { changed: 1, more: false });
  await assert.rejects(read(service, p.hash, other), (e) => e instanceof PasteError && e.kind === 'expired');
  assert.deepEqual(await store.revisions(p.hash), []);
  assert.deepEqual(await service.listRecent(10), []);
  now += TOMBSTONE_MS;
  assert.deepEqual(await store.sweepSlice(now, 100), { changed: 1, more: false });
  await assert.rejects(read(service, p.hash, other), (e) => e instanceof PasteError && e.kind === 'not_found');

  await service.delete(q.hash, owner);
  assert.equal(await store.get(q.hash), null);
  assert.equal(await service.countOwned(1), 0);
});
