import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { makeToken, req, startServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer();
  token = await makeToken(server.dataDir, { user: 'alice' });
});

const create = (body: Record<string, unknown>) => req(server, 'POST', '/api/v1/paste_create.php', { token, body });

/** A small real snippet of each language the issue names, and a token its page must colour. */
const SNIPPETS: [string, string, string][] = [
  ['toml', '[server]\nport = 8080 # the port\nname = "paste"', 'tk-str'],
  ['haskell', 'main :: IO ()\nmain = putStrLn "hello" -- greet', 'tk-com'],
  ['scala', 'object Main extends App {\n  val x: Int = 42\n}', 'tk-kw'],
  ['perl', 'my $name = "world";\nprint "Hello, $name\\n";', 'tk-kw'],
  ['powershell', 'Get-ChildItem -Path C:\\ | Where-Object { $_.Length -gt 1MB }', 'tk-fn'],
  ['makefile', 'all: build\n\nbuild:\n\tgo build ./... # compile', 'tk-'],
  ['hcl', 'resource "aws_instance" "web" {\n  ami = "ami-123"\n}', 'tk-str'],
  ['terraform', 'variable "region" {\n  default = "eu-west-1"\n}', 'tk-str'],
  ['elixir', 'defmodule Hello do\n  def world, do: IO.puts("hi")\nend', 'tk-kw'],
  ['zig', 'const std = @import("std");\npub fn main() void {}', 'tk-kw'],
];

describe('languages.php', () => {
  test('lists 150 or more languages with label and aliases, text included, without a token', async () => {
    const r = await req(server, 'GET', '/api/v1/languages.php');
    assert.equal(r.status, 200, r.text);
    const languages = r.json['languages'] as { name: string; label: string; aliases: string[] }[];
    assert.ok(languages.length >= 150, String(languages.length));
    const names = languages.map((l) => l.name);
    assert.equal(new Set(names).size, names.length);
    for (const name of ['text', 'toml', 'haskell', 'scala', 'perl', 'powershell', 'makefile', 'hcl', 'elixir', 'zig']) {
      assert.ok(names.includes(name), name);
    }
    assert.deepEqual(
      languages.find((l) => l.name === 'toml'),
      { name: 'toml', label: 'TOML', aliases: [] },
    );
    assert.ok(languages.find((l) => l.name === 'hcl')?.aliases.includes('terraform'));
  });

  test('every listed name and alias is taken by a create without a warning', async () => {
    const languages = (await req(server, 'GET', '/api/v1/languages.php')).json['languages'] as {
      name: string;
      aliases: string[];
    }[];
    const one = languages.flatMap((l) => [l.name, ...l.aliases]).filter((_, i) => i % 23 === 0);
    for (const name of one) {
      const r = await create({ content: 'x', language: name.toUpperCase() });
      assert.equal(r.status, 200, name);
      assert.equal(r.json['warning'], undefined, name);
    }
  });
});

describe('language on create and edit', () => {
  for (const [language, content, token_] of SNIPPETS) {
    test(`a create with language=${language} answers 200 and its page has highlighted tokens`, async () => {
      const r = await create({ content, language });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json['warning'], undefined);
      const page = await req(server, 'GET', `/p/${r.json['hash']}`);
      assert.ok(page.text.includes(`<span class="${token_}`), `${language}: no ${token_} in the page`);
    });
  }

  test('an unknown language is stored as text, and the answer says so (200, not 400)', async () => {
    const r = await create({ content: '<template><p>{{ msg }}</p></template>', language: 'vue' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json['warning'], 'language "vue" is not known; stored as text');
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${r.json['hash']}`, { token });
    assert.equal((got.json['paste'] as { language: string }).language, 'text');
  });

  test('an edit to an unknown language stores text and answers with the warning', async () => {
    const made = await create({ content: 'x = 1', language: 'python' });
    const r = await req(server, 'POST', '/api/v1/paste_edit.php', {
      token,
      body: { hash: made.json['hash'], language: 'Klingon' },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json['warning'], 'language "Klingon" is not known; stored as text');
    const got = await req(server, 'GET', `/api/v1/paste.php?hash=${made.json['hash']}`, { token });
    assert.equal((got.json['paste'] as { language: string }).language, 'text');
  });
});
