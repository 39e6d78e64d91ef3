import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type AppServer, type Res } from '../../helpers/server.ts';

/**
 * A fault nobody planned for, made by turning a paste file into a folder: the data folder's
 * own (statuses.test.ts holds the rest).
 */

let server: AppServer;
let token: string;

before(async () => {
  server = await startServer({ env: { MAX_PASTE_BYTES: '1000', AUTH_FAIL_LIMIT_PER_MINUTE: '1000' } });
  token = await makeToken(server.dataDir, { user: 'alice' });
});

function assertError(r: Res, status: number, message?: RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.ok, false);
  assert.equal(typeof r.json.error, 'string');
  assert.ok((r.json.error as string).length > 0);
  if (message) assert.match(r.json.error as string, message);
  assert.match(String(r.headers['content-type']), /^application\/json/);
}

const create = async (body: Record<string, unknown>, t = token): Promise<string> => {
  const r = await req(server, 'POST', '/api/v1/paste_create.php', { token: t, body });
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
};

describe('500 Internal Server Error', () => {
  test('a fault answers a generic message and keeps the detail in the server log', async () => {
    const hash = await create({ content: 'to be unreadable' });
    const other = await startServer({ dataDir: server.dataDir });
    await other.stop();
    // The paste's file made a folder: reading it fails with EISDIR, a fault nobody planned for.
    const file = join(server.dataDir, 'pastes', hash.slice(0, 2), `${hash.slice(0, 6)}.json`);
    await rm(file);
    await mkdir(file);
    const fresh = await startServer({ dataDir: server.dataDir });
    try {
      const r = await req(fresh, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
      assertError(r, 500, /^Internal server error$/);
      assert.match(fresh.output(), /EISDIR/);
    } finally {
      await fresh.stop();
    }
  });
});
