import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cli, req, startServer } from '../../helpers/server.ts';
import { apiLogLines } from '../../helpers/stored.ts';

test('a refused token that is (or was) ours is logged by its id, never its secret; a made-up one by none', async () => {
  const server = await startServer();
  await cli(server.dataDir, ['user', 'add', 'alice']);
  const revoked = await cli(server.dataDir, ['token', 'create', '--user', 'alice', '--scopes', 'read']);
  const expiring = await cli(server.dataDir, [
    'token',
    'create',
    '--user',
    'alice',
    '--scopes',
    'read',
    '--expires',
    '1h',
  ]);
  const idOf = (secret: string): string => secret.split('_')[1] ?? '';
  await cli(server.dataDir, ['token', 'revoke', idOf(revoked)]);
  server.clock.advance(2 * 3_600_000);
  const wrongSecret = `pst_${idOf(expiring)}_${'x'.repeat(32)}`;
  for (const token of [revoked, expiring, wrongSecret, `pst_ZZZZZZZZ_${'y'.repeat(32)}`]) {
    assert.equal((await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token })).status, 401);
  }
  await server.stop();
  const lines = await apiLogLines(server.dataDir);
  const text = JSON.stringify(lines);
  assert.deepEqual(
    lines.map((l) => l['token_id']),
    [idOf(revoked), idOf(expiring), idOf(expiring), null],
  );
  for (const secret of [revoked, expiring, wrongSecret])
    assert.ok(!text.includes(secret.split('_')[2] ?? '?'), 'no secret in the log');
});
