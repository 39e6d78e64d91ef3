import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import { startOidcProvider } from '../helpers/oidc-provider.ts';
import { cli, startServer } from '../helpers/server.ts';
import { skipWithout, tool } from '../helpers/tools.ts';

// The whole round trip in a real browser (README, Sign-in with OpenID Connect): the provider's
// own login page, the callback's cookie across two hosts (localhost and 127.0.0.1), Log out through the provider.
test('a user signs in through the provider’s login page, lands on My pastes, creates a paste and signs out', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const op = await startOidcProvider();
  const s = await startServer({ env: op.env() });
  op.register(s.url);
  await cli(s.dataDir, ['user', 'add', 'ada', '--password-stdin'], 'password123');
  op.users.set('ada-at-provider', { preferred_username: 'ada' });
  const browser = await chromium.launch({ executablePath: tool('chromium'), args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${s.url}/my`);
    await page.waitForURL(/\/login\?next=%2Fmy$/);
    await Promise.all([page.waitForURL(`${op.issuer}/**`), page.click('a:has-text("Sign in with SSO")')]);
    await page.fill('input[name=login]', 'ada-at-provider');
    await page.fill('input[name=password]', 'anything');
    await Promise.all([page.waitForURL(`${s.url}/my`, { timeout: 15_000 }), page.click('button[type=submit]')]);
    assert.match((await page.textContent('.nav-logout')) ?? '', /ada/);
    assert.match((await page.textContent('h1')) ?? '', /My pastes/);
    await page.goto(`${s.url}/`);
    await page.fill('#title', 'from SSO');
    await page.fill('#content', 'made after an OpenID Connect sign-in');
    await Promise.all([page.waitForURL(/\/p\/[A-Za-z0-9]{10}$/), page.click('form[action="/"] button[type=submit]')]);
    assert.match((await page.textContent('body')) ?? '', /made after an OpenID Connect sign-in/);
    // Log out: this site's session ends, then the provider's sign-out asks, and sends the browser back here.
    await Promise.all([page.waitForURL(`${op.issuer}/**`, { timeout: 10_000 }), page.click('.nav-logout button')]);
    await Promise.all([
      page.waitForURL(`${s.url}/`, { timeout: 10_000 }),
      page.click('button[autofocus], button[type=submit]'),
    ]);
    assert.equal(await page.locator('.nav-logout').count(), 0);
    await page.goto(`${s.url}/my`);
    await page.waitForURL(/\/login\?next=%2Fmy$/);
  } finally {
    await browser.close();
  }
});
