import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { seedExpiring } from '../helpers/expiring.ts';
import { cleanup, makeToken, req, spawnServer, tempDataDir } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';

/** Index entries due by now: what the sweep has left to visit. */
const dueEntries = async (dataDir: string): Promise<number> => {
  let n = 0;
  for (const bucket of await readdir(join(dataDir, 'expiry')))
    for (const entry of await readdir(join(dataDir, 'expiry', bucket)))
      if (Number(entry.split('-')[0]) <= Date.now()) n++;
  return n;
};

/**
 * `npm run test:faults`: 20,000 pastes expired at once. While the server sweeps them (many
 * seconds of durable writes), its view counts are saved and its claim kept fresh, a second
 * server is refused, and after kill -9 the counts are all there.
 */
test('a sweep of 40,000 expired pastes: counts saved, the claim fresh, a second server refused', {
  timeout: 300_000,
}, async () => {
  const dir = await tempDataDir();
  try {
    // A first start writes format.json, so the seeded folder is not taken for an old one.
    await (await spawnServer({ dataDir: dir })).stop();
    const hashes = await seedExpiring(dir, 40_000, Date.now() - 1_000);
    const server = await spawnServer({ dataDir: dir });
    const started = Date.now();
    const token = await makeToken(dir);
    const kept = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'stays' } })).json['hash'],
    );
    for (let i = 0; i < 20; i++)
      assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${kept}`, { token })).status, 200);
    // The first upkeep tick after the reads (every 5 s) saves their counts: as soon as they are
    // on disk, the sweep must still be under way and the claim fresh. Polled, so a fast disk
    // that sweeps sooner than a slow one is checked as early as the counts allow.
    const saved = async (): Promise<boolean> => {
      const views = await readFile(join(dir, 'state', 'views.json'), 'utf8').catch(() => '');
      const file = await readFile(join(dir, 'pastes', kept.slice(0, 2), `${kept.slice(0, 6)}.json`), 'utf8');
      return views.includes(kept) || file.includes('"view_count":20,');
    };
    await until(saved, {
      timeoutMs: 20_000 - (Date.now() - started),
      what: 'the counts saved within 20 s of the start',
    });
    const left = await dueEntries(dir);
    assert.ok(left > 0, `the sweep is still under way when the counts were saved, ${Date.now() - started} ms in`);
    const age = Date.now() - (await stat(join(dir, 'server.pid'))).mtimeMs;
    assert.ok(age < 6_500, `server.pid refreshed ${age} ms ago, mid-sweep`);
    await assert.rejects(spawnServer({ dataDir: dir }), /is using this data folder/);

    await server.stop('SIGKILL');
    const again = await spawnServer({ dataDir: dir });
    const read = await req(again, 'GET', `/api/v1/paste.php?hash=${kept}`, { token });
    assert.equal((read.json['paste'] as Record<string, number>)['view_count'], 21);
    await until(async () => (await dueEntries(dir)) === 0, {
      timeoutMs: 240_000,
      what: 'the restarted server to finish the sweep',
      everyMs: 1_000,
    });
    assert.equal((await req(again, 'GET', `/api/v1/paste.php?hash=${hashes[0]}`, { token })).status, 410);
    console.log(
      `# the sweep left ${left} of 40000 when the counts were saved; all done ${Date.now() - started} ms after the start`,
    );
    await again.stop();
  } finally {
    await cleanup(dir);
  }
});
