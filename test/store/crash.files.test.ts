import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { cleanup, makeToken, req, spawnServer } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';

test('kill -9 during a stream of creates loses no acknowledged paste and tears none', async () => {
  const server = await spawnServer();
  const token = await makeToken(server.dataDir);
  const acked = new Map<string, string>();
  let stop = false;

  // Four writers stream creates; the server is killed while requests are in flight.
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      const content = `writer ${w} paste ${i}\n${randomBytes(200 + ((w * 997 + i * 131) % 3000)).toString('base64')}\nü✓`;
      try {
        const r = await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content } });
        if (r.status === 200) acked.set(r.json['hash'] as string, content);
      } catch {
        return; // the connection died with the server: this one was never acknowledged
      }
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  await until(() => acked.size >= 60, { timeoutMs: 60_000, what: '60 acknowledged creates' });
  server.proc.kill('SIGKILL');
  stop = true;
  await Promise.all(writers);
  await server.stop();

  const again = await spawnServer({ dataDir: server.dataDir });
  try {
    for (const [hash, content] of acked) {
      const r = await req(again, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
      assert.equal(r.status, 200, `acknowledged paste ${hash} is missing`);
      assert.equal(r.text, content);
    }
    // Every file on disk is a whole paste, and the scratch folder was emptied at start.
    for (const shard of await readdir(join(again.dataDir, 'pastes'))) {
      for (const f of await readdir(join(again.dataDir, 'pastes', shard))) {
        const p = JSON.parse(await readFile(join(again.dataDir, 'pastes', shard, f), 'utf8')) as { hash: string };
        assert.match(p.hash, /^[A-Za-z0-9]{10}$/);
      }
    }
    assert.deepEqual(await readdir(join(again.dataDir, 'tmp')), []);
  } finally {
    await again.stop();
    await cleanup(server.dataDir);
  }
});
