import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../../src/config.ts';
import { openPgCli } from '../../../src/pg/open.ts';
import { openFileCli } from '../../../src/store/open.ts';
import { BACKEND, backendEnv } from '../../helpers/backend.ts';
import { cleanup, cli, makeToken, req, startServer, type TestServer } from '../../helpers/server.ts';
import { apiLogLines, everythingStored } from '../../helpers/stored.ts';
import { until } from '../../helpers/until.ts';

const hashQuery = '/api/v1/paste.php?hash=AAAAAAAAAA';

/** The API log's lines (the audit log of the CLI's actions is kept apart from them). */
const logLines = (server: TestServer): Promise<Record<string, unknown>[]> => apiLogLines(server.dataDir);

describe('per-token rate limit', () => {
  test('headers count down, then 429 with limit_per_minute and Retry-After', async () => {
    const server = await startServer();
    try {
      const token = await makeToken(server.dataDir, { rate: 3 });
      const remaining = [];
      for (let i = 0; i < 3; i++) {
        const r = await req(server, 'GET', hashQuery, { token });
        assert.equal(r.headers['x-ratelimit-limit'], '3');
        remaining.push(r.headers['x-ratelimit-remaining']);
      }
      assert.deepEqual(remaining, ['2', '1', '0']);
      const r = await req(server, 'GET', hashQuery, { token });
      assert.equal(r.status, 429);
      assert.equal(r.json.ok, false);
      assert.equal(typeof r.json.error, 'string');
      assert.equal(r.json['limit_per_minute'], 3);
      const retry = Number(r.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 20, `Retry-After ${retry}`);
      assert.equal(r.headers['x-ratelimit-remaining'], '0');
    } finally {
      await server.stop();
      await cleanup(server.dataDir);
    }
  });

  test('an unlimited token gets X-RateLimit-Limit 0 and no Remaining', async () => {
    const server = await startServer();
    try {
      const token = await makeToken(server.dataDir, { rate: 0 });
      const r = await req(server, 'GET', hashQuery, { token });
      assert.equal(r.headers['x-ratelimit-limit'], '0');
      assert.equal(r.headers['x-ratelimit-remaining'], undefined);
    } finally {
      await server.stop();
      await cleanup(server.dataDir);
    }
  });

  test('a depleted bucket is still depleted after a graceful restart', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir, { rate: 2 });
    await req(server, 'GET', hashQuery, { token });
    await req(server, 'GET', hashQuery, { token });
    assert.equal((await req(server, 'GET', hashQuery, { token })).status, 429);
    assert.equal(await server.stop('SIGTERM'), 0);
    const again = await startServer({ dataDir: server.dataDir });
    try {
      assert.equal((await req(again, 'GET', hashQuery, { token })).status, 429);
    } finally {
      await again.stop();
      await cleanup(server.dataDir);
    }
  });

  test('a rate changed with the CLI takes effect at the next request (on PostgreSQL, within 1 second)', async () => {
    const server = await startServer();
    try {
      await cli(server.dataDir, ['user', 'add', 'zed', '--admin']);
      const token = await cli(server.dataDir, ['token', 'create', '--user', 'zed', '--scopes', 'read', '--rate', '1']);
      await req(server, 'GET', hashQuery, { token });
      assert.equal((await req(server, 'GET', hashQuery, { token })).status, 429);
      const id = token.split('_')[1] as string;
      // The admin UI edits rates through the same accounts the CLI writes, opened here as the CLI opens them.
      const config = parseConfig({ DATA_DIR: server.dataDir, ...(await backendEnv(server.dataDir)) });
      const notes = { note: () => undefined, warn: () => undefined };
      const storage = config.database === null ? await openFileCli(config, notes) : await openPgCli(config, notes);
      await storage.accounts.mutate((doc) => {
        const t = doc.tokens.find((x) => x.id === id);
        if (t) t.rate_limit_per_minute = 0;
      });
      await storage.close();
      let r = await req(server, 'GET', hashQuery, { token });
      // On PostgreSQL the server hears of another process's change by a notification, honoured
      // within 1 second (README, Running on PostgreSQL); the data folder's server at once.
      if (BACKEND === 'postgres' && r.status === 429)
        await until(async () => (r = await req(server, 'GET', hashQuery, { token })).status !== 429, {
          timeoutMs: 1_000,
          what: 'the new rate to be honoured (within 1 second)',
          everyMs: 10,
        });
      assert.equal(r.status, 404);
      assert.equal(r.headers['x-ratelimit-limit'], '0');
    } finally {
      await server.stop();
      await cleanup(server.dataDir);
    }
  });
});

describe('failed authentication per client IP', () => {
  test('after AUTH_FAIL_LIMIT_PER_MINUTE failures the IP gets 429, even with a valid token', async () => {
    const server = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '3' } });
    try {
      const token = await makeToken(server.dataDir);
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await req(server, 'GET', hashQuery, { token: `pst_AAAAAAAA_${'x'.repeat(32)}` })).status);
      assert.deepEqual(statuses, [401, 401, 401, 429]);
      const r = await req(server, 'GET', hashQuery, { token });
      assert.equal(r.status, 429);
      assert.equal(r.json['limit_per_minute'], 3);
      assert.ok(Number(r.headers['retry-after']) >= 1);
    } finally {
      await server.stop();
      await cleanup(server.dataDir);
    }
  });

  test('with TRUST_PROXY=1 the budget is per X-Forwarded-For client, otherwise per socket', async () => {
    const server = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '1', TRUST_PROXY: '1' } });
    try {
      const bad = { token: 'nope' };
      const as = (ip: string) => ({ ...bad, headers: { 'x-forwarded-for': `10.9.9.9, ${ip}` } });
      assert.equal((await req(server, 'GET', hashQuery, as('203.0.113.1'))).status, 401);
      assert.equal((await req(server, 'GET', hashQuery, as('203.0.113.1'))).status, 429);
      assert.equal((await req(server, 'GET', hashQuery, as('203.0.113.2'))).status, 401);
      const lines = await waitForLog(server, 3);
      assert.deepEqual(
        lines.map((l) => l['ip']),
        ['203.0.113.1', '203.0.113.1', '203.0.113.2'],
      );
    } finally {
      await server.stop();
      await cleanup(server.dataDir);
    }
    const plain = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '1' } });
    try {
      const spoof = (ip: string) => ({ token: 'nope', headers: { 'x-forwarded-for': ip } });
      assert.equal((await req(plain, 'GET', hashQuery, spoof('1.1.1.1'))).status, 401);
      assert.equal((await req(plain, 'GET', hashQuery, spoof('2.2.2.2'))).status, 429);
    } finally {
      await plain.stop();
      await cleanup(plain.dataDir);
    }
  });
});

async function waitForLog(server: TestServer, n: number): Promise<Record<string, unknown>[]> {
  // The appender flushes at least every second: wait for the lines.
  let lines: Record<string, unknown>[] = [];
  await until(async () => (lines = await logLines(server).catch(() => [])).length >= n, {
    what: `${n} lines in the API log`,
  });
  return lines;
}

describe('API request log', () => {
  test('every API request becomes one JSON line with the contract keys, secrets nowhere stored', async () => {
    const server = await startServer();
    try {
      const token = await makeToken(server.dataDir);
      const created = await req(server, 'POST', '/api/v1/paste_create.php', {
        token,
        body: { content: 'logged', password: 'pw-in-body-123' },
      });
      const hash = created.json['hash'] as string;
      await req(server, 'GET', `/api/v1/raw.php?hash=${hash}&token=${token}&password=pw-in-query-456`);
      await req(server, 'GET', '/api/v1/nope.php');
      await req(server, 'GET', hashQuery);
      const lines = await waitForLog(server, 4);
      assert.equal(lines.length, 4);
      for (const l of lines) {
        assert.deepEqual(
          Object.keys(l)
            .filter((k) => k !== 'error' && k !== 'request_id')
            .sort(),
          ['duration_ms', 'endpoint', 'ip', 'method', 'status', 'time', 'token_id', 'user_id'],
        );
        // A refused request's line also names its X-Request-Id; a served one has just the contract's keys.
        assert.equal('request_id' in l, 'error' in l);
        assert.ok(!Number.isNaN(Date.parse(l['time'] as string)));
        assert.equal(typeof l['duration_ms'], 'number');
        assert.equal(l['ip'], '127.0.0.1');
      }
      const tokenId = token.split('_')[1];
      assert.deepEqual(
        lines.map((l) => [l['method'], l['endpoint'], l['status'], l['token_id'], l['user_id']]),
        [
          ['POST', '/api/v1/paste_create.php', 200, tokenId, 1],
          ['GET', '/api/v1/raw.php', 200, tokenId, 1],
          ['GET', '/api/v1/nope.php', 404, null, null],
          ['GET', '/api/v1/paste.php', 401, null, null],
        ],
      );
      assert.equal(lines[0]?.['error'], undefined);
      assert.match(lines[2]?.['error'] as string, /endpoint/);
      assert.match(lines[3]?.['error'] as string, /token/);
      await server.stop();
      const everything = await everythingStored(server.dataDir);
      assert.doesNotMatch(everything, new RegExp(token));
      assert.doesNotMatch(everything, /pw-in-query-456|pw-in-body-123/);
    } finally {
      await server.stop();
      await cleanup(server.dataDir);
    }
  });
});

describe('healthz', () => {
  test('answers 200 {ok:true} without a token and is not rate-limited or logged', async () => {
    const server = await startServer({ env: { AUTH_FAIL_LIMIT_PER_MINUTE: '1' } });
    try {
      for (let i = 0; i < 5; i++) {
        const r = await req(server, 'GET', '/healthz');
        assert.equal(r.status, 200);
        // On PostgreSQL it also says whether the database answers (pg/open.ts, health).
        assert.deepEqual(r.json, BACKEND === 'postgres' ? { ok: true, database: 'answers' } : { ok: true });
      }
      await server.stop();
      assert.deepEqual(await logLines(server).catch(() => []), []);
    } finally {
      await cleanup(server.dataDir);
    }
  });
});
