import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { html, isolate, withoutDirectionControls } from '../../src/web/html.ts';
import { page } from '../../src/web/layout.ts';

describe('user text in pages', () => {
  test('isolate escapes and wraps in <bdi>', () => {
    assert.equal(isolate('<b>\u202Eevil').value, '<bdi>&lt;b&gt;\u202Eevil</bdi>');
    assert.equal(html`<p>${isolate('x')}</p>`.value, '<p><bdi>x</bdi></p>');
  });

  test('direction controls are dropped where no <bdi> can go, such as the document title', () => {
    assert.equal(
      withoutDirectionControls('a\u202Ab\u202Bc\u202Cd\u202De\u202Ef\u2066g\u2067h\u2068i\u2069j'),
      'abcdefghij',
    );
    assert.equal(withoutDirectionControls('עברית\u200F'), 'עברית\u200F', 'marks and letters stay');
    const doc = page(
      { user: null, path: '/', csrf: () => '', registrationOpen: () => true },
      'invoice\u202Egpj.exe',
      html``,
    );
    assert.ok(doc.includes('<title>invoicegpj.exe</title>'));
  });
});
