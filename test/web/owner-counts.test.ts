import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TOMBSTONE_MS } from '../../src/paste/repository.ts';
import { makeToken, req, startServer } from '../helpers/server.ts';
import { login, registerAll, WebClient } from '../helpers/web-client.ts';

test("the Users page's paste count forgets a paste the expiry sweep removed, as it does a deleted one", async () => {
  const s = await startServer({ env: { OPEN_REGISTRATION: '1' } });
  try {
    await registerAll(s, 'root', 'bob');
    const token = await makeToken(s.dataDir, { user: 'bob', scopes: 'read,write' });
    const create = async (body: Record<string, unknown>): Promise<string> => {
      const r = await req(s, 'POST', '/api/v1/paste_create.php', { token, body });
      assert.equal(r.status, 200, r.text);
      return String(r.json['hash']);
    };
    await create({ content: 'gone soon', expiry: '10m' });
    const deleted = await create({ content: 'deleted' });
    await create({ content: 'kept' });
    // Signed in anew each time: the clock moves past any session's idle time.
    const count = async (): Promise<string | undefined> => {
      const admin = new WebClient(s);
      await login(admin, 'root');
      const page = await admin.get('/admin/users');
      return /<tr id="user-bob">[\s\S]*?data-label="Pastes" class="num">(\d+)</.exec(page.text)?.[1];
    };
    assert.equal(await count(), '3');
    assert.equal((await req(s, 'POST', '/api/v1/paste_delete.php', { token, body: { hash: deleted } })).status, 200);
    assert.equal(await count(), '2');
    // Expired, the paste is a tombstone that still counts; once the tombstone goes, so does the count.
    s.clock.advance(11 * 60_000);
    await s.upkeep();
    assert.equal(await count(), '2');
    s.clock.advance(TOMBSTONE_MS);
    await s.upkeep();
    assert.equal(await count(), '1');
  } finally {
    await s.stop();
  }
});
