import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { contentLines } from '../../src/web/code-view.ts';
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
    assert.equal(languageLabel('brainfuck'), 'brainfuck');
    assert.deepEqual(languageChoices()[0], ['auto', 'Auto-detect']);
  });
});
