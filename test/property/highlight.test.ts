import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { contentLines } from '../../src/web/code-view.ts';
import { highlight } from '../../src/web/highlight.ts';
import { escape } from '../../src/web/highlight-writer.ts';
import { escapeHtml } from '../../src/web/html.ts';
import { detectLanguage, LANGUAGES } from '../../src/paste/language.ts';

/**
 * Properties of the language detector and the highlighter (fast-check): any text gives a
 * known language; highlighted, every line is balanced HTML whose only tags are our spans,
 * and whose text with the tags removed and the entities read back is the line itself.
 */
const RUNS = { numRuns: 250 };

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' };
const textOf = (html: string): string =>
  html.replace(/<[^>]*>/g, '').replace(/&(lt|gt|quot|#39|amp);/g, (_, e: string) => ENTITIES[e] ?? '');

/** Text that looks like code: the punctuation every lexer treats specially, in any order. */
const codeLike = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      '"',
      "'",
      '`',
      '/',
      '*',
      '#',
      '<',
      '>',
      '&',
      '-',
      '!',
      '\\',
      '\n',
      '\r',
      '\t',
      ' ',
      '$',
      '{',
      '}',
      '(',
      ')',
      ';',
      '=',
      '?',
      '[',
      ']',
      '@',
      '%',
    ),
    fc.constantFrom(
      'if',
      'def',
      'function',
      '<script>',
      '</script>',
      '<!--',
      '-->',
      '/*',
      '*/',
      '"""',
      '0x1F',
      '1e9',
      '@@ -1 +1 @@',
      '+++',
      '---',
    ),
    fc.string({ unit: 'grapheme', maxLength: 3 }),
  ),
  maxLength: 80,
});
const anyText = fc.oneof(codeLike, fc.string({ unit: 'binary', maxLength: 200 }));

describe('the language detector', () => {
  test('any text gives one of the known languages', () => {
    fc.assert(
      fc.property(anyText, (s) => LANGUAGES.includes(detectLanguage(s))),
      RUNS,
    );
  });
});

describe('the highlighter', () => {
  test('every line is escaped, balanced HTML of our spans whose text is the line itself', () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(...LANGUAGES), (s, language) => {
        const lines = highlight(s, language);
        const expected = s.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
        assert.equal(lines.length, expected.length);
        lines.forEach((line, i) => {
          assert.equal(textOf(line), expected[i]);
          // The only markup is ours: spans with a token class, opened and closed in order.
          const tags = line.match(/<[^>]*>/g) ?? [];
          let depth = 0;
          for (const tag of tags) {
            if (tag === '</span>') depth--;
            else {
              assert.match(tag, /^<span class="tk-[a-z]+">$/);
              depth++;
            }
            assert.ok(depth >= 0);
          }
          assert.equal(depth, 0);
          // No character that HTML gives meaning is left raw in the text.
          assert.doesNotMatch(line.replace(/<[^>]*>/g, ''), /[<>"']|&(?!(lt|gt|quot|#39|amp);)/);
        });
      }),
      RUNS,
    );
  });

  test('the code view, bidi marks included, keeps the text too', () => {
    const withBidi = fc.string({
      unit: fc.oneof(
        fc.constantFrom('\u202e', '\u2066', '\u2069', '\u200f', 'a', '"', '<', '\n', '\r'),
        fc.string({ maxLength: 2 }),
      ),
      maxLength: 60,
    });
    fc.assert(
      fc.property(
        withBidi,
        fc.constantFrom(0, 1) as fc.Arbitrary<0 | 1>,
        fc.constantFrom('text', 'javascript', 'html'),
        (s, hl, language) => {
          const lines = contentLines({ content: s, language, highlight: hl });
          // Plain text splits on \n and \r\n; the highlighter drops a \r at any line's end.
          const expected =
            hl === 0 ? s.split(/\r?\n/) : s.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
          if (expected.length > 1 && expected.at(-1) === '') expected.pop();
          assert.deepEqual(lines.map(textOf), expected);
        },
      ),
      RUNS,
    );
  });
});

describe('escaping', () => {
  const naive = (s: string): string =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  test('escape and escapeHtml turn exactly the five specials into entities, short strings and long', () => {
    // Short strings take a loop, long ones a regular expression: both paths, with and without specials.
    fc.assert(
      fc.property(
        fc.oneof(
          codeLike,
          fc.string({ maxLength: 40 }),
          fc.string({ unit: fc.constantFrom('a', ' ', '&', '<', '>', '"', "'"), maxLength: 40 }),
        ),
        (s) => {
          assert.equal(escape(s), naive(s));
          assert.equal(escapeHtml(s), naive(s));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
