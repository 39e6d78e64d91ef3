import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { backendEnv } from './helpers/backend.ts';
import { apiLogLines } from './helpers/stored.ts';
import { until } from './helpers/until.ts';
import { cleanup, events, makeToken, req, ROOT, spawnServer, tempDataDir, type TestServer } from './helpers/server.ts';

/**
 * Resolves once the server has read what was already written to it: it answers a request
 * made after those bytes were on the wire, and a server reads ready sockets in turn.
 */
const readSoFar = async (server: TestServer): Promise<void> => {
  assert.equal((await req(server, 'GET', '/healthz')).status, 200);
};

describe('graceful shutdown', () => {
  test('SIGTERM lets an in-flight request finish, persists state and exits 0', async () => {
    const server = await spawnServer();
    const token = await makeToken(server.dataDir);
    const body = JSON.stringify({ content: 'finished after SIGTERM' });
    const half = Math.floor(body.length / 2);
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const r = request(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/api/v1/paste_create.php',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      r.on('error', reject);
      // The rest of the body comes only once the server has the head and has begun its stop.
      r.write(body.slice(0, half), () =>
        readSoFar(server)
          .then(() => server.proc.kill('SIGTERM'))
          .then(() => until(() => /SIGTERM received/.test(server.output()), { what: 'the SIGTERM to be received' }))
          .then(() => r.end(body.slice(half)), reject),
      );
    });
    const res = await response;
    assert.equal(res.status, 200, res.text);
    assert.equal(await server.stop(), 0);
    assert.match(server.output(), /SIGTERM received/);

    const again = await spawnServer({ dataDir: server.dataDir });
    try {
      const hash = (JSON.parse(res.text) as { hash: string }).hash;
      assert.equal((await req(again, 'GET', `/api/v1/raw.php?hash=${hash}`, { token })).text, 'finished after SIGTERM');
    } finally {
      await again.stop();
      await cleanup(server.dataDir);
    }
  });

  test('a connection that never sent a byte does not hold the stop, one sending its request does', async () => {
    const server = await spawnServer({ env: { SHUTDOWN_TIMEOUT_MS: '5000' } });
    const token = await makeToken(server.dataDir);
    const quiet = connect(server.port, '127.0.0.1');
    await once(quiet, 'connect');
    const quietClosed = once(quiet, 'close');
    // A request whose body is still coming when the signal arrives is finished, as above.
    const slow = connect(server.port, '127.0.0.1');
    await once(slow, 'connect');
    const body = JSON.stringify({ content: 'sent slowly' });
    slow.write(
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    let answer = '';
    slow.on('data', (d: Buffer) => (answer += d.toString()));
    await readSoFar(server);
    const exited = server.stop();
    // The silent one is closed while the other's request is still waiting for its body; at
    // the shutdown deadline both would be.
    await quietClosed;
    const slowClosed = once(slow, 'close');
    slow.write(body);
    assert.equal(await exited, 0);
    await slowClosed;
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(server.output(), /shutdown complete/);
    quiet.destroy();
    slow.destroy();
    await cleanup(server.dataDir);
  });

  test('a request cut at the shutdown deadline still has its line in the API log', async () => {
    const server = await spawnServer({ env: { SHUTDOWN_TIMEOUT_MS: '300' } });
    const token = await makeToken(server.dataDir);
    const slow = connect(server.port, '127.0.0.1');
    await once(slow, 'connect');
    slow.on('error', () => undefined);
    slow.write(
      `POST /api/v1/paste_create.php HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"content":`,
    );
    await readSoFar(server);
    assert.equal(await server.stop(), 0);
    slow.destroy();
    assert.doesNotMatch(server.output(), /could not be written/);
    const lines = await apiLogLines(server.dataDir);
    const cut = lines.filter((l) => l['endpoint'] === '/api/v1/paste_create.php');
    assert.equal(cut.length, 1, JSON.stringify(lines));
    assert.ok(Number(cut[0]?.['status']) >= 400);
    await cleanup(server.dataDir);
  });

  test('SIGINT also exits 0', async () => {
    const server = await spawnServer();
    assert.equal(await server.stop('SIGINT'), 0);
    await cleanup(server.dataDir);
  });

  test('npm start passes SIGTERM on to the server, which exits cleanly', async () => {
    const dataDir = await tempDataDir();
    const proc = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', DATA_DIR: dataDir, ...(await backendEnv(dataDir)) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // 'close' waits for every holder of the output pipes: npm and the server under it.
    const closed = new Promise<void>((resolve) => proc.once('close', () => resolve()));
    await until(() => /listening on/.test(out), { timeoutMs: 10_000, what: 'npm start to say it is listening' });
    const port = Number(/listening on http:\/\/(?:\[[^\]]+\]|[^:]+):(\d+)/.exec(out)?.[1]);
    assert.ok(port > 0, out);
    proc.kill('SIGTERM');
    await closed;
    // npm itself may die of the signal it forwards; what matters is the server's clean exit.
    const said = events(out).map((e) => `${e.level} ${e.message}`);
    assert.deepEqual(said.slice(-2), ['info SIGTERM received, shutting down', 'info shutdown complete']);
    await assert.rejects(req({ port }, 'GET', '/healthz'), /ECONNREFUSED/);
    await cleanup(dataDir);
  });

  test('a bad configuration is reported, every variable at once, with exit status 2', async () => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'x', MAX_PASTE_BYTES: 'y' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    assert.equal(code, 2);
    const [event, ...more] = events(err);
    assert.equal(more.length, 0, err);
    assert.equal(event?.level, 'error');
    assert.match(event?.message ?? '', /^cannot start: invalid configuration: PORT .*; MAX_PASTE_BYTES /);
  });
});

describe('the shutdown drain (SHUTDOWN_DRAIN_MS, README, Running several instances)', () => {
  const waitFor = async (server: { output: () => string }, pattern: RegExp): Promise<void> => {
    await until(() => pattern.test(server.output()), { what: `the server to print ${pattern}` });
  };

  test('after SIGTERM /healthz answers 503 at once, requests are still served for the drain, then exit 0', async () => {
    const server = await spawnServer({ env: { SHUTDOWN_DRAIN_MS: '1500' } });
    const token = await makeToken(server.dataDir);
    assert.equal((await req(server, 'GET', '/healthz')).status, 200);
    const signalled = performance.now();
    const exited = server.stop();
    await waitFor(server, /draining for 1500 ms/);
    const health = await req(server, 'GET', '/healthz');
    assert.deepEqual([health.status, health.json], [503, { ok: false, shutting_down: true }]);
    // A new connection is still accepted, and both a write and a read are answered.
    const made = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'during the drain' },
    });
    assert.equal(made.status, 200, made.text);
    const read = await req(server, 'GET', `/api/v1/raw.php?hash=${String(made.json['hash'])}`, { token });
    assert.equal(read.text, 'during the drain');
    assert.equal(server.proc.exitCode, null);
    assert.equal(await exited, 0);
    assert.ok(performance.now() - signalled >= 1_400, 'the server closed before its drain ended');
    assert.match(server.output(), /shutdown complete/);
    await assert.rejects(req(server, 'GET', '/healthz'), /ECONNREFUSED/);
    await cleanup(server.dataDir);
  });

  test('a second signal cuts the drain short and the stop is still clean', async () => {
    const server = await spawnServer({ env: { SHUTDOWN_DRAIN_MS: '600000' } });
    const t0 = performance.now();
    server.proc.kill('SIGTERM');
    await waitFor(server, /draining for 600000 ms/);
    assert.equal((await req(server, 'GET', '/healthz')).status, 503);
    assert.equal(await server.stop('SIGINT'), 0);
    assert.ok(performance.now() - t0 < 10_000);
    assert.match(server.output(), /shutdown complete/);
    await cleanup(server.dataDir);
  });
});
