import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cleanup, startServer, type TestServer } from '../helpers/server.ts';
import { register, WebClient } from '../helpers/web-client.ts';

// What only the data folder has: an accounts.json an operator can edit by hand. The rest of
// the account tests run on both backends (accounts.test.ts).

const servers: TestServer[] = [];
async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const s = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '1000', ...env } });
  servers.push(s);
  return s;
}
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all([...new Set(servers.map((s) => s.dataDir))].map(cleanup));
});

describe('sessions across restarts', () => {
  test('a session whose user was removed from the accounts file ends at once', async () => {
    const s = await server({ OPEN_REGISTRATION: '1' });
    await register(new WebClient(s), 'stays');
    const c = new WebClient(s);
    await register(c, 'leaves');
    const file = join(s.dataDir, 'accounts.json');
    const doc = JSON.parse(await readFile(file, 'utf8')) as { users: { name: string }[] };
    doc.users = doc.users.filter((u) => u.name !== 'leaves');
    await writeFile(file, JSON.stringify(doc));
    const r = await c.get('/my');
    assert.equal(r.status, 302);
    assert.equal(c.cookies.has('paste_sid'), false);
  });
});
