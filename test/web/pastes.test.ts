import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../helpers/server.ts';
import { createViaForm, registerAll, WebClient, type WebRes } from '../helpers/web-client.ts';
import { scanQrSvg } from '../helpers/qr-scan.ts';

let s: TestServer;
let admin: WebClient;
let alice: WebClient;
let bob: WebClient;
let anon: WebClient;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1', MAX_PASTE_BYTES: '2000' } });
  [admin, alice, bob] = await registerAll(s, 'admin', 'alice', 'bob');
  anon = new WebClient(s);
});

const HOSTILE_TITLE = '<script>alert(1)</script>"\'&';
const HOSTILE_CONTENT = '</code></pre><script>alert("x")</script><img src=x onerror=alert(1)>\n"quoted" & \'single\'';

/** No markup from the paste reached the page unescaped: the only script tag is ours. */
function assertInert(r: WebRes): void {
  assert.equal(r.text.match(/<script/g)?.length, 1, 'only the page script tag');
  assert.ok(!r.text.includes('<img src=x'));
  assert.ok(!r.text.includes('</code></pre><script'));
}

describe('creating a paste from the home page', () => {
  test('anonymous visitors see recent pastes and a prompt to log in; posting sends them to log in', async () => {
    const home = await anon.get('/');
    assert.equal(home.status, 200);
    assert.match(home.text, /Log in to create a paste/);
    assert.doesNotMatch(home.text, /name="content"/);
    await anon.get('/login');
    const r = await anon.post('/', { content: 'x' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/login?next=%2F');
  });

  test('the title box lets through every title the server takes: maxlength counts UTF-16 units', async () => {
    const home = await alice.get('/');
    assert.match(home.text, /<input type="text" id="title" name="title" value="" maxlength="400"/);
    const hash = await createViaForm(alice, { title: '😀'.repeat(200), content: 'x' });
    assert.ok((await alice.get(`/p/${hash}`)).text.includes(`<bdi>${'😀'.repeat(200)}</bdi>`));
    await alice.get('/');
    assert.equal(
      (await alice.post('/', { title: '😀'.repeat(201), content: 'x' })).status,
      400,
      'the server still counts code points',
    );
  });

  test('the form offers every field the API takes on create', async () => {
    const home = await alice.get('/');
    for (const name of [
      'title',
      'content',
      'language',
      'privacy',
      'expiry',
      'password',
      'highlight',
      'burn_after_read',
    ]) {
      assert.match(home.text, new RegExp(`name="${name}"`), name);
    }
    assert.match(home.text, /<option value="auto" selected>Auto-detect<\/option>/);
    for (const e of ['never', '10m', '1h', '1d', '1w', '1m'])
      assert.match(home.text, new RegExp(`<option value="${e}"`));
  });

  test('a valid form creates the paste and shows it; the language is detected', async () => {
    const hash = await createViaForm(alice, {
      title: 'Greeting',
      content: '#!/usr/bin/env python3\nprint("hi")\n',
      expiry: '1d',
    });
    const page = await alice.get(`/p/${hash}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<title>Greeting<\/title>/);
    assert.match(page.text, /Python/);
    assert.match(page.text, /<dt>Author<\/dt><dd><bdi>alice<\/bdi><\/dd>/);
    assert.match(page.text, /<dt>Expires<\/dt><dd><time/);
    const api = await req(s, 'GET', `/p/${hash}/raw`);
    assert.equal(api.text, '#!/usr/bin/env python3\nprint("hi")\n');
  });

  test('problems re-render the form with 400, the typed content kept', async () => {
    await alice.get('/');
    const r = await alice.post('/', {
      title: 'x'.repeat(201),
      content: 'keep <this> text',
      privacy: 'nope',
      expiry: '2y',
      language: 'klingon',
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /Title must be at most 200 characters/);
    assert.match(r.text, /Privacy must be public, unlisted or private/);
    assert.match(r.text, /Expiry must be one of/);
    assert.ok(r.text.includes('keep &lt;this&gt; text</textarea>'));
  });

  test('a box sent with a value other than 1 or 0 is refused with 400, never taken for 0', async () => {
    await alice.get('/');
    for (const [name, value] of [
      ['burn_after_read', 'true'],
      ['burn_after_read', '2'],
      ['highlight', 'yes'],
    ] as const) {
      const r = await alice.post('/', { content: `flag ${name}=${value}`, [name]: value });
      assert.equal(r.status, 400, `${name}=${value}`);
      assert.match(r.text, new RegExp(`${name} must be 0 or 1`, 'i'));
    }
    const asked = await alice.post('/', { content: 'a one-time secret', burn_after_read: '1' });
    assert.equal(asked.status, 303);
    assert.match((await alice.get(asked.location ?? '')).text, /Burn After Read paste/);
  });

  test('empty content is refused, oversized content answers 413', async () => {
    await alice.get('/');
    assert.equal((await alice.post('/', { content: '' })).status, 400);
    const big = await alice.post('/', { content: 'é'.repeat(1001) });
    assert.equal(big.status, 413);
    assert.match(big.text, /content exceeds 2000 bytes/i);
  });

  test('content that starts with a blank line keeps it', async () => {
    const hash = await createViaForm(alice, { content: '\n\nindented' });
    assert.equal((await req(s, 'GET', `/p/${hash}/raw`)).text, '\n\nindented');
  });
});

describe('escaping', () => {
  test('a hostile title and content are inert on every page that shows them', async () => {
    const hash = await createViaForm(alice, { title: HOSTILE_TITLE, content: HOSTILE_CONTENT, language: 'html' });
    const plain = await createViaForm(alice, {
      title: HOSTILE_TITLE,
      content: HOSTILE_CONTENT,
      language: 'text',
      highlight: '0',
    });
    for (const path of [`/p/${hash}`, `/p/${plain}`, '/', '/my', `/p/${hash}/edit`, `/p/${hash}/delete`]) {
      const r = await alice.get(path);
      assert.equal(r.status, 200, path);
      assertInert(r);
      assert.ok(
        r.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;'),
        `${path} shows the title escaped`,
      );
    }
    const page = await alice.get(`/p/${plain}`);
    assert.ok(page.text.includes('&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
  });
});

describe('text direction', () => {
  test('titles and names are isolated in <bdi> wherever they are shown', async () => {
    const title = 'חשבונית.exe';
    const hash = await createViaForm(alice, { title, content: 'x' });
    const isolated = `<bdi>${title}</bdi>`;
    const page = await alice.get(`/p/${hash}`);
    assert.ok(page.text.includes(`<h1 class="paste-title">${isolated}</h1>`));
    assert.ok(page.text.includes('<dd><bdi>alice</bdi></dd>'));
    assert.ok(page.text.includes(`<title>${title}</title>`));
    assert.ok(page.text.includes('Log out <span class="who"><bdi>alice</bdi></span>'));
    assert.ok((await alice.get('/')).text.includes(`<span class="item-title">${isolated}</span>`));
    assert.ok((await alice.get('/my')).text.includes(`href="/p/${hash}">${isolated}</a>`));
    assert.ok((await alice.get(`/p/${hash}/delete`)).text.includes(`<strong>${isolated}</strong>`));
  });
});

describe('the paste page', () => {
  test('a short link on a dotted host wraps only after its scheme, before a dot and before /s/, never in its port', async () => {
    const dotted = await startServer({ env: { BASE_URL: 'http://paste.example.org:8443' } });
    const token = await makeToken(dotted.dataDir);
    const made = await req(dotted, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x' } });
    const hash = String(made.json?.['hash']);
    const page = await req(dotted, 'GET', `/p/${hash}`);
    assert.ok(
      page.text.includes(
        `id="short-url" href="http://paste.example.org:8443/s/${hash.slice(0, 6)}">http://<wbr>paste<wbr>.example<wbr>.org:8443<wbr>/s/${hash.slice(0, 6)}</a>`,
      ),
      page.text,
    );
  });

  test('highlights when highlight is 1 and shows plain escaped text when 0', async () => {
    const on = await createViaForm(alice, { content: 'const answer = 42;\nreturn answer;', language: 'javascript' });
    const off = await createViaForm(alice, {
      content: 'const answer = 42;\nreturn answer;',
      language: 'javascript',
      highlight: '0',
    });
    const a = await alice.get(`/p/${on}`);
    assert.match(a.text, /<span class="l"><span class="tk-kw">const<\/span>/);
    assert.equal(a.text.match(/<span class="l">/g)?.length, 2);
    const b = await alice.get(`/p/${off}`);
    assert.doesNotMatch(b.text, /tk-/);
    assert.match(b.text, /<span class="l">const answer = 42;<\/span><span class="l">return answer;<\/span>/);
    assert.match(b.text, /not highlighted/);
  });

  test('shows the short link with its QR code, raw and copy buttons, and counts views', async () => {
    const hash = await createViaForm(alice, { title: 'Counted', content: 'views' });
    const first = await anon.get(`/p/${hash}`);
    const short = `${s.url}/s/${hash.slice(0, 6)}`;
    // It may wrap after its scheme and before its /s/ part, never inside the host or its port.
    assert.ok(
      first.text.includes(
        `<a class="shortlink-text" id="short-url" href="${short}">http://<wbr>localhost:${s.port}<wbr>/s/${hash.slice(0, 6)}</a>`,
      ),
    );
    assert.ok(
      first.text.includes(
        `<span class="qr"><img src="/p/${hash}/qr.svg" width="134" height="134" alt="QR code for ${short}"></span>`,
      ),
    );
    assert.match(first.text, /href="\/p\/[A-Za-z0-9]{10}\/raw">Raw<\/a>/);
    assert.match(first.text, /data-copy="paste-code"/);
    assert.doesNotMatch(first.text, /\/edit"/, 'no edit link for a stranger');
    assert.match(first.text, /<dt>Views<\/dt><dd>1<\/dd>/);
    assert.match((await anon.get(`/p/${hash}`)).text, /<dt>Views<\/dt><dd>2<\/dd>/);
    assert.match((await alice.get(`/p/${hash}`)).text, /\/p\/[A-Za-z0-9]{10}\/edit"/, 'the owner gets edit and delete');
  });

  test('the QR code is an SVG image of the short link, cached by the browser, seen by whoever sees the paste', async () => {
    const hash = await createViaForm(alice, { content: 'qr' });
    const short = `${s.url}/s/${hash.slice(0, 6)}`;
    const r = await anon.get(`/p/${hash}/qr.svg`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'image/svg+xml');
    assert.equal(r.headers['cache-control'], 'private, max-age=86400');
    assert.equal(r.headers['content-security-policy'], "default-src 'none'");
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.match(r.text, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 (\d+) \1"/);
    assert.ok(r.text.includes(`<title>QR code for ${short}</title>`));
    // The three finder patterns begin with a 7-module run at the corners of the quiet zone.
    const n = Number(/data-modules="(\d+)"/.exec(r.text)?.[1]);
    assert.ok(
      r.text.includes('M2 2h7v1h-7z') &&
        r.text.includes(`M${n - 5} 2h7v1h-7z`) &&
        r.text.includes(`M2 ${n - 5}h7v1h-7z`),
    );
    assert.doesNotMatch(r.text, /<script|style=/);
    assert.equal(scanQrSvg(r.text), short, 'a phone reads the short link from it');
    const etag = String(r.headers['etag']);
    assert.match(etag, /^"qr-[\w-]{16}"$/);
    const again = await anon.get(`/p/${hash}/qr.svg`, { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    assert.equal((await anon.get(`/p/${hash}/qr.svg`, { 'if-none-match': '"qr-other"' })).status, 200);
    assert.match(
      (await anon.get(`/p/${hash}`)).text,
      /<dt>Views<\/dt><dd>1<\/dd>/,
      'fetching the QR code counts no view',
    );
    const priv = await createViaForm(alice, { content: 'priv', privacy: 'private' });
    assert.equal((await anon.get(`/p/${priv}/qr.svg`)).status, 404);
    assert.equal((await bob.get(`/p/${priv}/qr.svg`)).status, 404);
    assert.equal((await alice.get(`/p/${priv}/qr.svg`)).status, 200);
    assert.equal((await anon.get('/p/ZZZZZZZZZZ/qr.svg')).status, 404);
    assert.equal((await anon.get('/p/bad!/qr.svg')).status, 404);
  });

  test('raw serves text/plain with the security headers', async () => {
    const hash = await createViaForm(alice, { content: '<b>not html</b>' });
    const r = await anon.get(`/p/${hash}/raw`);
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain/);
    assert.equal(r.text, '<b>not html</b>');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
  });

  test('a private paste, a missing one and a malformed hash all show the same 404 page', async () => {
    const hash = await createViaForm(alice, { title: 'Secret plans', content: 'private stuff', privacy: 'private' });
    const bodies: string[] = [];
    for (const [who, path] of [
      [anon, `/p/${hash}`],
      [bob, `/p/${hash}`],
      [anon, '/p/ZZZZZZZZZZ'],
      [anon, '/p/bad!'],
      [bob, `/p/${hash}/raw`],
    ] as const) {
      const r = await who.get(path);
      assert.equal(r.status, 404, path);
      assert.doesNotMatch(r.text, /Secret plans|private stuff/);
      bodies.push(
        r.text
          .replace(/name="_csrf" value="[^"]*"/g, '')
          .replace(/<span class="who">\w+<\/span>|Log out|\/my|\/api_keys\.php/g, ''),
      );
    }
    assert.equal(new Set(bodies.map((b) => b.replace(/<nav class="nav">[\s\S]*?<\/nav>/, ''))).size, 1);
    assert.match(bodies[0] ?? '', /A paste may never have existed at this address/);
    const nowhere = await anon.get('/no/such/page');
    assert.equal(nowhere.status, 404);
    assert.match(nowhere.text, /There is nothing at this address\./, 'a page that is not a paste keeps its own text');
    assert.equal((await alice.get(`/p/${hash}`)).status, 200, 'the owner sees it');
    assert.equal((await admin.get(`/p/${hash}`)).status, 200, 'an admin sees it');
  });

  test('short links work without a token; a private one only for its owner and admins', async () => {
    const pub = await createViaForm(alice, { content: 'pub', privacy: 'unlisted' });
    const r = await anon.get(`/s/${pub.slice(0, 6)}`);
    assert.equal(r.status, 302);
    assert.equal(r.location, `${s.url}/p/${pub}`);
    const priv = await createViaForm(alice, { content: 'priv', privacy: 'private' });
    assert.equal((await anon.get(`/s/${priv.slice(0, 6)}`)).status, 404);
    assert.equal((await bob.get(`/s/${priv.slice(0, 6)}`)).status, 404);
    assert.equal((await alice.get(`/s/${priv.slice(0, 6)}`)).status, 302);
    assert.equal((await admin.get(`/s/${priv.slice(0, 6)}`)).status, 302);
  });
});

describe('password-protected pastes', () => {
  let hash: string;
  before(async () => {
    hash = await createViaForm(alice, { title: 'Guarded', content: 'the treasure', password: 'open sesame' });
  });

  test('GET asks for the password with a form, revealing nothing', async () => {
    const r = await anon.get(`/p/${hash}`);
    assert.equal(r.status, 401);
    assert.match(r.text, /<form method="post" action="\/p\/[A-Za-z0-9]{10}">/);
    assert.match(r.text, /type="password"/);
    assert.doesNotMatch(r.text, /the treasure|Guarded/);
  });

  test('a wrong password is 403 with the form again; the right one shows the paste', async () => {
    await anon.get(`/p/${hash}`);
    const wrong = await anon.post(`/p/${hash}`, { password: 'guess' });
    assert.equal(wrong.status, 403);
    assert.match(wrong.text, /That password is wrong/);
    assert.match(wrong.text, /type="password"/);
    assert.equal((await anon.post(`/p/${hash}`, {})).status, 401);
    const right = await anon.post(`/p/${hash}`, { password: 'open sesame' });
    assert.equal(right.status, 200);
    assert.match(right.text, /the treasure/);
  });

  test('raw asks for the password too, and answers text once it is given', async () => {
    // A visitor of its own: one who unlocked the page before needs no password for raw.
    const v = new WebClient(s);
    const gate = await v.get(`/p/${hash}/raw`);
    assert.equal(gate.status, 401);
    assert.match(gate.text, /action="\/p\/[A-Za-z0-9]{10}\/raw"/);
    assert.equal((await v.post(`/p/${hash}/raw`, { password: 'nope' })).status, 403);
    const r = await v.post(`/p/${hash}/raw`, { password: 'open sesame' });
    assert.equal(r.text, 'the treasure');
    assert.match(String(r.headers['content-type']), /^text\/plain/);
  });

  test('the owner and admins need no password', async () => {
    assert.match((await alice.get(`/p/${hash}`)).text, /the treasure/);
    assert.equal((await admin.get(`/p/${hash}/raw`)).text, 'the treasure');
  });

  test('guessing is limited to ten tries a minute per address and paste', async () => {
    const target = await createViaForm(alice, { content: 'x', password: 'right-one' });
    const guesser = new WebClient(s);
    await guesser.get(`/p/${target}`);
    for (let i = 0; i < 10; i++)
      assert.equal((await guesser.post(`/p/${target}`, { password: `wrong${i}` })).status, 403);
    const r = await guesser.post(`/p/${target}`, { password: 'right-one' });
    assert.equal(r.status, 429);
    assert.match(String(r.headers['retry-after']), /^\d+$/);
  });
});
