import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseExpires } from '../../../src/cli.ts';
import { cli, req, startServer } from '../../helpers/server.ts';
import { registerAll } from '../../helpers/web-client.ts';

const HOUR = 3_600_000;

describe('tokens that end', () => {
  test('a CLI token with --expires works until then, then answers 401 token_expired, and token list says so', async () => {
    const server = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '3' } });
    await cli(server.dataDir, ['user', 'add', 'alice']);
    const token = await cli(server.dataDir, [
      'token',
      'create',
      '--user',
      'alice',
      '--scopes',
      'read,write',
      '--expires',
      '2h',
    ]);
    const forever = await cli(server.dataDir, ['token', 'create', '--user', 'alice', '--scopes', 'read']);
    const create = () => req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x' } });
    assert.equal((await create()).status, 200);
    server.clock.advance(2 * HOUR + 1_000);
    const late = await create();
    assert.equal(late.status, 401);
    assert.equal(late.json['code'], 'token_expired');
    assert.match(
      String(late.json.error),
      /^This API token expired on \d{4}-\d\d-\d\d \d\d:\d\d UTC; create a new one$/,
    );
    assert.equal(
      (await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: forever })).status,
      404,
      'a token without expiry goes on',
    );
    // An expired token is a failed attempt: it spends the address's budget like a revoked one.
    await create();
    await create();
    assert.equal((await create()).status, 429);
    const list = await cli(server.dataDir, ['token', 'list']);
    assert.match(
      list,
      /expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/m,
      'the CLI uses the real clock: not expired there yet',
    );
    assert.match(list, /never$/m);
  });

  test('--expires takes a number and h, d, w or y, or never', () => {
    const now = 1_000_000;
    assert.equal(parseExpires('30d', now), now + 30 * 24 * HOUR);
    assert.equal(parseExpires('12h', now), now + 12 * HOUR);
    assert.equal(parseExpires('2w', now), now + 14 * 24 * HOUR);
    assert.equal(parseExpires('1y', now), now + 365 * 24 * HOUR);
    assert.equal(parseExpires('never', now), null);
    assert.equal(parseExpires(undefined, now), null);
    for (const bad of ['0d', '30', 'd', '1m', '-1d', ' 1d', '100000d'])
      assert.throws(() => parseExpires(bad, now), /--expires must be/, bad);
  });

  test('My API Keys: a lifetime is chosen at creation (90 days unless changed), shown on the row, and enforced', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const form = await alice.get('/api_keys.php');
    assert.match(form.text, /<option value="90" selected>90 days<\/option>/);
    const posted = await alice.post('/api_keys.php', {
      action: 'create',
      label: 'week',
      scope_read: '1',
      scope_write: '1',
      rate: '60',
      expires: '7',
    });
    assert.equal(posted.status, 303);
    const made = await alice.get(posted.location ?? '');
    const secret = /id="new-secret" class="copyable" value="([^"]+)"/.exec(made.text)?.[1] ?? '';
    assert.match(secret, /^pst_/);
    assert.match(made.text, /<td data-label="Expires"><time/);
    const bad = await alice.post('/api_keys.php', {
      action: 'create',
      label: 'odd',
      scope_read: '1',
      rate: '0',
      expires: '3',
    });
    assert.equal(bad.status, 400);
    assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: secret })).status, 404);
    // The row shows when, and from which address, the token was last used.
    assert.match((await alice.get('/api_keys.php')).text, /from <span class="mono">127\.0\.0\.1<\/span>/);
    server.clock.advance(8 * 24 * HOUR);
    assert.equal(
      (await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: secret })).json['code'],
      'token_expired',
    );
    assert.match((await alice.get('/api_keys.php')).text, /<span class="badge badge-bad">expired<\/span>/);
  });
});
