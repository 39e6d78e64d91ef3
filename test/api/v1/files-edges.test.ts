import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { type AppServer, makeToken, req, type Res, startServer } from '../../helpers/server.ts';
import { multipart } from '../../helpers/multipart-body.ts';

// What a client of the API meets at the edges of files (README, Files; docs/files.md): who may
// fetch one, how odd but legal multipart bodies are read, and what a refusal says.

let server: AppServer;
let token: string;
let other: string;

before(async () => {
  server = await startServer();
  token = await makeToken(server.dataDir, { user: 'alice' });
  other = await makeToken(server.dataDir, { user: 'bob' });
});

function send(path: string, m: { body: Buffer; type: string }, as: string | undefined = token): Promise<Res> {
  return req(server, 'POST', path, {
    ...(as === undefined ? {} : { token: as }),
    body: m.body,
    headers: { 'content-type': m.type },
  });
}

async function createWith(fields: Record<string, string>, files: { name: string; bytes: Buffer }[]): Promise<string> {
  const r = await send('/api/v1/paste_create.php', multipart(fields, files));
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
}

/** file.php as `as` (null: with no token at all). */
const file = (hash: string, name: string, as: string | null = token, query = ''): Promise<Res> =>
  req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(name)}${query}`, {
    ...(as === null ? {} : { token: as }),
  });

describe('file.php asks for a token as paste.php does', () => {
  test('without one it is 401 before the paste is looked up, private or not; a grant alone is its key', async () => {
    const open = await createWith({ content: 'o' }, [{ name: 'a.txt', bytes: Buffer.from('open') }]);
    const priv = await createWith({ content: 'p', privacy: 'private' }, [{ name: 'a.txt', bytes: Buffer.from('p') }]);
    for (const hash of [open, priv, 'AAAAAAAAAA']) {
      const r = await file(hash, 'a.txt', null);
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json['code'], 'unauthorized');
    }
    assert.equal((await file('bad', 'a.txt', null)).status, 401, 'authentication comes before the hash check');
    assert.equal((await file(open, 'a.txt', other)).text, 'open');
    // A burned paste's file: its grant, with no token at all.
    const once = await createWith({ content: 'b', burn_after_read: '1' }, [{ name: 'a.txt', bytes: Buffer.from('g') }]);
    const read = await req(server, 'GET', `/api/v1/paste.php?hash=${once}`, { token: other });
    const url = new URL(((read.json['paste'] as { files: { url: string }[] }).files[0] as { url: string }).url);
    const got = await req(server, 'GET', url.pathname + url.search, {});
    assert.equal(got.status, 200, got.text);
    assert.equal(got.text, 'g');
  });
});
