import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { makeToken, startServer, type AppServer } from '../helpers/server.ts';
import { storedPasteCount } from '../helpers/stored.ts';
import { skipWithout, tool, willSkip } from '../helpers/tools.ts';

/**
 * A real browser's CORS (README, CORS): a page served from another origin (another port)
 * calls the API with a bearer token. The same page server reached as `localhost` instead
 * of `127.0.0.1` is a third origin, one CORS_ORIGINS does not list.
 */
let pages: Server;
let listed: string;
let unlisted: string;
let api: AppServer;
let token: string;
let browser: Browser;
let page: Page;

before(async () => {
  if (willSkip('chromium')) return;
  const executablePath = tool('chromium');
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>another origin</title><p>a page of another site</p>');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const port = (pages.address() as AddressInfo).port;
  listed = `http://127.0.0.1:${port}`;
  unlisted = `http://localhost:${port}`;
  api = await startServer({ env: { CORS_ORIGINS: listed } });
  token = await makeToken(api.dataDir, { user: 'alice' });
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync', '--no-first-run'],
  });
  page = await (await browser.newContext()).newPage();
});

after(async () => {
  await browser?.close();
  if (pages) await new Promise((resolve) => pages.close(resolve));
});

/** Runs, in the page, a create and a read of the paste with a bearer token; answers what the page could see. */
const roundTrip = (p: Page, apiUrl: string, secret: string) =>
  p.evaluate(
    async ({ apiUrl, secret }) => {
      try {
        const made = await fetch(`${apiUrl}/api/v1/paste_create.php`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ title: 'from a page', content: 'made across origins' }),
        });
        const { hash } = (await made.json()) as { hash: string };
        const read = await fetch(`${apiUrl}/api/v1/paste.php?hash=${hash}`, {
          headers: { authorization: `Bearer ${secret}` },
        });
        const body = (await read.json()) as { paste: { content: string } };
        return {
          status: read.status,
          content: body.paste.content,
          etag: read.headers.get('etag'),
          requestId: read.headers.get('x-request-id'),
          limit: read.headers.get('x-ratelimit-limit'),
        };
      } catch (err) {
        return { blocked: String(err) };
      }
    },
    { apiUrl, secret },
  );

test('a page of a listed origin creates and reads a paste with a bearer token, and reads the exposed headers', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  await page.goto(`${listed}/`);
  const got = await roundTrip(page, api.url, token);
  assert.ok(!('blocked' in got), JSON.stringify(got));
  assert.equal(got.status, 200);
  assert.equal(got.content, 'made across origins');
  assert.match(String(got.etag), /^"[A-Za-z0-9]{10}\./);
  assert.ok(got.requestId !== null && got.requestId !== '');
  assert.equal(got.limit, '0');
});

test('a page of an unlisted origin cannot read the answers, and its preflight keeps the create from being sent', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const before = await storedPasteCount(api.dataDir);
  await page.goto(`${unlisted}/`);
  const got = await roundTrip(page, api.url, token);
  assert.ok('blocked' in got, JSON.stringify(got));
  assert.match(got.blocked, /TypeError|Failed to fetch/);
  assert.equal(await storedPasteCount(api.dataDir), before);
});
