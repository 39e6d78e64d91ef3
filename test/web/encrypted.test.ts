import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encryptText, newKey } from '../../src/paste/envelope-crypto.ts';
import { makeToken, req, startServer } from '../helpers/server.ts';
import { storedPaste } from '../helpers/stored.ts';
import { createViaForm, registerAll, WebClient } from '../helpers/web-client.ts';

const escapeAttr = (s: string): string => s.replaceAll('&', '&amp;').replaceAll('"', '&quot;');

describe('encrypted pastes on the web', () => {
  test('the paste page carries the envelope for the browser and shows nothing of the text; the module is served', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const envelope = await encryptText('def f():\n    return 1\n', newKey());
    const made = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: envelope, encrypted: 1, title: 'sealed' },
    });
    const hash = String(made.json['hash']);
    for (const client of [alice, new WebClient(server)]) {
      const page = await client.get(`/p/${hash}`);
      assert.equal(page.status, 200);
      assert.ok(page.text.includes(`data-envelope="${escapeAttr(envelope)}"`));
      assert.match(page.text, /<pre class="code" id="paste-code" tabindex="0" hidden><\/pre>/);
      assert.doesNotMatch(page.text, /class="l"|\d+ lines?\b/, 'no lines: the server cannot count them');
      assert.match(page.text, /bytes the server cannot read/);
      assert.match(page.text, /short link cannot hold the key/);
      // Its language is left to the browser that decrypts it: the badge says what the server knows.
      assert.match(page.text, /<span class="badge badge-accent">Encrypted<\/span>/);
      assert.doesNotMatch(page.text, /Auto-detect/);
      assert.equal(page.text.match(/<script/g)?.length, 1, 'app.js alone; it imports the module the page names');
      const module = /data-module="([^"]+)"/.exec(page.text)?.[1];
      assert.ok(module?.startsWith('/static/encrypted-paste.js?v='), module);
      const js = await req(server, 'GET', module ?? '');
      assert.equal(js.status, 200);
      assert.match(String(js.headers['content-type']), /^text\/javascript/);
      assert.match(String(js.headers['cache-control']), /immutable/);
      assert.match(js.text, /This paste is encrypted; the link you have lacks its key\./);
    }
    const recent = await new WebClient(server).get('/');
    assert.match(recent.text, /<span class="badge badge-accent">Encrypted<\/span>/, 'the Recent list says so too');
    assert.doesNotMatch(recent.text, /Auto-detect/);
    // "New from this" does not copy an envelope into a new paste.
    const fresh = await alice.get(`/?from=${hash}`);
    assert.ok(!fresh.text.includes(JSON.parse(envelope).ct));
  });

  test('the create form offers encryption; a submitted envelope is kept as it is, anything else refused', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const home = await alice.get('/');
    assert.match(home.text, /<fieldset class="encrypt" data-encrypt data-module="[^"]+" hidden>/);
    assert.match(home.text, /<input type="checkbox" id="encrypt" value="1"> Encrypt in my browser/);
    assert.doesNotMatch(
      home.text,
      /name="encrypt|id="encrypt-password" name=/,
      'the option and its password are never sent',
    );
    const envelope = await encryptText('typed text', newKey(), { password: 'pw', iterations: 100_000 });
    const hash = await createViaForm(alice, { content: envelope, encrypted: '1' });
    const stored = await storedPaste(server.dataDir, hash);
    assert.ok(stored?.['encrypted'] === 1 || stored?.['encrypted'] === true);
    await alice.get('/');
    const refused = await alice.post('/', { content: 'typed text', encrypted: '1', language: 'auto' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /encryption envelope/);
    assert.doesNotMatch(refused.text, /typed text/, 'what was sent as encrypted is not put back into the form');
  });

  test('its history compares no revisions; its one-time warning keeps the key in its form', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const key = newKey();
    const create = async (body: Record<string, unknown>): Promise<string> =>
      String((await req(server, 'POST', '/api/v1/paste_create.php', { token, body })).json['hash']);
    const hash = await create({ content: await encryptText('one', key), encrypted: 1 });
    const edited = await req(server, 'POST', '/api/v1/paste_edit.php', {
      token,
      body: { hash, content: await encryptText('two', key) },
    });
    assert.equal(edited.status, 200);
    // Its title changes on the web; the envelope goes back as it came, and stays encrypted.
    const form = await alice.get(`/p/${hash}/edit`);
    assert.match(form.text, /This paste is encrypted: its content here is the envelope/);
    // Its files field is shut (hidden, disabled) until the browser module has the key to seal them.
    assert.match(form.text, /<div class="field files-field" data-files data-sealed-files hidden /);
    assert.match(form.text, /<input type="file" id="file" name="file" multiple disabled>/);
    assert.match(form.text, /<input type="password" id="encrypt-password" autocomplete="off">/, 'a field with no name');
    const envelope = (await storedPaste(server.dataDir, hash)) as Record<string, unknown>;
    const renamed = await alice.post(`/p/${hash}/edit`, {
      title: 'renamed',
      content: String(envelope['content'] ?? JSON.parse(String(envelope['content_json']))),
      language: 'auto',
      privacy: 'public',
      expiry: 'keep',
    });
    assert.equal(renamed.status, 303, renamed.text);
    const after = await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    const shown = after.json['paste'] as Record<string, unknown>;
    assert.deepEqual([shown['title'], shown['encrypted'], shown['language']], ['renamed', 1, 'auto']);
    const history = await alice.get(`/p/${hash}/history`);
    assert.equal(history.status, 200);
    assert.match(history.text, /This paste is encrypted: only a browser with its key can read its revisions/);
    assert.doesNotMatch(history.text, /class="code diff"/);

    const once = await create({ content: await encryptText('once', key), encrypted: 1, burn_after_read: 1 });
    const warning = await new WebClient(server).get(`/p/${once}`);
    assert.match(warning.text, new RegExp(`<form method="post" action="/p/${once}" data-keep-key data-module="`));
    const plainOnce = await create({ content: 'plain', burn_after_read: 1 });
    assert.doesNotMatch((await new WebClient(server).get(`/p/${plainOnce}`)).text, /data-keep-key|data-module/);
  });
});
