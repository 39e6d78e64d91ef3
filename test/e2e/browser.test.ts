import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { cleanup, ROOT, spawnServer, type TestServer } from '../helpers/server.ts';
import { skipWithout, tool, willSkip } from '../helpers/tools.ts';
import { registerThrough } from '../helpers/register-page.ts';

const ARTIFACTS = join(ROOT, 'test/artifacts');
const VIEWPORTS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

before(async () => {
  if (willSkip('chromium')) return;
  const executablePath = tool('chromium');
  await mkdir(ARTIFACTS, { recursive: true });
  server = await spawnServer();
  browser = await chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  context = await browser.newContext({ viewport: VIEWPORTS.desktop, baseURL: server.url, reducedMotion: 'reduce' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  page = await context.newPage();
  // Any CSP violation or script error means a page is broken in a real browser.
  page.on('console', (m) => {
    // The burned page's 410 is expected; the browser reports every 4xx document as an error.
    if (m.type() === 'error' && !m.text().includes('status of 410')) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
});
after(async () => {
  await browser?.close();
  await server?.stop();
  if (server) await cleanup(server.dataDir);
});

const problems: string[] = [];

/** Screenshots of the current page at both widths, in both colour schemes. */
async function shoot(p: Page, name: string): Promise<void> {
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await p.setViewportSize(size);
    for (const scheme of ['light', 'dark'] as const) {
      await p.emulateMedia({ colorScheme: scheme });
      const path = join(ARTIFACTS, `${name}-${width}-${scheme}.png`);
      // Chromium on a busy machine now and then fails a capture ("Unable to capture screenshot"): try once more.
      await p.screenshot({ path, fullPage: true }).catch(async () => {
        await p.waitForTimeout(500);
        await p.screenshot({ path, fullPage: true });
      });
    }
  }
  await p.setViewportSize(VIEWPORTS.desktop);
  await p.emulateMedia({ colorScheme: 'light' });
}

async function apiCreate(
  token: string,
  body: Record<string, unknown>,
): Promise<{ hash: string; short_url: string; url: string }> {
  const r = await fetch(`${server.url}/api/v1/paste_create.php`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200);
  return (await r.json()) as { hash: string; short_url: string; url: string };
}

/** What makes a form field look like the site's (padding, corners, border, type size), computed by the browser. */
const inputLook = (selector: string): Promise<string> =>
  page.evaluate<string>(
    `(() => { const s = getComputedStyle(document.querySelector(${JSON.stringify(selector)})); return [s.paddingLeft, s.paddingTop, s.borderTopLeftRadius, s.borderTopWidth, s.borderTopColor, s.fontSize].join(' '); })()`,
  );

test('register, create a token, use it, open the paste by its short link, burn a one-time paste', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const anon = await browser.newPage({ viewport: VIEWPORTS.desktop, baseURL: server.url, reducedMotion: 'reduce' });
  await anon.goto('/');
  await shoot(anon, 'home-anonymous');
  await anon.goto('/login');
  await shoot(anon, 'login');
  await anon.close();

  await registerThrough(page, server.url, 'ada');
  assert.match((await page.textContent('.nav')) ?? '', /Admin/);

  await page.goto('/api_keys.php');
  await page.fill('#label', 'e2e script');
  await page.check('#new-scope-read');
  await page.check('#new-scope-write');
  await page.fill('#rate', '120');
  await page.click('form[action="/api_keys.php"] button:has-text("Create token")');
  const secret = await page.inputValue('#new-secret');
  assert.match(secret, /^pst_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
  await page.click('button[data-copy="new-secret"]');
  await page.waitForSelector('button[data-copy="new-secret"]:has-text("Copied!")');
  assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);
  await page.screenshot({ path: join(ARTIFACTS, 'api-keys-secret-desktop-light.png'), fullPage: true });
  await page.goto('/api_keys.php');
  assert.ok(!(await page.content()).includes(secret), 'the secret is shown only once');
  assert.match((await page.textContent('table')) ?? '', /e2e script/);
  await shoot(page, 'api-keys');

  const code =
    'import { readFile } from "node:fs/promises";\n\n// Count the lines of a file.\nexport async function lines(path: string): Promise<number> {\n  const text = await readFile(path, "utf8");\n  return text.split("\\n").length;\n}\n';
  const created = await apiCreate(secret, { title: 'Line counter <in TS>', content: code, language: 'typescript' });
  await page.goto(created.short_url);
  assert.equal(page.url(), created.url);
  assert.equal(await page.textContent('h1'), 'Line counter <in TS>');
  assert.equal(await page.locator('pre.code .l').count(), 7);
  const qr = page.locator('.qr img');
  await qr.waitFor();
  await page.waitForFunction('document.querySelector(".qr img").complete');
  assert.ok(
    await page.evaluate<boolean>('document.querySelector(".qr img").naturalWidth > 0'),
    'the QR image loaded (same-origin, allowed by the CSP)',
  );
  const box = await qr.boundingBox();
  assert.ok(box !== null && box.width >= 100 && box.height >= 100, 'the QR code is drawn at a scannable size');
  assert.equal(await page.textContent('#short-url'), created.short_url);
  await shoot(page, 'paste');
  await page.click('button[data-copy="paste-code"]');
  await page.waitForSelector('button[data-copy="paste-code"]:has-text("Copied!")');
  assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), code.replace(/\n$/, ''));
  await page.click('button[data-copy="short-url"]');
  await page.waitForSelector('button[data-copy="short-url"]:has-text("Copied!")');
  assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), created.short_url);

  const once = await apiCreate(secret, { title: 'Wifi password', content: 'hunter2-but-longer', burn_after_read: 1 });
  await page.goto(once.short_url);
  assert.equal(await page.title(), 'Burn After Read paste');
  assert.ok(!(await page.content()).includes('hunter2-but-longer'));
  await shoot(page, 'burn-warning');
  await page.click('button:has-text("Show it and burn it")');
  assert.match((await page.textContent('pre.code')) ?? '', /hunter2-but-longer/);
  assert.match((await page.textContent('.alert')) ?? '', /burned/);
  const again = await page.goto(once.url);
  assert.equal(again?.status(), 410);
  assert.match((await page.textContent('main')) ?? '', /burned/);

  await page.goto('/my');
  await shoot(page, 'my-pastes');
  await page.goto('/admin/logs');
  assert.match((await page.textContent('table')) ?? '', /paste_create\.php/);
  await shoot(page, 'admin-logs');
  await page.goto('/admin/tokens');
  await shoot(page, 'admin-tokens');
  await page.goto('/');
  await shoot(page, 'home');

  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});

test('a long unbroken title wraps on every page instead of overflowing it', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  // Logged in as the first test's user.
  const title = 'W'.repeat(200);
  await page.goto('/');
  await page.fill('#title', title);
  await page.fill('#content', 'long title');
  await page.click('form[action="/"] button[type=submit]');
  await page.waitForURL(/\/p\/[A-Za-z0-9]{10}$/);
  const hash = new URL(page.url()).pathname.slice(3);
  for (const [path, inner] of [
    ['/my', '.table-wrap'],
    [`/p/${hash}`, '.paste-head'],
    [`/p/${hash}/delete`, '.card'],
    ['/', '.columns'],
  ] as const) {
    for (const size of Object.values(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.goto(path);
      // How far the page, and the box around the title, would scroll sideways.
      const overflow = await page.evaluate<{ doc: number; inner: number }>(
        `(() => { const el = document.querySelector(${JSON.stringify(inner)}); return { doc: document.documentElement.scrollWidth - innerWidth, inner: el.scrollWidth - el.clientWidth }; })()`,
      );
      assert.deepEqual(overflow, { doc: 0, inner: 0 }, `${path} at ${size.width}px`);
    }
  }
  await page.setViewportSize(VIEWPORTS.desktop);
});

test('after unlocking a password paste, its Raw button opens without asking again', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  await page.goto('/');
  await page.fill('#title', 'Locked');
  await page.fill('#content', 'behind the password');
  await page.fill('#password', 'e2e-pass-word');
  await page.click('form[action="/"] button[type=submit]');
  await page.waitForURL(/\/p\/[A-Za-z0-9]{10}$/);
  const url = page.url();
  const visitor = await browser.newPage({ viewport: VIEWPORTS.desktop, baseURL: server.url });
  const gate = await visitor.goto(url);
  assert.equal(gate?.status(), 401);
  await visitor.fill('#password', 'e2e-pass-word');
  await visitor.click('button:has-text("Unlock")');
  assert.match((await visitor.textContent('pre.code')) ?? '', /behind the password/);
  assert.ok(!(await visitor.content()).includes('e2e-pass-word'), 'the page does not carry the password');
  const [raw] = await Promise.all([visitor.waitForNavigation(), visitor.click('a:has-text("Raw")')]);
  assert.equal(raw?.status(), 200);
  assert.equal(await visitor.textContent('body'), 'behind the password');
  await visitor.close();
  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});

test('an edited paste links its History, which shows a line diff; My API Keys offers and shows an expiry', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  // Logged in as the first test's user.
  await page.goto('/api_keys.php');
  assert.equal(await page.inputValue('#expires'), '90', 'new tokens expire in 90 days unless changed');
  await page.fill('#label', 'one week');
  await page.check('#new-scope-read');
  await page.check('#new-scope-write');
  await page.selectOption('#expires', '7');
  await page.click('form[action="/api_keys.php"] button:has-text("Create token")');
  const secret = await page.inputValue('#new-secret');
  const row = page.locator('tr', { hasText: 'one week' });
  assert.match((await row.locator('td[data-label="Expires"]').textContent()) ?? '', /in 7 days|in 6 days|7 days/);

  const created = await apiCreate(secret, { title: 'Evolving', content: 'first line\nsecond line\n' });
  const edit = await fetch(`${server.url}/api/v1/paste_edit.php`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ hash: created.hash, content: 'first line\n<b>changed</b> line\n' }),
  });
  assert.equal(edit.status, 200);
  await page.goto(created.url);
  await page.click('a:has-text("see the history")');
  await page.waitForURL(/\/history$/);
  assert.equal(await page.locator('pre.code.diff .tk-del').count(), 1);
  assert.equal(await page.locator('pre.code.diff .tk-add').textContent(), '+ <b>changed</b> line');
  await page.selectOption('#from', '2');
  await page.click('button:has-text("Show the changes")');
  assert.match((await page.textContent('main')) ?? '', /The text of these two revisions is the same/);
  await page.goto(`/p/${created.hash}/history`);
  await shoot(page, 'history');
  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});

test('links to lines, the wrap toggle, Download, New from this and Ctrl+Enter work in a real browser; the raw page has no console error', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  // Logged in as the first test's user.
  await page.goto('/');
  const body = Array.from({ length: 12 }, (_, i) => `line ${i + 1} ${'x'.repeat(i === 3 ? 300 : 5)}`).join('\n');
  await page.fill('#title', 'Anchors demo');
  await page.fill('#content', body);
  // Ctrl+Enter sends the form.
  await page.focus('#content');
  await page.keyboard.press('Control+Enter');
  await page.waitForURL(/\/p\/[A-Za-z0-9]{10}$/);
  const url = page.url();
  const hash = new URL(url).pathname.slice(3);

  await page.goto(`${url}#L5-L9`);
  assert.equal(await page.locator('#paste-code .l.hl').count(), 5);
  assert.equal(await page.locator('#paste-code .l.hl').first().textContent(), 'line 5 xxxxx');
  // A click on a line number links that line.
  await page
    .locator('#paste-code .l')
    .nth(2)
    .click({ position: { x: 8, y: 6 } });
  const clicked = await page.evaluate<string>('location.hash');
  assert.equal(clicked, '#L3');
  assert.equal(await page.locator('#paste-code .l.hl').count(), 1);

  // Wrap: the long line fits once wrapped, and the choice is remembered.
  const overflows = (): Promise<boolean> =>
    page.evaluate<boolean>(
      '(() => { const p = document.getElementById("paste-code"); return p.scrollWidth > p.clientWidth; })()',
    );
  assert.equal(await overflows(), true);
  await page.click('button[data-wrap]');
  assert.equal(await overflows(), false);
  await page.reload();
  assert.equal(await page.getAttribute('button[data-wrap]', 'aria-pressed'), 'true');
  await page.click('button[data-wrap]');

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('a:has-text("Download")')]);
  assert.equal(download.suggestedFilename(), 'Anchors-demo.txt');

  await page.click('a:has-text("New from this")');
  assert.equal(await page.inputValue('#content'), body);
  assert.equal(await page.inputValue('#title'), 'Anchors demo');

  await page.goto(`/p/${hash}/raw`);
  assert.equal(await page.textContent('body'), body);
  await page.waitForTimeout(300);
  assert.deepEqual(problems, [], 'no console errors or CSP violations, the raw page (and its favicon) included');
});

test('reloading the page that shows a new secret makes no second token; My pastes search finds a paste by a word of its text', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  // Logged in as the first test's user.
  await page.goto('/api_keys.php');
  const rows = (): Promise<number> => page.locator('td[data-label="Token"]').count();
  const before = await rows();
  await page.fill('#label', 'reload me');
  await page.check('#new-scope-read');
  await page.click('form[action="/api_keys.php"] button:has-text("Create token")');
  assert.match(await page.inputValue('#new-secret'), /^pst_/);
  await page.reload();
  assert.equal(await page.locator('#new-secret').count(), 0, 'the secret is not shown again');
  assert.equal(await rows(), before + 1, 'one token, however often the page is reloaded');

  await page.goto('/');
  await page.fill('#title', 'Needle holder');
  await page.fill('#content', 'hay hay hay\nthe word zanzibar is here\nhay');
  await page.click('form[action="/"] button[type=submit]');
  await page.waitForURL(/\/p\/[A-Za-z0-9]{10}$/);
  await page.goto('/my');
  await page.fill('#q', 'ZANZIBAR');
  await page.click('form[role="search"] button');
  await page.waitForURL(/\/my\?q=ZANZIBAR/);
  assert.deepEqual(await page.locator('.title-cell').allTextContents(), ['Needle holder']);
  await shoot(page, 'my-pastes-search');
  // The search box looks like the form's other fields, not like the browser's default input.
  assert.equal(await inputLook('#q'), await inputLook('#language'));
  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});

test('the Users page adds a user with a temporary password, changed at their first login; disables and enables them; the Audit page shows it all', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  // Logged in as the first test's user, the admin.
  await page.goto('/admin/users');
  await page.fill('#new-name', 'tempuser');
  await page.click('form[action="/admin/users"] button:has-text("Add user")');
  const password = await page.inputValue('#temporary-password');
  assert.match(password, /^[A-Za-z0-9]{16}$/);
  await page.click('button[data-copy="temporary-password"]');
  assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), password);
  await shoot(page, 'admin-users');

  // The new user logs in, in a second browser context.
  const other = await browser.newContext({ viewport: VIEWPORTS.desktop, baseURL: server.url });
  const theirs = await other.newPage();
  await theirs.goto('/login');
  await theirs.fill('#name', 'tempuser');
  await theirs.fill('#password', password);
  await theirs.click('form[action="/login"] button[type=submit]');
  await theirs.goto('/my');
  assert.equal(new URL(theirs.url()).pathname, '/account', 'a temporary password is changed first');
  await theirs.fill('#current', password);
  await theirs.fill('#password', 'tempusers-own-pw');
  await theirs.fill('#confirm', 'tempusers-own-pw');
  await theirs.click('form[action="/account"] button[type=submit]');
  assert.match((await theirs.textContent('.alert')) ?? '', /Your password was changed/);
  await theirs.goto('/my');
  assert.equal(new URL(theirs.url()).pathname, '/my');

  // Disabled: their next page sends them to log in.
  await page.goto('/admin/users');
  await page.click('#user-tempuser button:has-text("Disable")');
  assert.match((await page.textContent('.alert')) ?? '', /tempuser is disabled/);
  assert.match((await page.textContent('#user-tempuser')) ?? '', /disabled/);
  await theirs.goto('/my');
  assert.equal(new URL(theirs.url()).pathname, '/login');
  await other.close();
  await page.click('#user-tempuser button:has-text("Enable")');
  assert.match((await page.textContent('.alert')) ?? '', /tempuser is enabled again/);

  await page.goto('/admin/audit');
  const actions = await page.locator('td[data-label="Action"]').allTextContents();
  assert.deepEqual(actions.slice(0, 4), ['user.enable', 'user.disable', 'user.password_change', 'user.add']);
  await shoot(page, 'admin-audit');
  await page.goto('/admin/tokens?q=tempuser');
  assert.match((await page.textContent('main')) ?? '', /No token matches/);
  await page.goto('/my');
  const field = await inputLook('#language');
  await page.goto('/admin/tokens?q=tempuser');
  assert.equal(await inputLook('#token-q'), field, "the tokens' search box looks like the site's fields");
  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});
