import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiteralCounter, literalHead, literalSize } from '../../src/paste/literal.ts';
import { encodeContent } from '../../src/paste/paste.ts';

/** Lines as the paste page counts them: a final newline ends the last line, it starts none. */
const linesOf = (s: string): number => (s === '' ? 0 : s.split('\n').length - (s.endsWith('\n') ? 1 : 0));

const TEXTS = [
  '',
  'a',
  '\n',
  '\n\n',
  'one\ntwo',
  'one\ntwo\n',
  'say "hi" \\ back\\slash \\n not a newline\\',
  'tab\tcr\r\nctl\u0001\u001f end',
  'h\u00e9llo w\u00f6rld \u2013 \u0133 \u01c5\n',
  '\u{1F600}\u{1F600}x\u{1F600}\n\u{10400}',
  '\\\\\\"\n\\\n"',
  'x'.repeat(50) + '\n'.repeat(7) + '\u00e9'.repeat(9),
];

test('LiteralCounter gives the UTF-8 bytes and lines of the text, however its literal is cut into slices', () => {
  for (const text of TEXTS) {
    const literal = encodeContent(text);
    for (const width of [1, 2, 3, 5, 6, 7, 13, literal.length]) {
      const counter = new LiteralCounter();
      for (let at = 0; at < literal.length; at += width) counter.feed(literal.slice(at, at + width));
      assert.deepEqual(
        counter.size,
        { bytes: Buffer.byteLength(text), lines: linesOf(text) },
        `${JSON.stringify(text)} in slices of ${width}`,
      );
    }
  }
});

test('literalSize counts a long literal a slice at a time, with the same answer', async () => {
  const text = 'const s = "<b>&amp;</b>"; // caf\u00e9 \u{1F600}\n'.repeat(60_000);
  assert.deepEqual(await literalSize(encodeContent(text)), { bytes: Buffer.byteLength(text), lines: 60_000 });
});

test('literalHead decodes only the beginning of a literal, never cutting an escape', () => {
  for (const text of TEXTS) {
    const literal = encodeContent(text);
    for (let chars = 0; chars <= text.length + 2; chars++)
      assert.equal(literalHead(literal, chars), text.slice(0, chars), `${JSON.stringify(text)}, ${chars}`);
  }
  const escapes = '\u0001'.repeat(100);
  assert.equal(literalHead(encodeContent(escapes), 10), escapes.slice(0, 10));
});

test('literalHead of a literal cut anywhere decodes what comes before the cut', () => {
  const text = 'a\\"\n\u0001\u00e9\u{1F600}z'.repeat(5);
  const literal = encodeContent(text);
  for (let at = 1; at < literal.length; at++) {
    const head = literalHead(literal.slice(0, at), 1_000, false);
    assert.ok(text.startsWith(head), `${at}: ${JSON.stringify(head)}`);
    assert.ok(encodeContent(head).length >= at - 6, `${at}: decoded up to the last whole escape`);
  }
});
