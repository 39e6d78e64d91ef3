import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Idempotency } from '../../src/api/v1/idempotency.ts';
import type { IdempotencyRecord, IdempotencyStore } from '../../src/paste/idempotency.ts';

/**
 * The Idempotency-Key records' contract (IdempotencyStore, src/paste/idempotency.ts), and the
 * safe retries built on them (api/v1/idempotency.ts), declared for the store `fresh` opens on
 * a new, empty state per test.
 */
export function idempotencyContract(fresh: () => Promise<IdempotencyStore>): void {
  const T0 = Date.UTC(2026, 2, 1, 12, 0, 0, 123);
  /** Past the hold a crashed server had on its record, as a retry after its restart finds it. */
  const AFTER_CRASH = 60_000;

  describe('IdempotencyStore', () => {
    test('a record reads back as it was put, with or without a revision; a put replaces it; remove forgets it', async () => {
      const store = await fresh();
      assert.equal(await store.get('nobody'), null);
      const create: IdempotencyRecord = {
        endpoint: 'create',
        fingerprint: 'f1',
        hash: 'Abc123XYZ0',
        done: false,
        at: T0,
      };
      await store.put('id-1', create);
      assert.deepEqual(await store.get('id-1'), create);
      const edit: IdempotencyRecord = { ...create, endpoint: 'edit', done: true, revision: 4 };
      await store.put('id-1', edit);
      assert.deepEqual(await store.get('id-1'), edit);
      await store.put('id-2', create);
      await store.remove('id-1');
      await store.remove('id-1');
      assert.equal(await store.get('id-1'), null);
      assert.deepEqual(await store.get('id-2'), create);
    });

    test('a retried key answers the first answer, and is refused for another request', async () => {
      const made: string[] = [];
      const idem = new Idempotency(
        await fresh(),
        async (hash) => (made.includes(hash) ? 1 : null),
        () => T0,
        Buffer.alloc(32, 7),
      );
      const ask = { tokenId: 'tok', key: 'k-1', endpoint: 'create', fields: '{"content":"x"}', hash: null };
      const effect = async (hash: string): Promise<string> => {
        made.push(hash);
        return hash;
      };
      const first = await idem.run(ask, effect);
      assert.equal(await idem.run(ask, effect), first);
      assert.deepEqual(made, [first]);
      await assert.rejects(idem.run({ ...ask, fields: '{"content":"y"}' }, effect), { code: 'idempotency_key_reused' });
    });

    test('a create begun before a crash is finished under the hash it chose, or found there, never made twice', async () => {
      let now = T0;
      const made = new Set<string>();
      const relisted: string[] = [];
      const idem = new Idempotency(
        await fresh(),
        async (h) => (made.has(h) ? 1 : null),
        () => now,
        Buffer.alloc(32, 7),
        async (h) => void relisted.push(h),
      );
      const ask = { tokenId: 't1', key: 'k', endpoint: 'create', fields: '{"content":"x"}', hash: null };
      // The first attempt dies after recording its hash, before its paste exists.
      let chosen = '';
      await assert.rejects(
        idem.run(ask, async (h) => {
          chosen = h;
          throw new Error('killed');
        }),
        /killed/,
      );
      assert.match(chosen, /^[A-Za-z0-9]{10}$/);
      now += AFTER_CRASH;
      // The retry makes the paste under that same hash.
      let calls = 0;
      const effect = async (h: string): Promise<string> => {
        calls++;
        made.add(h);
        return h;
      };
      assert.equal(await idem.run(ask, effect), chosen);
      assert.equal(calls, 1);
      // Had the paste been stored before the crash, the retry finds it and makes nothing.
      const ask2 = { ...ask, key: 'k2' };
      let chosen2 = '';
      await assert.rejects(
        idem.run(ask2, async (h) => ((chosen2 = h), made.add(h), Promise.reject(new Error('killed after the write')))),
      );
      now += AFTER_CRASH;
      assert.equal(await idem.run(ask2, effect), chosen2);
      assert.equal(calls, 1);
      // ...and puts it back in its owner's list, which the crash may have cut off.
      assert.deepEqual(relisted, [chosen2]);
    });

    test('an edit begun before a crash is found done once the paste moved past the revision it began on, and made once when it had not', async () => {
      let now = T0;
      const revisions = new Map<string, number>([['AAAAAAAAAA', 3]]);
      const idem = new Idempotency(
        await fresh(),
        async (h) => revisions.get(h) ?? null,
        () => now,
        Buffer.alloc(32, 7),
      );
      let edits = 0;
      const edit = async (h: string): Promise<string> => {
        edits++;
        revisions.set(h, (revisions.get(h) ?? 0) + 1);
        return h;
      };
      const ask = { tokenId: 't1', key: 'e1', endpoint: 'edit', fields: '{"content":"x"}', hash: 'AAAAAAAAAA' };
      // The edit was stored (revision 3 → 4), then the server died before marking it done.
      await assert.rejects(
        idem.run(ask, async (h) => (await edit(h), Promise.reject(new Error('killed after the write')))),
      );
      assert.equal(edits, 1);
      now += AFTER_CRASH;
      assert.equal(await idem.run(ask, edit), 'AAAAAAAAAA');
      assert.equal(edits, 1, 'the retry found it done');
      assert.equal(revisions.get('AAAAAAAAAA'), 4);
      // Died before the write: the retry makes it, once.
      const ask2 = { ...ask, key: 'e2' };
      await assert.rejects(idem.run(ask2, async () => Promise.reject(new Error('killed before the write'))));
      now += AFTER_CRASH;
      assert.equal(await idem.run(ask2, edit), 'AAAAAAAAAA');
      assert.equal(edits, 2);
      assert.equal(revisions.get('AAAAAAAAAA'), 5);
      assert.equal(await idem.run(ask2, edit), 'AAAAAAAAAA');
      assert.equal(edits, 2);
    });
  });
}
