import assert from 'node:assert/strict';
import { createServer, get, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Headers, Reply } from '../../src/http/reply.ts';
import { respond } from '../../src/http/respond.ts';

/** The status and headers of what `respond` writes for these arguments, over a real socket. */
async function answer(
  reply: Reply,
  extra?: Headers,
  cookies?: string[],
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const server = createServer((_req, res) => respond(res, reply, extra, cookies));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      const r = get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      }).on('error', reject);
      // A body shorter than its Content-Length would leave this waiting: fail instead.
      r.setTimeout(5_000, () => r.destroy(new Error('the answer stopped short of its Content-Length')));
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

test("respond: the reply's headers replace extra's of the same name; the request's cookies come before the reply's own", async () => {
  const got = await answer(
    { kind: 'text', status: 201, body: 'héllo', headers: { 'x-which': 'reply', 'set-cookie': ['b=2', 'c=3'] } },
    { 'x-which': 'extra', 'x-extra': 'kept' },
    ['a=1'],
  );
  assert.equal(got.status, 201);
  assert.equal(got.body, 'héllo');
  assert.equal(got.headers['x-which'], 'reply');
  assert.equal(got.headers['x-extra'], 'kept');
  assert.deepEqual(got.headers['set-cookie'], ['a=1', 'b=2', 'c=3']);
  assert.equal(got.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(got.headers['content-length'], String(Buffer.byteLength('héllo')));
});

test('respond: cookies alone, or a reply cookie alone, each go out once', async () => {
  assert.deepEqual(
    (await answer({ kind: 'html', status: 200, body: '<p>x</p>' }, undefined, ['a=1', 'd=4'])).headers['set-cookie'],
    ['a=1', 'd=4'],
  );
  assert.deepEqual(
    (await answer({ kind: 'json', status: 200, body: { ok: true }, headers: { 'set-cookie': 'b=2' } })).headers[
      'set-cookie'
    ],
    ['b=2'],
  );
  assert.equal((await answer({ kind: 'json', status: 200, body: { ok: true } })).headers['set-cookie'], undefined);
});

test('respond: pieces go out whole, measured when no length is given and with the length given otherwise', async () => {
  const pieces = ['{"a":"é', Buffer.from('✓'), '"}'];
  const measured = await answer({ kind: 'bytes', status: 200, contentType: 'application/json', body: pieces });
  assert.equal(measured.body, '{"a":"é✓"}');
  assert.equal(measured.headers['content-length'], String(Buffer.byteLength('{"a":"é✓"}')));
  // A handler that knows the size says so, and respond takes its word without measuring
  // again: told a wrong one, it sends it (read off the raw head, as no client would accept it).
  const told = await rawHead({
    kind: 'bytes',
    status: 200,
    contentType: 'application/json',
    body: ['{"a":', '1}'],
    length: 5,
  });
  assert.match(told, /\r\ncontent-length: 5\r\n/i);
});

/** The head of what `respond` writes for `reply`, read off a raw socket. */
async function rawHead(reply: Reply): Promise<string> {
  const server = createServer((_req, res) => respond(res, reply));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      );
      let got = '';
      socket.setEncoding('latin1');
      socket.on('data', (c: string) => {
        got += c;
        const end = got.indexOf('\r\n\r\n');
        if (end !== -1) {
          socket.destroy();
          resolve(got.slice(0, end + 2));
        }
      });
      socket.on('error', reject);
    });
  } finally {
    server.close();
  }
}

test('respond: text bodies of every shape arrive as their UTF-8, ASCII or not (ASCII is written as Latin-1, the same bytes)', async () => {
  const samples = ['plain ASCII', 'é in Latin-1', 'a check ✓', 'a clef 𝄞', 'half a pair \ud800 here', ''];
  for (const s of samples) {
    for (const reply of [
      { kind: 'text', status: 200, body: s },
      { kind: 'html', status: 200, body: s },
      {
        kind: 'bytes',
        status: 200,
        contentType: 'text/plain',
        body: [s, '|', s],
        length: 1 + 2 * Buffer.byteLength(s),
      },
      { kind: 'bytes', status: 200, contentType: 'text/plain', body: [s, Buffer.from('|'), s] },
    ] satisfies Reply[]) {
      const got = await answer(reply);
      const want = reply.kind === 'bytes' ? `${s}|${s}` : s;
      // A lone surrogate goes out as U+FFFD, as Buffer.from writes it.
      assert.equal(got.body, Buffer.from(want).toString('utf8'), `${reply.kind} ${JSON.stringify(s)}`);
      assert.equal(
        got.headers['content-length'],
        String(Buffer.byteLength(want)),
        `${reply.kind} ${JSON.stringify(s)}`,
      );
    }
  }
  const json = await answer({ kind: 'json', status: 200, body: { a: 'naïve ✓', b: 'ascii' } });
  assert.deepEqual(JSON.parse(json.body), { a: 'naïve ✓', b: 'ascii' });
  assert.equal(json.headers['content-length'], String(Buffer.byteLength(json.body)));
});
