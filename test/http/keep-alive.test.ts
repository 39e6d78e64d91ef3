import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
let token: string;
let hash: string;

before(async () => {
  s = await startServer();
  token = await makeToken(s.dataDir);
  const created = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'kept alive' } });
  hash = String(created.json['hash']);
});

/** Sends one request on `socket` and resolves with the whole response head + body once it has arrived. */
function exchange(socket: Socket, request: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer): void => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buf.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve({ head, body: buf.subarray(end + 4, end + 4 + length).toString('utf8') });
    };
    const onClose = (): void => reject(new Error(`socket closed before the answer to ${request.split('\r\n')[0]}`));
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(request);
  });
}

describe('keep-alive', () => {
  test('answers given at once (healthz, static files) and API reads all reuse one connection', async () => {
    const socket = connect(s.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let closed = false;
    socket.once('close', () => (closed = true));
    try {
      const host = `Host: 127.0.0.1:${s.port}\r\n`;
      const requests = [
        `GET /healthz HTTP/1.1\r\n${host}\r\n`,
        `GET /static/app.css HTTP/1.1\r\n${host}\r\n`,
        `GET /api/v1/raw.php?hash=${hash} HTTP/1.1\r\n${host}Authorization: Bearer ${token}\r\n\r\n`,
        `GET /healthz HTTP/1.1\r\n${host}Connection: keep-alive\r\n\r\n`,
      ];
      for (const r of requests) {
        const { head } = await exchange(socket, r);
        assert.match(head, /^HTTP\/1\.1 200 /, r);
        assert.doesNotMatch(head, /\r\nconnection: close/i, r);
      }
      const last = await exchange(
        socket,
        `GET /api/v1/raw.php?hash=${hash} HTTP/1.1\r\n${host}Authorization: Bearer ${token}\r\n\r\n`,
      );
      assert.equal(last.body, 'kept alive');
      // Still open after the last answer: one more request on it is answered.
      assert.match((await exchange(socket, requests[0] as string)).head, /^HTTP\/1\.1 200 /);
      assert.equal(closed, false, 'the server kept the connection open');
    } finally {
      socket.destroy();
    }
  });
});
