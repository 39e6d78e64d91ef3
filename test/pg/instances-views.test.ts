import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { startInstances } from '../helpers/instances.ts';
import { req, spawnServer, startServer, type TestServer, tempDataDir } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';

// View counts across instances (README, Running several instances): each instance counts in
// memory and folds its counts into the rows on every upkeep tick, every 5 seconds.

const FLUSH_MS = 5_000;

const viewCount = async (s: { port: number }, token: string, hash: string): Promise<number> => {
  const r = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
  assert.equal(r.status, 200, r.text);
  return (r.json['paste'] as { view_count: number }).view_count;
};

test('every view through three instances is counted exactly once after they all stop cleanly', async (t) => {
  const set = await startInstances(t);
  const token = await set.token({ user: 'alice' });
  const made = await req(set.at(0), 'POST', '/api/v1/paste_create.php', { token, body: { content: 'counted' } });
  const hash = made.json['hash'] as string;
  await Promise.all(Array.from({ length: 60 }, (_, i) => viewCount(set.at(i), token, hash)));
  // A fold in the middle, on one instance only: the others' counts stay pending.
  await (set.at(1) as { upkeep(): Promise<void> }).upkeep();
  await Promise.all(Array.from({ length: 30 }, (_, i) => viewCount(set.at(i), token, hash)));
  await Promise.all(set.all.map((s) => s.stop()));
  const after = await startServer({ env: { DATABASE_URL: set.url } });
  assert.equal(await viewCount(after, token, hash), 91, 'the 90 views and this one');
});

test('kill -9 of one instance loses at most its views of the last flush interval; the others lose none', async (t) => {
  const set = await startInstances(t, 1);
  const token = await set.token({ user: 'alice' });
  const made = await req(set.at(0), 'POST', '/api/v1/paste_create.php', { token, body: { content: 'counted' } });
  const hash = made.json['hash'] as string;
  await set.at(0).stop();
  const env = { DATABASE_URL: set.url };
  const procs: TestServer[] = [];
  t.after(() => Promise.all(procs.map((p) => p.stop('SIGKILL'))));
  for (let i = 0; i < 3; i++) procs.push(await spawnServer({ dataDir: await tempDataDir(), env }));
  const [a, b, c] = procs as [TestServer, TestServer, TestServer];
  const views = (s: TestServer, n: number) => Promise.all(Array.from({ length: n }, () => viewCount(s, token, hash)));
  await Promise.all([views(a, 10), views(b, 10), views(c, 10)]);
  // Once a flush interval has folded every view so far into the row, c counts 7 more and is killed.
  const sql = postgres(set.url, { max: 1, onnotice: () => undefined });
  t.after(() => sql.end({ timeout: 1 }));
  const inRow = async (): Promise<number> =>
    (
      await sql<{ n: number }[]>`select (view_count + coalesce((select views from paste_views v
        where v.hash = pastes.hash), 0))::int as n from pastes where hash = ${hash}`
    )[0]?.n ?? 0;
  await until(async () => (await inRow()) >= 30, { timeoutMs: 3 * FLUSH_MS, what: 'the first 30 views in the row' });
  await Promise.all([views(a, 5), views(b, 5), views(c, 7)]);
  assert.equal(await c.stop('SIGKILL'), null);
  assert.equal(await a.stop(), 0);
  assert.equal(await b.stop(), 0);
  const after = await startServer({ env });
  const counted = (await viewCount(after, token, hash)) - 1;
  assert.ok(
    counted >= 40 && counted <= 47,
    `counted ${counted}: at least every view but the killed one's last 7, none twice`,
  );
});
