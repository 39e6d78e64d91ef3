import assert from 'node:assert/strict';
import { test } from 'node:test';
import hljs from '#highlight.js';
import { cleanup, makeToken, req, spawnServer, startServer } from '../helpers/server.ts';
import { probeHealth } from '../helpers/health-probe.ts';

const HASKELL = `wordCount :: String -> Map.Map String Int
wordCount = foldr (\\w m -> Map.insertWith (+) w 1 m) Map.empty . words -- "count" {-x-}
`;

/**
 * A megabyte in an uncommon language, against a server in its own process: its first view is
 * under a second, and a health check sent meanwhile is not held up for long: reading the text,
 * each slice of highlight.js's head and writing the page take turns apart (web/paste-view.ts).
 * The bound leaves room for the parallel test run on a loaded runner; made in one go, the
 * first view held the checks past it.
 */
test('a 1 MiB paste in an uncommon language: first view under a second, the loop never held long', async (t) => {
  const server = await spawnServer();
  try {
    const token = await makeToken(server.dataDir);
    const content = HASKELL.repeat(Math.ceil(1_048_576 / HASKELL.length)).slice(0, 1_048_576);
    const made = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content, language: 'haskell' },
    });
    assert.equal(made.status, 200, made.text);
    const probe = probeHealth(server, 5);
    const started = performance.now();
    const page = await req(server, 'GET', `/p/${made.json['hash']}`);
    const first = performance.now() - started;
    const worst = await probe.stop();
    t.diagnostic(`first view ${first.toFixed(0)} ms, longest health check ${worst.toFixed(0)} ms`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<span class="tk-fn">wordCount<\/span>/);
    assert.ok(first < 1000, `first view took ${first.toFixed(0)} ms`);
    assert.ok(worst < 300, `a health check waited ${worst.toFixed(0)} ms`);
  } finally {
    await server.stop();
    await cleanup(server.dataDir);
  }
});

/**
 * The same page in this process, counting turns of the event loop: highlight.js is given the
 * head a slice at a time, each in a turn of its own, so what a page holds the loop for is
 * bounded by work, however loaded the machine.
 */
test('a 1 MiB paste in an uncommon language is highlighted a slice per turn of the event loop', async () => {
  const server = await startServer();
  const token = await makeToken(server.dataDir);
  const content = HASKELL.repeat(Math.ceil(1_048_576 / HASKELL.length)).slice(0, 1_048_576);
  const made = await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content, language: 'haskell' } });
  assert.equal(made.status, 200, made.text);
  let turn = 0;
  let counting = true;
  const count = (): void => {
    turn++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const turns: number[] = [];
  const original = hljs.highlight;
  hljs.highlight = (code, options) => {
    turns.push(turn);
    return original.call(hljs, code, options);
  };
  try {
    const page = await req(server, 'GET', `/p/${made.json['hash']}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<span class="tk-fn">wordCount<\/span>/);
  } finally {
    hljs.highlight = original;
    counting = false;
  }
  assert.ok(turns.length >= 4, `highlight.js was called ${turns.length} times`);
  assert.equal(new Set(turns).size, turns.length, `more than one slice in a turn: ${turns}`);
});
