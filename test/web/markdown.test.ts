import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../helpers/server.ts';
import { MARKDOWN_MAX_CHARS } from '../../src/web/markdown-view.ts';

const README = `# Project *title*

| tool | state |
| --- | :---: |
| build | ~~broken~~ fixed |

- [ ] write tests
- [x] ship it

\`\`\`python
def greet(): return "hi"
\`\`\`

See https://example.com and [docs](/p/xyz).

![logo](/static/logo.png) ![pixel](https://tracker.example/p.gif)

<script>alert(1)</script>
`;

let s: TestServer;
let remote: TestServer;
let token: string;

before(async () => {
  s = await startServer({ env: { ANONYMOUS_PASTES: '0' } });
  token = await makeToken(s.dataDir, { user: 'alice' });
  remote = await startServer({ env: { MARKDOWN_REMOTE_IMAGES: '1' } });
});
after(async () => {
  await s?.stop();
  await remote?.stop();
});

async function paste(server: TestServer, content: string, language = 'markdown', tok?: string): Promise<string> {
  const t = tok ?? (await makeToken(server.dataDir, { user: 'bob' }));
  const r = await req(server, 'POST', '/api/v1/paste_create.php', { token: t, body: { content, language } });
  assert.equal(r.status, 200, r.text);
  return r.json['hash'] as string;
}

const article = (page: string): string =>
  /<article class="markdown" id="paste-code">(.*?)<\/article>/s.exec(page)?.[1] ?? '';

describe('a Markdown paste', () => {
  test('shows rendered: table, task list, strikethrough, autolinks, highlighted code, heading anchors', async () => {
    const hash = await paste(s, README, 'markdown', token);
    const page = await req(s, 'GET', `/p/${hash}`);
    assert.equal(page.status, 200);
    const md = article(page.text);
    assert.match(
      md,
      /<h1 id="md-project-title"><a class="anchor" href="#md-project-title" aria-hidden="true">#<\/a>Project <em>title<\/em><\/h1>/,
    );
    assert.match(md, /<table>[\s\S]*<th class="align-center">state<\/th>[\s\S]*<s>broken<\/s> fixed/);
    assert.match(md, /<li class="task"><input type="checkbox" disabled> write tests<\/li>/);
    assert.match(md, /<li class="task"><input type="checkbox" disabled checked> ship it<\/li>/);
    assert.match(md, /<pre class="md-code"><code><span class="tk-kw">def<\/span> <span class="tk-fn">greet<\/span>/);
    assert.match(md, /<a href="https:\/\/example.com" rel="nofollow noopener noreferrer">https:\/\/example.com<\/a>/);
    assert.match(md, /<img src="\/static\/logo.png" alt="logo"/);
    assert.match(md, /<a class="remote-image" href="https:\/\/tracker.example\/p.gif"[^>]*>pixel<\/a>/);
    assert.doesNotMatch(md, /<img src="https:/);
    assert.match(md, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.equal(page.text.match(/<script/g)?.length, 1, 'only the page script tag');
    assert.equal(
      page.headers['content-security-policy'],
      (await req(s, 'GET', '/')).headers['content-security-policy'],
    );
    assert.match(page.text, new RegExp(`href="/p/${hash}\\?view=source">Source</a>`));
  });

  test('?view=source shows the highlighted source with numbered lines; raw is unchanged', async () => {
    const hash = await paste(s, README, 'markdown', token);
    for (const round of [1, 2]) {
      const page = await req(s, 'GET', `/p/${hash}?view=source`);
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /<article class="markdown"/, `round ${round}`);
      assert.match(
        page.text,
        /<pre class="code" id="paste-code" tabindex="0"><code><span class="l"><span class="tk-kw"># Project/,
      );
      assert.match(page.text, new RegExp(`href="/p/${hash}">Rendered</a>`));
      // The rendered page, made and kept in between, is not what the source view answers.
      assert.match(article((await req(s, 'GET', `/p/${hash}`)).text), /<table>/);
    }
    const raw = await req(s, 'GET', `/p/${hash}/raw`);
    assert.equal(raw.text, README);
    const api = await req(s, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
    assert.equal(api.text, README);
  });

  test(`a text longer than ${MARKDOWN_MAX_CHARS} characters shows as its highlighted source`, async () => {
    const long = `# Long\n\n${'word '.repeat(MARKDOWN_MAX_CHARS / 5)}\n`;
    const hash = await paste(s, long, 'markdown', token);
    const page = await req(s, 'GET', `/p/${hash}`);
    assert.doesNotMatch(page.text, /<article class="markdown"/);
    assert.match(page.text, /<span class="tk-kw"># Long<\/span>/);
  });

  test('a paste in another language is not rendered, and has no view switch', async () => {
    const hash = await paste(s, '# not a heading\n', 'python', token);
    const page = await req(s, 'GET', `/p/${hash}`);
    assert.doesNotMatch(page.text, /<article class="markdown"|view=source/);
  });

  test('with MARKDOWN_REMOTE_IMAGES=1 images from other servers are shown, and the policy lets only images in', async () => {
    const hash = await paste(remote, README);
    const page = await req(remote, 'GET', `/p/${hash}`);
    assert.match(
      article(page.text),
      /<img src="https:\/\/tracker.example\/p.gif" alt="pixel" loading="lazy" referrerpolicy="no-referrer">/,
    );
    const policy = String(page.headers['content-security-policy']);
    assert.match(policy, /img-src 'self' data: https: http:/);
    assert.match(policy, /script-src 'self';/);
    assert.match(policy, /default-src 'none'/);
    const source = await req(remote, 'GET', `/p/${hash}?view=source`);
    assert.match(String(source.headers['content-security-policy']), /img-src 'self' data:;/);
  });
});
