import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { Metrics } from '../src/metrics/registry.ts';
import { BACKEND } from './helpers/backend.ts';
import { FILE_COUNT_MS } from '../src/observe.ts';
import { sendFiles } from './helpers/multipart.ts';
import { startS3 } from './helpers/s3.ts';
import { makeToken, req, startServer, type AppServer } from './helpers/server.ts';
import { until } from './helpers/until.ts';
import { skipWithout, tool } from './helpers/tools.ts';

const TOKEN = 'scrape-token-0123456789';

/** The samples of an exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

const scrape = async (
  server: { port: number },
  token: string | null = TOKEN,
): Promise<{ status: number; text: string; type: string }> => {
  const r = await req(server, 'GET', '/metrics', token === null ? {} : { token });
  return { status: r.status, text: r.text, type: String(r.headers['content-type']) };
};

describe('/metrics access', () => {
  test('off by default: /metrics is an ordinary missing page', async () => {
    const server = await startServer();
    assert.equal((await scrape(server)).status, 404);
    assert.equal(server.metricsPort, null);
  });

  test('METRICS_TOKEN: on the main port for that bearer token only', async () => {
    const server = await startServer({ env: { METRICS_TOKEN: TOKEN } });
    assert.equal((await scrape(server, null)).status, 401);
    assert.equal((await scrape(server, `${TOKEN}x`)).status, 401);
    const ok = await scrape(server);
    assert.equal(ok.status, 200);
    assert.equal(ok.type, 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(ok.text, /^# HELP paste_http_requests_total /m);
  });

  test('METRICS_LISTEN alone: a second port serves /metrics and nothing else; the main port does not', async () => {
    const server = await startServer({ env: { METRICS_LISTEN: '127.0.0.1:0' } });
    const port = server.metricsPort ?? 0;
    assert.ok(port > 0 && port !== server.port);
    assert.equal((await scrape({ port }, null)).status, 200);
    assert.equal((await req({ port }, 'GET', '/healthz')).status, 404);
    assert.equal((await scrape(server)).status, 404, 'never anonymous on the public port');
  });

  test('both: the second port asks for the token too', async () => {
    const server = await startServer({ env: { METRICS_LISTEN: '127.0.0.1:0', METRICS_TOKEN: TOKEN } });
    const port = server.metricsPort ?? 0;
    assert.equal((await scrape({ port }, null)).status, 401);
    assert.equal((await scrape({ port })).status, 200);
    assert.equal((await scrape(server)).status, 200);
  });
});

describe('what /metrics counts', () => {
  test('a known workload moves each counter by exactly its size, labels stay bounded, and promtool finds no problem', async (t) => {
    const server: AppServer = await startServer({ env: { METRICS_TOKEN: TOKEN } });
    const token = await makeToken(server.dataDir);
    const slow = await makeToken(server.dataDir, { user: 'bob', rate: 2 });
    const before = samples((await scrape(server)).text);
    const N = 7;
    const M = 11;
    const K = 3;
    const hashes: string[] = [];
    for (let i = 0; i < N; i++)
      hashes.push(
        String(
          (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: `p${i}` } })).json['hash'],
        ),
      );
    for (let i = 0; i < M; i++)
      assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${hashes[i % N]}`, { token })).status, 200);
    // Bob's bucket holds 2: then K refusals.
    for (let i = 0; i < 2 + K; i++) await req(server, 'GET', `/api/v1/raw.php?hash=${hashes[0]}`, { token: slow });
    for (let i = 0; i < 4; i++)
      assert.equal(
        (await req(server, 'GET', '/api/v1/paste.php?hash=AAAAAAAAAA', { token: 'pst_wrongtok_abc' })).status,
        401,
      );
    // Three anonymous views of one short paste: its code block and page are made for the
    // first (and not kept), made and kept on the second, and the third reuses the page (or,
    // if a minute turns between, the code block).
    for (let i = 0; i < 3; i++) assert.equal((await req(server, 'GET', `/p/${hashes[1]}`)).status, 200);
    assert.equal(
      (await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash: hashes[2] } })).status,
      200,
    );
    // A wrong method on a known route is counted under that route; an unknown path under none.
    assert.equal((await req(server, 'PUT', `/api/v1/paste.php?hash=${hashes[0]}`, { token })).status, 405);
    assert.equal((await req(server, 'DELETE', `/p/${hashes[0]}`)).status, 405);
    assert.equal((await req(server, 'GET', '/api/v1/nothing.php', { token })).status, 404);
    const { text } = await scrape(server);
    const after = samples(text);
    const delta = (key: string): number => (after.get(key) ?? 0) - (before.get(key) ?? 0);

    assert.equal(
      delta('paste_http_requests_total{side="api",route="/api/v1/paste_create.php",method="POST",status="2xx"}'),
      N,
    );
    assert.equal(delta('paste_http_requests_total{side="api",route="/api/v1/paste.php",method="GET",status="2xx"}'), M);
    assert.equal(delta('paste_http_requests_total{side="api",route="/api/v1/raw.php",method="GET",status="4xx"}'), K);
    assert.equal(delta('paste_rate_limited_total{side="api"}'), K);
    assert.equal(delta('paste_auth_failures_total{kind="token"}'), 4);
    assert.equal(delta('paste_http_requests_total{side="web",route="/p/:hash",method="GET",status="2xx"}'), 3);
    assert.equal(delta('paste_page_parts_made_total{part="code"}'), 2);
    assert.equal(
      delta('paste_page_parts_made_total{part="page"}') + delta('paste_page_parts_reused_total{part="page"}'),
      3,
    );
    assert.ok(
      delta('paste_page_parts_reused_total{part="page"}') + delta('paste_page_parts_reused_total{part="code"}') >= 1,
      'the third view reuses what the second kept',
    );
    assert.ok((after.get('paste_page_parts_bytes') ?? 0) > 0);
    assert.equal(
      delta('paste_http_requests_total{side="api",route="/api/v1/paste.php",method="other",status="4xx"}'),
      1,
    );
    assert.equal(delta('paste_http_requests_total{side="web",route="/p/:hash",method="other",status="4xx"}'), 1);
    assert.equal(delta('paste_http_requests_total{side="api",route="unmatched",method="GET",status="4xx"}'), 1);
    assert.equal(
      delta('paste_http_request_duration_seconds_count{side="api",route="/api/v1/paste.php"}'),
      M + 5,
      'the 200s, the 401s and the 405',
    );
    assert.equal(delta('paste_pastes_created_total'), N);
    assert.equal(delta('paste_pastes_deleted_total'), 1);
    assert.ok(delta('paste_durable_writes_total') >= N, 'each create is a durable write');
    // On PostgreSQL a durable write is a commit, whose fsync is the database's: the server times none.
    if (BACKEND === 'files') assert.ok(delta('paste_fsync_duration_seconds_count{what="file"}') >= N);
    else assert.equal(delta('paste_fsync_duration_seconds_count{what="file"}'), 0);
    assert.ok(delta('paste_cache_hits_total') + delta('paste_cache_misses_total') >= M);
    assert.ok((after.get('process_resident_memory_bytes') ?? 0) > 10_000_000);
    assert.ok((after.get('paste_open_connections') ?? 0) >= 1);

    // No label holds a hash or a raw path: only route patterns.
    for (const h of hashes) assert.ok(!text.includes(h), `hash ${h} in a label`);
    assert.ok(!text.includes('AAAAAAAAAA'));

    if (skipWithout(t, 'promtool')) return;
    const check = spawnSync(tool('promtool'), ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(check.error, undefined);
    assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
  });
});

/**
 * Two pastes' files, one of their bytes shared, then both deleted and swept: the gauges count
 * each distinct file once, from the claims the paste store keeps, wherever the bytes are.
 */
async function storedFilesRound(env: Record<string, string> = {}): Promise<void> {
  const server = await startServer({ env: { METRICS_TOKEN: TOKEN, ...env } });
  const token = await makeToken(server.dataDir, { user: 'alice' });
  const stored = async (): Promise<[number | undefined, number | undefined]> => {
    const s = samples((await scrape(server)).text);
    return [s.get('paste_files_stored'), s.get('paste_file_bytes_stored')];
  };
  // A scrape answers the last count and starts the next once it is FILE_COUNT_MS old.
  const reaches = (files: number, bytes: number): Promise<number> =>
    until(async () => (await stored()).join() === `${files},${bytes}`, {
      what: `${files} files of ${bytes} bytes in /metrics`,
      timeoutMs: 4 * FILE_COUNT_MS,
      everyMs: 200,
    });
  await reaches(0, 0);
  const one = Buffer.alloc(1000, 1);
  const two = Buffer.alloc(2345, 2);
  const hashes: string[] = [];
  for (const files of [
    [
      { name: 'one.bin', bytes: one },
      { name: 'two.bin', bytes: two },
    ],
    [{ name: 'again.bin', bytes: one }],
  ]) {
    const r = await sendFiles(server, token, { content: 'with files' }, files);
    assert.equal(r.status, 200, r.text);
    hashes.push(r.json['hash'] as string);
  }
  await reaches(2, 3345);
  for (const hash of hashes)
    assert.equal((await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } })).status, 200);
  server.clock.advance(61_000);
  await server.upkeep();
  await reaches(0, 0);
}

describe('stored files', () => {
  test('paste_files_stored and paste_file_bytes_stored count each distinct file once, and follow creates and the sweep', async () => {
    await storedFilesRound();
  });

  test('with FILE_STORE=s3://, the same counts, from the claims: the bytes are in the bucket, which is never listed', async (t) => {
    const bucket = await startS3();
    t.after(() => bucket.stop());
    await storedFilesRound(bucket.env);
    assert.deepEqual(
      bucket.asked.filter((a) => /[?&]list-type=|^GET \/[^/?]+\/?(\?|$)/.test(a)),
      [],
      'the bucket was never listed',
    );
    assert.ok(
      bucket.asked.some((a) => a.startsWith('PUT ')),
      'the bytes went to the bucket',
    );
  });
});

describe('the exposition format', () => {
  test('HELP, TYPE, escaped label values, cumulative buckets with +Inf, _sum and _count', () => {
    const m = new Metrics();
    m.counter('x_total', 'Things\nand "more" \\ stuff.', ['k']).inc(['a "quoted"\nvalue\\'], 2);
    const h = m.histogram('y_seconds', 'Time.', [], [0.1, 1]);
    for (const v of [0.05, 0.5, 0.5, 3]) h.observe(v);
    assert.equal(
      m.expose(),
      [
        '# HELP x_total Things\\nand "more" \\\\ stuff.',
        '# TYPE x_total counter',
        'x_total{k="a \\"quoted\\"\\nvalue\\\\"} 2',
        '# HELP y_seconds Time.',
        '# TYPE y_seconds histogram',
        'y_seconds_bucket{le="0.1"} 1',
        'y_seconds_bucket{le="1"} 3',
        'y_seconds_bucket{le="+Inf"} 4',
        'y_seconds_sum 4.05',
        'y_seconds_count 4',
        '',
      ].join('\n'),
    );
    assert.throws(() => m.counter('x_total', 'again'), /defined twice/);
  });
});
