import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SESSION_TOUCH_MS, type SessionRecords, sessionKey } from '../../src/auth/sessions.ts';

/** The idle time the suite's stores are opened with. */
export const IDLE_MS = 60 * 60_000;

/** A backend's login sessions as the contract suite drives them. */
export interface SessionsBackend {
  /** A store on this backend's state; each call is another process, or a restart, on the same state. */
  open(): Promise<SessionRecords & { sweep(): Promise<number> }>;
  /** The sessions as stored, by key (test/helpers/stored.ts, storedSessions), times in epoch ms. */
  stored(): Promise<{ key: string; record: Record<string, unknown> }[]>;
}

/**
 * The login sessions' contract (SessionRecords, src/auth/sessions.ts), declared for the backend
 * `fresh` opens: a new, empty state per test, with IDLE_MS and `clock` for its stores. Users 1
 * to 7 exist.
 */
export function sessionsContract(fresh: (clock: () => number) => Promise<SessionsBackend>): void {
  const START = Date.UTC(2026, 0, 1);
  let now = START;
  const backend = (): Promise<SessionsBackend> => {
    now = START;
    return fresh(() => now);
  };
  const keys = async (b: SessionsBackend): Promise<string[]> => (await b.stored()).map((s) => s.key);

  describe('SessionRecords', () => {
    test('creates a random 43-character id and stores only its SHA-256', async () => {
      const b = await backend();
      const store = await b.open();
      const a = await store.create(7);
      const other = await store.create(7);
      assert.match(a.id, /^[A-Za-z0-9_-]{43}$/);
      assert.notEqual(a.id, other.id);
      assert.notEqual(a.record.csrf, other.record.csrf);
      const stored = await b.stored();
      assert.deepEqual(stored.map((s) => s.key).sort(), [sessionKey(a.id), sessionKey(other.id)].sort());
      assert.ok(!JSON.stringify(stored).includes(a.id));
      assert.equal(stored.find((s) => s.key === sessionKey(a.id))?.record['user_id'], 7);
    });

    test('finds a live session from another process, or after a restart, as it was created', async () => {
      const b = await backend();
      const s = await (await b.open()).create(3);
      const again = await b.open();
      assert.deepEqual(await again.get(s.id), { session: s, touched: false });
      assert.equal(await again.get('not-a-session-id'), null);
      assert.equal(await again.get('A'.repeat(43)), null);
    });

    test('refreshes the stored last use at most every few minutes, and says so', async () => {
      const b = await backend();
      const store = await b.open();
      const s = await store.create(1);
      const lastSeen = async () => (await b.stored())[0]?.record['last_seen'];
      now += SESSION_TOUCH_MS - 1;
      assert.equal((await store.get(s.id))?.touched, false);
      assert.equal(await lastSeen(), START);
      now += 1;
      const got = await store.get(s.id);
      assert.equal(got?.touched, true);
      assert.equal(got?.session.record.last_seen, now);
      assert.equal(await lastSeen(), now);
    });

    test('expires a session idle for the limit, deleting what was stored of it; use keeps it alive', async () => {
      const b = await backend();
      const store = await b.open();
      const busy = await store.create(1);
      const idle = await store.create(2);
      for (let i = 0; i < 3; i++) {
        now += IDLE_MS / 2;
        assert.notEqual(await store.get(busy.id), null);
      }
      assert.equal(await store.get(idle.id), null);
      assert.deepEqual(await keys(b), [sessionKey(busy.id)]);
    });

    test('an expiry is judged by the stored last use, in another process or after a restart', async () => {
      const b = await backend();
      const s = await (await b.open()).create(1);
      now += IDLE_MS;
      assert.equal(await (await b.open()).get(s.id), null);
      assert.deepEqual(await b.stored(), []);
    });

    test('sweep removes every idle session and only those', async () => {
      const b = await backend();
      const store = await b.open();
      const old = await store.create(1);
      now += IDLE_MS - 1000;
      const fresh = await store.create(2);
      now += 1000;
      assert.equal(await store.sweep(), 1);
      assert.equal(await store.sweep(), 0);
      assert.equal(await store.get(old.id), null);
      assert.notEqual(await store.get(fresh.id), null);
    });

    test('destroy forgets a session at once; a refresh cannot bring it back', async () => {
      const b = await backend();
      const store = await b.open();
      const s = await store.create(1);
      now += SESSION_TOUCH_MS;
      const [got] = await Promise.all([store.get(s.id), store.destroy(s.id)]);
      assert.ok(got === null || got.session.id === s.id);
      assert.equal(await store.get(s.id), null);
      assert.deepEqual(await b.stored(), []);
      await store.destroy('malformed');
    });
  });
}
