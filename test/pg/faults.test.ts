import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ownCluster } from '../helpers/postgres.ts';
import { cli, req, ROOT, startServer, tempDataDir, type AppServer } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';

/** A port nothing listens on: taken, then given back. */
async function unusedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** A token for a user made through the CLI against this database. */
async function tokenFor(dataDir: string, url: string): Promise<string> {
  const env = { DATABASE_URL: url };
  const run = (args: string[]): Promise<string> => cli(dataDir, args, '', env);
  await run(['user', 'add', 'alice']);
  return run(['token', 'create', '--user', 'alice', '--scopes', 'read,write']);
}

const create = (s: AppServer, token: string, content: string) =>
  req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content } });

describe('the database unreachable or lost (README, Running on PostgreSQL)', () => {
  test('at start: waited for DATABASE_WAIT_SECONDS, then one "cannot start" line naming host and port, exit 1', async () => {
    const port = await unusedPort();
    const started = performance.now();
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: await tempDataDir(),
        DATABASE_URL: `postgres://paste:s3cret-pw@127.0.0.1:${port}/paste`,
        DATABASE_WAIT_SECONDS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    const seconds = (performance.now() - started) / 1000;
    assert.equal(code, 1, out);
    assert.ok(seconds >= 1 && seconds < 15, `exited after ${seconds} s`);
    const errors = out.split('\n').filter((l) => l.includes('"level":"error"'));
    assert.equal(errors.length, 1, out);
    assert.match(
      errors[0] as string,
      new RegExp(`cannot start: the database at 127\\.0\\.0\\.1:${port} does not answer`),
    );
    assert.doesNotMatch(out, /s3cret-pw/);
  });

  test('lost while serving: 503 storage_unavailable with Retry-After within DATABASE_TIMEOUT_MS, /healthz says so, and service comes back with every answered write', async () => {
    const db = await ownCluster();
    const dataDir = await tempDataDir();
    const token = await tokenFor(dataDir, db.url);
    // Its bucket, and every failure budget, are spent in the database (README, Running several instances).
    const limited = await cli(dataDir, ['token', 'create', '--user', 'alice', '--scopes', 'read', '--rate', '30'], '', {
      DATABASE_URL: db.url,
    });
    const s = await startServer({ dataDir, env: { DATABASE_URL: db.url, DATABASE_TIMEOUT_MS: '1000' } });
    const made = await create(s, token, 'written before the outage');
    assert.equal(made.status, 200);
    const hash = made.json?.['hash'] as string;
    assert.equal((await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: limited })).status, 200);
    // A paste not read yet is in no cache: reading it needs the database (a cached one may be
    // served for the moment the cache still trusts what it heard, README: Running on PostgreSQL).
    const unread = (await create(s, token, 'not read before the outage')).json?.['hash'] as string;

    db.stop();
    for (const ask of [
      () => req(s, 'GET', `/api/v1/paste.php?hash=${unread}`, { token }),
      () => create(s, token, 'during the outage'),
      () => req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: limited }),
      () => req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: `pst_AAAAAAAA_${'x'.repeat(32)}` }),
    ]) {
      const t0 = performance.now();
      const r = await ask();
      const ms = performance.now() - t0;
      assert.equal(r.status, 503, r.text);
      assert.equal(r.json?.['code'], 'storage_unavailable');
      assert.ok(Number(r.headers['retry-after']) >= 1);
      assert.ok(ms < 3_000, `answered after ${ms} ms`);
    }
    // /healthz answers at once from the background probe, which sees the outage within a second or two.
    let health = await req(s, 'GET', '/healthz');
    await until(async () => (health = await req(s, 'GET', '/healthz')).status !== 200, {
      timeoutMs: 6_000,
      what: '/healthz to see the outage',
      everyMs: 200,
    }).catch(() => undefined);
    assert.equal(health.status, 503);
    assert.equal(health.json?.['database'], 'does not answer');
    assert.doesNotMatch(s.output(), /^\s+at .*:\d+:\d+\)?$/m, 'no stack in the server log for an outage');
    assert.match(s.output(), /does not answer.*requests that need it get 503/, 'the outage is told once');

    db.start();
    let back = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    await until(async () => (back = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).status === 200, {
      timeoutMs: 10_000,
      what: 'the server to reconnect by itself',
      everyMs: 200,
    }).catch(() => undefined);
    assert.equal(back.status, 200, 'the server reconnected by itself');
    assert.equal((back.json!['paste'] as Record<string, unknown>)['content'], 'written before the outage');
    assert.equal((await create(s, token, 'after the outage')).status, 200);
    let healthy = await req(s, 'GET', '/healthz');
    await until(async () => (healthy = await req(s, 'GET', '/healthz')).status === 200, {
      timeoutMs: 6_000,
      what: '/healthz to see the database again',
      everyMs: 200,
    }).catch(() => undefined);
    assert.deepEqual(healthy.json, { ok: true, database: 'answers' });
  });

  test('restarted under load (pg_ctl restart -m fast): 503s meanwhile, never a 500, and every acknowledged create is there after', async () => {
    const db = await ownCluster();
    const dataDir = await tempDataDir();
    const token = await tokenFor(dataDir, db.url);
    const s = await startServer({ dataDir, env: { DATABASE_URL: db.url, DATABASE_TIMEOUT_MS: '1000' } });
    const acked: [string, string][] = [];
    const statuses = new Map<number, number>();
    let stop = false;
    const writer = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const content = `writer ${w} paste ${i}`;
        const r = await create(s, token, content);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 200) acked.push([r.json?.['hash'] as string, content]);
        // A client backing off after a refusal, as one should: a pause, not a wait for anything.
        else await sleep(50);
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await until(() => acked.length >= 4, { what: 'creates acknowledged before the restart' });
    db.restart();
    // Writes go on through the restart until the server takes them again.
    const before = acked.length;
    await until(() => acked.length >= before + 8, {
      timeoutMs: 20_000,
      what: 'creates acknowledged after the restart',
    });
    stop = true;
    await Promise.all(writers);
    assert.deepEqual(
      [...statuses.keys()].filter((code) => code !== 200 && code !== 503),
      [],
      JSON.stringify([...statuses]),
    );
    assert.ok(acked.length > 10, `${acked.length} acknowledged`);
    for (const [hash, content] of acked) {
      const r = await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
      assert.equal(r.status, 200, hash);
      assert.equal(r.text, content);
    }
  });
});
