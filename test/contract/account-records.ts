import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type AccountRecords, Accounts } from '../../src/auth/accounts.ts';
import { AccountError } from '../../src/auth/errors.ts';

/** The accounts as the server holds them: AccountRecords and the revoked ids (backend.ts). */
export type HeldAccounts = AccountRecords & { knownTokenId(id: string): boolean };

/** Two processes' accounts over one fresh storage, for the contract below. */
export interface AccountRecordsBackend {
  /** The server's: watching for changes (the folder's inotify, or LISTEN). */
  server: HeldAccounts;
  /** Another process's (the CLI's, or another server's) on the same storage. */
  other: HeldAccounts;
  /** Stops the server's watch: from then on it checks the stored version on every turn. */
  unwatch(): Promise<void>;
}

export const addToken = (store: HeldAccounts, id: string): Promise<void> =>
  store.mutate((doc) => {
    doc.tokens.push({
      id,
      user_id: 1,
      label: '',
      scopes: ['read'],
      rate_limit_per_minute: 0,
      hash: id.padEnd(64, '0'),
      created_at: 0,
      expires_at: null,
    });
  });
export const removeToken = (store: HeldAccounts, id: string): Promise<void> =>
  store.mutate((doc) => {
    doc.tokens = doc.tokens.filter((t) => t.id !== id);
  });
export const addUser = (store: HeldAccounts, name: string): Promise<unknown> =>
  new Accounts(store, () => Date.UTC(2026, 0, 1)).addUser(name, 'user', null);

/**
 * Tokens made and revoked by `other`, `times` over, each seen by the server's next fresh();
 * then requests arriving in one turn share one check, and all see the change.
 */
export async function eachChangeSeen(server: HeldAccounts, other: HeldAccounts, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
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
}

/**
 * What every backend's accounts index does (auth/account-index.ts; README, Running several
 * instances): declared once, run on each backend by test/contract/account-records.test.ts.
 * How soon a watched change is seen is each backend's own (test/store/accounts.test.ts,
 * test/pg/accounts.test.ts).
 */
export function accountRecordsContract(open: () => Promise<AccountRecordsBackend>): void {
  test('without the watch, every fresh() checks the stored version, so a change is seen on the next request', async () => {
    const { server, other, unwatch } = await open();
    await unwatch();
    await addUser(other, 'owner');
    await eachChangeSeen(server, other, 10);
  });

  test('20 users created at once from two processes get 20 distinct ids; no update is lost', async () => {
    const { server, other } = await open();
    await Promise.all(Array.from({ length: 20 }, (_, i) => addUser(i % 2 === 0 ? server : other, `user${i}`)));
    for (const store of [server, other]) {
      await store.fresh();
      assert.equal(store.users.length, 20);
      assert.deepEqual(
        store.users.map((u) => u.id),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
    }
    await server.mutate((doc) => assert.equal(doc.next_user_id, 21));
  });

  test('user names are unique ignoring case, across processes', async () => {
    const { server, other } = await open();
    await addUser(server, 'Alice');
    await assert.rejects(addUser(other, 'aLICE'), (e) => e instanceof AccountError && e.kind === 'name_taken');
    await other.fresh();
    assert.equal(other.userByName('ALICE')?.name, 'Alice');
    await server.mutate((doc) => assert.equal(doc.next_user_id, 2));
  });

  test('a change that throws writes nothing', async () => {
    const { server, other } = await open();
    await assert.rejects(
      server.mutate((doc) => {
        doc.next_user_id = 99;
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.equal(await server.mutate((doc) => doc.next_user_id), 1);
    assert.equal(await other.mutate((doc) => doc.next_user_id), 1);
  });

  test("a user's and a token's every field round-trip, limits set and cleared", async () => {
    const { server, other } = await open();
    const now = Date.UTC(2026, 0, 1, 12, 34, 56, 789);
    const accounts = new Accounts(server, () => now);
    const admin = await accounts.addUser('root', 'admin', 'scrypt$hash');
    await accounts.recordLogin(admin.id);
    await accounts.setDisabled('root', false);
    const { record } = await accounts.createToken(admin.id, {
      label: 'deploy ✓',
      scopes: ['read', 'write', 'admin'],
      rate: 999_999_999,
      expiresAt: now + 86_400_000,
    });
    const bare = await accounts.createToken(admin.id, { label: '', scopes: [], rate: 0 });
    await other.fresh();
    assert.deepEqual(other.users, server.users);
    assert.deepEqual(other.user(admin.id), {
      id: 1,
      name: 'root',
      role: 'admin',
      password: 'scrypt$hash',
      created_at: now,
      disabled: false,
      last_login_at: now,
    });
    assert.deepEqual(other.token(record.id), record);
    assert.deepEqual(other.token(bare.record.id), bare.record);
    await accounts.updateToken(record.id, ['read'], 60, {
      maxPasteBytes: 65_536,
      privacies: ['unlisted', 'private'],
      expiresAt: null,
    });
    await other.fresh();
    assert.deepEqual(other.token(record.id), server.token(record.id));
    assert.deepEqual(other.token(record.id)?.privacies, ['unlisted', 'private']);
    assert.equal(other.token(record.id)?.max_paste_bytes, 65_536);
    await accounts.updateToken(record.id, ['read'], 60, { maxPasteBytes: null, privacies: null });
    await other.fresh();
    assert.equal(other.token(record.id)?.max_paste_bytes ?? null, null);
    assert.equal(other.token(record.id)?.privacies ?? null, null);
    // Tokens stay in the order they were made.
    assert.deepEqual(
      other.tokens.map((t) => t.id),
      [record.id, bare.record.id],
    );
  });

  test("a user's link to an OpenID provider's sub round-trips; a second sub, or a second account, is refused", async () => {
    const { server, other } = await open();
    const accounts = new Accounts(server, () => Date.UTC(2026, 0, 1));
    const actor = { via: 'web', user_id: null, name: 'openid connect', ip: '127.0.0.1' } as const;
    const alice = await accounts.addUser('alice', 'user', null);
    const bob = await accounts.addUser('bob', 'user', null);
    await accounts.linkSubject(alice.id, 'https://id.example', 'sub-1', actor);
    await accounts.linkSubject(alice.id, 'https://id.example', 'sub-1', actor);
    await other.fresh();
    assert.deepEqual(other.user(alice.id), server.user(alice.id));
    assert.deepEqual(
      [other.user(alice.id)?.oidc_issuer, other.user(alice.id)?.oidc_subject],
      ['https://id.example', 'sub-1'],
    );
    assert.equal(other.user(bob.id)?.oidc_subject, undefined);
    assert.equal(new Accounts(other, Date.now).userBySubject('https://id.example', 'sub-1')?.name, 'alice');
    const refused = (p: Promise<unknown>) =>
      assert.rejects(p, (e: unknown) => e instanceof AccountError && e.kind === 'linked_elsewhere');
    await refused(accounts.linkSubject(alice.id, 'https://id.example', 'sub-2', actor));
    await refused(accounts.linkSubject(alice.id, 'https://other.example', 'sub-1', actor));
    await refused(accounts.linkSubject(bob.id, 'https://id.example', 'sub-1', actor));
  });

  test('revoked ids are kept, the latest 1,000 in order, and known to every process', async () => {
    const { server, other } = await open();
    const accounts = new Accounts(server, () => 0);
    const u = await accounts.addUser('owner', 'user', null);
    const old = Array.from({ length: 1_000 }, (_, i) => `old${String(i).padStart(9, '0')}`);
    await other.mutate((doc) => {
      doc.revoked_tokens = old;
    });
    const { record } = await accounts.createToken(u.id, { label: '', scopes: ['read'], rate: 0 });
    await accounts.revokeToken(record.id);
    assert.equal(server.token(record.id), undefined);
    assert.ok(server.knownTokenId(record.id));
    await other.fresh();
    const revoked = await other.mutate((doc) => doc.revoked_tokens ?? []);
    assert.deepEqual(revoked, [...old.slice(1), record.id]);
    assert.ok(other.knownTokenId(record.id));
    assert.ok(other.knownTokenId(old[1] as string));
    assert.equal(other.knownTokenId(old[0] as string), false);
    assert.equal(other.knownTokenId('never-was'), false);
  });
}
