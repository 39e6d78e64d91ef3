import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Session } from '../../src/auth/sessions.ts';
import { SHOWN_ONCE_HOLD_MS, SHOWN_ONCE_KEY_LENGTH, type ShownOnceRecords } from '../../src/auth/shown-once.ts';

/** A backend's values shown once, as the contract suite drives them. */
export interface ShownOnceBackend {
  readonly store: ShownOnceRecords;
  /** A new login session of this backend's, for the pages that take the values. */
  session(): Promise<Session>;
}

/**
 * The values shown once's contract (ShownOnceRecords, src/auth/shown-once.ts), declared for
 * the backend `fresh` opens on a new, empty state per test.
 */
export function shownOnceContract(fresh: () => Promise<ShownOnceBackend>): void {
  const T0 = Date.UTC(2026, 0, 1);

  describe('ShownOnceRecords', () => {
    test("a value is taken once, by its session's next page, under the key put answered", async () => {
      const { store, session } = await fresh();
      const mine = await session();
      const key = await store.put(mine, 'pst_secret_1', T0);
      assert.match(key, new RegExp(`^[A-Za-z0-9]{${SHOWN_ONCE_KEY_LENGTH}}$`));
      const other = await store.put(mine, 'pst_secret_2', T0);
      assert.notEqual(other, key);
      assert.equal(await store.take(key, mine, T0 + 1), 'pst_secret_1');
      assert.equal(await store.take(key, mine, T0 + 1), undefined, 'shown once');
      assert.equal(await store.take(other, mine, T0 + 1), 'pst_secret_2');
      assert.equal(await store.take('A'.repeat(SHOWN_ONCE_KEY_LENGTH), mine, T0 + 1), undefined);
    });

    test('another session gets nothing, and takes nothing from the one it was put for', async () => {
      const { store, session } = await fresh();
      const mine = await session();
      const theirs = await session();
      const key = await store.put(mine, 'new password', T0);
      assert.equal(await store.take(key, theirs, T0), undefined);
      assert.equal(await store.take(key, mine, T0), 'new password');
    });

    test('a value that waited SHOWN_ONCE_HOLD_MS is gone', async () => {
      const { store, session } = await fresh();
      const mine = await session();
      const late = await store.put(mine, 'late', T0);
      const onTime = await store.put(mine, 'on time', T0);
      assert.equal(await store.take(onTime, mine, T0 + SHOWN_ONCE_HOLD_MS - 1), 'on time');
      assert.equal(await store.take(late, mine, T0 + SHOWN_ONCE_HOLD_MS), undefined);
      assert.equal(await store.take(late, mine, T0), undefined, 'and stays gone');
    });
  });
}
