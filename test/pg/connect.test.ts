import assert from 'node:assert/strict';
import { createServer, connect as tcpConnect, type Server } from 'node:net';
import { inspect } from 'node:util';
import { test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { DatabaseStartError, openDatabase, reasonOf } from '../../src/pg/connect.ts';
import { createTestDatabase, psql, testCluster } from '../helpers/postgres.ts';

const SECRET = 'hunter2-do-not-print';

/** A loopback port nothing listens on (closed again before it is returned). */
async function unusedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

const configOf = (env: Record<string, string>) => parseConfig({ DATABASE_WAIT_SECONDS: '1', ...env });

test('openDatabase gives up after DATABASE_WAIT_SECONDS with one "cannot start" line naming host and port, never the password', async () => {
  const port = await unusedPort();
  const started = Date.now();
  const waits: string[] = [];
  await assert.rejects(
    openDatabase(configOf({ DATABASE_URL: `postgres://paste:${SECRET}@127.0.0.1:${port}/pastes` }), {
      onWait: (reason) => waits.push(reason),
    }),
    (err) => {
      assert.ok(err instanceof DatabaseStartError);
      assert.match(
        err.message,
        new RegExp(`^cannot start: the database at 127\\.0\\.0\\.1:${port} does not answer \\(.*ECONNREFUSED.*\\)$`),
      );
      assert.doesNotMatch(err.message, /\n/);
      assert.ok(!inspect(err).includes(SECRET), 'no password in the error or its properties');
      return true;
    },
  );
  const took = Date.now() - started;
  assert.ok(took >= 900 && took < 3000, `gave up after ${took} ms`);
  assert.ok(waits.length >= 2, 'retried while waiting');
  assert.ok(waits.every((w) => !w.includes(SECRET)));
});

test('openDatabase waits for a database that starts answering during DATABASE_WAIT_SECONDS', async () => {
  const cluster = await testCluster();
  const url = new URL(await createTestDatabase());
  const port = await unusedPort();
  // The database "starts" 600 ms in: a relay to the cluster opens on the port.
  let relay: Server | undefined;
  const opening = setTimeout(() => {
    relay = createServer((client) => {
      const upstream = tcpConnect(cluster.port, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    }).listen(port, '127.0.0.1');
  }, 600);
  try {
    const db = await openDatabase(
      configOf({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}${url.pathname}`, DATABASE_WAIT_SECONDS: '5' }),
    );
    const [row] = await db.sql`select 1 + 1 as two`;
    assert.equal(row?.['two'], 2);
    await db.close();
  } finally {
    clearTimeout(opening);
    relay?.close();
  }
});

test('a database that is not there is refused at once, not waited for', async () => {
  const cluster = await testCluster();
  const started = Date.now();
  await assert.rejects(
    openDatabase(
      configOf({
        DATABASE_URL: `postgres://postgres:${SECRET}@127.0.0.1:${cluster.port}/absent`,
        DATABASE_WAIT_SECONDS: '30',
      }),
    ),
    (err) => {
      assert.ok(err instanceof DatabaseStartError);
      assert.equal(
        err.message,
        `cannot start: the database at 127.0.0.1:${cluster.port} refused us (database "absent" does not exist)`,
      );
      return true;
    },
  );
  assert.ok(Date.now() - started < 3000);
});

test('every session commits durably and times statements out, whatever the database or role says', async () => {
  const cluster = await testCluster();
  const url = await createTestDatabase();
  const name = new URL(url).pathname.slice(1);
  psql(cluster, `ALTER DATABASE "${name}" SET synchronous_commit = off`);
  psql(cluster, `ALTER DATABASE "${name}" SET statement_timeout = 0`);
  const db = await openDatabase(configOf({ DATABASE_URL: url, DATABASE_TIMEOUT_MS: '300' }));
  try {
    const [row] =
      await db.sql`select current_setting('synchronous_commit') as sc, current_setting('statement_timeout') as st`;
    assert.deepEqual({ ...row }, { sc: 'on', st: '300ms' });
    const started = Date.now();
    await assert.rejects(db.sql`select pg_sleep(5)`, (err) => {
      assert.equal((err as { code?: string }).code, '57014', 'query_canceled');
      return true;
    });
    assert.ok(Date.now() - started < 2000, 'the statement was cut off at the timeout');
  } finally {
    await db.close();
  }
});

test("the API log's one connection commits without waiting for the disk, and says whose it is", async () => {
  const cluster = await testCluster();
  const url = await createTestDatabase();
  const name = new URL(url).pathname.slice(1);
  psql(cluster, `ALTER DATABASE "${name}" SET synchronous_commit = on`);
  const db = await openDatabase(configOf({ DATABASE_URL: url, DATABASE_TIMEOUT_MS: '300' }));
  try {
    const setting = `select current_setting('synchronous_commit') as sc, current_setting('statement_timeout') as st,
      current_setting('application_name') as app`;
    const [log] = await db.logSql.unsafe(setting);
    assert.deepEqual({ ...log }, { sc: 'off', st: '300ms', app: 'pastebin api log' });
    const [pool] = await db.sql.unsafe(setting);
    assert.deepEqual({ ...pool }, { sc: 'on', st: '300ms', app: 'pastebin' });
    // Two calls at once on the log's connection: it is one, so they share it.
    await Promise.all([db.logSql`select pg_sleep(0.05)`, db.logSql`select pg_sleep(0.05)`]);
    const open = psql(
      cluster,
      `select count(*) from pg_stat_activity where datname = '${name}' and application_name = 'pastebin api log'`,
    );
    assert.equal(open, '1');
  } finally {
    await db.close();
  }
});

test('a unix socket folder works as ?host= and as a percent-encoded host', async () => {
  const cluster = await testCluster();
  const db = new URL(await createTestDatabase()).pathname;
  for (const url of [
    `postgres://postgres@/${db.slice(1)}?host=${cluster.socketDir}&sslmode=disable`,
    `postgres://postgres@${encodeURIComponent(cluster.socketDir)}:${cluster.port}${db}`,
  ]) {
    const config = configOf({ DATABASE_URL: url });
    // ?host= carries no port: the cluster's is not the default 5432.
    const withPort = config.database && { ...config, database: { ...config.database, port: cluster.port } };
    assert.ok(withPort);
    const open = await openDatabase(withPort);
    try {
      const [row] = await open.sql`select inet_server_addr() as addr, current_database() as db`;
      assert.deepEqual({ ...row }, { addr: null, db: db.slice(1) }, 'connected over the socket, to the database named');
    } finally {
      await open.close();
    }
  }
});

test('a password never appears in a query error', async () => {
  const url = new URL(await createTestDatabase());
  url.password = SECRET;
  const db = await openDatabase(configOf({ DATABASE_URL: url.href }));
  try {
    await assert.rejects(db.sql`select * from no_such_table`, (err) => {
      assert.ok(!inspect(err, { depth: 5, showHidden: true }).includes(SECRET));
      return true;
    });
  } finally {
    await db.close();
  }
});

test('reasonOf makes one line of a driver error, without the password, and names a code when there is no message', () => {
  assert.equal(reasonOf(new Error(`bad\n  thing ${SECRET} here`), SECRET), 'bad thing *** here');
  assert.equal(reasonOf(Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' }), null), 'ECONNREFUSED');
  assert.equal(reasonOf(new Error(''), null), 'no reason given');
});
