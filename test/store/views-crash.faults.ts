import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanup, makeToken, req, spawnServer, type ProcessServer } from '../helpers/server.ts';

/** One more than the upkeep period (5 s): by then every count read before it is on disk. */
const TICK_MS = 6_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Each paste's view count as paste.php reports it (that read counts itself: one is taken off). */
async function counts(server: ProcessServer, token: string, hashes: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const hash of hashes) {
    const r = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    out.push(Number((r.json['paste'] as Record<string, number>)['view_count']) - 1);
  }
  return out;
}

test('view counts of 250 pastes survive kill -9 a tick after the reads, and a kill right after a clean restart', async () => {
  const server = await spawnServer();
  let current: ProcessServer = server;
  try {
    const token = await makeToken(server.dataDir);
    const hashes: string[] = [];
    // More pastes than one upkeep tick folds into their files (100): the rest must be saved.
    for (let i = 0; i < 250; i++)
      hashes.push(
        String(
          (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: `p${i}` } })).json['hash'],
        ),
      );
    const expected = hashes.map((_, i) => (i % 4) + 1);
    // 625 reads, eight clients at a time.
    const reads = hashes.flatMap((hash, i) => Array.from({ length: expected[i] ?? 0 }, () => hash));
    await Promise.all(
      Array.from({ length: 8 }, async (_, c) => {
        for (let k = c; k < reads.length; k += 8)
          await req(server, 'GET', `/api/v1/raw.php?hash=${reads[k]}`, { token });
      }),
    );
    // The promise is "a crash loses at most the last tick's counts": one tick of real time is
    // the behaviour here, in a process of its own whose clock the test cannot move.
    await sleep(TICK_MS);
    server.proc.kill('SIGKILL');
    await server.stop();

    current = await spawnServer({ dataDir: server.dataDir });
    assert.deepEqual(await counts(current, token, hashes), expected, 'after kill -9');
    // The checking reads count too.
    const checked = expected.map((n) => n + 1);

    // A clean restart, then a kill within the first second: the saved counts are still there, once.
    assert.equal(await current.stop(), 0);
    current = await spawnServer({ dataDir: server.dataDir });
    current.proc.kill('SIGKILL');
    await current.stop();
    current = await spawnServer({ dataDir: server.dataDir });
    assert.deepEqual(await counts(current, token, hashes), checked, 'after a clean restart and a kill');
  } finally {
    await current.stop();
    await cleanup(server.dataDir);
  }
});
