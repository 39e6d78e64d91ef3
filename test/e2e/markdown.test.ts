import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { makeToken, req, startServer, type AppServer } from '../helpers/server.ts';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** A README with what people put in one, and what an attacker would. */
const SOURCE = `# Release notes

| step | done |
| --- | :---: |
| build | yes |
| test | ~~no~~ yes |

- [ ] announce
- [x] tag the release

\`\`\`javascript
const answer = 42; // the answer
\`\`\`

<img src=x onerror="window.ran = 'img'"> <script>window.ran = 'script'</script>
[click](javascript:window.ran='link') <svg onload="window.ran='svg'"></svg>
![x](https://tracker.invalid/pixel.gif)
`;

let server: AppServer;
let browser: Browser;
let page: Page;
const problems: string[] = [];

before(async () => {
  await access(CHROMIUM);
  server = await startServer();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-sync', '--no-first-run'],
  });
  page = await (await browser.newContext()).newPage();
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
});

after(async () => {
  await browser?.close();
});

test('a browser shows a Markdown paste rendered, with a table, a task list and highlighted code, and runs none of it', async () => {
  const token = await makeToken(server.dataDir, { user: 'alice' });
  const made = await req(server, 'POST', '/api/v1/paste_create.php', {
    token,
    body: { title: 'notes', content: SOURCE, language: 'markdown' },
  });
  assert.equal(made.status, 200, made.text);
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(`${server.url}/p/${made.json['hash']}`);

  const md = page.locator('article.markdown');
  assert.equal(await md.locator('h1').textContent(), '#Release notes');
  assert.equal(await md.locator('table tr').count(), 3);
  assert.equal(await md.locator('table td.align-center').first().textContent(), 'yes');
  assert.equal(await md.locator('s').textContent(), 'no');
  const boxes = md.locator('li.task input[type="checkbox"]');
  assert.equal(await boxes.count(), 2);
  assert.deepEqual([await boxes.nth(0).isChecked(), await boxes.nth(1).isChecked()], [false, true]);
  assert.equal(await boxes.nth(0).isDisabled(), true);
  const keyword = md.locator('pre.md-code .tk-kw').first();
  assert.equal(await keyword.textContent(), 'const');
  // The stylesheet colours it: a highlighted token is not drawn in the text's own colour.
  const colours: string[] = await page.evaluate(`(() => {
    const el = document.querySelector('article.markdown pre.md-code .tk-kw');
    return [getComputedStyle(el).color, getComputedStyle(el.parentElement).color];
  })()`);
  assert.notEqual(colours[0], colours[1]);

  // Nothing of the paste ran: no handler, no script, no javascript: link, no request to another host.
  assert.equal(await page.evaluate('window.ran'), undefined);
  await md.getByText('click').first().click();
  assert.equal(await page.evaluate('window.ran'), undefined);
  assert.equal(await md.locator('script, svg, iframe, img[src="x"]').count(), 0);
  assert.ok(!requested.some((u) => u.includes('tracker.invalid')), requested.join(' '));
  assert.deepEqual(problems, []);
});
