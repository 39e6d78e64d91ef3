import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanup, makeToken, req, spawnServer } from '../helpers/server.ts';
import { probeHealth } from '../helpers/health-probe.ts';

const HASKELL = `wordCount :: String -> Map.Map String Int
wordCount = foldr (\\w m -> Map.insertWith (+) w 1 m) Map.empty . words -- "count" {-x-}
`;

/**
 * A megabyte in a language only highlight.js colours, against a server in its own process:
 * its first view is under a second, and a health check sent meanwhile is not held up for
 * long. The aim is ~50 ms at most per hold (highlight.js gets a 16 KiB head); the bound is ten
 * times that, for the parallel test run on a loaded runner (highlighting all of it takes seconds).
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
    assert.ok(worst < 500, `a health check waited ${worst.toFixed(0)} ms`);
  } finally {
    await server.stop();
    await cleanup(server.dataDir);
  }
});
