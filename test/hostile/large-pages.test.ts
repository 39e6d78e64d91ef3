import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanup, makeToken, req, spawnServer } from '../helpers/server.ts';
import { WebClient } from '../helpers/web-client.ts';
import { probeHealth } from '../helpers/health-probe.ts';

/**
 * The pages of the largest pastes, against a server in its own process (so the event loop
 * measured is the server's alone): each page stays a few times the paste's size, and a
 * health check sent while ten views of each are served answers without waiting for them.
 * The bound on its latency is generous (the pages are rendered once per version and then
 * copied out): a correct build stays well inside it under the parallel test run on the
 * slowest CI, and rendering every view again still fails it by a wide margin.
 */
test('1 MiB pastes: proportionate pages, and /healthz keeps answering while they are served', async () => {
  const server = await spawnServer({ env: { METRICS_TOKEN: 'metrics-token-for-test' } });
  const parts = async (): Promise<Record<string, number>> => {
    const text = (await req(server, 'GET', '/metrics', { token: 'metrics-token-for-test' })).text;
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^paste_page_parts_(made|reused)_total\{part="(\w+)"\} (\d+)$/gm))
      out[`${m[2]} ${m[1]}`] = Number(m[3]);
    return out;
  };
  try {
    const token = await makeToken(server.dataDir);
    const create = async (content: string, language: string, burn = 0): Promise<string> => {
      const r = await req(server, 'POST', '/api/v1/paste_create.php', {
        token,
        body: { content, language, burn_after_read: burn },
      });
      assert.equal(r.status, 200, r.text);
      return String(r.json['hash']);
    };
    const amps = await create('&a'.repeat(524_288), 'css');
    const newlines = await create('\n'.repeat(1_048_576), 'text');
    const code = await create('const s = "<b>&amp;</b>"; // x\n'.repeat(33_000), 'javascript');
    const burns = await Promise.all([0, 1, 2].map(() => create('&a'.repeat(524_288), 'css', 1)));

    // Each one-time paste gets a visitor who has seen its warning page (and so holds its form token).
    const readers = await Promise.all(
      burns.map(async (h) => {
        const visitor = new WebClient(server);
        assert.match((await visitor.get(`/p/${h}`)).text, /Burn After Read paste/);
        return { visitor, h };
      }),
    );

    const before = await parts();
    const probe = probeHealth(server, 10);
    const views = await Promise.all([
      ...[amps, newlines, code].flatMap((h) => Array.from({ length: 10 }, () => req(server, 'GET', `/p/${h}`))),
      // A one-time paste's only showing has all of it, as plain text.
      ...readers.map(({ visitor, h }) => visitor.post(`/p/${h}`, {})),
    ]);
    const worst = await probe.stop();
    const after = await parts();
    const made = (part: string): number => (after[`${part} made`] ?? NaN) - (before[`${part} made`] ?? NaN);
    const reused = (part: string): number => (after[`${part} reused`] ?? NaN) - (before[`${part} reused`] ?? NaN);
    // Ten views at once of each of three pastes nobody had read: one read of each file, one
    // code block each, one page each (two if a minute turned meanwhile), the rest reused.
    assert.equal(made('code'), 3, 'each code block is made once');
    assert.ok(made('page') >= 3 && made('page') <= 6, `${made('page')} pages made for 30 views of 3 pastes`);
    assert.equal(made('page') + reused('page'), 30);

    for (const v of views) {
      assert.equal(v.status, 200);
      assert.ok(Buffer.byteLength(v.text) < 4_000_000, `a ${Buffer.byteLength(v.text)}-byte page for a 1 MiB paste`);
    }
    for (const v of views.slice(30)) {
      assert.match(v.text, /This paste is now burned/);
      assert.match(v.text, /<pre class="code plain" id="paste-code"/);
      assert.equal(v.text.split('&amp;a').length - 1, 524_288, 'the only showing has all of it');
    }
    assert.ok(worst < 4_000, `/healthz took ${worst.toFixed(0)} ms while large pages were served`);
  } finally {
    await server.stop();
    await cleanup(server.dataDir);
  }
});
