import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exchange, loadThroughProxy, newLoadResult } from '../helpers/cluster-load.ts';
import { startCluster } from '../helpers/cluster.ts';
import { skipWithout } from '../helpers/tools.ts';
import { until } from '../helpers/until.ts';

const CLIENTS = 8;

test('kill -9 of one instance under load through the proxy loses no acknowledged create; reads go on (README, Running several instances)', async (t) => {
  if (skipWithout(t, 'haproxy')) return;
  const cluster = await startCluster();
  const victim = cluster.instances[0];
  assert.ok(victim !== undefined);
  const progress = newLoadResult();
  // Load before the kill, and after the proxy has marked the instance down.
  const acknowledged = (n: number, what: string) =>
    until(() => progress.acknowledged.length >= n, { timeoutMs: 30_000, what: `${n} creates acknowledged ${what}` });
  const run = (async () => {
    await acknowledged(10, 'before the kill');
    victim.proc.kill('SIGKILL');
    await victim.stop();
    await cluster.proxy.waitFor(0, 'DOWN');
    await acknowledged(progress.acknowledged.length + 10, 'once the instance is down');
  })();
  const load = await loadThroughProxy({
    result: progress,
    port: cluster.port,
    token: cluster.token,
    clients: CLIENTS,
    until: run,
    retryCreates: false,
  });
  await run;
  const view = await cluster.proxy.view();
  t.diagnostic(
    `${load.acknowledged.length} creates acknowledged, ${load.unacknowledged.length} not (${load.unacknowledged.map((u) => u.last).join(', ')}), ${load.reads} reads; HAProxy: ${JSON.stringify(view)}`,
  );
  assert.ok(load.acknowledged.length >= 20, 'too little load to mean anything');
  // A read the killed instance did not answer is sent again to the other one by the proxy.
  assert.deepEqual(load.failedReads, []);
  // A create in flight there is not (it may have been written): at most one per client, each
  // a 502, or the connection closed as the instance closed it (HAProxy's way on a keep-alive
  // connection, where a client may retry).
  assert.ok(load.unacknowledged.length <= CLIENTS, JSON.stringify(load.unacknowledged));
  for (const u of load.unacknowledged) assert.match(u.last, /^(502|ECONNRESET)$/);

  // Back up, then every acknowledged create is there, through the proxy, whichever instance answers.
  await cluster.startAgain(0);
  for (const p of load.acknowledged) {
    const got = await exchange(false, cluster.port, 'GET', `/api/v1/raw.php?hash=${p.hash}`, {
      authorization: `Bearer ${cluster.token}`,
    });
    assert.deepEqual([got.status, got.text], [200, p.content], p.hash);
  }
  // A create whose answer was lost is settled by its retry: the same key gives one paste, whole.
  for (const u of load.unacknowledged) {
    const again = await exchange(
      false,
      cluster.port,
      'POST',
      '/api/v1/paste_create.php',
      { authorization: `Bearer ${cluster.token}`, 'content-type': 'application/json', 'idempotency-key': u.key },
      JSON.stringify({ content: u.content }),
    );
    assert.equal(again.status, 200, again.text);
    const hash = (JSON.parse(again.text) as { hash: string }).hash;
    const got = await exchange(false, cluster.port, 'GET', `/api/v1/raw.php?hash=${hash}`, {
      authorization: `Bearer ${cluster.token}`,
    });
    assert.equal(got.text, u.content);
  }
});
