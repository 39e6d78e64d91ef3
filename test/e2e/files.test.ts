import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { cleanup, spawnServer, type ProcessServer } from '../helpers/server.ts';
import { registerThrough } from '../helpers/register-page.ts';
import { skipWithout, tool, willSkip } from '../helpers/tools.ts';
import { until } from '../helpers/until.ts';
import { readZip } from '../helpers/zip-reader.ts';

/** A 2×2 red PNG and a 1×1 transparent one: two images the page must show. */
const RED = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==';
const CLEAR = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

let server: ProcessServer;
let browser: Browser;
const problems: string[] = [];

before(async () => {
  if (willSkip('chromium')) return;
  server = await spawnServer({ env: { OPEN_REGISTRATION: '1' } });
  browser = await chromium.launch({ executablePath: tool('chromium'), args: ['--no-sandbox', '--disable-gpu'] });
});
after(async () => {
  await browser?.close();
  await server?.stop();
  if (server) await cleanup(server.dataDir);
});

async function signedIn(name: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: server.url });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  await registerThrough(page, server.url, name);
  return page;
}

/** Sends `event` (paste or drop) to `selector` carrying one file, as the browser does for a pasted screenshot or a drop. */
function dispatchFile(page: Page, selector: string, event: 'paste' | 'drop', name: string, type: string, b64: string) {
  const arg = JSON.stringify({ selector, name, type, b64 });
  const make =
    event === 'paste'
      ? "new ClipboardEvent('paste', { bubbles: true, cancelable: true, clipboardData: dt })"
      : "new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt })";
  return page.evaluate(`(() => {
    const a = ${arg};
    const bytes = Uint8Array.from(atob(a.b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bytes], a.name, { type: a.type }));
    document.querySelector(a.selector).dispatchEvent(${make});
  })()`);
}

test('files by picker, by drop and by pasting a screenshot: listed, removable, sent, shown inline, zipped', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const page = await signedIn('ada');
  await page.waitForSelector('[data-files-hint]:not([hidden])');
  await page.fill('#title', 'Screens');
  await page.fill('#content', 'what the screens show');
  await page.setInputFiles('#file', { name: 'picked.png', mimeType: 'image/png', buffer: Buffer.from(RED, 'base64') });
  await dispatchFile(page, '#content', 'paste', 'image.png', 'image/png', CLEAR);
  await dispatchFile(page, '#content', 'drop', 'dropped.log', 'text/plain', Buffer.from('a log\n').toString('base64'));
  const names = (): Promise<string[]> => page.locator('[data-files-list] .file-name').allTextContents();
  await page.waitForSelector('[data-files-list] li:nth-child(3)');
  const listed = await names();
  assert.equal(listed[0], 'picked.png');
  assert.match(listed[1] ?? '', /^screenshot-\d{8}-\d{6}\.png$/);
  assert.equal(listed[2], 'dropped.log');
  await page.click('[data-files-list] button[aria-label="Remove dropped.log"]');
  assert.deepEqual(await names(), listed.slice(0, 2));
  assert.equal(await page.inputValue('#content'), 'what the screens show');

  await page.click('button:has-text("Create paste")');
  await page.waitForURL(/\/p\/[A-Za-z0-9]{10}$/);
  const hash = page.url().slice(-10);
  // Page functions are eval'd inside the page, which its CSP forbids: polled from here instead.
  await until(
    () =>
      page.evaluate<boolean>(
        "[...document.querySelectorAll('img.file-image')].filter((i) => i.complete && i.naturalWidth > 0).length === 2",
      ),
    { what: 'both images shown' },
  );
  assert.deepEqual(await page.locator('.files-card .file-name').allTextContents(), listed.slice(0, 2));

  const zip = await page.request.get(`/p/${hash}/files.zip`);
  assert.equal(zip.status(), 200);
  const entries = readZip(await zip.body());
  assert.deepEqual(
    entries.map((e) => e.name),
    ['Screens.txt', ...listed.slice(0, 2)],
  );
  assert.ok(entries[1]?.bytes.equals(Buffer.from(RED, 'base64')));
  assert.deepEqual(problems, [], 'no script error, no CSP violation');
});

test('a file past the limit is refused in the browser before anything is sent', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const page = await signedIn('bea');
  await page.waitForSelector('[data-files-hint]:not([hidden])');
  const max = Number(await page.getAttribute('[data-files]', 'data-max-file-bytes'));
  await page.setInputFiles('#file', {
    name: 'huge.bin',
    mimeType: 'application/octet-stream',
    buffer: Buffer.alloc(max + 1),
  });
  await page.waitForSelector('[data-files-status]:not([hidden])');
  assert.match((await page.locator('[data-files-status]').textContent()) ?? '', /huge\.bin is larger than/);
  assert.equal(await page.locator('[data-files-list] li').count(), 0);
  assert.equal(await page.evaluate<number>("document.querySelector('#file').files.length"), 0);
  assert.deepEqual(problems, []);
});

test('an image copied to the clipboard and pasted with Ctrl+V becomes a screenshot file', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const page = await signedIn('cy');
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await page.waitForSelector('[data-files-hint]:not([hidden])');
  await page.evaluate(`(async () => {
    const bytes = Uint8Array.from(atob(${JSON.stringify(RED)}), (c) => c.charCodeAt(0));
    await navigator.clipboard.write([new ClipboardItem({ 'image/png': new Blob([bytes], { type: 'image/png' }) })]);
  })()`);
  await page.focus('#content');
  await page.keyboard.press('Control+V');
  await page.waitForSelector('[data-files-list] li');
  assert.match(
    (await page.locator('[data-files-list] .file-name').textContent()) ?? '',
    /^screenshot-\d{8}-\d{6}\.png$/,
  );
  assert.equal(await page.inputValue('#content'), '', 'nothing pasted as text');
  assert.deepEqual(problems, []);
});

test('the edit form: remove a file by its box, add one by the picker; the upload shows its progress', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const page = await signedIn('dee');
  await page.waitForSelector('[data-files-hint]:not([hidden])');
  await page.fill('#content', 'two files');
  await page.setInputFiles('#file', [
    { name: 'a.png', mimeType: 'image/png', buffer: Buffer.from(RED, 'base64') },
    { name: 'b.log', mimeType: 'text/plain', buffer: Buffer.from('b\n') },
  ]);
  await page.click('button:has-text("Create paste")');
  await page.waitForURL(/\/p\/[A-Za-z0-9]{10}$/);
  const hash = page.url().slice(-10);
  await page.goto(`/p/${hash}/edit`);
  await page.waitForSelector('[data-files-hint]:not([hidden])');
  await page.check('input[name="remove_file"][value="b.log"]');
  await page.setInputFiles('#file', { name: 'c.log', mimeType: 'text/plain', buffer: Buffer.alloc(300_000, 0x63) });
  // The post is held until the page has shown its progress bar.
  let shown = false;
  await page.route(`**/p/${hash}/edit`, async (route) => {
    if (route.request().method() === 'POST') {
      await until(async () => (shown = await page.isVisible('[data-files-progress]')), { what: 'the progress bar' });
    }
    await route.continue();
  });
  await page.click('button:has-text("Save changes")');
  await page.waitForURL(new RegExp(`/p/${hash}$`));
  assert.ok(shown);
  assert.deepEqual(await page.locator('.files-card .file-name').allTextContents(), ['a.png', 'c.log']);
  assert.deepEqual(problems, []);
});

test('with "Encrypt in my browser" ticked, files are sealed rather than sent in the clear', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const page = await signedIn('eve');
  await page.waitForSelector('[data-encrypt]:not([hidden])');
  await page.fill('#content', 'secret text');
  await page.check('#encrypt');
  await page.setInputFiles('#file', { name: 'plain.log', mimeType: 'text/plain', buffer: Buffer.from('plain\n') });
  await page.click('button:has-text("Create paste")');
  await page.waitForURL(/\/p\/[A-Za-z0-9]{10}#[A-Za-z0-9_-]{43}$/);
  // Its page, with the key: the one file under its real name, which the server never had (test/e2e/encrypted.test.ts).
  await page.waitForSelector('.files-card a.file-name[download="plain.log"]');
  const hash = new URL(page.url()).pathname.slice(3);
  const listed = await page.request.get(`/p/${hash}/files/f1.enc`);
  assert.equal(listed.status(), 200);
  assert.doesNotMatch(await listed.text(), /plain/);
  assert.deepEqual(problems, []);
});
