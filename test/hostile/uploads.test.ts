import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../helpers/server.ts';
import { apiLogLines } from '../helpers/stored.ts';
import { until } from '../helpers/until.ts';

/** The API log's lines (all of them once the server has stopped, and so written them all). */
const logLines = (server: TestServer): Promise<Record<string, unknown>[]> => apiLogLines(server.dataDir);

const opened = (port: number): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });

/** What arrives on `socket` until `enough` says so (or the socket closes). */
function received(socket: Socket, enough: (text: string) => boolean, ms = 5_000): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = (): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      resolve(text);
    };
    const onData = (d: Buffer): void => {
      text += d.toString('latin1');
      if (enough(text)) done();
    };
    const timer = setTimeout(done, ms);
    socket.on('data', onData);
    socket.once('close', done);
  });
}

/** Sends a request head that declares a body but none of it; answers the status line and headers. */
async function headOnly(server: TestServer, head: string): Promise<{ status: number; head: string }> {
  const socket = await opened(server.port);
  try {
    socket.write(head);
    const text = await received(socket, (t) => t.includes('\r\n\r\n'), 1_000);
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), head: text.toLowerCase() };
  } finally {
    socket.destroy();
  }
}

/** Waits until `check` holds, polling (the server sees a closed socket a moment later). */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  await until(check, { what });
}

describe('a client that leaves in the middle of its upload', () => {
  test('is logged once as 499 "client closed", with no fault and no stack (API with and without a token, web login)', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const heads = [
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
      `POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n`,
    ];
    for (const head of heads) {
      const socket = await opened(server.port);
      socket.write(`${head}{"content":"${'a'.repeat(5000)}`);
      // Answered after those bytes were sent, so the server has read the head and begun the body.
      assert.equal((await req(server, 'GET', '/healthz')).status, 200);
      socket.destroy();
    }
    // The server is unharmed and answers the next request.
    await eventually(async () => (await req(server, 'GET', '/healthz')).status === 200, 'healthz answers');
    await eventually(
      async () => (await logLines(server)).filter((l) => l['status'] === 499).length >= 2,
      'both API uploads cut short in the log',
    );
    await server.stop();
    assert.equal(server.output(), '', 'a client going away is not a server fault');
    const gone = (await logLines(server)).filter((l) => l['status'] === 499);
    assert.equal(gone.length, 2, 'each API upload cut short is logged once');
    for (const line of gone) {
      assert.equal(line['endpoint'], '/api/v1/paste_create.php');
      assert.match(String(line['error']), /client closed the connection/);
    }
    assert.deepEqual(
      gone.map((l) => l['token_id']).sort(),
      [null, token.split('_')[1]?.slice(0, 8) ?? ''].sort(),
      'the token is known when it came in the header',
    );
  });
});

describe('bodies read before authentication share one budget', () => {
  test('past the budget a tokenless upload gets 503 with Retry-After at once; header tokens and the budget itself are unharmed', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    // Five uploads of 2.9 MB that never finish hold 14.5 MB of the 16 MiB budget.
    const hogs: Socket[] = [];
    for (let i = 0; i < 5; i++) {
      const socket = await opened(server.port);
      socket.write(
        `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\n\r\n`,
      );
      socket.write(Buffer.alloc(2_900_000, 'a'));
      hogs.push(socket);
    }
    // Wait until the server has read what they sent: then a 3 MB declared body cannot fit.
    const declared = (path: string, type: string): string =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 3000000\r\n\r\n`;
    const apiUpload = declared('/api/v1/paste_create.php', 'application/json');
    await eventually(
      async () => (await headOnly(server, apiUpload)).status === 503,
      'a tokenless 3 MB upload is refused while the budget is held',
    );
    const busy = await headOnly(server, apiUpload);
    assert.match(busy.head, /\r\nretry-after: 1\r\n/);
    assert.match(busy.head, /\r\nconnection: close\r\n/, 'the unread body is not waited for');
    // A web form without a session draws on the same budget.
    assert.equal((await headOnly(server, declared('/login', 'application/x-www-form-urlencoded'))).status, 503);
    // A token in the header needs no budget: its body is read after authentication.
    const created = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'x'.repeat(1_000_000) },
    });
    assert.equal(created.status, 200);
    // When the hogs leave, their bytes come back.
    for (const socket of hogs) socket.destroy();
    await eventually(async () => {
      const r = await req(server, 'POST', '/api/v1/paste_create.php', { body: { content: 'y'.repeat(2_900_000) } });
      return r.status === 401;
    }, 'a tokenless upload is read again (and refused for its missing token)');
    const inBody = await req(server, 'POST', '/api/v1/paste_create.php', {
      body: { token, content: 'token in the body' },
    });
    assert.equal(inBody.status, 200);
  });
});

describe('Expect: 100-continue', () => {
  const ask = async (server: TestServer, head: string): Promise<string> => {
    const socket = await opened(server.port);
    try {
      socket.write(head);
      return await received(socket, (t) => /^HTTP\/1\.1 (?!100)\d{3}/m.test(t) || /\r\n\r\n/.test(t), 2_000);
    } finally {
      socket.destroy();
    }
  };

  test('a body over the limit is refused (413, or 401 without a token) without being invited', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const big = 'Content-Type: application/json\r\nContent-Length: 5000000\r\nExpect: 100-continue\r\n\r\n';
    const withToken = await ask(
      server,
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${big}`,
    );
    assert.match(withToken, /^HTTP\/1\.1 413 /);
    assert.doesNotMatch(withToken, /100 Continue/);
    const without = await ask(server, `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\n${big}`);
    assert.match(without, /^HTTP\/1\.1 401 /);
    assert.doesNotMatch(without, /100 Continue/);
    const badToken = await ask(
      server,
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pst_nope\r\nContent-Type: application/json\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n`,
    );
    assert.match(badToken, /^HTTP\/1\.1 401 /, 'a bad header token is refused before the body is invited');
  });

  test('a body the server will read is invited with 100 Continue, then answered', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    for (const [auth, body] of [
      [`Authorization: Bearer ${token}\r\n`, JSON.stringify({ content: 'after continue' })],
      ['', JSON.stringify({ token, content: 'token in the body' })],
    ] as const) {
      const socket = await opened(server.port);
      try {
        socket.write(
          `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
        );
        const interim = await received(socket, (t) => t.includes('\r\n\r\n'));
        assert.match(interim, /^HTTP\/1\.1 100 Continue\r\n\r\n$/);
        socket.write(body);
        const final = await received(socket, (t) => t.includes('"ok":true'));
        assert.match(final, /^HTTP\/1\.1 200 /);
      } finally {
        socket.destroy();
      }
    }
  });
});
