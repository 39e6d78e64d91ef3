import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Fields } from '../../src/http/fields.ts';
import { validateCreate, validateEdit } from '../../src/paste/validate.ts';

const fields = (o: Record<string, string | number | boolean | null>): Fields =>
  Object.assign(Object.create(null) as Fields, o);

describe('validateCreate', () => {
  test('fills the contract defaults', () => {
    const v = validateCreate(fields({ content: 'x' }), 100);
    assert.deepEqual(v, {
      ok: true,
      value: {
        title: '',
        content: 'x',
        language: 'auto',
        privacy: 'public',
        expiry: 'never',
        password: null,
        highlight: 1,
        burn_after_read: 0,
      },
    });
  });
  test('reports every problem, naming each field', () => {
    const v = validateCreate(fields({ title: 5, privacy: 'x', expiry: 'x', highlight: 'x', burn_after_read: 3 }), 100);
    assert.equal(v.ok, false);
    if (!v.ok)
      assert.deepEqual(v.problems.map((p) => p.field).sort(), [
        'burn_after_read',
        'content',
        'expiry',
        'highlight',
        'privacy',
        'title',
      ]);
  });
  test('marks oversized content as tooLarge', () => {
    const v = validateCreate(fields({ content: 'ab' }), 1);
    assert.ok(!v.ok && v.problems[0]?.tooLarge === true);
  });
  // CONTRACT.md section 9: an unknown language is stored as text with a warning, never refused.
  test('lower-cases known languages and takes unknown ones as text, with a warning', () => {
    const v = validateCreate(fields({ content: 'x', language: 'PHP' }), 100);
    assert.ok(v.ok && v.value.language === 'php' && v.warning === undefined);
    const unknown = validateCreate(fields({ content: 'x', language: 'Cobol85' }), 100);
    assert.ok(unknown.ok);
    assert.equal(unknown.value.language, 'text');
    assert.equal(unknown.warning, 'language "Cobol85" is not known; stored as text');
    const edited = validateEdit(fields({ language: 'vue' }), 100);
    assert.ok(edited.ok && edited.value.language === 'text' && edited.warning?.includes('"vue"') === true);
  });

  test('takes every highlight.js name and alias, in any case', () => {
    for (const [given, stored] of [
      ['TOML', 'toml'],
      ['Haskell', 'haskell'],
      ['scala', 'scala'],
      ['PERL', 'perl'],
      ['ps1', 'powershell'],
      ['Makefile', 'makefile'],
      ['terraform', 'hcl'],
      ['HCL', 'hcl'],
      ['exs', 'elixir'],
      ['zig', 'zig'],
      ['html', 'html'],
      ['text', 'text'],
    ] as [string, string][]) {
      const v = validateCreate(fields({ content: 'x', language: given }), 100);
      assert.ok(v.ok && v.warning === undefined, given);
      assert.equal(v.value.language, stored, given);
    }
  });

  test('takes the common other names of the languages it knows, stored under the one name', () => {
    for (const [given, stored] of [
      ['js', 'javascript'],
      ['C++', 'cpp'],
      ['sh', 'bash'],
      ['YML', 'yaml'],
      ['plaintext', 'text'],
      ['c#', 'csharp'],
      ['md', 'markdown'],
    ] as [string, string][]) {
      const v = validateCreate(fields({ content: 'x', language: given }), 100);
      assert.ok(v.ok, given);
      assert.equal(v.value.language, stored, given);
      const e = validateEdit(fields({ hash: 'aaaaaaaaaa', language: given }), 100);
      assert.ok(e.ok && e.value.language === stored, `edit ${given}`);
    }
    // Since CONTRACT.md section 9 an unknown name is stored as text with a warning, not refused.
    const other = validateCreate(fields({ content: 'x', language: 'perl6x' }), 100);
    assert.ok(other.ok && other.value.language === 'text' && other.warning !== undefined, 'an unknown name');
  });
  test('refuses control characters in a title', () => {
    assert.equal(validateCreate(fields({ content: 'x', title: 'a\nb' }), 100).ok, false);
  });
});

describe('validateEdit', () => {
  test('leaves out what was not sent and keeps expiry by default', () => {
    assert.deepEqual(validateEdit(fields({ hash: 'x' }), 100), {
      ok: true,
      value: { expiry: 'keep', clear_password: 0 },
    });
  });
  test('accepts keep and the durations, refuses others', () => {
    assert.equal(validateEdit(fields({ expiry: 'keep' }), 100).ok, true);
    assert.equal(validateEdit(fields({ expiry: '1m' }), 100).ok, true);
    assert.equal(validateEdit(fields({ expiry: 'forever' }), 100).ok, false);
  });
  test('refuses a new password together with clear_password=1', () => {
    assert.equal(validateEdit(fields({ password: 'abc', clear_password: '1' }), 100).ok, false);
  });
  test('refuses empty content', () => {
    assert.equal(validateEdit(fields({ content: '' }), 100).ok, false);
  });
});

describe('text that no UTF-8 can hold, and titles that break lines', () => {
  test('a lone surrogate anywhere in a string field is refused, a whole pair is fine', () => {
    for (const bad of ['a\ud800b', '\udc00', 'x\ud83d']) {
      const v = validateCreate(fields({ content: bad }), 1000);
      assert.equal(v.ok, false, JSON.stringify(bad));
      if (!v.ok) assert.match(v.problems[0]?.message ?? '', /content must be valid Unicode/);
      assert.equal(validateCreate(fields({ content: 'x', title: bad }), 1000).ok, false);
      assert.equal(validateEdit(fields({ password: `pw-${bad}` }), 1000).ok, false);
    }
    assert.equal(validateCreate(fields({ content: '😀 \ud83d\ude00' }), 1000).ok, true);
  });

  test('a title with U+0085, U+2028 or U+2029 is not one line', () => {
    for (const c of ['\u0085', '\u2028', '\u2029'])
      assert.equal(validateCreate(fields({ content: 'x', title: `a${c}b` }), 1000).ok, false);
  });
});
