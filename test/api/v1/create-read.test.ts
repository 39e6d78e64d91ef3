import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer();
  token = await makeToken(server.dataDir, { user: 'alice' });
});

const create = (body: Record<string, unknown>, form = false) =>
  req(server, 'POST', '/api/v1/paste_create.php', { token, body, form });

describe('paste_create.php', () => {
  test('creates a paste from JSON and answers hash, url and short_url', async () => {
    const r = await create({ title: 'Hello', content: 'console.log("hi")' });
    assert.equal(r.status, 200);
    assert.equal(r.json.ok, true);
    const hash = r.json['hash'] as string;
    assert.match(hash, /^[A-Za-z0-9]{10}$/);
    assert.equal(r.json['url'], `${server.url}/p/${hash}`);
    assert.match(r.json['short_url'] as string, new RegExp(`^${server.url}/s/[A-Za-z0-9]{6}$`));
    assert.match(String(r.headers['content-type']), /^application\/json/);
  });

  test('creates a paste from a form-urlencoded body', async () => {
    const r = await create(
      { title: 'Form & co', content: 'a+b = c\n100% sure', privacy: 'unlisted', language: 'markdown' },
      true,
    );
    assert.equal(r.status, 200, r.text);
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${r.json['hash']}`, { token });
    const paste = got.json['paste'] as Record<string, unknown>;
    assert.equal(paste['title'], 'Form & co');
    assert.equal(paste['content'], 'a+b = c\n100% sure');
    assert.equal(paste['privacy'], 'unlisted');
    assert.equal(paste['language'], 'markdown');
  });

  test('applies the defaults: public, never expires, language detected', async () => {
    const r = await create({ content: '#!/bin/bash\necho "hello"\n' });
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${r.json['hash']}`, { token });
    const paste = got.json['paste'] as Record<string, unknown>;
    assert.equal(paste['privacy'], 'public');
    assert.equal(paste['expire_at'], null);
    assert.equal(paste['language'], 'bash');
    assert.equal(paste['burn_after_read'], 0);
    assert.equal(paste['title'], '');
  });
});

describe('paste.php', () => {
  test('returns every field of the Paste object with its type', async () => {
    const before = Date.now();
    const c = await create({ title: 'Fields', content: 'def f():\n    return 1\n', language: 'python', expiry: '1h' });
    const hash = c.json['hash'] as string;
    const r = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    assert.equal(r.status, 200);
    assert.equal(r.json.ok, true);
    const p = r.json['paste'] as Record<string, unknown>;
    assert.deepEqual(Object.keys(p).sort(), [
      'burn_after_read',
      'content',
      'created_at',
      'expire_at',
      'files',
      'hash',
      'language',
      'owner',
      'privacy',
      'revision',
      'short_url',
      'title',
      'view_count',
    ]);
    assert.equal(p['revision'], 1, 'the paste object gains its revision number (README, Revisions)');
    assert.deepEqual(p['files'], [], 'a paste without files lists none (README, Files)');
    assert.equal(p['hash'], hash);
    assert.equal(p['title'], 'Fields');
    assert.equal(p['content'], 'def f():\n    return 1\n');
    assert.equal(p['language'], 'python');
    assert.equal(p['privacy'], 'public');
    assert.equal(p['burn_after_read'], 0);
    assert.equal(p['short_url'], c.json['short_url']);
    assert.equal(p['view_count'], 1);
    assert.deepEqual(p['owner'], { id: 1, display_name: 'alice' });
    const created = Date.parse(`${p['created_at'] as string}Z`.replace(' ', 'T'));
    const expires = Date.parse(`${p['expire_at'] as string}Z`.replace(' ', 'T'));
    assert.match(p['created_at'] as string, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.ok(created >= Math.floor(before / 1000) * 1000 && created <= Date.now());
    assert.equal(expires - created, 3_600_000);
    assert.equal('password' in p || 'highlight' in p, false);
  });

  test('counts views, the answer including the read itself', async () => {
    const c = await create({ content: 'count me' });
    const counts = [];
    for (let i = 0; i < 3; i++) {
      const r = await req(server, 'GET', `/api/v1/paste.php?hash=${c.json['hash']}`, { token });
      counts.push((r.json['paste'] as Record<string, unknown>)['view_count']);
    }
    await req(server, 'GET', `/api/v1/raw.php?hash=${c.json['hash']}`, { token });
    const r = await req(server, 'GET', `/api/v1/paste.php?hash=${c.json['hash']}`, { token });
    assert.deepEqual(counts, [1, 2, 3]);
    assert.equal((r.json['paste'] as Record<string, unknown>)['view_count'], 5);
  });

  test('any read token sees public and unlisted pastes of other users', async () => {
    const c = await create({ content: 'shared', privacy: 'unlisted' });
    const bob = await makeToken(server.dataDir, { user: 'bob', scopes: 'read' });
    const r = await req(server, 'GET', `/api/v1/paste.php?hash=${c.json['hash']}`, { token: bob });
    assert.equal(r.status, 200);
    assert.equal((r.json['paste'] as Record<string, unknown>)['content'], 'shared');
  });
});

describe('raw.php', () => {
  test('returns the content alone as text/plain, byte for byte', async () => {
    const content = 'ünïcødé ✓ 🎉\r\n<b>not html</b>\n\ttab';
    const c = await create({ content });
    const r = await req(server, 'GET', `/api/v1/raw.php?hash=${c.json['hash']}`, { token });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain; charset=utf-8/);
    assert.equal(r.text, content);
  });
});

describe('token locations', () => {
  test('accepts the token as Authorization: Bearer', async () => {
    const r = await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token });
    assert.equal(r.status, 404);
  });

  test('accepts the token as the query parameter token', async () => {
    const c = await create({ content: 'via query' });
    const r = await req(server, 'GET', `/api/v1/raw.php?hash=${c.json['hash']}&token=${token}`);
    assert.equal(r.status, 200);
    assert.equal(r.text, 'via query');
  });

  test('accepts the token as the form field token', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', {
      body: { token, content: 'via form' },
      form: true,
    });
    assert.equal(r.status, 200, r.text);
    const got = await req(server, 'GET', `/api/v1/raw.php?hash=${r.json['hash']}`, { token });
    assert.equal(got.text, 'via form');
  });

  test('accepts the token as a JSON body field too', async () => {
    const r = await req(server, 'POST', '/api/v1/paste_create.php', { body: { token, content: 'via json' } });
    assert.equal(r.status, 200, r.text);
  });

  test('a chunked body past the limit is refused with 413 before it ends, and the connection closes', async () => {
    // A raw socket: the client keeps streaming after the answer, as a real uploader would,
    // and must still receive the 413 rather than a connection reset.
    const { connect } = await import('node:net');
    const result = await new Promise<{ head: string; sent: number }>((resolve, reject) => {
      let sent = 0;
      let received = '';
      const socket = connect(server.port, '127.0.0.1');
      const chunk = `10000\r\n${'a'.repeat(0x10000)}\r\n`;
      const pump = (): void => {
        // 64 MiB would be sent if the server read to the end; it must answer long before.
        while (sent < 64 * 1024 * 1024 && !socket.destroyed) {
          sent += 0x10000;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      socket.on('connect', () => {
        socket.write(
          `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        );
        pump();
      });
      socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
      socket.on('error', () => {}); // EPIPE while still sending is expected once the server closes
      socket.on('close', () =>
        received ? resolve({ head: received, sent }) : reject(new Error(`no response after ${sent} bytes`)),
      );
    });
    assert.match(result.head, /^HTTP\/1\.1 413 /);
    assert.match(result.head, /\r\nconnection: close\r\n/i);
    assert.ok(result.sent < 64 * 1024 * 1024, `sent ${result.sent} bytes`);
  });

  test('prefers the Bearer header over a bad query token', async () => {
    const r = await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA&token=pst_bad', { token });
    assert.equal(r.status, 404);
  });
});
