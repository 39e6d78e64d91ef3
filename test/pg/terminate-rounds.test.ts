import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/postgres.ts';
import { cli, req, spawnServer, tempDataDir, type ProcessServer } from '../helpers/server.ts';
import { until as poll } from '../helpers/until.ts';

/**
 * The server as `npm start` runs it survives its database connections being terminated under
 * load, TERMINATE_ROUNDS times (20 by default; bench/README.md gives the command for 300): each
 * lost connection once could end the process from inside the driver (vendor/README.md).
 */
const ROUNDS = Number(process.env['TERMINATE_ROUNDS'] ?? 20);
const CLIENTS = 6;

/** Polls `ready` until it holds; fails naming `what` after `ms`. */
const until = (ready: () => boolean, what: string, ms = 20_000): Promise<number> =>
  poll(ready, { timeoutMs: ms, what, everyMs: 5 });

test(`the server survives ${ROUNDS} rounds of pg_terminate_backend of its connections under load, and answers /healthz 200 after`, {
  timeout: 30 * 60_000,
}, async (t) => {
  const url = await createTestDatabase();
  const env = { DATABASE_URL: url, DATABASE_TIMEOUT_MS: '2000' };
  const dataDir = await tempDataDir();
  await cli(dataDir, ['user', 'add', 'alice'], '', env);
  const token = await cli(dataDir, ['token', 'create', '--user', 'alice', '--scopes', 'read,write'], '', env);
  const server: ProcessServer = await spawnServer({ dataDir, env });
  t.after(() => server.stop('SIGKILL'));
  const alive = (): boolean => server.proc.exitCode === null && server.proc.signalCode === null;
  const admin = postgres(url, { max: 1, onnotice: () => {} });

  const statuses = new Map<string, number>();
  const count = (what: string): void => void statuses.set(what, (statuses.get(what) ?? 0) + 1);
  let created = 0;
  let stop = false;
  /** One client: creates and reads its own pastes until told to stop or the server is gone. */
  const client = async (c: number): Promise<void> => {
    const mine: string[] = [];
    for (let n = 0; !stop && alive(); n++) {
      const read = n % 2 === 1 && mine.length > 0;
      try {
        const r = read
          ? await req(server, 'GET', `/api/v1/paste.php?hash=${mine[n % mine.length]}`, { token })
          : await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: `client ${c} #${n}` } });
        count(`${read ? 'read' : 'create'} ${r.status}`);
        if (!read && r.status === 200) {
          mine.push(r.json['hash'] as string);
          created++;
        }
      } catch (err) {
        count(`${read ? 'read' : 'create'} ${(err as { code?: string }).code ?? String(err)}`);
      }
    }
  };
  const load = Array.from({ length: CLIENTS }, (_, c) => client(c));

  let cut = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Each round cuts a server that serves again: a create succeeded since the last cut.
      const before = created;
      await until(() => created > before || !alive(), `a create to succeed before round ${round + 1}`);
      assert.ok(alive(), `the server died before round ${round + 1}:\n${server.output()}`);
      const [row] = await admin<{ n: number }[]>`
        select count(*)::int as n from (
          select pg_terminate_backend(pid) from pg_stat_activity
          where application_name = 'pastebin' and datname = current_database()
        ) as cut`;
      cut += row?.n ?? 0;
    }
    const before = created;
    await until(() => created > before || !alive(), 'a create to succeed after the last round');
    assert.ok(alive(), `the server died:\n${server.output()}`);
  } finally {
    stop = true;
    await Promise.all(load);
    await admin.end({ timeout: 1 });
  }
  console.log(
    `${ROUNDS} rounds, ${cut} connections terminated; answers: ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  assert.ok(cut >= ROUNDS, 'every round cut at least one connection');

  // The background probe says "answers" again within a second or two of the database answering.
  let health = await req(server, 'GET', '/healthz');
  await poll(async () => (health = await req(server, 'GET', '/healthz')).status === 200, {
    timeoutMs: 20_000,
    what: '/healthz to answer 200',
    everyMs: 50,
  }).catch(() => undefined);
  assert.deepEqual([health.status, health.json], [200, { ok: true, database: 'answers' }]);
  // A lost connection is refused with 503 (README, Running on PostgreSQL), never a 500.
  for (const what of statuses.keys()) assert.match(what, /^(create|read) (200|503)$/, JSON.stringify([...statuses]));
  assert.ok(alive(), server.output());
  assert.equal(await server.stop(), 0, server.output());
});
