import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { OUTCOME_WAIT_MS } from '../../src/pg/guard.ts';
import { beforeClusterStops, createTestDatabase, ownCluster } from '../helpers/postgres.ts';
import { cli, type Res, req, startServer, tempDataDir, type AppServer } from '../helpers/server.ts';

/**
 * README, Running on PostgreSQL: a request answered 503 changed nothing, every request that
 * waits for the database is answered within DATABASE_TIMEOUT_MS and the stated margin, and
 * while the probe finds the database down, requests are refused at once.
 */
const TIMEOUT_MS = 1_500;
/** The README's margin; the assertion allows a loaded machine's event loop this much on top. */
const MARGIN_MS = 500;
const SLACK_MS = 600;
const CONCURRENT = 14;

async function tokenFor(dataDir: string, url: string): Promise<string> {
  const env = { DATABASE_URL: url };
  await cli(dataDir, ['user', 'add', 'alice'], '', env);
  return cli(dataDir, ['token', 'create', '--user', 'alice', '--scopes', 'read,write'], '', env);
}

/**
 * Holds `pastes` locked (ACCESS EXCLUSIVE, as the psql did) until `release` is
 * called; resolves once the lock is held.
 */
async function lockPastes(url: string, table = 'pastes'): Promise<{ release: () => Promise<void> }> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  beforeClusterStops(() => sql.end({ timeout: 1 }));
  let letGo: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  let locked: () => void = () => undefined;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const txn = sql.begin(async (tx) => {
    await tx`lock table ${tx(table)} in access exclusive mode`;
    locked();
    await held;
  });
  await isLocked;
  return {
    release: async () => {
      letGo();
      await txn;
      await sql.end({ timeout: 1 });
    },
  };
}

/** Sends `n` requests at once; answers each with how long it took. */
async function all(n: number, send: (i: number) => Promise<Res>): Promise<{ res: Res; ms: number }[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const t0 = performance.now();
      const res = await send(i);
      return { res, ms: performance.now() - t0 };
    }),
  );
}

function assertRefusedInTime(answers: { res: Res; ms: number }[], what: string): void {
  for (const { res, ms } of answers) {
    assert.equal(res.status, 503, `${what}: ${res.text}`);
    assert.equal(res.json['code'], 'storage_unavailable', `${what}: nothing was sent that could have taken effect`);
    assert.ok(Number(res.headers['retry-after']) >= 1, `${what}: Retry-After`);
    assert.ok(
      ms <= TIMEOUT_MS + MARGIN_MS + SLACK_MS,
      `${what} answered after ${Math.round(ms)} ms, over DATABASE_TIMEOUT_MS ${TIMEOUT_MS} + ${MARGIN_MS}`,
    );
  }
}

describe('a refusal is a fact (README, Running on PostgreSQL)', () => {
  test('with pastes locked past DATABASE_TIMEOUT_MS, refused creates, deletes, edits and one-time reads never happen afterwards', {
    timeout: 120_000,
  }, async () => {
    const url = await createTestDatabase();
    const dataDir = await tempDataDir();
    const token = await tokenFor(dataDir, url);
    const s: AppServer = await startServer({
      dataDir,
      env: { DATABASE_URL: url, DATABASE_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
    const make = async (content: string, extra: Record<string, unknown> = {}): Promise<string> => {
      const r = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content, ...extra } });
      assert.equal(r.status, 200, r.text);
      return r.json['hash'] as string;
    };
    const toDelete = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => make(`kept ${i}`)));
    const toEdit = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => make(`unchanged ${i}`)));
    const oneTime = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) => make(`secret ${i}`, { burn_after_read: 1 })),
    );
    // Each paste read (or peeked at) once, so the server has it cached: its refusal must come
    // from the write it would make, not from a read that waits.
    for (const hash of [...toDelete, ...toEdit])
      assert.equal((await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).status, 200);

    const rounds: [string, (i: number) => Promise<Res>][] = [
      [
        'create',
        (i) => req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: `refused create ${i}` } }),
      ],
      ['delete', (i) => req(s, 'POST', '/api/v1/paste_delete.php', { token, body: { hash: toDelete[i] } })],
      [
        'edit',
        (i) => req(s, 'POST', '/api/v1/paste_edit.php', { token, body: { hash: toEdit[i], content: `edited ${i}` } }),
      ],
      ['one-time read', (i) => req(s, 'GET', `/api/v1/paste.php?hash=${oneTime[i]}`, { token })],
    ];
    for (const [what, send] of rounds) {
      const lock = await lockPastes(url);
      let answers: { res: Res; ms: number }[] = [];
      try {
        // Still locked when the last answer came: whatever happens next happens after the refusals.
        answers = await all(CONCURRENT, send);
      } finally {
        await lock.release();
      }
      assertRefusedInTime(answers, what);
    }
    // Everything queued behind the lock has had its chance to run.
    await sleep(TIMEOUT_MS);

    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      const count = async (where: ReturnType<typeof sql>): Promise<number> =>
        ((await sql`select count(*)::int as n from pastes where ${where}`)[0]?.['n'] as number) ?? -1;
      assert.deepEqual(
        {
          'refused creates that exist': await count(sql`content_json like '%refused create%'`),
          'refused deletes carried out': CONCURRENT - (await count(sql`hash = any(${toDelete}::text[])`)),
          'refused edits carried out': await count(sql`content_json like '%edited%'`),
          'one-time pastes burned without their text sent': await count(sql`hash = any(${oneTime}::text[]) and burned`),
        },
        {
          'refused creates that exist': 0,
          'refused deletes carried out': 0,
          'refused edits carried out': 0,
          'one-time pastes burned without their text sent': 0,
        },
      );
    } finally {
      await sql.end({ timeout: 1 });
    }
    // And the server serves as before: each one-time paste gives its text once.
    for (const [i, hash] of oneTime.entries()) {
      const r = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
      assert.equal(r.status, 200, r.text);
      assert.equal((r.json['paste'] as Record<string, unknown>)['content'], `secret ${i}`);
    }
  });

  test('creates arriving one after another while pastes stay locked are each answered within DATABASE_TIMEOUT_MS and the margin', {
    timeout: 120_000,
  }, async () => {
    const url = await createTestDatabase();
    const dataDir = await tempDataDir();
    const token = await tokenFor(dataDir, url);
    const s = await startServer({ dataDir, env: { DATABASE_URL: url, DATABASE_TIMEOUT_MS: String(TIMEOUT_MS) } });
    assert.equal((await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'warm' } })).status, 200);
    const lock = await lockPastes(url);
    const answers: Promise<{ res: Res; ms: number }>[] = [];
    try {
      // A create every 50 ms for five timeouts: the later ones find the pool full of earlier
      // ones, and the accounts' check of each second waits behind them too.
      for (let i = 0; i < (TIMEOUT_MS * 5) / 50; i++) {
        const t0 = performance.now();
        answers.push(
          req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: `steady ${i}` } }).then((res) => ({
            res,
            ms: performance.now() - t0,
          })),
        );
        await sleep(50);
      }
      assertRefusedInTime(await Promise.all(answers), 'create under a held lock');
      // The accounts' check (each second) held up most of a timeout, then let through: the
      // create's own wait is what is left of the request's time, not a whole timeout more.
      await sleep(1_500);
      const accounts = await lockPastes(url, 'accounts_state');
      const late = all(5, (i) => req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: `late ${i}` } }));
      await sleep(TIMEOUT_MS * 0.6);
      await accounts.release();
      assertRefusedInTime(await late, 'create after a slow accounts check');
    } finally {
      await lock.release();
    }
  });

  test('while the probe finds the database down, requests that need it are refused at once; its first success closes the breaker', {
    timeout: 120_000,
  }, async () => {
    const db = await ownCluster();
    const dataDir = await tempDataDir();
    const token = await tokenFor(dataDir, db.url);
    const s = await startServer({ dataDir, env: { DATABASE_URL: db.url, DATABASE_TIMEOUT_MS: '4000' } });
    assert.equal(
      (await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'before' } })).status,
      200,
    );
    db.stop();
    let health = await req(s, 'GET', '/healthz');
    for (let i = 0; i < 100 && health.status === 200; i++) {
      await sleep(100);
      health = await req(s, 'GET', '/healthz');
    }
    assert.equal(health.status, 503, 'the probe saw the outage');
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: `during ${i}` } });
      const ms = performance.now() - t0;
      assert.equal(r.status, 503, r.text);
      assert.equal(r.json['code'], 'storage_unavailable');
      assert.match(r.json.error ?? '', /does not answer/);
      assert.ok(ms < 1_000, `refused after ${Math.round(ms)} ms, not at once (DATABASE_TIMEOUT_MS is 4000)`);
    }
    db.start();
    let back = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'after' } });
    for (let i = 0; i < 100 && back.status !== 200; i++) {
      await sleep(100);
      back = await req(s, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'after' } });
    }
    assert.equal(back.status, 200, 'the breaker closed once the database answered');
    assert.ok(OUTCOME_WAIT_MS <= MARGIN_MS, 'the wait for an outcome fits in the stated margin');
  });
});
