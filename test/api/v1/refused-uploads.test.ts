import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { before, describe, test } from 'node:test';
import { multipart } from '../../helpers/multipart-body.ts';
import { type AppServer, makeToken, req, type Res, startServer } from '../../helpers/server.ts';
import { spooledUploads } from '../../helpers/stored.ts';
import { until } from '../../helpers/until.ts';
import { registerAll, WebClient } from '../../helpers/web-client.ts';

/**
 * An upload refused after its body (or part of it) was spooled leaves nothing in the spool
 * folder (`DATA_DIR/tmp/upload-…`) by the time the answer comes, on the API and on the web
 * form, whichever step refused it (README, Files).
 */

const LIMITS = { MAX_FILE_BYTES: '65536', USER_QUOTA_BYTES: '50000', ANONYMOUS_PASTES: '1' };
const FILE = { name: 'a.bin', bytes: Buffer.alloc(20_000, 7) };

let server: AppServer;
let token: string;

before(async () => {
  server = await startServer({ env: LIMITS });
  token = await makeToken(server.dataDir, { user: 'alice' });
});

function send(
  path: string,
  fields: Record<string, string>,
  opts: { token?: string; headers?: Record<string, string>; files?: { name: string; bytes: Buffer }[] } = {},
): Promise<Res> {
  const m = multipart(fields, opts.files ?? [FILE]);
  return req(server, 'POST', path, {
    ...(opts.token === undefined ? {} : { token: opts.token }),
    body: m.body,
    headers: { 'content-type': m.type, ...opts.headers },
  });
}

/** Nothing spooled is left at the moment the answer has come: not later, at once. */
async function nothingSpooled(s: AppServer, what: string): Promise<void> {
  assert.deepEqual(await spooledUploads(s.dataDir), [], `${what}: the spool folder is empty once answered`);
}

describe('the API removes what a refused multipart request spooled before it answers', () => {
  test('a bad token (401) and a create without one that may not bring files (403)', async () => {
    const bad = await send('/api/v1/paste_create.php', { content: 'x' }, { token: 'not-a-token-at-all-0000' });
    assert.equal(bad.status, 401, bad.text);
    await nothingSpooled(server, '401');
    const anonymous = await send('/api/v1/paste_create.php', { content: 'x' });
    assert.equal(anonymous.status, 403, anonymous.text);
    await nothingSpooled(server, '403 anonymous files');
  });

  test('a bad field (400) and a malformed query string (400) read after the body', async () => {
    const field = await send('/api/v1/paste_create.php', { content: 'x', privacy: 'everyone' }, { token });
    assert.equal(field.status, 400, field.text);
    await nothingSpooled(server, '400 field');
    const query = await send('/api/v1/paste_create.php?title=%zz', { content: 'x' }, { token });
    assert.equal(query.status, 400, query.text);
    await nothingSpooled(server, '400 query');
  });

  test('past the quota (413 quota_exceeded)', async () => {
    const files = [FILE, { name: 'b.bin', bytes: Buffer.alloc(20_000, 8) }, { name: 'c.bin', bytes: FILE.bytes }];
    const r = await send('/api/v1/paste_create.php', { content: 'x' }, { token, files });
    assert.equal(r.status, 413, r.text);
    assert.equal(r.json['code'], 'quota_exceeded');
    await nothingSpooled(server, '413 quota');
  });

  test('an edit whose If-Match names another revision (412)', async () => {
    const made = await send('/api/v1/paste_create.php', { content: 'x' }, { token, files: [] });
    assert.equal(made.status, 200, made.text);
    const hash = made.json['hash'] as string;
    const r = await send('/api/v1/paste_edit.php', { hash }, { token, headers: { 'if-match': '"stale"' } });
    assert.equal(r.status, 412, r.text);
    await nothingSpooled(server, '412');
  });

  test('an Idempotency-Key replayed (its first answer) and reused for another body (422)', async () => {
    const key = { 'idempotency-key': `spool-${Math.random()}` };
    const small = { name: 's.bin', bytes: Buffer.from('small') };
    const first = await send('/api/v1/paste_create.php', { content: 'x' }, { token, headers: key, files: [small] });
    assert.equal(first.status, 200, first.text);
    const replay = await send('/api/v1/paste_create.php', { content: 'x' }, { token, headers: key, files: [small] });
    assert.equal(replay.status, 200, replay.text);
    assert.equal(replay.json['hash'], first.json['hash']);
    await nothingSpooled(server, 'replay');
    const other = await send('/api/v1/paste_create.php', { content: 'y' }, { token, headers: key, files: [small] });
    assert.equal(other.status, 422, other.text);
    await nothingSpooled(server, '422');
  });

  test('a client that leaves in the middle of a part', async () => {
    const socket = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
        'Content-Type: multipart/form-data; boundary=cut\r\nContent-Length: 60000\r\n\r\n' +
        '--cut\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n',
    );
    socket.write(Buffer.alloc(30_000, 3));
    await until(async () => (await spooledUploads(server.dataDir)).length > 0, { what: 'the part spooled' });
    socket.destroy();
    // No answer comes to a client that left: the condition is waited for instead.
    await until(async () => (await spooledUploads(server.dataDir)).length === 0, { what: 'the cut part removed' });
  });
});

describe('the web form removes what a refused multipart form spooled before it answers', () => {
  let web: AppServer;
  let alice: WebClient;

  before(async () => {
    web = await startServer({
      env: { ...LIMITS, OPEN_REGISTRATION: '1', ANONYMOUS_FILES: '1' },
    });
    [alice] = await registerAll(web, 'alice');
  });

  const postForm = (c: WebClient, path: string, fields: Record<string, string>, csrf = true): Promise<Res> => {
    const { body, type } = multipart(csrf ? { _csrf: c.csrf, ...fields } : fields, [FILE]);
    return req(web, 'POST', path, { headers: { cookie: c.cookieHeader(), 'content-type': type }, body });
  };

  test('a form without its CSRF token (403), and one sent to the login page (303)', async () => {
    const c = alice as WebClient;
    await c.get('/');
    const r = await postForm(c, '/', { content: 'x' }, false);
    assert.equal(r.status, 403, r.text);
    await nothingSpooled(web, 'web 403');
    // Files are read from a visitor without a session (ANONYMOUS_FILES), who may not edit.
    const visitor = new WebClient(web);
    await visitor.get('/');
    const away = await postForm(visitor, '/p/AAAAAAAAAA/edit', { content: 'x' });
    assert.equal(away.status, 303, away.text);
    assert.match(String(away.headers['location']), /^\/login\?next=/);
    await nothingSpooled(web, 'web login redirect');
  });

  test('a bad field (400) and past the quota (413) show the form again', async () => {
    const c = alice as WebClient;
    await c.get('/');
    const bad = await postForm(c, '/', { content: 'x', privacy: 'everyone', expiry: 'never' });
    assert.equal(bad.status, 400, bad.text);
    await nothingSpooled(web, 'web 400');
    await c.get('/');
    const three = multipart({ _csrf: c.csrf, content: 'x', privacy: 'public', expiry: 'never' }, [
      FILE,
      { name: 'b.bin', bytes: FILE.bytes },
      { name: 'c.bin', bytes: FILE.bytes },
    ]);
    const over = await req(web, 'POST', '/', {
      headers: { cookie: c.cookieHeader(), 'content-type': three.type },
      body: three.body,
    });
    assert.equal(over.status, 413, over.text);
    await nothingSpooled(web, 'web 413');
  });
});
