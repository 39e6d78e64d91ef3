import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cli, makeToken, req, startServer, type AppServer } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';

/** Polls until `ok` holds, and answers how long that took (ms); fails past `limitMs`. */
const within = (limitMs: number, ok: () => Promise<boolean>, what: string): Promise<number> =>
  until(ok, { timeoutMs: limitMs, what, everyMs: 10 });

const read = (s: AppServer, token: string, hash: string) => req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });

describe('a change made by another process is honoured within 1 second (README, Running on PostgreSQL)', () => {
  test('the CLI revoking a token, disabling a user and deleting a paste, seen by a running server', async () => {
    const s = await startServer();
    const token = await makeToken(s.dataDir, { user: 'alice' });
    const other = await makeToken(s.dataDir, { user: 'bob' });
    const made = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'hello' } });
    const hash = made.json?.['hash'] as string;
    assert.equal((await read(s, token, hash)).status, 200);

    // The server's copy of the accounts is warm; the CLI changes them in another connection.
    const id = token.slice(4, 12);
    await cli(s.dataDir, ['token', 'revoke', id]);
    const revoked = await within(1_000, async () => (await read(s, token, hash)).status === 401, 'the revoked token');

    assert.equal((await read(s, other, hash)).status, 200);
    await cli(s.dataDir, ['user', 'disable', 'bob']);
    const disabled = await within(1_000, async () => (await read(s, other, hash)).status === 401, 'the disabled user');

    const admin = await makeToken(s.dataDir, { user: 'root', admin: true, scopes: 'read,write,admin' });
    assert.equal((await read(s, admin, hash)).status, 200);
    // Another server on the same database deletes the paste: this one answers 404 at once.
    const second = await startServer({ dataDir: s.dataDir });
    const deleted = await req(second, 'POST', '/api/v1/paste_delete.php', { token: admin, body: { hash } });
    assert.equal(deleted.status, 200);
    const gone = await within(1_000, async () => (await read(s, admin, hash)).status === 404, 'the deleted paste');
    assert.ok(revoked < 1_000 && disabled < 1_000 && gone < 1_000, JSON.stringify({ revoked, disabled, gone }));
  });
});
