import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeToken, req, startServer } from '../../helpers/server.ts';
import { storedPaste } from '../../helpers/stored.ts';
import { registerAll, WebClient } from '../../helpers/web-client.ts';

describe('burn receipts', () => {
  test('the owner learns when and how a one-time paste was read; others get the plain 410; the content never comes back', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const aliceToken = await makeToken(server.dataDir, { user: 'alice' });
    const bobToken = await makeToken(server.dataDir, { user: 'bob' });
    const bobId = bobToken.split('_')[1] ?? '';
    const create = async (): Promise<string> =>
      String(
        (
          await req(server, 'POST', '/api/v1/paste_create.php', {
            token: aliceToken,
            body: { content: 'the secret', burn_after_read: 1 },
          })
        ).json['hash'],
      );

    // Read through the API by Bob's token.
    const viaApi = await create();
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${viaApi}`, { token: bobToken })).text, 'the secret');
    const owner = await req(server, 'GET', `/api/v1/paste.php?hash=${viaApi}`, { token: aliceToken });
    assert.equal(owner.status, 410);
    assert.match(String(owner.json.error), /burned/);
    const receipt = owner.json['receipt'] as Record<string, unknown>;
    assert.equal(receipt['via'], 'api');
    assert.equal(receipt['token_id'], bobId);
    assert.match(String(receipt['read_at']), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const other = await req(server, 'GET', `/api/v1/paste.php?hash=${viaApi}`, { token: bobToken });
    assert.equal(other.status, 410);
    assert.equal(other.json['receipt'], undefined, 'only the owner sees the receipt');
    assert.doesNotMatch(owner.text + other.text, /the secret/);

    // Read on the web by an anonymous visitor who saw the warning page.
    const viaWeb = await create();
    const visitor = new WebClient(server);
    await visitor.get(`/p/${viaWeb}`);
    assert.match((await visitor.post(`/p/${viaWeb}`, {})).text, /the secret/);
    const webReceipt = (await req(server, 'GET', `/api/v1/paste.php?hash=${viaWeb}`, { token: aliceToken })).json[
      'receipt'
    ] as Record<string, unknown>;
    assert.deepEqual([webReceipt['via'], webReceipt['token_id']], ['web', null]);

    // My pastes shows both, and the stored tombstone holds the receipt but no content.
    const mine = await alice.get('/my');
    assert.match(mine.text, new RegExp(`through the API with token <code>${bobId}</code>`));
    assert.match(mine.text, /Read <time[^>]*>[^<]*<\/time> on the web\./);
    const stored = await storedPaste(server.dataDir, viaApi);
    assert.ok(stored);
    assert.doesNotMatch(JSON.stringify(stored), /the secret/);
    const storedReceipt = stored['receipt'] as Record<string, unknown>;
    assert.ok(Number.isInteger(storedReceipt['at']));
    assert.deepEqual({ ...storedReceipt, at: 0 }, { at: 0, via: 'api', token_id: bobId });

    // It outlives a restart.
    await server.stop();
    const again = await startServer({ dataDir: server.dataDir });
    const later = await req(again, 'GET', `/api/v1/paste.php?hash=${viaApi}`, { token: aliceToken });
    assert.equal((later.json['receipt'] as Record<string, unknown>)['token_id'], bobId);
  });
});
