import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exchange, loadThroughProxy, newLoadResult } from '../helpers/cluster-load.ts';
import { startCluster } from '../helpers/cluster.ts';
import { INSTANCES } from '../helpers/haproxy.ts';
import { psql, testCluster } from '../helpers/postgres.ts';
import { skipWithout } from '../helpers/tools.ts';
import { until } from '../helpers/until.ts';

test('a rolling restart under load through HAProxy: no failed read, no create lost or made twice, no 5xx (README, Running several instances)', async (t) => {
  if (skipWithout(t, 'haproxy')) return;
  // The instances' own defaults behind a proxy (TRUST_PROXY=1): a 2000 ms drain.
  const cluster = await startCluster();
  const exits: (number | null)[] = [];
  const progress = newLoadResult();
  // Load before the first restart, and after the last.
  const acknowledged = (n: number, what: string) =>
    until(() => progress.acknowledged.length >= n, { timeoutMs: 30_000, what: `${n} creates acknowledged ${what}` });
  const upgrade = (async () => {
    await acknowledged(10, 'before the upgrade');
    for (let i = 0; i < INSTANCES.length; i++) {
      exits.push((await cluster.instances[i]?.stop('SIGTERM')) ?? null);
      assert.match(cluster.instances[i]?.output() ?? '', /draining for 2000 ms/);
      await cluster.startAgain(i);
    }
    await acknowledged(progress.acknowledged.length + 10, 'after the upgrade');
  })();
  const load = await loadThroughProxy({
    result: progress,
    port: cluster.port,
    token: cluster.token,
    clients: 6,
    until: upgrade,
    retryCreates: true,
  });
  await upgrade;
  t.diagnostic(
    `${load.acknowledged.length} creates, ${load.reads} reads, ${load.retried.length} retries (${load.retried.join(', ')}); HAProxy: ${JSON.stringify(await cluster.proxy.view())}`,
  );
  assert.deepEqual(exits, [0, 0]);
  assert.ok(load.acknowledged.length >= 20 && load.reads >= 60, 'too little load to mean anything');
  assert.deepEqual(load.failedReads, []);
  // The drain kept the proxy from ever meeting a closed instance: nothing to send again elsewhere.
  for (const [name, v] of Object.entries(await cluster.proxy.view()))
    assert.deepEqual([v.retries, v.redispatches, v.responseErrors], [0, 0, 0], name);
  // Every create got its 200 in the end: no 5xx (or error) was left to the client.
  assert.deepEqual(load.unacknowledged, []);

  // Nothing made twice: the database holds exactly the acknowledged pastes, each once.
  const database = new URL(cluster.databaseUrl).pathname.slice(1);
  const stored = psql(await testCluster(), 'SELECT count(*) FROM pastes', database);
  assert.equal(Number(stored), load.acknowledged.length);
  assert.equal(new Set(load.acknowledged.map((p) => p.hash)).size, load.acknowledged.length);
  // Nothing lost: each reads back whole through the proxy.
  for (const p of load.acknowledged) {
    const got = await exchange(false, cluster.port, 'GET', `/api/v1/raw.php?hash=${p.hash}`, {
      authorization: `Bearer ${cluster.token}`,
    });
    assert.deepEqual([got.status, got.text], [200, p.content], p.hash);
  }
});
