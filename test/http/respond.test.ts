import assert from 'node:assert/strict';
import { createServer, get, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Headers, Reply } from '../../src/http/reply.ts';
import { respond } from '../../src/http/respond.ts';

/** The status and headers of what `respond` writes for these arguments, over a real socket. */
async function answer(reply: Reply, extra?: Headers, cookies?: string[]): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const server = createServer((_req, res) => respond(res, reply, extra, cookies));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      }).on('error', reject);
    });
  } finally {
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
  assert.deepEqual((await answer({ kind: 'html', status: 200, body: '<p>x</p>' }, undefined, ['a=1', 'd=4'])).headers['set-cookie'], ['a=1', 'd=4']);
  assert.deepEqual((await answer({ kind: 'json', status: 200, body: { ok: true }, headers: { 'set-cookie': 'b=2' } })).headers['set-cookie'], ['b=2']);
  assert.equal((await answer({ kind: 'json', status: 200, body: { ok: true } })).headers['set-cookie'], undefined);
});
