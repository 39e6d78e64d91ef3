import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ID_PREFIX, markdownRenderer, safeLink } from '../../src/web/markdown.ts';

const render = markdownRenderer({ remoteImages: false, baseUrl: 'https://paste.example' });

/**
 * A render of untrusted Markdown may take at most this long. The aim is ~50 ms on a quiet
 * machine; the bound is ten times that so a busy CI runner does not fail it by chance.
 */
const RENDER_MS = 500;

/** OWASP's XSS filter evasion vectors and their Markdown cousins: links, images, raw HTML, entities, fences. */
const CORPUS: string[] = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=https://xss.example/xss.js></SCRIPT>',
  '<IMG SRC="javascript:alert(\'XSS\');">',
  '<IMG SRC=javascript:alert(&quot;XSS&quot;)>',
  '<IMG SRC=`javascript:alert("RSnake says, \'XSS\'")`>',
  '<a onmouseover="alert(document.cookie)">xxs link</a>',
  '<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\\>',
  '<IMG SRC=# onmouseover="alert(\'xxs\')">',
  '<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>',
  '<img src=x onerror="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">',
  '<svg/onload=alert(1)>',
  "<BODY ONLOAD=alert('XSS')>",
  '<iframe src="javascript:alert(1)"></iframe>',
  '<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert(\'XSS\');">',
  '<style>body{background:url("javascript:alert(1)")}</style>',
  '<div style="background-image: url(javascript:alert(1))">x</div>',
  "<!--[if gte IE 4]><SCRIPT>alert('XSS');</SCRIPT><![endif]-->",
  '<object data="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="></object>',
  '<form action="javascript:alert(1)"><button>x</button></form>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '[x](javascript:alert(1))',
  '[x](JAVASCRIPT:alert(1))',
  '[x](  javascript:alert(1)  )',
  '[x](<javascript:alert(1)>)',
  '[x](java\tscript:alert(1))',
  '[x](jav&#x61;script:alert(1))',
  '[x](&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1))',
  '[x](javascript&colon;alert(1))',
  '[x](java%0ascript:alert(1))',
  '[x](%6A%61%76%61%73%63%72%69%70%74:alert(1))',
  '[x](vbscript:msgbox(1))',
  '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '[x](file:///etc/passwd)',
  '[x]: javascript:alert(1)\n\n[x]',
  '[x](javascript:alert(1) "title")',
  '[a](https://ok.example "\\" onmouseover=alert(1) x=\\"")',
  '<javascript:alert(1)>',
  '<data:text/html,<script>alert(1)</script>>',
  'javascript:alert(1)',
  '![x](javascript:alert(1))',
  '![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)',
  '![x" onerror="alert(1)](https://x.example/a.png)',
  '![x](https://tracker.example/pixel.gif)',
  '![x](//tracker.example/pixel.gif)',
  '```"><script>alert(1)</script>\nx\n```',
  '``` onload=alert(1) class="x\n<img src=x onerror=alert(1)>\n```',
  '```javascript" onmouseover="alert(1)\nlet a = "</code></pre><script>alert(1)</script>";\n```',
  '~~~html\n<script>alert(1)</script>\n~~~',
  '    <script>alert(1)</script>',
  '`<script>alert(1)</script>`',
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '&#60;script&#62;alert(1)&#60;/script&#62;',
  '&#x3C;img src=x onerror=alert(1)&#x3E;',
  '# <img src=x onerror=alert(1)>',
  '# Paste code\n\n[jump](#paste-code)',
  '| <script>alert(1)</script> | x |\n|---|---|\n| [y](javascript:alert(1)) | z |',
  '- [ ] <script>alert(1)</script>\n- [x] <img src=x onerror=alert(1)>',
  '<https://ok.example/?a=<script>>',
  'www.example.com/<script>alert(1)</script>',
  '\u202e[x](javascript:alert(1))\u202c',
  '[x](\u0000javascript:alert(1))',
  '[x](\u00adjavascript:alert(1))',
];

/** Pathological nesting and repetition: each must render quickly, whatever it becomes. */
const HEAVY: [string, string][] = [
  ['10,000 nested brackets', `${'['.repeat(10_000)}x${']'.repeat(10_000)}`],
  ['10,000 nested link openers', `${'[a]('.repeat(10_000)}`],
  ['10,000 nested image openers', `${'![['.repeat(10_000)}`],
  ['10,000 nested parentheses', `[x](${'('.repeat(10_000)})`],
  ['10,000 nested quotes', `${'> '.repeat(10_000)}x`],
  ['10,000 nested list items', `${'- '.repeat(10_000)}x`],
  ['10,000 emphasis openers', '*a'.repeat(10_000)],
  ['10,000 underscores between words', 'a_b_'.repeat(10_000)],
  ['10,000 backticks', '`a``'.repeat(10_000)],
  ['10,000 angle brackets', '<a '.repeat(10_000)],
  ['10,000 link definitions', '[x]: <'.repeat(10_000)],
  ['10,000 table columns', `${'|a'.repeat(10_000)}\n${'|-'.repeat(10_000)}\n${'|b'.repeat(10_000)}`],
  ['10,000 entities', '&amp;&#x3C;&#60;&lt;'.repeat(2_500)],
];

/** What must never appear in rendered Markdown: anything that runs, loads or restyles. */
function assertInert(out: string, source: string): void {
  const where = `for ${JSON.stringify(source.slice(0, 80))}`;
  assert.doesNotMatch(out, /<script/i, where);
  assert.doesNotMatch(out, /<(?:iframe|object|embed|svg|math|style|meta|link|form|base|body|frame)\b/i, where);
  // Every `<` opens a well-formed tag of double-quoted attributes, none a handler or a style.
  const TAG = /<\/?([a-zA-Z][\w-]*)((?:\s+[a-zA-Z-]+(?:="[^"<>]*")?)*)\s*>/g;
  assert.doesNotMatch(out.replace(TAG, ''), /</, `markup the renderer did not make ${where}`);
  for (const [, , attrs = ''] of out.matchAll(TAG)) {
    for (const [, name = ''] of attrs.matchAll(/\s+([a-zA-Z-]+)(?:="[^"<>]*")?/g)) {
      assert.ok(!/^on|^style$|^srcdoc$|^formaction$/i.test(name), `attribute ${name} ${where}`);
    }
  }
  for (const [, attr = '', value = ''] of out.matchAll(/\s(href|src)="([^"]*)"/g)) {
    // What a browser would make of it: entities and escapes decoded, controls and spaces dropped.
    let url = value
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'");
    try {
      url = decodeURIComponent(url);
    } catch {}
    url = url.replace(/[\u0000-\u0020\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\ufeff]/g, '').toLowerCase();
    assert.doesNotMatch(url, /^(?:javascript|vbscript|data|file):/, `${attr}="${value}" ${where}`);
    if (attr === 'src') assert.doesNotMatch(url, /^(?:[a-z]+:)?\/\//, `a remote image ${where}`);
  }
  for (const [, id = ''] of out.matchAll(/\sid="([^"]*)"/g)) assert.ok(id.startsWith(ID_PREFIX), `id ${id} ${where}`);
  // Every tag is one the renderer makes; nothing of the source's own markup survives as markup.
  for (const [, tag = ''] of out.matchAll(/<\/?([a-zA-Z][\w-]*)/g)) {
    assert.ok(
      /^(?:p|a|em|strong|s|code|pre|span|h[1-6]|ul|ol|li|blockquote|table|thead|tbody|tr|th|td|img|input|br|hr|article)$/i.test(
        tag,
      ),
      `<${tag}> ${where}`,
    );
  }
}

/**
 * Renders and bounds the time the render took on the CPU, not on the wall clock: a blow-up
 * (quadratic nesting) shows either way, and other processes on a loaded machine do not count.
 */
function timed(source: string): string {
  const started = process.cpuUsage();
  const out = render(source);
  const used = process.cpuUsage(started);
  const ms = (used.user + used.system) / 1000;
  assert.ok(ms < RENDER_MS, `${ms.toFixed(0)} ms for ${JSON.stringify(source.slice(0, 40))}`);
  return out;
}

describe('hostile Markdown', () => {
  test('no vector of the corpus renders as anything that runs, alone or all together', () => {
    for (const source of CORPUS) assertInert(timed(source), source);
    assertInert(timed(CORPUS.join('\n\n')), 'the whole corpus');
  });

  test('raw HTML is shown as text, escaped', () => {
    assert.match(render('<b onclick="x()">hi</b>'), /&lt;b onclick=&quot;x\(\)&quot;&gt;hi&lt;\/b&gt;/);
  });

  test('links keep http, https, mailto and relative addresses, and nothing else', () => {
    for (const ok of [
      'https://a.example/x',
      'http://a.example',
      'mailto:a@b.example',
      '/p/abc',
      'notes.md',
      '#top',
      '?q=1',
    ]) {
      assert.equal(safeLink(ok), true, ok);
    }
    for (const bad of [
      'javascript:alert(1)',
      ' JaVaScRiPt:x',
      'java\tscript:x',
      'java%0Ascript:x',
      'data:text/html,x',
      'vbscript:x',
      'file:///x',
      'ftp://x',
    ]) {
      assert.equal(safeLink(bad), false, bad);
    }
  });

  test('a fence names a language we know or none: its words never reach the markup', () => {
    const out = render('```"><img src=x onerror=alert(1)> python\nx = 1\n```');
    assert.doesNotMatch(out, /onerror|language-/);
    assert.match(render('```python\nx = 1\n```'), /<pre class="md-code"><code>x = <span class="tk-num">1<\/span>/);
  });

  test('a heading cannot take the id of an element of the page, and # links follow the prefix', () => {
    const out = render('# Paste code\n\n[jump](#paste-code)');
    assert.match(out, /<h1 id="md-paste-code">/);
    assert.match(out, /href="#md-paste-code"/);
    assert.doesNotMatch(out, /id="paste-code"/);
  });

  for (const [name, source] of HEAVY) {
    test(`${name} render inert within ${RENDER_MS} ms`, () => {
      assertInert(timed(source), name);
    });
  }
});
