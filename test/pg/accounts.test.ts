import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Accounts } from '../../src/auth/accounts.ts';
import { AccountError } from '../../src/auth/errors.ts';
import type { AccountsDoc } from '../../src/auth/records.ts';
import { parseConfig } from '../../src/config.ts';
import { ACCOUNTS_CHANNEL, PgAccounts, RECHECK_MS } from '../../src/pg/accounts.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { createTestDatabase, psql, testCluster } from '../helpers/postgres.ts';
import { until } from '../helpers/until.ts';

const opened: { close(): Promise<void> }[] = [];
after(async () => {
  for (const o of opened.reverse()) await o.close();
});

async function open(url: string): Promise<Database> {
  const db = await openDatabase(parseConfig({ DATABASE_URL: url, DATABASE_WAIT_SECONDS: '5' }));
  opened.push(db);
  return db;
}

/** Two stores on one database, each on its own pool, as two processes would be. */
async function pair(opts: { clock?: () => number } = {}) {
  const url = await createTestDatabase();
  const a = await open(url);
  await migrate(a.sql);
  const b = await open(url);
  const server = new PgAccounts(a.sql, opts);
  const other = new PgAccounts(b.sql, { listen: false });
  opened.push(server, other);
  await Promise.all([server.load(), other.load()]);
  return { server, other, a, b };
}

const addToken = (store: PgAccounts, id: string): Promise<void> =>
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
const removeToken = (store: PgAccounts, id: string): Promise<void> =>
  store.mutate((doc) => {
    doc.tokens = doc.tokens.filter((t) => t.id !== id);
  });
const addUser = (store: PgAccounts, name: string): Promise<unknown> =>
  new Accounts(store, () => Date.UTC(2026, 0, 1)).addUser(name, 'user', null);

/** Calls fresh() until `seen`, returning the milliseconds it took; fails after `limitMs`. */
async function waitSeen(store: PgAccounts, seen: () => boolean, limitMs: number): Promise<number> {
  return until(
    async () => {
      await store.fresh();
      return seen();
    },
    { timeoutMs: limitMs, what: 'the change to be seen', everyMs: 5 },
  );
}

/**
 * A clock that follows real time until frozen: frozen, the recheck never comes due, so a
 * change seen afterwards was announced (a fact, not a guess from how long it took).
 */
function freezable(): { clock: () => number; freeze: () => void } {
  let frozen: number | null = null;
  return { clock: () => frozen ?? performance.now(), freeze: () => void (frozen = performance.now()) };
}

test('a change by another process is seen through the listener at once, and requests of one turn share a check', async () => {
  // A clock that never moves: no recheck is ever due, so every change seen was announced.
  const { server, other, a } = await pair({ clock: () => 0 });
  await addUser(other, 'owner');
  let slowest = 0;
  for (let i = 0; i < 20; i++) {
    const id = `tok${String(i).padStart(5, '0')}`;
    await addToken(other, id);
    slowest = Math.max(slowest, await waitSeen(server, () => server.token(id) !== undefined, 1000));
    await removeToken(other, id);
    slowest = Math.max(slowest, await waitSeen(server, () => server.token(id) === undefined, 1000));
  }
  // A notification's trip, well below the recheck.
  assert.ok(slowest < RECHECK_MS / 2, `slowest ${slowest} ms`);
  // Heard on the same listen connection as the server's own listener (pg/limiter.ts relies on it).
  let heard = 0;
  await a.sql.listen(ACCOUNTS_CHANNEL, () => void heard++);
  await addToken(other, 'shared00');
  await waitSeen(server, () => true, 0);
  await until(() => heard > 0, { what: 'the notification of the new token' });
  const seen = await Promise.all(
    Array.from({ length: 5 }, () => server.fresh().then(() => server.token('shared00') !== undefined)),
  );
  assert.deepEqual(seen, [true, true, true, true, true]);
});

test('without the listener, every fresh() reads the version, so a change is seen on the next request', async () => {
  const { server, other } = await pair();
  await server.unlisten();
  await addUser(other, 'owner');
  for (let i = 0; i < 10; i++) {
    const id = `tok${String(i).padStart(5, '0')}`;
    await addToken(other, id);
    await server.fresh();
    assert.ok(server.token(id), `created ${id} is seen`);
    await removeToken(other, id);
    await server.fresh();
    assert.equal(server.token(id), undefined, `revoked ${id} is gone`);
  }
});

test('with the listener up, a change whose notification was lost is found by the recheck within RECHECK_MS', async () => {
  let now = 0;
  const { server, b } = await pair({ clock: () => now });
  await server.fresh();
  // A change committed without its notification, as one sent while the listen connection was down.
  await b.sql.begin(async (tx) => {
    await tx`insert into users (id, name, role, created_at) values (1, 'quiet', 'user', now())`;
    await tx`update accounts_state set version = version + 1, next_user_id = 2`;
  });
  now += RECHECK_MS - 1;
  await server.fresh();
  assert.equal(server.userByName('quiet'), undefined);
  now += 1;
  await server.fresh();
  assert.equal(server.userByName('quiet')?.id, 1);
});

/** Whether this database has a listen connection (the driver's, shared by every LISTEN of its pool). */
const listening = async (sql: Database['sql']): Promise<boolean> =>
  (await sql`select 1 from pg_stat_activity where datname = current_database() and query ilike 'listen%'`).length > 0;

test('the listen connection killed: a change is seen within a second, and notifications resume', async () => {
  const time = freezable();
  const { server, other, a } = await pair({ clock: time.clock });
  await server.fresh();
  const killed = await a.sql`
    select pg_terminate_backend(pid) as done from pg_stat_activity
    where datname = current_database() and query ilike 'listen%'`;
  assert.deepEqual(
    killed.map((r) => r['done']),
    [true],
  );
  await addUser(other, 'during');
  const took = await waitSeen(server, () => server.userByName('during') !== undefined, RECHECK_MS + 200);
  assert.ok(took <= RECHECK_MS + 200, `took ${took} ms`);
  // The driver listens again; once it has, a change is announced again.
  await until(() => listening(a.sql), { what: 'the driver to listen again' });
  await server.fresh();
  time.freeze();
  await addUser(other, 'after');
  assert.ok((await waitSeen(server, () => server.userByName('after') !== undefined, 1000)) < RECHECK_MS / 2);
});

test('while the listen connection cannot come back, changes are seen within a second; then announced again', async () => {
  const time = freezable();
  const { server, other, a } = await pair({ clock: time.clock });
  await server.fresh();
  const [db] = await a.sql`select current_database() as name`;
  const name = db?.['name'] as string;
  const cluster = await testCluster();
  // New connections refused (the pools keep theirs): the driver keeps trying to listen again.
  psql(cluster, `ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
  try {
    psql(
      cluster,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND query ILIKE 'listen%'`,
    );
    for (const n of ['down1', 'down2']) {
      await addUser(other, n);
      const took = await waitSeen(server, () => server.userByName(n) !== undefined, RECHECK_MS + 200);
      assert.ok(took <= RECHECK_MS + 200, `took ${took} ms`);
    }
  } finally {
    psql(cluster, `ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
  }
  // Listening again (the driver retries, backing off), a change is announced at once.
  await until(() => listening(a.sql), { what: 'the driver to listen again' });
  await server.fresh();
  time.freeze();
  await addUser(other, 'back');
  const took = await waitSeen(server, () => server.userByName('back') !== undefined, RECHECK_MS);
  assert.ok(took < RECHECK_MS / 2, `took ${took} ms`);
});

test('20 users created at once from two processes get 20 distinct ids; no update is lost', async () => {
  const { server, other } = await pair();
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

test('user names are unique ignoring case, in memory and in the table', async () => {
  const { server, other } = await pair();
  await addUser(server, 'Alice');
  await assert.rejects(addUser(other, 'aLICE'), (e) => e instanceof AccountError && e.kind === 'name_taken');
  await other.fresh();
  assert.equal(other.userByName('ALICE')?.name, 'Alice');
  // Even a writer that skips the rule is refused by the table, and nothing of its change is kept.
  const sneak = (doc: AccountsDoc) => {
    doc.users.push({ ...(doc.users[0] as AccountsDoc['users'][0]), id: doc.next_user_id++, name: 'ALICE' });
  };
  await assert.rejects(other.mutate(sneak), /duplicate key/);
  assert.equal(other.users.length, 1);
  await server.mutate((doc) => assert.equal(doc.next_user_id, 2));
});

test('a change that throws writes nothing', async () => {
  const { server } = await pair();
  await assert.rejects(
    server.mutate((doc) => {
      doc.next_user_id = 99;
      throw new Error('changed my mind');
    }),
    /changed my mind/,
  );
  assert.equal(await server.mutate((doc) => doc.next_user_id), 1);
});

test("a user's and a token's every field round-trip, limits set and cleared", async () => {
  const { server, other } = await pair();
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
  // Tokens stay in the order they were made, as the file kept them.
  assert.deepEqual(
    other.tokens.map((t) => t.id),
    [record.id, bare.record.id],
  );
});

test('revoked ids are kept, the latest 1,000 in order, and known to every process', async () => {
  const { server, other } = await pair();
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

test('a short-lived process without a listener changes the accounts and closes', async () => {
  const { server, a } = await pair();
  const cli = new PgAccounts(a.sql, { listen: false });
  await cli.load();
  await addUser(cli, 'fromcli');
  await cli.close();
  await waitSeen(server, () => server.userByName('fromcli') !== undefined, 1000);
  await server.close();
  assert.equal(await server.listen(), false);
  // Closed, the server store still answers, reading the version every turn.
  await addUser(cli, 'later');
  await server.fresh();
  assert.ok(server.userByName('later'));
});
