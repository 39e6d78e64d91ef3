import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { codeView, contentLines, PAGE_MAX_CHARS, PAGE_MAX_LINES, shownText } from '../../src/web/code-view.ts';
import { highlightSteps } from '../../src/web/highlight.ts';
import { languageChoices, languageLabel } from '../../src/web/languages.ts';

describe('code view and languages', () => {
  test('plain lines are escaped and a final newline adds no empty line', () => {
    assert.deepEqual(contentLines({ content: 'a<b\r\nc&d\n', language: 'text', highlight: 0 }), ['a&lt;b', 'c&amp;d']);
    assert.deepEqual(contentLines({ content: '\n', language: 'text', highlight: 0 }), ['']);
  });

  test('highlighted lines come from the highlighter, one per line', () => {
    const lines = contentLines({ content: 'let x = "<s>";\nx;\n', language: 'javascript', highlight: 1 });
    assert.equal(lines.length, 2);
    assert.ok(!lines.join('').includes('<s>'));
  });

  test('language labels read well, and detection comes first in the form', () => {
    assert.equal(languageLabel('cpp'), 'C++');
    assert.equal(languageLabel('brainfuck'), 'Brainfuck');
    assert.equal(languageLabel('cobol85'), 'cobol85');
    assert.deepEqual(languageChoices()[0], ['auto', 'Auto-detect']);
  });
});

describe('the code view of a long paste', () => {
  test('shows all of a text within the bounds, counting lines and UTF-8 bytes', () => {
    const v = codeView('c', { content: 'a\nb\n✓', language: 'text', highlight: 0 });
    assert.deepEqual([v.lines, v.shownLines, v.bytes, v.cut], [3, 3, 7, false]);
    assert.equal(codeView('c', { content: '', language: 'text', highlight: 0 }).lines, 0);
  });

  test('cuts at PAGE_MAX_LINES whole lines', () => {
    const content = 'x\n'.repeat(PAGE_MAX_LINES + 10);
    const v = codeView('c', { content, language: 'text', highlight: 0 });
    assert.deepEqual([v.lines, v.shownLines, v.cut], [PAGE_MAX_LINES + 10, PAGE_MAX_LINES, true]);
    assert.equal(v.block.value.match(/<span class="l">/g)?.length, PAGE_MAX_LINES);
  });

  test('cuts before the line that would pass PAGE_MAX_CHARS, and inside a first line that alone does', () => {
    const line = `${'y'.repeat(999)}\n`;
    const v = codeView('c', { content: line.repeat(150), language: 'text', highlight: 0 });
    assert.equal(v.shownLines, PAGE_MAX_CHARS / line.length);
    const one = codeView('c', { content: '&a'.repeat(PAGE_MAX_CHARS), language: 'css', highlight: 1 });
    assert.deepEqual([one.lines, one.shownLines, one.cut, one.shownBytes], [1, 1, true, PAGE_MAX_CHARS]);
    assert.ok(one.block.value.length < 4_000_000, `${one.block.value.length} characters of markup`);
    const emoji = codeView('c', { content: `${'z'.repeat(PAGE_MAX_CHARS - 1)}😀😀`, language: 'text', highlight: 0 });
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(emoji.block.value), 'no half of a surrogate pair');
  });

  test('shows everything when asked to (a one-time paste’s only showing)', () => {
    const v = codeView('c', { content: 'x\n'.repeat(PAGE_MAX_LINES + 1), language: 'text', highlight: 0 }, true);
    assert.equal(v.shownLines, v.lines);
    assert.equal(v.cut, false);
  });
});

describe('a code view highlighted apart', () => {
  test('lines highlighted beforehand make the very block the view would make itself', () => {
    const line = 'const s = "\u202e<b>" /* c */; // \u200f\n';
    const content = line.repeat(Math.ceil((PAGE_MAX_CHARS * 1.5) / line.length));
    const code = { content, language: 'javascript', highlight: 1 as const };
    const steps = highlightSteps(shownText(content), 'javascript');
    let step = steps.next();
    while (step.done !== true) step = steps.next();
    const apart = codeView('c', { ...code, lines: step.value });
    assert.deepEqual(apart, codeView('c', code));
    assert.ok(apart.cut && apart.bidi);
  });
});
