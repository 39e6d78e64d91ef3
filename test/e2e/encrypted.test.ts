import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { cleanup, ROOT, spawnServer, type ProcessServer } from '../helpers/server.ts';
import { apiLogLines, everythingStored, storedFileBytes, storedPaste } from '../helpers/stored.ts';
import { registerThrough } from '../helpers/register-page.ts';
import { skipWithout, tool, willSkip } from '../helpers/tools.ts';
import { until } from '../helpers/until.ts';

const SENTENCE = /This paste is encrypted; the link you have lacks its key\./;
const MARKER = 'zebra-quartz-7731';
const TEXT = `import os\n\ndef greet(name):\n    # ${MARKER}\n    return "hello " + name\n\nprint(greet(os.getlogin()))\n`;
const PASSWORD = 'plum-orchard-4412';
const ARTIFACTS = join(ROOT, 'test/artifacts');
const LINK = /\/p\/[A-Za-z0-9]{10}#([A-Za-z0-9_-]{43})$/;
/** Small, so a file of exactly the limit is quick to seal; the files of the other tests are far smaller. */
const MAX_FILE_BYTES = 20_000;

let server: ProcessServer;
let browser: Browser;
const problems: string[] = [];

before(async () => {
  if (willSkip('chromium')) return;
  const executablePath = tool('chromium');
  await mkdir(ARTIFACTS, { recursive: true });
  server = await spawnServer({ env: { OPEN_REGISTRATION: '1', MAX_FILE_BYTES: String(MAX_FILE_BYTES) } });
  browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
});
after(async () => {
  await browser?.close();
  await server?.stop();
  if (server) await cleanup(server.dataDir);
});

/** A page in a browser context of its own (its own cookies), whose script errors and CSP violations are collected. */
async function freshPage(): Promise<Page> {
  const context = await browser.newContext({ baseURL: server.url });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('status of 410')) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return page;
}

/** A fresh page signed in as a new user `name`, on the home page. */
async function registered(name: string): Promise<Page> {
  const page = await freshPage();
  await registerThrough(page, server.url, name);
  return page;
}

/** Creates a paste from the home page with "Encrypt in my browser"; answers the link it lands on. */
async function createEncrypted(page: Page, opts: { password?: string; burn?: boolean }): Promise<string> {
  await page.goto('/');
  await page.fill('#title', 'Encrypted notes');
  await page.fill('#content', TEXT);
  await page.waitForSelector('[data-encrypt]:not([hidden])');
  await page.check('#encrypt');
  if (opts.password !== undefined) await page.fill('#encrypt-password', opts.password);
  if (opts.burn === true) await page.check('input[name="burn_after_read"]');
  await page.screenshot({ path: join(ARTIFACTS, 'encrypted-create.png'), fullPage: true });
  await page.click('button:has-text("Create paste")');
  await page.waitForURL(LINK);
  return page.url();
}

/** Waits until the page has decrypted the paste, or said why it cannot. */
const settled = (page: Page): Promise<unknown> =>
  page.waitForSelector('#paste-code:not([hidden]), #sealed-status:has-text("lacks its key")');

test('an encrypted paste with a password: the server never holds the text or the key; its readers need both', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const ada = await registered('ada');

  const link = await createEncrypted(ada, { password: PASSWORD });
  const key = (LINK.exec(link) as RegExpExecArray)[1] as string;
  const bare = link.slice(0, link.indexOf('#'));

  // Neither the text, the key nor the password is in the data folder (or database), the API log or the server's log.
  const stored = await everythingStored(server.dataDir);
  const apiLog = JSON.stringify(await apiLogLines(server.dataDir));
  for (const secret of [MARKER, 'greet(name)', key, PASSWORD]) {
    assert.ok(!stored.includes(secret), `${secret} stored`);
    assert.ok(!apiLog.includes(secret), `${secret} in the API log`);
    assert.ok(!server.output().includes(secret), `${secret} in the server log`);
  }
  assert.ok(stored.includes('AES-256-GCM'), 'the envelope is what was stored');

  // Another browser, with the link and the password: the text, highlighted, and the link to share with its QR code.
  const reader = await freshPage();
  await reader.goto(link);
  await reader.waitForSelector('#sealed-password:not([hidden])');
  assert.ok(!(await reader.content()).includes(MARKER), 'the page the server sent holds no text');
  await reader.fill('#sealed-pw', PASSWORD);
  await reader.click('#sealed-password button');
  await settled(reader);
  assert.equal(await reader.locator('#paste-code .l').count(), 7);
  assert.match((await reader.textContent('#paste-code')) ?? '', new RegExp(MARKER));
  assert.ok((await reader.locator('#paste-code .tk-kw').count()) > 0, 'highlighted');
  assert.match((await reader.textContent('#sealed-language')) ?? '', /Python/);
  assert.equal(await reader.textContent('#sealed-link'), link);
  await reader.waitForSelector('#sealed-qr[src^="data:image/svg+xml"]');
  const qrWidth = (img: unknown): number => (img as { naturalWidth: number }).naturalWidth;
  await reader.waitForFunction(
    (f) => f(),
    await reader.locator('#sealed-qr').evaluateHandle((img) => () => (img as { complete: boolean }).complete),
  );
  assert.ok((await reader.locator('#sealed-qr').evaluate(qrWidth)) > 0, 'the QR code made in the browser loads (CSP)');
  assert.match((await reader.textContent('#sealed-share')) ?? '', /short link cannot hold the key/);
  await reader.screenshot({ path: join(ARTIFACTS, 'encrypted-paste.png'), fullPage: true });
  // A click on a line number links lines on other pastes; here the fragment is the key, and stays.
  await reader
    .locator('#paste-code .l')
    .nth(2)
    .click({ position: { x: 4, y: 4 } });
  assert.equal(reader.url(), link);

  // Without the fragment, with another key, or with a wrong password: the sentence, never the text.
  const stranger = await freshPage();
  for (const url of [bare, `${bare}#${'A'.repeat(43)}`]) {
    // From another document each time: from the same page, a new fragment would not load it again.
    await stranger.goto('about:blank');
    await stranger.goto(url);
    if (url !== bare) {
      await stranger.fill('#sealed-pw', PASSWORD);
      await stranger.click('#sealed-password button');
    }
    await settled(stranger);
    assert.match((await stranger.textContent('#sealed-status')) ?? '', SENTENCE, url);
    assert.ok(!((await stranger.textContent('main')) ?? '').includes(MARKER));
  }
  await stranger.goto('about:blank');
  await stranger.goto(link);
  await stranger.fill('#sealed-pw', 'not the password');
  await stranger.click('#sealed-password button');
  await settled(stranger);
  assert.match((await stranger.textContent('#sealed-status')) ?? '', SENTENCE);
  assert.equal(await stranger.locator('#paste-code').isHidden(), true);
  await stranger.screenshot({ path: join(ARTIFACTS, 'encrypted-wrong-password.png'), fullPage: true });

  // A one-time encrypted paste opens once, then 410.
  const once = await createEncrypted(ada, { burn: true });
  assert.equal(await ada.title(), 'Burn After Read paste', 'its author is shown the warning, not the paste');
  const first = await freshPage();
  await first.goto(once);
  await first.waitForSelector('[data-keep-key]');
  await first.waitForFunction(
    (form) => (form as { action: string }).action.includes('#'),
    await first.locator('form[data-keep-key]').elementHandle(),
  );
  await first.click('button:has-text("Show it and burn it")');
  await settled(first);
  assert.match((await first.textContent('#paste-code')) ?? '', new RegExp(MARKER));
  const second = await freshPage();
  const gone = await second.goto(once);
  assert.equal(gone?.status(), 410);
  assert.ok(!(await everythingStored(server.dataDir)).includes((LINK.exec(once) as RegExpExecArray)[1] as string));

  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});

/** A 2×2 red PNG (test/e2e/files.test.ts has it too): an image the page must show. */
const RED = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==';

test("an encrypted paste's files: sealed in the browser, opened by the link's reader with their names and bytes", async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const cy = await registered('cy');
  const png = Buffer.from(RED, 'base64');
  const notes = Buffer.from(`the notes ${MARKER}\n`);
  await cy.fill('#content', TEXT);
  await cy.waitForSelector('[data-encrypt]:not([hidden])');
  await cy.check('#encrypt');
  await cy.fill('#encrypt-password', PASSWORD);
  await cy.setInputFiles('#file', [
    { name: 'chart-kestrel.png', mimeType: 'image/png', buffer: png },
    { name: 'notes-kestrel.txt', mimeType: 'text/plain', buffer: notes },
  ]);
  await cy.click('button:has-text("Create paste")');
  await cy.waitForURL(LINK);
  const link = cy.url();
  const key = (LINK.exec(link) as RegExpExecArray)[1] as string;

  // What the server received and keeps holds neither the names nor the bytes: two opaque envelopes.
  const hash = new URL(link).pathname.slice(3);
  const files = ((await storedPaste(server.dataDir, hash))?.['files'] ?? []) as Record<string, unknown>[];
  assert.deepEqual(
    files.map((f) => [f['name'], f['type']]),
    [
      ['f1.enc', 'application/octet-stream'],
      ['f2.enc', 'application/octet-stream'],
    ],
  );
  const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
  const held = await storedFileBytes(server.dataDir);
  for (const b of [png, notes]) assert.ok(!held.includes(sha(b)), 'plain bytes stored');
  const stored = await everythingStored(server.dataDir);
  for (const secret of ['kestrel', MARKER]) assert.ok(!stored.includes(secret), `${secret} stored`);

  // Another browser with the link and the password: the image shown, the text file saved by its real name.
  const reader = await freshPage();
  await reader.goto(link);
  await reader.waitForSelector('#sealed-password:not([hidden])');
  await reader.fill('#sealed-pw', PASSWORD);
  await reader.click('#sealed-password button');
  await settled(reader);
  // Each file is decrypted on its own: both are waited for.
  await reader.waitForSelector('.files-card img.file-image[alt="chart-kestrel.png"]');
  await reader.waitForSelector('.files-card a.file-name[download="notes-kestrel.txt"]');
  // Page functions are eval'd inside the page, which its CSP forbids: polled from here instead (files.test.ts).
  await until(
    () =>
      reader.evaluate<boolean>(
        "[...document.querySelectorAll('img.file-image')].filter((i) => i.complete && i.naturalWidth === 2).length === 1",
      ),
    { what: 'the decrypted image shown' },
  );
  assert.deepEqual(await reader.locator('.files-card .file-name').allTextContents(), [
    'chart-kestrel.png',
    'notes-kestrel.txt',
  ]);
  const [download] = await Promise.all([
    reader.waitForEvent('download'),
    reader.click('.files-card a.file-name:has-text("notes-kestrel.txt")'),
  ]);
  assert.equal(download.suggestedFilename(), 'notes-kestrel.txt');
  assert.ok((await readFile(await download.path())).equals(notes));
  await reader.screenshot({ path: join(ARTIFACTS, 'encrypted-files.png'), fullPage: true });

  // Its author adds a file on the edit form reached from the page, so with the key; without it the form takes none.
  await cy.goto(`/p/${hash}/edit`);
  assert.equal(await cy.locator('[data-sealed-files]').isHidden(), true);
  assert.equal(await cy.locator('#file').isDisabled(), true);
  await cy.goto('about:blank');
  await cy.goto(link);
  await cy.fill('#sealed-pw', PASSWORD);
  await cy.click('#sealed-password button');
  await settled(cy);
  await cy.click('.owner-tools a:has-text("Edit")');
  await cy.waitForURL(new RegExp(`/p/${hash}/edit#${key}$`));
  await cy.waitForSelector('[data-sealed-files]:not([hidden]) #file:not([disabled])');
  await cy.fill('#encrypt-password', PASSWORD);
  await cy.setInputFiles('#file', {
    name: 'added-kestrel.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('added\n'),
  });
  await cy.click('button:has-text("Save changes")');
  await cy.waitForURL(link);
  await cy.fill('#sealed-pw', PASSWORD);
  await cy.click('#sealed-password button');
  await cy.waitForSelector('.files-card a.file-name[download="added-kestrel.txt"]');
  const edited = ((await storedPaste(server.dataDir, hash))?.['files'] ?? []) as Record<string, unknown>[];
  assert.deepEqual(
    edited.map((f) => f['name']),
    ['f1.enc', 'f2.enc', 'f3.enc'],
  );
  assert.ok(!(await everythingStored(server.dataDir)).includes('kestrel'));
  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});

/** Creates a paste with a password from the home page, "Encrypt in my browser" ticked, choosing `files`. */
async function createSealed(page: Page, files: { name: string; buffer: Buffer }[]): Promise<void> {
  await page.fill('#content', TEXT);
  await page.waitForSelector('[data-encrypt]:not([hidden])');
  await page.check('#encrypt');
  await page.fill('#encrypt-password', PASSWORD);
  await page.setInputFiles(
    '#file',
    files.map((f) => ({ ...f, mimeType: 'application/octet-stream' })),
  );
}

/** Opens `link` in another browser with the password; answers the page once the text is decrypted. */
async function openSealed(link: string): Promise<Page> {
  const reader = await freshPage();
  await reader.goto(link);
  await reader.fill('#sealed-pw', PASSWORD);
  await reader.click('#sealed-password button');
  await settled(reader);
  return reader;
}

test('a file of exactly MAX_FILE_BYTES is sealed and taken; one byte more is refused before anything is sent', async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const di = await registered('di');
  const full = Buffer.alloc(MAX_FILE_BYTES, 0x2e);
  await createSealed(di, [
    { name: 'full-wren.bin', buffer: full },
    { name: 'over-wren.bin', buffer: Buffer.alloc(MAX_FILE_BYTES + 1, 1) },
  ]);
  // The page's limit is the file's as chosen: the one a byte past it is refused here, before anything is encrypted.
  await di.waitForSelector('[data-files-status]:not([hidden])');
  assert.match((await di.textContent('[data-files-status]')) ?? '', /over-wren\.bin is larger than 19\.5 KiB/);
  await di.click('button:has-text("Create paste")');
  await di.waitForURL(LINK);
  const link = di.url();

  // One envelope went in, larger than MAX_FILE_BYTES: the limit was the file's, not its envelope's.
  const hash = new URL(link).pathname.slice(3);
  const files = ((await storedPaste(server.dataDir, hash))?.['files'] ?? []) as Record<string, unknown>[];
  assert.deepEqual(
    files.map((f) => f['name']),
    ['f1.enc'],
  );
  assert.ok(Number(files[0]?.['size']) > MAX_FILE_BYTES * 1.3, String(files[0]?.['size']));

  const reader = await openSealed(link);
  const bin = reader.locator('.files-card li:has(a[download="full-wren.bin"])');
  await bin.waitFor();
  assert.match((await bin.textContent()) ?? '', /19\.5 KiB/);
  const [download] = await Promise.all([reader.waitForEvent('download'), bin.locator('a').click()]);
  assert.ok((await readFile(await download.path())).equals(full));
  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});

test("an encrypted paste's text file is shown highlighted by its name once decrypted, its HTML as text", async (t) => {
  if (skipWithout(t, 'chromium')) return;
  const ed = await registered('ed');
  const script = Buffer.from(`def main():\n    return "<script>alert('wren')</script>"\n`);
  const data = Buffer.from([0, 1, 2, 0xff]);
  await createSealed(ed, [
    { name: 'tool-wren.py', buffer: script },
    { name: 'data-wren.bin', buffer: data },
  ]);
  await ed.click('button:has-text("Create paste")');
  await ed.waitForURL(LINK);

  const reader = await openSealed(ed.url());
  const item = '.files-card li:has(a[download="tool-wren.py"])';
  await reader.waitForSelector(`${item} pre.code`);
  assert.ok((await reader.locator(`${item} pre.code .tk-kw`).count()) > 0, 'highlighted as Python');
  assert.deepEqual(
    (await reader.locator(`${item} pre.code .l`).allTextContents()).map((l) => l.trim()),
    ['def main():', `return "<script>alert('wren')</script>"`],
  );
  assert.equal(await reader.locator('.files-card script').count(), 0, 'the text stays text');
  assert.match((await reader.textContent(item)) ?? '', /Python/);
  // A file whose name names no language stays a download with its size.
  const bin = reader.locator('.files-card li:has(a[download="data-wren.bin"])');
  await bin.waitFor();
  assert.match((await bin.textContent()) ?? '', /4 bytes/);
  assert.equal(await bin.locator('pre').count(), 0);
  await reader.screenshot({ path: join(ARTIFACTS, 'encrypted-file-code.png'), fullPage: true });
  assert.deepEqual(problems, [], 'no console errors or CSP violations');
});
