import assert from 'node:assert/strict';
import { readdir, readFile, stat, unlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { seedExpiring } from './helpers/expiring.ts';
import { makeToken, req, startServer } from './helpers/server.ts';
import { until } from './helpers/until.ts';

/** Index entries due by `now`: what the sweep has left to visit. */
const dueEntries = async (dataDir: string, now: number): Promise<number> => {
  let n = 0;
  for (const bucket of await readdir(join(dataDir, 'expiry')))
    for (const entry of await readdir(join(dataDir, 'expiry', bucket))) if (Number(entry.split('-')[0]) <= now) n++;
  return n;
};

describe('the expiry sweep', () => {
  test('runs in slices beside the upkeep: view counts are saved and the claim kept while a long sweep is half done', async () => {
    let held: () => void = () => undefined;
    const halfDone = new Promise<void>((resolve) => (held = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const server = await startServer({
      upkeep: {
        everyMs: 20,
        claimEveryMs: 20,
        sweepSlice: 50,
        betweenSlices: async () => {
          held();
          await released;
        },
      },
    });
    const dataDir = server.dataDir;
    // Written behind the server's back: it finds them through the expiry index, as after a restart.
    const expiring = await seedExpiring(dataDir, 300, Date.now() + 60_000);
    const token = await makeToken(dataDir);
    const kept = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'stays' } })).json['hash'],
    );
    const claim = join(dataDir, 'server.pid');
    const old = new Date(Date.now() - 600_000);
    await utimes(claim, old, old);

    let paused = false;
    void halfDone.then(() => (paused = true));
    server.clock.advance(120_000);
    await until(() => paused, { what: 'the sweep to pause between slices (else it ran in one piece)' });
    assert.equal(await dueEntries(dataDir, server.clock.now()), 250, 'one slice of 50 done, the rest waiting');

    // While the sweep is held half done, the rest of the upkeep goes on.
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${kept}`, { token })).status, 200);
    // The count reaches the disk: saved to views.json, or already folded into the paste's file.
    const pasteFile = join(dataDir, 'pastes', kept.slice(0, 2), `${kept.slice(0, 6)}.json`);
    await until(
      async () =>
        (await readFile(join(dataDir, 'state', 'views.json'), 'utf8').catch(() => '')).includes(kept) ||
        (await readFile(pasteFile, 'utf8')).includes('"view_count":1,'),
      { what: 'the new view count to be saved' },
    );
    await until(async () => Date.now() - (await stat(claim)).mtimeMs < 5_000, { what: 'server.pid to be refreshed' });
    // A claim found gone is written again.
    await unlink(claim);
    await until(async () => (await readFile(claim, 'utf8').catch(() => '')) !== '', {
      what: 'server.pid to be written again',
    });
    assert.equal(await dueEntries(dataDir, server.clock.now()), 250, 'the sweep is still held');

    release();
    await server.upkeep();
    assert.equal(await dueEntries(dataDir, server.clock.now()), 0);
    for (const hash of [expiring[0], expiring[299]]) {
      const r = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
      assert.equal(r.status, 410, r.text);
    }
    const read = await req(server, 'GET', `/api/v1/paste.php?hash=${kept}`, { token });
    assert.equal((read.json['paste'] as Record<string, number>)['view_count'], 2);
  });
});
