import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, test } from 'node:test';
import { chromium } from 'playwright-core';
import { startServer } from '../helpers/server.ts';
import { skipWithout, tool } from '../helpers/tools.ts';

const signOut = createServer((_, res) => res.end('signed out of the proxy'));
after(() => new Promise<void>((resolve) => signOut.close(() => resolve())));

// The pages' CSP says form-action 'self', which Chromium also holds a form's redirect to:
// a 303 from the Log out form to the proxy's host is aborted, so the server must not send one.
test("Log out reaches AUTH_PROXY_LOGOUT_URL on another host in a real browser, past CSP's form-action", async (t) => {
  if (skipWithout(t, 'chromium')) return;
  await new Promise<void>((resolve) => signOut.listen(0, '127.0.0.1', resolve));
  const away = `http://127.0.0.1:${(signOut.address() as { port: number }).port}/logout`;
  const s = await startServer({
    env: {
      AUTH_PROXY_HEADER: 'Remote-User',
      AUTH_PROXY_TRUSTED: '127.0.0.1/32',
      AUTH_PROXY_CREATE: '1',
      AUTH_PROXY_LOGOUT_URL: away,
    },
  });
  const browser = await chromium.launch({ executablePath: tool('chromium'), args: ['--no-sandbox', '--disable-gpu'] });
  try {
    // The browser stands in for the proxy: every request it makes carries the header.
    const context = await browser.newContext({ extraHTTPHeaders: { 'Remote-User': 'alice' } });
    const page = await context.newPage();
    await page.goto(`${s.url}/my`);
    assert.match((await page.textContent('.nav-logout')) ?? '', /alice/);
    await Promise.all([page.waitForURL(away, { timeout: 10_000 }), page.click('.nav-logout button')]);
    assert.equal(await page.textContent('body'), 'signed out of the proxy');
  } finally {
    await browser.close();
  }
});
