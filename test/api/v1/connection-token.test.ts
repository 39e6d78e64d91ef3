import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { describe, test } from 'node:test';
import { cli, makeToken, req, startServer, type AppServer } from '../../helpers/server.ts';

/**
 * A connection remembers the token secret that last matched on it, so the same secret
 * again is not hashed again (src/auth/authenticate.ts). Every change to the accounts must
 * still count on that very connection at once, and another secret on it is checked whole.
 */

interface Answer {
  status: number;
  code: unknown;
  /** Whether the request went out on a connection an earlier request had used. */
  reused: boolean;
}

/** One keep-alive connection to the server: every request goes out on it, one at a time. */
function connection(server: AppServer): {
  get(path: string, token: string | null, form?: string): Promise<Answer>;
  close(): void;
} {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    /** A GET, or with `form` a POST of that urlencoded body. */
    get: (path, token, form) =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
        if (form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
        const r = request(
          { host: '127.0.0.1', port: server.port, path, agent, method: form === undefined ? 'GET' : 'POST', headers },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { code?: unknown };
              resolve({ status: res.statusCode ?? 0, code: body.code, reused: r.reusedSocket });
            });
          },
        );
        r.on('error', reject);
        r.end(form);
      }),
    close: () => agent.destroy(),
  };
}

/** paste.php of a paste that does not exist: 404 once the token is accepted. */
const READ = '/api/v1/paste.php?hash=AAAAAAAAAA';

describe('a token on a keep-alive connection', () => {
  test('a revoked token, a disabled user and an expired token are refused on the connection that used them a moment before', async () => {
    const server = await startServer();
    const alice = await makeToken(server.dataDir, { user: 'alice' });
    const bob = await makeToken(server.dataDir, { user: 'bob' });
    const carol = await cli(server.dataDir, ['user', 'add', 'carol']).then(() =>
      cli(server.dataDir, ['token', 'create', '--user', 'carol', '--scopes', 'read', '--expires', '1h']),
    );
    const c = connection(server);
    try {
      assert.deepEqual(await c.get(READ, alice), { status: 404, code: 'not_found', reused: false });
      assert.deepEqual(await c.get(READ, alice), { status: 404, code: 'not_found', reused: true });
      await cli(server.dataDir, ['token', 'revoke', alice.split('_')[1] ?? '']);
      assert.deepEqual(await c.get(READ, alice), { status: 401, code: 'unauthorized', reused: true });

      assert.deepEqual(await c.get(READ, bob), { status: 404, code: 'not_found', reused: true });
      await cli(server.dataDir, ['user', 'disable', 'bob']);
      assert.deepEqual(await c.get(READ, bob), { status: 401, code: 'account_disabled', reused: true });
      await cli(server.dataDir, ['user', 'enable', 'bob']);
      assert.deepEqual(await c.get(READ, bob), { status: 404, code: 'not_found', reused: true });

      assert.deepEqual(await c.get(READ, carol), { status: 404, code: 'not_found', reused: true });
      server.clock.advance(3_600_000 + 1_000);
      assert.deepEqual(await c.get(READ, carol), { status: 401, code: 'token_expired', reused: true });
    } finally {
      c.close();
    }
  });

  test('a token whose scopes change (same id, same secret) acts with its new scopes on the connection that used the old ones', async () => {
    const server = await startServer();
    await makeToken(server.dataDir, { user: 'carol', admin: true });
    const alice = await makeToken(server.dataDir, { user: 'alice', admin: true, scopes: 'read,write,admin' });
    const bob = await makeToken(server.dataDir, { user: 'bob' });
    const made = await req(server, 'POST', '/api/v1/paste_create.php', {
      token: bob,
      body: { content: 'for bob only', privacy: 'private' },
    });
    assert.equal(made.status, 200);
    const read = `/api/v1/paste.php?hash=${String(made.json['hash'])}`;
    const c = connection(server);
    try {
      // An admin token sees another user's private paste.
      assert.deepEqual(await c.get(read, alice), { status: 200, code: undefined, reused: false });
      // Demoted, alice's token keeps its id and secret but loses the admin scope.
      await cli(server.dataDir, ['user', 'admin', 'alice', '--remove']);
      assert.deepEqual(await c.get(read, alice), { status: 404, code: 'not_found', reused: true });
    } finally {
      c.close();
    }
  });

  test('another secret on the same connection is checked whole: a near miss is refused, another token acts as itself', async () => {
    const server = await startServer();
    const alice = await makeToken(server.dataDir, { user: 'alice' });
    const reader = await makeToken(server.dataDir, { user: 'bob', scopes: 'read' });
    const c = connection(server);
    try {
      assert.equal((await c.get(READ, alice)).status, 404);
      // The same length, one character changed: in ASCII, to a Latin-1 letter, and (in the query
      // string, as a header cannot carry it) to a character whose low byte is the original's.
      const last = alice.at(-1) ?? '';
      const ascii = `${alice.slice(0, -1)}${last === 'a' ? 'b' : 'a'}`;
      for (const near of [ascii, `${alice.slice(0, -1)}\u00e1`, `${alice}x`, alice.slice(0, -1)]) {
        assert.deepEqual(await c.get(READ, near), { status: 401, code: 'unauthorized', reused: true }, near);
      }
      const wide = `${alice.slice(0, -1)}${String.fromCharCode(0x100 + last.charCodeAt(0))}`;
      assert.deepEqual(await c.get(`${READ}&token=${encodeURIComponent(wide)}`, null), {
        status: 401,
        code: 'unauthorized',
        reused: true,
      });
      assert.deepEqual(await c.get(`${READ}&token=${alice}`, null), { status: 404, code: 'not_found', reused: true });
      assert.deepEqual(await c.get(READ, alice), { status: 404, code: 'not_found', reused: true });
      // A read-only token after a writing one on the same connection has its own scopes.
      const del = '/api/v1/paste_delete.php';
      assert.deepEqual(await c.get(del, reader, 'hash=AAAAAAAAAA'), { status: 403, code: 'forbidden', reused: true });
      assert.deepEqual(await c.get(del, alice, 'hash=AAAAAAAAAA'), { status: 404, code: 'not_found', reused: true });
      assert.deepEqual(await c.get(READ, reader), { status: 404, code: 'not_found', reused: true });
    } finally {
      c.close();
    }
  });
});
