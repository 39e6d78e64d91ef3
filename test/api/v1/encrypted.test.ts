import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { MIN_ITERATIONS, sealedFileBytes } from '../../../src/paste/envelope.ts';
import { decryptEnvelope, encryptText, newKey, openFile, sealFile } from '../../../src/paste/envelope-crypto.ts';
import { multipart, sendFiles } from '../../helpers/multipart.ts';
import { makeToken, req, startServer, type AppServer } from '../../helpers/server.ts';
import { apiLogLines, everythingStored, storedFileBytes, storedPaste } from '../../helpers/stored.ts';
import { spooledUploads } from '../../helpers/stored.ts';
import { until } from '../../helpers/until.ts';
import { registerAll } from '../../helpers/web-client.ts';

const PYTHON = 'import os\n\ndef main():\n    print(os.getcwd())\n';

type Fields = Record<string, unknown>;

async function create(server: AppServer, token: string, body: Fields): Promise<string> {
  const r = await req(server, 'POST', '/api/v1/paste_create.php', { token, body });
  assert.equal(r.status, 200, r.text);
  return String(r.json['hash']);
}

const get = async (server: AppServer, token: string, hash: string, extra = ''): Promise<Fields> =>
  (await req(server, 'GET', `/api/v1/paste.php?hash=${hash}${extra}`, { token })).json['paste'] as Fields;

describe('encrypted pastes through the API', () => {
  test('paste_create.php keeps the envelope as sent; paste.php and raw.php return it; the flag is stored', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const key = newKey();
    const envelope = await encryptText(PYTHON, key);
    const hash = await create(server, token, { content: envelope, encrypted: 1 });
    const paste = await get(server, token, hash);
    assert.equal(paste['content'], envelope);
    assert.equal(paste['encrypted'], 1);
    assert.equal(paste['language'], 'auto', 'the server cannot detect it; its readers do');
    const raw = await req(server, 'GET', `/api/v1/raw.php?hash=${hash}`, { token });
    assert.equal(raw.text, envelope);
    assert.equal(await decryptEnvelope(raw.text, key), PYTHON);
    const stored = await storedPaste(server.dataDir, hash);
    assert.ok(stored);
    assert.ok(stored['encrypted'] === 1 || stored['encrypted'] === true, JSON.stringify(stored['encrypted']));
    assert.ok(!JSON.stringify(stored).includes('os.getcwd') && !JSON.stringify(stored).includes(key));

    // A plain paste says so, and the language chosen for an encrypted one is kept, not detected.
    const plain = await create(server, token, { content: PYTHON });
    const plainPaste = await get(server, token, plain);
    assert.deepEqual([plainPaste['encrypted'], plainPaste['language']], [undefined, 'python']);
    const chosen = await create(server, token, { content: envelope, encrypted: '1', language: 'rust' });
    assert.equal((await get(server, token, chosen))['language'], 'rust');
    const stillPlain = await storedPaste(server.dataDir, plain);
    assert.ok(stillPlain?.['encrypted'] === undefined || stillPlain?.['encrypted'] === false);
  });

  test('encrypted=1 refuses content that is not an envelope with 400, in JSON and form bodies', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const good = JSON.parse(await encryptText('x', newKey())) as Fields;
    for (const [content, form] of [
      ['just some text', false],
      [JSON.stringify({ ...good, v: 9 }), false],
      [JSON.stringify({ ...good, iv: 'short' }), true],
      [JSON.stringify({ ...good, ct: '*'.repeat(40) }), true],
    ] as const) {
      const r = await req(server, 'POST', '/api/v1/paste_create.php', {
        token,
        form,
        body: { content, encrypted: 1 },
      });
      assert.equal(r.status, 400, content);
      assert.match(String(r.json.error), /envelope/);
    }
    const bad = await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x', encrypted: 2 } });
    assert.equal(bad.status, 400);
    assert.match(String(bad.json.error), /encrypted must be 0 or 1/);
    // Too large is 413 as for any paste, before its shape is looked at.
    const big = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: JSON.stringify({ ...good, ct: 'A'.repeat(2048) }), encrypted: 1 },
    });
    assert.equal(big.status, 200);
    const small = await startServer({ env: { MAX_PASTE_BYTES: '200' } });
    const smallToken = await makeToken(small.dataDir);
    const over = await req(small, 'POST', '/api/v1/paste_create.php', {
      token: smallToken,
      body: { content: JSON.stringify({ ...good, ct: 'A'.repeat(400) }), encrypted: 1 },
    });
    assert.equal(over.status, 413);
  });

  test('edits: each revision re-encrypted by the client; plain text refused unless encrypted=0 says so', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const key = newKey();
    const first = await encryptText('first', key);
    const hash = await create(server, token, { content: first, encrypted: 1, title: 'secret notes' });
    const edit = (body: Fields) => req(server, 'POST', '/api/v1/paste_edit.php', { token, body: { hash, ...body } });

    assert.equal((await edit({ title: 'renamed' })).status, 200);
    assert.equal((await get(server, token, hash))['content'], first, 'a title edit keeps the envelope');
    const refused = await edit({ content: 'now in clear' });
    assert.equal(refused.status, 400);
    assert.match(String(refused.json.error), /encrypted/);
    assert.equal(
      (await edit({ encrypted: 1, title: 'again' })).status,
      200,
      'the flag it has already, without content',
    );
    const off = await edit({ encrypted: 0 });
    assert.equal(off.status, 400, 'turned off without the plain text');
    assert.match(String(off.json.error), /encrypted changes only with new content/);
    const second = await encryptText('second', key, { password: 'pw', iterations: MIN_ITERATIONS });
    assert.equal((await edit({ content: second })).status, 200);
    assert.equal(await decryptEnvelope(String((await get(server, token, hash))['content']), key, 'pw'), 'second');
    assert.equal((await get(server, token, hash, '&revision=2'))['content'], first);

    // Decrypted for good by its client: plain from then on, its language detected.
    assert.equal((await edit({ content: PYTHON, encrypted: 0 })).status, 200);
    const now = await get(server, token, hash);
    assert.deepEqual([now['encrypted'], now['language'], now['content']], [undefined, 'python', PYTHON]);
    assert.equal((await get(server, token, hash, '&revision=3'))['encrypted'], 1, 'a kept revision keeps its flag');
    assert.equal((await edit({ content: 'not an envelope', encrypted: 1 })).status, 400);
    assert.equal((await edit({ encrypted: 1 })).status, 400, 'turned on without an envelope');
    assert.equal((await edit({ encrypted: 0, title: 'plain' })).status, 200);
  });

  test('burn after read, passwords and expiry work as for any paste', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const envelope = await encryptText('once', newKey());
    const once = await create(server, token, { content: envelope, encrypted: 1, burn_after_read: 1 });
    assert.equal((await req(server, 'GET', `/api/v1/raw.php?hash=${once}`, { token })).text, envelope);
    const again = await req(server, 'GET', `/api/v1/raw.php?hash=${once}`, { token });
    assert.equal(again.status, 410);
    assert.match(String(again.json.error), /burned/);
    const stored = await storedPaste(server.dataDir, once);
    assert.ok(!JSON.stringify(stored).includes(JSON.parse(envelope).ct), 'the burned envelope is wiped');

    const reader = await makeToken(server.dataDir, { user: 'bob', scopes: 'read' });
    const locked = await create(server, token, { content: envelope, encrypted: 1, password: 'gate' });
    assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${locked}`, { token: reader })).status, 401);
    assert.equal(
      (await req(server, 'GET', `/api/v1/paste.php?hash=${locked}&password=gate`, { token: reader })).status,
      200,
    );

    const brief = await create(server, token, { content: envelope, encrypted: 1, expiry: '10m' });
    server.clock.advance(11 * 60_000);
    assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${brief}`, { token })).status, 410);
  });

  test('My pastes lists encrypted pastes by title but never searches their content', async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const envelope = await encryptText('needle in here', newKey());
    const hash = await create(server, token, { content: envelope, encrypted: 1, title: 'vault' });
    const ivPart = String((JSON.parse(envelope) as Fields)['ct']).slice(0, 12);
    assert.match((await alice.get('/my')).text, new RegExp(hash));
    assert.doesNotMatch((await alice.get(`/my?q=${encodeURIComponent(ivPart)}`)).text, new RegExp(hash));
    assert.match((await alice.get('/my?q=vault')).text, new RegExp(hash));
  });

  test("an encrypted paste's files: the server holds and serves envelopes under opaque names, never their names or bytes", async () => {
    const server = await startServer({ env: { OPEN_REGISTRATION: '1' } });
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const key = newKey();
    const marker = 'violet-harbor-5520';
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(marker)]);
    const log = Buffer.from(`a log line ${marker}\n`);
    const plain = [
      { name: `plan-${marker}.png`, type: 'image/png', bytes: png },
      { name: `notes-${marker}.log`, type: 'text/plain', bytes: log },
    ];
    const sealed = await Promise.all(
      plain.map((f) => sealFile({ name: f.name, type: f.type, size: f.bytes.length }, f.bytes, key)),
    );
    // The first part claims to be a PNG: an encrypted paste's files are kept opaque whatever their parts say.
    const m = multipart({ content: await encryptText('', key), encrypted: '1', privacy: 'unlisted' }, [
      { name: 'f1.enc', bytes: Buffer.from(sealed[0] as string), type: 'image/png' },
      { name: 'f2.enc', bytes: Buffer.from(sealed[1] as string) },
    ]);
    const made = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: m.body,
      headers: { 'content-type': m.type },
    });
    assert.equal(made.status, 200, made.text);
    const hash = String(made.json['hash']);
    const listed = (await get(server, token, hash))['files'] as Fields[];
    assert.deepEqual(
      listed.map((f) => [f['name'], f['type']]),
      [
        ['f1.enc', 'application/octet-stream'],
        ['f2.enc', 'application/octet-stream'],
      ],
    );

    // Nothing stored, logged or listed holds a real name or the plain bytes.
    const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
    const stored = await everythingStored(server.dataDir);
    const apiLog = JSON.stringify(await apiLogLines(server.dataDir));
    assert.ok(!stored.includes(marker) && !apiLog.includes(marker) && !JSON.stringify(listed).includes(marker));
    assert.ok(!stored.includes(key) && !apiLog.includes(key));
    const held = await storedFileBytes(server.dataDir);
    assert.equal(held.length, 2);
    for (const f of plain) assert.ok(!held.includes(sha(f.bytes)), `${f.name}'s plain bytes are stored`);

    // Served as attachments of opaque bytes, never inline; the key opens each to its name, type and bytes.
    for (const [i, f] of plain.entries()) {
      const r = await req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=f${i + 1}.enc`, { token });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'application/octet-stream');
      assert.match(String(r.headers['content-disposition']), /^attachment/);
      const opened = await openFile(r.text, key);
      assert.deepEqual([opened.name, opened.type, Buffer.from(opened.bytes)], [f.name, f.type, f.bytes]);
    }

    // The page names no file: the browser fetches each envelope and decrypts it; only this page takes blob: images.
    const page = await req(server, 'GET', `/p/${hash}`);
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes(marker));
    assert.equal(page.text.match(/data-sealed-file="\/p\/[A-Za-z0-9]{10}\/files\/f[12]\.enc"/g)?.length, 2);
    assert.doesNotMatch(page.text, /files\.zip|<img class="file-image"/);
    assert.match(String(page.headers['content-security-policy']), /img-src 'self' data: blob:;/);
    const bare = await create(server, token, { content: await encryptText('no files', key), encrypted: 1 });
    for (const path of [`/p/${bare}`, '/'])
      assert.doesNotMatch(String((await req(server, 'GET', path)).headers['content-security-policy']), /blob:/, path);
  });

  test("MAX_FILE_BYTES is the file's before encryption: its envelope goes in, and nothing past the largest one", async () => {
    const MAX = 3000;
    const server = await startServer({ env: { MAX_FILE_BYTES: String(MAX), OPEN_REGISTRATION: '1' } });
    const [alice] = await registerAll(server, 'alice');
    const token = await makeToken(server.dataDir, { user: 'alice' });
    const key = newKey();
    const content = await encryptText('', key);
    const send = (path: string, fields: Record<string, string>, files: Buffer[]) =>
      sendFiles(
        server,
        token,
        fields,
        files.map((bytes, i) => ({ name: `f${i + 1}.enc`, bytes })),
        path,
      );
    // A file of exactly MAX_FILE_BYTES, a 255-byte name and a password: its envelope is far larger, and taken.
    const name = `${'a'.repeat(251)}.bin`;
    const bytes = Buffer.alloc(MAX, 7);
    const head = { name, type: 'application/octet-stream', size: MAX };
    const full = await sealFile(head, bytes, key, { password: 'pw', iterations: MIN_ITERATIONS });
    assert.ok(full.length > MAX * 1.3, String(full.length));
    const made = await send('/api/v1/paste_create.php', { content, encrypted: '1' }, [Buffer.from(full)]);
    assert.equal(made.status, 200, made.text);
    const hash = String(made.json['hash']);
    const back = await req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=f1.enc`, { token });
    assert.deepEqual(Buffer.from((await openFile(back.text, key, 'pw')).bytes), bytes);

    // The server cannot see the file inside: it takes an envelope up to the largest a MAX_FILE_BYTES file makes, no more.
    const largest = sealedFileBytes(MAX);
    const edge = await send('/api/v1/paste_create.php', { content, encrypted: '1' }, [Buffer.alloc(largest, 0x41)]);
    assert.equal(edge.status, 200, edge.text);
    const past = await send('/api/v1/paste_create.php', { content, encrypted: '1' }, [Buffer.alloc(largest + 1, 0x41)]);
    assert.equal(past.status, 413, past.text);
    assert.equal(
      past.json['error'],
      `A file of an encrypted paste may hold at most ${MAX} bytes (MAX_FILE_BYTES) before it is encrypted, so its envelope at most ${largest}`,
    );

    // A plain paste's file: MAX_FILE_BYTES itself, one byte more 413; an envelope with no encrypted=1 before it too.
    const plain = await send('/api/v1/paste_create.php', { content: 'plain' }, [Buffer.alloc(MAX, 1)]);
    assert.equal(plain.status, 200, plain.text);
    for (const over of [Buffer.alloc(MAX + 1, 1), Buffer.from(full)]) {
      const r = await send('/api/v1/paste_create.php', { content: 'plain' }, [over]);
      assert.equal(r.status, 413, r.text);
      assert.equal(r.json['error'], `A file may hold at most ${MAX} bytes (MAX_FILE_BYTES)`);
    }

    // An edit of the encrypted paste takes another such envelope after encrypted=1; without it, a plain file's limit.
    const unsaid = await send('/api/v1/paste_edit.php', { hash, remove_file: 'f1.enc' }, [Buffer.from(full)]);
    assert.equal(unsaid.status, 413, unsaid.text);
    const edit = await send('/api/v1/paste_edit.php', { hash, encrypted: '1', remove_file: 'f1.enc' }, [
      Buffer.from(full),
    ]);
    assert.equal(edit.status, 200, edit.text);

    // encrypted=1 ahead of the files of a plain paste's web edit, which keeps it plain: still MAX_FILE_BYTES.
    const plainHash = String(plain.json['hash']);
    await alice.get(`/p/${plainHash}/edit`);
    const form = multipart(
      {
        encrypted: '1',
        _csrf: alice.csrf,
        title: 'T',
        content: 'plain',
        language: 'text',
        privacy: 'public',
        expiry: 'keep',
      },
      [{ name: 'big.bin', bytes: Buffer.alloc(MAX + 1, 2) }],
    );
    const web = await req(server, 'POST', `/p/${plainHash}/edit`, {
      headers: { cookie: alice.cookieHeader(), 'content-type': form.type },
      body: form.body,
    });
    assert.equal(web.status, 413, web.text);
    assert.match(web.text, new RegExp(`role="alert">A file may hold at most ${MAX} bytes \\(MAX_FILE_BYTES\\)\\.<`));
    const files = ((await get(server, token, plainHash))['files'] as Fields[]).map((f) => f['size']);
    assert.deepEqual(files, [MAX]);
    await until(async () => (await spooledUploads(server.dataDir)).length === 0, { what: 'no spooled upload is left' });
  });
});
