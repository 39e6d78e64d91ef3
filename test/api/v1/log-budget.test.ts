import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_CHARS } from '../../../src/log/entry.ts';
import { UNAUTHENTICATED_LINES_PER_MINUTE } from '../../../src/log/line-budget.ts';
import { makeToken, req, startServer, type AppServer } from '../../helpers/server.ts';
import { apiLogLines } from '../../helpers/stored.ts';

/** The API log's lines as stored (as JSON text), once the server has stopped (and so flushed them). */
async function rawLines(server: AppServer): Promise<string[]> {
  await server.stop();
  return (await apiLogLines(server.dataDir)).map((l) => JSON.stringify(l));
}
const parsed = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

test('the API log cuts a 15 KB path to 200 characters, with its length, in a line under a kilobyte', async () => {
  const server = await startServer();
  const path = `/api/v1/${'A'.repeat(15 * 1024)}`;
  assert.equal((await req(server, 'GET', path)).status, 404);
  const [line, ...rest] = await rawLines(server);
  assert.equal(rest.length, 0);
  assert.ok(line !== undefined && Buffer.byteLength(line) < 1024, `${line?.length} bytes`);
  const e = JSON.parse(line) as Record<string, unknown>;
  assert.equal(e['endpoint'], `${path.slice(0, MAX_CHARS.endpoint)}…`);
  assert.equal(e['endpoint_length'], path.length);
  assert.equal(e['status'], 404);
});

test('requests without a valid token are logged up to the client’s budget a minute, answered all the same; its next line tells how many were not', async () => {
  const server = await startServer({
    env: { TRUST_PROXY: '1', AUTH_FAIL_LIMIT_PER_MINUTE: '0', METRICS_TOKEN: 'scrape-token-0123456789' },
  });
  const token = await makeToken(server.dataDir);
  const from = (ip: string) => ({ 'x-forwarded-for': ip });
  const over = 15;
  const n = UNAUTHENTICATED_LINES_PER_MINUTE + over;
  for (let i = 0; i < n; i++) {
    // Unknown endpoints and missing tokens alike, from addresses of one /64.
    const r =
      i % 2 === 0
        ? await req(server, 'GET', `/api/v1/nope${i}`, { headers: from(`2001:db8:7:7::${i.toString(16)}`) })
        : await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { headers: from('2001:db8:7:7::1') });
    assert.equal(r.status, i % 2 === 0 ? 404 : 401, `request ${i} is answered`);
  }
  // Another /64, and a client with a token, are not held back by it.
  assert.equal((await req(server, 'GET', '/api/v1/nope', { headers: from('2001:db8:7:8::1') })).status, 404);
  const authenticated = UNAUTHENTICATED_LINES_PER_MINUTE + 5;
  for (let i = 0; i < authenticated; i++)
    await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token, headers: from('2001:db8:7:7::1') });
  // A second's refill buys one more line, which counts what was left out.
  server.clock.advance(60_000 / UNAUTHENTICATED_LINES_PER_MINUTE + 10);
  assert.equal((await req(server, 'GET', '/api/v1/nope-again', { headers: from('2001:db8:7:7::99') })).status, 404);

  const metrics = await req(server, 'GET', '/metrics', { token: 'scrape-token-0123456789' });
  assert.match(metrics.text, new RegExp(`^paste_api_log_lines_unlogged_total ${over}$`, 'm'));

  const lines = parsed(await rawLines(server));
  const home = lines.filter((l) => String(l['ip']).startsWith('2001:db8:7:7:') && l['token_id'] === null);
  assert.equal(home.length, UNAUTHENTICATED_LINES_PER_MINUTE + 1);
  assert.equal(home.filter((l) => 'unlogged' in l).length, 1);
  assert.deepEqual(home.at(-1)?.['endpoint'], '/api/v1/nope-again');
  assert.equal(home.at(-1)?.['unlogged'], over);
  assert.equal(lines.filter((l) => l['ip'] === '2001:db8:7:8::1').length, 1);
  assert.equal(lines.filter((l) => l['token_id'] !== null).length, authenticated);
});
