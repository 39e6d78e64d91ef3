import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PasteUpkeep } from '../../src/backend.ts';
import type { Viewer } from '../../src/paste/access.ts';
import { PasteError, type PasteFailure } from '../../src/paste/errors.ts';
import { contentOf } from '../../src/paste/paste.ts';
import {
  type OwnerLists,
  type PasteRepository,
  type RecentList,
  TOMBSTONE_MS,
  type ViewCounts,
} from '../../src/paste/repository.ts';
import { type Counted, PasteService } from '../../src/paste/service.ts';
import { RateLimiter } from '../../src/ratelimit/bucket.ts';
import { FailureBudget } from '../../src/ratelimit/failure-budget.ts';
import { createInput } from '../helpers/paste-record.ts';

/** What the paste service is built on, as a backend makes it (src/server.ts does the same). */
export interface ServiceParts {
  readonly store: PasteRepository & PasteUpkeep;
  readonly views: ViewCounts & { drain(): Promise<void> };
  readonly owners: OwnerLists;
  readonly recent: RecentList & { save(): Promise<void>; load(): Promise<void> };
  /** The same parts anew on the same state, with nothing cached: a restart. */
  reopen(): Promise<ServiceParts>;
  /** A paste as stored, or null (test/helpers/stored.ts, storedPaste). */
  stored(hash: string): Promise<Record<string, unknown> | null>;
}

const owner: Viewer = { userId: 1, isAdmin: false };
const other: Viewer = { userId: 2, isAdmin: false };

const input = createInput;

const HTTP_KIND: Record<number, PasteFailure[]> = { 404: ['not_found'], 410: ['expired', 'burned'] };
/** The promise is refused with a paste refusal of the kind the status stands for. */
const status = (p: Promise<unknown> | unknown, code: number) =>
  assert.rejects(
    Promise.resolve(p),
    (e: unknown) => e instanceof PasteError && (HTTP_KIND[code] ?? []).includes(e.kind),
  );

/**
 * The paste service's contract over a backend's stores (src/paste/service.ts on
 * PasteRepository, ViewCounts, OwnerLists and RecentList), declared for the parts `fresh`
 * opens on a new, empty state per test; its recent list holds at most three.
 */
export function pasteServiceContract(fresh: () => Promise<ServiceParts>): void {
  let now = 0;
  let parts: ServiceParts;
  let service: PasteService;
  let maxRevisions: number | undefined;
  const build = (p: ServiceParts): void => {
    parts = p;
    service = new PasteService({
      ...p,
      budget: new FailureBudget(new RateLimiter(() => now)),
      now: () => now,
      ...(maxRevisions === undefined ? {} : { maxRevisions }),
    });
  };
  /** A fresh state, and the service on it (keeping `max` revisions, or the default). */
  const open = async (max?: number): Promise<void> => {
    now = Date.UTC(2026, 0, 1, 12, 0, 0);
    maxRevisions = max;
    build(await fresh());
  };
  const restart = async (): Promise<void> => build(await parts.reopen());
  /** A counted read by `viewer` (no password), as the API's GET does it. */
  const read = (hash: string, viewer: Viewer | null): Promise<Counted> =>
    Promise.resolve(service.read(hash, viewer, { client: '127.0.0.1', consume: true }));
  const text = async (hash: string, viewer: Viewer | null): Promise<string> =>
    contentOf((await read(hash, viewer)).paste);
  /** The whole expiry sweep as the upkeep runs it, a slice at a time; answers how many pastes it changed. */
  const sweep = async (at: number): Promise<number> => {
    let changed = 0;
    for (;;) {
      const slice = await parts.store.sweepSlice(at, 1_000);
      changed += slice.changed;
      if (!slice.more) return changed;
    }
  };

  describe('PasteService over the backend', () => {
    test('20 concurrent reads of a one-time paste: one gets it, the rest are told it is burned', async () => {
      await open();
      const p = await service.create(input({ content: 'once', burn_after_read: 1 }), 1);
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => read(p.hash, other)));
      const got = outcomes.filter((o) => o.status === 'fulfilled').map((o) => contentOf(o.value.paste));
      assert.deepEqual(got, ['once']);
      for (const o of outcomes)
        if (o.status === 'rejected')
          assert.ok(o.reason instanceof PasteError && o.reason.kind === 'burned', String(o.reason));
      const tomb = await parts.store.get(p.hash);
      assert.equal(tomb?.burned, true);
      assert.deepEqual(tomb?.receipt, { at: now, via: 'web', token_id: null });
      assert.equal(tomb?.view_count, 1);
    });

    test('create, views, edits with their history, the lists, expiry and delete', async () => {
      await open(2);
      const { store, views, recent } = parts;
      const p = await service.create(input({ content: 'first', expiry: '1h' }), 1);
      const q = await service.create(input({ content: 'private', privacy: 'private' }), 1);
      assert.deepEqual(recent.list(), [p.hash]);

      await read(p.hash, other);
      const counted = await read(p.hash, other);
      assert.equal(counted.viewCount, 2);
      assert.equal((await store.get(p.hash))?.view_count, 0, 'counted in memory until the upkeep folds them');
      await views.drain();
      assert.equal((await store.get(p.hash))?.view_count, 2);
      assert.equal((await read(p.hash, other)).viewCount, 3);

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
      await assert.rejects(read(p.hash, other), (e) => e instanceof PasteError && e.kind === 'expired');
      assert.deepEqual(await store.revisions(p.hash), []);
      assert.deepEqual(await service.listRecent(10), []);
      now += TOMBSTONE_MS;
      assert.deepEqual(await store.sweepSlice(now, 100), { changed: 1, more: false });
      await assert.rejects(read(p.hash, other), (e) => e instanceof PasteError && e.kind === 'not_found');

      await service.delete(q.hash, owner);
      assert.equal(await store.get(q.hash), null);
      assert.deepEqual((await service.listOwned(1, 0, 10)).pastes, []);
    });

    test("an owner's count forgets a paste deleted, and one the sweep removed", async () => {
      await open();
      const p = await service.create(input({ expiry: '1h' }), 1);
      const q = await service.create(input(), 1);
      assert.equal(await service.countOwned(1), 2);
      await service.delete(q.hash, owner);
      assert.equal(await service.countOwned(1), 1);
      now += 3_600_000;
      assert.deepEqual(await parts.store.sweepSlice(now, 100), { changed: 1, more: false });
      now += TOMBSTONE_MS;
      assert.deepEqual(await parts.store.sweepSlice(now, 100), { changed: 1, more: false });
      assert.equal(await parts.store.get(p.hash), null);
      assert.equal(await service.countOwned(1), 0);
      assert.deepEqual([...(await service.countsOwned([1]))], [[1, 0]]);
    });

    describe('the paste cache never serves stale data', () => {
      test('after an edit the next read shows the new content', async () => {
        await open();
        const p = await service.create(input(), 1);
        assert.equal(await text(p.hash, other), 'hello');
        await service.edit(p.hash, { content: 'changed', expiry: 'keep', clear_password: 0 }, owner);
        assert.equal(await text(p.hash, other), 'changed');
      });

      test('after a delete the next read is 404', async () => {
        await open();
        const p = await service.create(input(), 1);
        await read(p.hash, other);
        await service.delete(p.hash, owner);
        await status(read(p.hash, other), 404);
      });

      test('a read racing a delete does not put the deleted paste back in the cache', async () => {
        await open();
        const p = await service.create(input(), 1);
        await restart(); // nothing cached: the next read goes to the store
        const reading = parts.store.get(p.hash);
        await service.delete(p.hash, owner);
        await reading;
        assert.equal(await parts.store.get(p.hash), null);
      });

      test('after a burn every read is 410', async () => {
        await open();
        const p = await service.create(input({ burn_after_read: 1 }), 1);
        assert.equal(await text(p.hash, other), 'hello');
        await status(read(p.hash, other), 410);
        await status(read(p.hash, owner), 410);
      });

      test('a cached paste turns 410 the moment it expires', async () => {
        await open();
        const p = await service.create(input({ expiry: '10m' }), 1);
        await read(p.hash, other);
        now += 10 * 60_000 - 1;
        await read(p.hash, other);
        now += 1;
        await status(read(p.hash, other), 410);
      });
    });

    describe('expiry sweep', () => {
      test('wipes expired pastes to tombstones that answer 410, then deletes them after 30 days', async () => {
        await open();
        const { store } = parts;
        const short = await service.create(
          input({ content: 'secret-short', title: 'T', password: 'pw-12345', expiry: '10m' }),
          1,
        );
        const long = await service.create(input({ expiry: '1d' }), 1);
        const forever = await service.create(input(), 1);
        assert.equal(await sweep(now), 0);
        now += 11 * 60_000;
        assert.equal(await sweep(now), 1);
        assert.doesNotMatch(JSON.stringify(await parts.stored(short.hash)), /secret-short|scrypt/);
        await status(read(short.hash, owner), 410);
        assert.notEqual(await store.get(long.hash), null);
        now += 2 * 86_400_000;
        assert.equal(await sweep(now), 1);
        await status(read(long.hash, owner), 410);
        now += TOMBSTONE_MS;
        assert.equal(await sweep(now), 2);
        assert.equal(await store.get(short.hash), null);
        assert.equal(await store.get(long.hash), null);
        assert.notEqual(await store.get(forever.hash), null);
        assert.equal(await parts.stored(short.hash), null);
      });

      test('a burned paste stays a 410 tombstone for 30 days, then is deleted', async () => {
        await open();
        const p = await service.create(input({ burn_after_read: 1 }), 1);
        await read(p.hash, other);
        now += TOMBSTONE_MS - 1;
        assert.equal(await sweep(now), 0);
        await status(read(p.hash, other), 410);
        now += 1;
        assert.equal(await sweep(now), 1);
        await status(read(p.hash, other), 404);
      });

      test('a paste whose expiry was extended by an edit survives its old expiry', async () => {
        await open();
        const p = await service.create(input({ expiry: '10m' }), 1);
        await service.edit(p.hash, { expiry: '1w', clear_password: 0 }, owner);
        now += 11 * 60_000;
        assert.equal(await sweep(now), 0);
        assert.notEqual(await parts.stored(p.hash), null);
      });
    });

    test('a private paste is 404 to others and readable by its owner and admins', async () => {
      await open();
      const p = await service.create(input({ privacy: 'private' }), 1);
      await status(read(p.hash, other), 404);
      await status(read(p.hash, null), 404);
      assert.equal(await text(p.hash, owner), 'hello');
      assert.equal(await text(p.hash, { userId: 9, isAdmin: true }), 'hello');
    });

    test('lists a user’s own pastes newest first, in every state, and forgets deleted ones', async () => {
      await open();
      const a = await service.create(input({ content: 'a' }), 1);
      const b = await service.create(input({ content: 'b', privacy: 'private' }), 1);
      const c = await service.create(input({ content: 'c', burn_after_read: 1 }), 1);
      await service.create(input({ content: 'not mine' }), 2);
      await read(c.hash, other);
      await service.delete(a.hash, owner);
      await read(b.hash, owner);
      const { pastes, total } = await service.listOwned(1, 0, 10);
      assert.deepEqual(
        pastes.map((p) => p.hash),
        [c.hash, b.hash],
      );
      assert.equal(pastes[1]?.view_count, 1, 'pending views are included');
      assert.equal(total, 2);
      assert.deepEqual(
        (await service.listOwned(1, 1, 1)).pastes.map((p) => p.hash),
        [b.hash],
      );
      await restart();
      assert.deepEqual(
        (await service.listOwned(1, 0, 10)).pastes.map((p) => p.hash),
        [c.hash, b.hash],
      );
    });

    test('recent lists public, readable pastes only, newest first, bounded, across a save and load', async () => {
      await open();
      const pub1 = await service.create(input({ content: '1' }), 1);
      await service.create(input({ content: 'p', privacy: 'private' }), 1);
      await service.create(input({ content: 'u', privacy: 'unlisted' }), 1);
      await service.create(input({ content: 'b', burn_after_read: 1 }), 1);
      const pub2 = await service.create(input({ content: '2', password: 'pw-protected' }), 1);
      const pub3 = await service.create(input({ content: '3' }), 1);
      assert.deepEqual(
        (await service.listRecent(10)).map((p) => p.hash),
        [pub3.hash, pub1.hash],
      );
      assert.equal(parts.recent.list().includes(pub2.hash), true);
      await service.edit(pub3.hash, { privacy: 'private', expiry: 'keep', clear_password: 0 }, owner);
      assert.deepEqual(
        (await service.listRecent(10)).map((p) => p.hash),
        [pub1.hash],
      );
      await parts.recent.save();
      await restart();
      await parts.recent.load();
      assert.deepEqual(
        (await service.listRecent(1)).map((p) => p.hash),
        [pub1.hash],
      );
      for (let i = 0; i < 5; i++) await service.create(input({ content: String(i) }), 1);
      assert.equal(parts.recent.list().length, 3);
      const unlisted = await service.create(input({ content: 'later public', privacy: 'unlisted' }), 1);
      assert.notEqual((await service.listRecent(1))[0]?.hash, unlisted.hash);
      await service.edit(unlisted.hash, { privacy: 'public', expiry: 'keep', clear_password: 0 }, owner);
      assert.equal((await service.listRecent(1))[0]?.hash, unlisted.hash, 'a paste made public joins the recent list');
    });

    test('History lists the versions of one page by number, time and size, newest first, without reading the kept texts', async () => {
      await open();
      const { store } = parts;
      const p = await service.create(input({ content: 'one' }), owner.userId);
      for (const content of ['two!', 'three', 'fourth!']) {
        now += 1000;
        await service.edit(p.hash, { content, expiry: 'keep', clear_password: 0 }, owner);
      }
      let reads = 0;
      const getRevision = store.getRevision.bind(store);
      store.getRevision = (hash, n) => {
        reads++;
        return getRevision(hash, n);
      };
      const opts = { client: '127.0.0.1', consume: false };
      const first = await service.history(p.hash, null, opts, { offset: 0, limit: 2 });
      assert.deepEqual(first.numbers, [1, 2, 3, 4]);
      assert.deepEqual(
        first.versions.map((v) => [v.revision, v.bytes]),
        [
          [4, 7],
          [3, 5],
        ],
      );
      const second = await service.history(p.hash, other, opts, { offset: 2, limit: 2 });
      assert.deepEqual(
        second.versions.map((v) => [v.revision, v.bytes]),
        [
          [2, 4],
          [1, 3],
        ],
      );
      assert.deepEqual(
        [...first.versions, ...second.versions].map((v) => v.savedAt),
        [3000, 2000, 1000, 0].map((t) => second.versions[1]!.savedAt! + t),
      );
      assert.equal(reads, 0, 'times and sizes come from the start of each kept version');
    });
  });
}
