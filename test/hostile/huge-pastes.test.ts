import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { test } from 'node:test';
import { PAGE_MAX_CHARS, PAGE_MAX_LINES } from '../../src/web/code-view.ts';
import { makeToken, req, startServer } from '../helpers/server.ts';

/**
 * Pastes at the largest MAX_PASTE_BYTES allowed, with every other setting at its default
 * (DATABASE_TIMEOUT_MS included, on PostgreSQL): a create succeeds, and the paste's page shows
 * its beginning without holding the event loop, which here is the test's own (the server runs
 * in this process). The README aims at ~50 ms; the bound below leaves room for a machine so
 * loaded that the process waits for a core (gaps of 150-330 ms were seen with the page's own
 * work under 70 ms), where reading the whole paste for this page held it 3.6 s.
 */
const MIB = 1_048_576;
const LINE = 'const s = "<b>&amp;</b>"; // café ✓ \\ \'quoted\'\n';
const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

test('a 64 MiB paste is created with the default timeout, reads back whole, and its page shows the beginning without holding the event loop', async () => {
  const server = await startServer({ env: { MAX_PASTE_BYTES: String(64 * MIB) } });
  const token = await makeToken(server.dataDir);
  const lines = Math.floor((64 * MIB) / Buffer.byteLength(LINE));
  const content = LINE.repeat(lines);
  const bytes = Buffer.byteLength(content);
  const shown = Math.min(PAGE_MAX_LINES, Math.floor(PAGE_MAX_CHARS / LINE.length));
  const created = await req(server, 'POST', '/api/v1/paste_create.php', {
    token,
    body: { content, language: 'javascript', title: 'huge' },
  });
  assert.equal(created.status, 200, created.text);
  const hash = String(created.json['hash']);
  const raw = await req(server, 'GET', `/p/${hash}/raw`);
  assert.equal(raw.status, 200);
  assert.equal(sha256(raw.text), sha256(content), 'the text reads back as it was sent');

  let health = 0;
  const probe = setInterval(() => {
    void req(server, 'GET', '/healthz').then((r) => {
      if (r.status === 200) health++;
    });
  }, 20);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const pages: string[] = [];
  try {
    // The first view counts the whole text; the second is made from what the first kept.
    for (let view = 0; view < 2; view++) {
      const page = await req(server, 'GET', `/p/${hash}`);
      assert.equal(page.status, 200);
      pages.push(page.text);
    }
    const before = health;
    await new Promise<void>((resolve) => {
      const wait = setInterval(() => {
        if (health > before) {
          clearInterval(wait);
          resolve();
        }
      }, 5);
    });
  } finally {
    delay.disable();
    clearInterval(probe);
  }
  const worst = delay.max / 1e6;
  // The page itself holds the loop ~70 ms (README aims at ~50); a collection of this process's
  // 64 MiB strings under a second test file's load reached 684 ms in CI. Before the page read
  // only the text's beginning it held the loop 3.6 s and more, which this still refuses.
  assert.ok(worst < 1_500, `the event loop was held ${worst.toFixed(0)} ms while the page was made`);
  assert.ok(health > 0, '/healthz answered while the pages were made');
  for (const page of pages) {
    assert.equal(page.match(/<span class="l">/g)?.length, shown, 'the first lines, one row each');
    assert.match(page, /<span class="tk-kw">const<\/span>/, 'highlighted');
    assert.match(page, new RegExp(`${lines} lines of JavaScript &middot; ${(bytes / MIB).toFixed(1)} MiB`));
    assert.match(
      page,
      new RegExp(
        `the page shows only its first [\\d.]+ KiB \\(${shown} of ${lines} lines\\)\\. <a href="/p/${hash}/raw">Raw</a> has all of it`,
      ),
    );
    assert.ok(page.length < 2_000_000, `a page of ${page.length} characters`);
  }
});

test('a create at the default MAX_PASTE_BYTES succeeds with the default timeout', async () => {
  const server = await startServer();
  const token = await makeToken(server.dataDir);
  const content = `${'x'.repeat(MIB - 1)}\n`;
  const created = await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content } });
  assert.equal(created.status, 200, created.text);
  const raw = await req(server, 'GET', `/p/${String(created.json['hash'])}/raw`);
  assert.equal(sha256(raw.text), sha256(content));
});

test('a long paste the cache holds whole gets the same page: its beginning, and the size of the whole', async () => {
  const server = await startServer({ env: { MAX_PASTE_BYTES: String(16 * MIB), PASTE_CACHE_MB: '512' } });
  const token = await makeToken(server.dataDir);
  const lines = Math.floor((8 * MIB) / Buffer.byteLength(LINE));
  const content = LINE.repeat(lines);
  const created = await req(server, 'POST', '/api/v1/paste_create.php', {
    token,
    body: { content, language: 'javascript' },
  });
  assert.equal(created.status, 200, created.text);
  const hash = String(created.json['hash']);
  // A whole read puts it in the cache (on PostgreSQL, only while the cache hears every change).
  assert.equal((await req(server, 'GET', `/p/${hash}/raw`)).status, 200);
  const shown = Math.min(PAGE_MAX_LINES, Math.floor(PAGE_MAX_CHARS / LINE.length));
  for (let view = 0; view < 2; view++) {
    const page = await req(server, 'GET', `/p/${hash}`);
    assert.equal(page.status, 200);
    assert.equal(page.text.match(/<span class="l">/g)?.length, shown);
    assert.match(
      page.text,
      new RegExp(`${lines} lines of JavaScript &middot; ${(Buffer.byteLength(content) / MIB).toFixed(1)} MiB`),
    );
    assert.match(
      page.text,
      new RegExp(`\\(${shown} of ${lines} lines\\)\\. <a href="/p/${hash}/raw">Raw</a> has all of it`),
    );
  }
});
