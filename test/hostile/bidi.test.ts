import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { codeView, contentLines } from '../../src/web/code-view.ts';
import { makeToken, req, startServer } from '../helpers/server.ts';

/** The text of escaped HTML: tags removed, the five entities back as characters. */
const textOf = (html: string): string =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(
      /&(lt|gt|quot|#39|amp);/g,
      (_, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[e] ?? '',
    );

// The Trojan Source example: the comment's end reads as if it came before the code.
const TROJAN = 'if (access_level != "user\u202E \u2066// Check if admin\u2069 \u2066") {\n  grant();\n}\n';
const CONTROLS = [
  '\u202A',
  '\u202B',
  '\u202C',
  '\u202D',
  '\u202E',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200E',
  '\u200F',
  '\u061C',
];

describe('bidi controls in code ("Trojan Source")', () => {
  for (const highlight of [0, 1] as const) {
    test(`each is wrapped in a marked, isolating span, highlighted or not (highlight=${highlight})`, () => {
      const lines = contentLines({ content: TROJAN, language: 'javascript', highlight });
      const marked = lines.join('\n').match(/<span class="bidi" data-cp="U\+[0-9A-F]{4}">[^<]<\/span>/g) ?? [];
      assert.deepEqual(
        marked.map((m) => /data-cp="(U\+[0-9A-F]{4})"/.exec(m)?.[1]),
        ['U+202E', 'U+2066', 'U+2069', 'U+2066'],
      );
      // The text itself is untouched: a copy of the code is the paste's exact text.
      assert.equal(textOf(lines.join('\n')), TROJAN.trimEnd());
    });
  }

  test('every bidi control is marked, and text without them is left alone', () => {
    for (const c of CONTROLS) {
      const [line] = contentLines({ content: `a${c}b`, language: 'text', highlight: 0 });
      assert.match(
        line ?? '',
        /^a<span class="bidi" data-cp="U\+[0-9A-F]{4}">.<\/span>b$/u,
        `U+${c.charCodeAt(0).toString(16)}`,
      );
    }
    assert.deepEqual(contentLines({ content: 'שלום world\u200D', language: 'text', highlight: 0 }), [
      'שלום world\u200D',
    ]);
    assert.equal(codeView('c', { content: 'plain', language: 'text', highlight: 0 }).bidi, false);
    assert.equal(codeView('c', { content: TROJAN, language: 'text', highlight: 0 }).bidi, true);
  });

  test('the paste page warns above the code; raw.php keeps the bytes', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const created = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: TROJAN, language: 'javascript' },
    });
    const hash = String(created.json['hash']);
    const page = await req(server, 'GET', `/p/${hash}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /invisible characters that change the direction of the text/);
    assert.equal(page.text.match(/<span class="bidi" data-cp="U\+202E">\u202E<\/span>/g)?.length, 1);
    const css = await req(server, 'GET', '/static/app.css');
    assert.match(css.text, /\.bidi \{ unicode-bidi: isolate; \}/);
    const raw = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
    assert.equal(raw.text, TROJAN);
    const plain = await req(
      server,
      'GET',
      `/p/${(await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x = 1' } })).json['hash']}`,
    );
    assert.doesNotMatch(plain.text, /invisible characters/);
  });
});
