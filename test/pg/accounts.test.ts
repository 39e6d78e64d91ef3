import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { AccountsDoc } from '../../src/auth/records.ts';
import { parseConfig } from '../../src/config.ts';
import { ACCOUNTS_CHANNEL, NUDGE_FILE, nudgeServer, PgAccounts, RECHECK_MS } from '../../src/pg/accounts.ts';
import { type Database, openDatabase } from '../../src/pg/connect.ts';
import { migrate } from '../../src/pg/migrate.ts';
import { addToken, addUser, removeToken } from '../contract/account-records.ts';
import { createTestDatabase, psql, testCluster } from '../helpers/postgres.ts';
import { until } from '../helpers/until.ts';
import { cli, makeToken, req, startServer } from '../helpers/server.ts';
import { hashToken } from '../../src/auth/tokens.ts';
import { backendEnv } from '../helpers/backend.ts';
import { login, WebClient } from '../helpers/web-client.ts';
import { Passwords } from '../../src/crypto/passwords.ts';

// What every backend's accounts do is in test/contract/account-records.ts; these are PostgreSQL's own.

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

test('with the listener up and no change heard of, recheck() reads a change whose notification has not come', async () => {
  // A clock that never moves: without recheck(), nothing but a notification would make the server look.
  const { server, b } = await pair({ clock: () => 0 });
  await server.fresh();
  await b.sql.begin(async (tx) => {
    await tx`insert into users (id, name, role, created_at) values (1, 'early', 'user', now())`;
    await tx`update accounts_state set version = version + 1, next_user_id = 2`;
  });
  await server.fresh();
  assert.equal(server.userByName('early'), undefined);
  const shared = [server.recheck(), server.recheck()];
  await Promise.all(shared);
  assert.equal(server.userByName('early')?.id, 1);
});

test('a token or a user committed on the database counts on the very next request, before its notification arrives', async () => {
  // The suite's backend is PostgreSQL (npm run test:postgres): the server and the CLI share this folder's database.
  const app = await startServer();
  const db = await open((await backendEnv(app.dataDir))['DATABASE_URL'] as string);
  const owner = await makeToken(app.dataDir, { user: 'owner', scopes: 'read' });
  assert.equal((await req(app, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: owner })).status, 404);
  // As the CLI commits it, without the NOTIFY: the server hears of it only by looking.
  const secret = `pst_quiet001_${'q'.repeat(32)}`;
  await db.sql.begin(async (tx) => {
    await tx`insert into tokens (id, user_id, label, scopes, rate_limit_per_minute, hash, created_at)
      select 'quiet001', id, '', '{read}', 0, ${hashToken(secret)}, now() from users where name = 'owner'`;
    await tx`update accounts_state set version = version + 1`;
  });
  const r = await req(app, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: secret });
  assert.equal(r.status, 404, r.text);
  // A made-up token is still refused, after its look.
  const made = await req(app, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: `pst_madeup01_${'m'.repeat(32)}` });
  assert.equal(made.status, 401, made.text);
  // A user added the same way signs in on the web at once.
  const browser = new WebClient(app);
  await browser.get('/login');
  const hash = await new Passwords().hash('password123');
  await db.sql.begin(async (tx) => {
    await tx`insert into users (id, name, role, password, created_at)
      select next_user_id, 'quietuser', 'user', ${hash}, now() from accounts_state`;
    await tx`update accounts_state set version = version + 1, next_user_id = next_user_id + 1`;
  });
  await login(browser, 'quietuser');
});

test('the CLI beside a server tells it of a change through DATA_DIR, so its revoke counts on the very next request', async () => {
  const app = await startServer();
  const db = await open((await backendEnv(app.dataDir))['DATABASE_URL'] as string);
  const token = await makeToken(app.dataDir, { user: 'owner', scopes: 'read' });
  const id = token.slice(4, 12);
  assert.equal((await req(app, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })).status, 404);
  // The CLI writes the file after its commit, with the version it made.
  await cli(app.dataDir, ['token', 'create', '--user', 'owner', '--scopes', 'read']);
  const [state] = await db.sql`select version from accounts_state`;
  assert.equal(await readFile(join(app.dataDir, NUDGE_FILE), 'utf8'), `${state?.['version']}\n`);
  // A revoke committed without its NOTIFY, then the file written: the server looks at once.
  assert.equal((await req(app, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })).status, 404);
  const version = await db.sql.begin(async (tx) => {
    await tx`delete from tokens where id = ${id}`;
    await tx`insert into revoked_tokens (id) values (${id})`;
    const [row] = await tx`update accounts_state set version = version + 1 returning version`;
    return Number(row?.['version']);
  });
  await nudgeServer(app.dataDir, version);
  const r = await req(app, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token });
  assert.equal(r.status, 401, r.text);
  assert.match(r.text, /revoked/);
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

test('a writer that skips the rule on unique names is refused by the table, and nothing of its change is kept', async () => {
  const { server, other } = await pair();
  await addUser(server, 'Alice');
  await other.fresh();
  const sneak = (doc: AccountsDoc) => {
    doc.users.push({ ...(doc.users[0] as AccountsDoc['users'][0]), id: doc.next_user_id++, name: 'ALICE' });
  };
  await assert.rejects(other.mutate(sneak), /duplicate key/);
  assert.equal(other.users.length, 1);
  await server.mutate((doc) => assert.equal(doc.next_user_id, 2));
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
