import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { KNOWN_LANGUAGES } from '../../src/paste/language.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createViaForm, registerAll, type WebClient } from '../helpers/web-client.ts';

let s: TestServer;
let alice: WebClient;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1' } });
  [alice] = await registerAll(s, 'alice');
});

describe('the language list of the paste form', () => {
  test('offers the common languages first, then every other language the server knows', async () => {
    const home = await alice.get('/');
    const select = /<select id="language" name="language">(.*?)<\/select>/s.exec(home.text)?.[1] ?? '';
    const [common = '', rest = ''] = select.split('<optgroup label="All languages">');
    assert.match(common, /^<optgroup label="Common"><option value="auto" selected>Auto-detect<\/option>/);
    for (const name of ['toml', 'haskell', 'perl', 'powershell', 'makefile', 'hcl', 'scala', 'r', 'elixir', 'zig']) {
      assert.ok(common.includes(`<option value="${name}">`), name);
    }
    assert.ok(rest.includes('<option value="brainfuck">Brainfuck</option>'));
    const offered = [...select.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(new Set(offered), new Set(['auto', ...KNOWN_LANGUAGES]));
  });

  test('a paste made with a language only highlight.js knows shows highlighted, and the edit form keeps it', async () => {
    const hash = await createViaForm(alice, { content: 'main :: IO ()\nmain = putStrLn "hi"', language: 'haskell' });
    const page = await alice.get(`/p/${hash}`);
    assert.match(page.text, /<span class="tk-str">&quot;hi&quot;<\/span>/);
    assert.match(page.text, /Haskell/);
    const edit = await alice.get(`/p/${hash}/edit`);
    assert.match(edit.text, /<option value="haskell" selected>Haskell<\/option>/);
  });
});

test('languageChoices offers each language once: the common ones first, then every other', async () => {
  const { languageChoices } = await import('../../src/web/languages.ts');
  const names = languageChoices().map(([name]) => name);
  assert.equal(new Set(names).size, names.length, 'no language twice');
  assert.deepEqual(new Set(names), new Set(['auto', ...KNOWN_LANGUAGES]));
});
