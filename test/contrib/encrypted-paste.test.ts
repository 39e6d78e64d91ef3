import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { decryptEnvelope, encryptText, newKey, openFile, sealFile } from '../../src/paste/envelope-crypto.ts';
import { multipart } from '../helpers/multipart-body.ts';
import { apiLogLines, everythingStored, storedFileBytes } from '../helpers/stored.ts';
import { makeToken, req, ROOT, startServer } from '../helpers/server.ts';

const SCRIPT = join(ROOT, 'contrib', 'encrypted-paste.mjs');

/** Runs the script; answers its exit code, stdout and stderr. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env } }, (e, out, err) =>
      resolve({ code: e === null ? 0 : Number(e.code ?? 1), out, err }),
    );
  });
}

const TEXT = 'SELECT secret FROM vault; -- ünïcode ✓\n';

describe('contrib/encrypted-paste.mjs', () => {
  test('encrypts a file into a paste and reads it back; the server holds neither the text nor the key', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const file = join(server.dataDir, '..', `plain-${Date.now()}.sql`);
    await writeFile(file, TEXT);
    const env = { PASTE_URL: server.url, PASTE_TOKEN: token };
    const put = await run(['put', file, '--title', 'query', '--language', 'sql'], env);
    assert.equal(put.code, 0, put.err);
    const link = put.out.trim();
    const m = new RegExp(`^${server.url}/p/([A-Za-z0-9]{10})#([A-Za-z0-9_-]{43})$`).exec(link);
    assert.ok(m, link);
    const [, hash, key] = m as unknown as [string, string, string];
    const got = await run(['get', link], env);
    assert.deepEqual([got.code, got.out], [0, TEXT]);

    // The same envelope as the browser's code: each opens what the other made.
    const paste = (await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).json['paste'] as Record<
      string,
      unknown
    >;
    assert.deepEqual([paste['encrypted'], paste['language'], paste['title']], [1, 'sql', 'query']);
    assert.equal(await decryptEnvelope(String(paste['content']), key), TEXT);
    const mine = newKey();
    const made = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: await encryptText('from the browser code', mine), encrypted: 1 },
    });
    const fromModule = await run(['get', `${server.url}/p/${String(made.json['hash'])}#${mine}`], env);
    assert.deepEqual([fromModule.code, fromModule.out], [0, 'from the browser code']);

    await server.upkeep();
    const stored = (await everythingStored(server.dataDir)) + JSON.stringify(await apiLogLines(server.dataDir));
    assert.ok(!stored.includes('vault') && !stored.includes(key), 'neither text nor key stored or logged');

    // Without the key, or with another, it says so and prints nothing.
    for (const bad of [`${server.url}/p/${hash}`, `${server.url}/p/${hash}#${newKey()}`]) {
      const r = await run(['get', bad], env);
      assert.equal(r.code, 1);
      assert.equal(r.out, '');
      assert.match(r.err, /lacks its key/);
    }
  });

  test('with PASTE_PASSWORD both the link and the password are needed; a one-time paste reads once', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const env = { PASTE_URL: server.url, PASTE_TOKEN: token, PASTE_PASSWORD: 'correct horse' };
    const file = join(server.dataDir, '..', `plain-${Date.now()}-pw.txt`);
    await writeFile(file, 'two locks');
    const put = await run(['put', file, '--burn'], env);
    assert.equal(put.code, 0, put.err);
    const link = put.out.trim();
    const without = await run(['get', link], { ...env, PASTE_PASSWORD: '' });
    assert.deepEqual([without.code, /PASTE_PASSWORD/.test(without.err)], [1, true]);
    const wrong = await run(['get', link], { ...env, PASTE_PASSWORD: 'wrong' });
    assert.deepEqual([wrong.code, wrong.out], [1, '']);
    // The wrong password burned the one-time paste's only read: a second one shows that.
    const again = await run(['get', link], env);
    assert.equal(again.code, 1);
    assert.match(again.err, /410 .*burned/);

    const second = await run(['put', file], env);
    const ok = await run(['get', second.out.trim()], env);
    assert.deepEqual([ok.code, ok.out], [0, 'two locks']);
    const bad = await run(['frobnicate'], env);
    assert.deepEqual([bad.code, /usage/.test(bad.err)], [1, true]);
  });

  test('put --file sends each file as an envelope under an opaque name; get --files decrypts them into a folder', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const env = { PASTE_URL: server.url, PASTE_TOKEN: token, PASTE_PASSWORD: 'two locks' };
    const work = join(server.dataDir, '..', `files-${Date.now()}`);
    await mkdir(join(work, 'in'), { recursive: true });
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(300, 7)]);
    const log = Buffer.from(Array.from({ length: 5000 }, (_, i) => `line ${i} osprey\n`).join(''));
    const binary = Buffer.from([0, 0x0a, 0xff, 0xfe, 0x0a, 0]);
    const plain: [string, Buffer][] = [
      ['chart osprey.png', png],
      ['run-osprey.log', log],
      ['odd-osprey.bin', binary],
    ];
    for (const [name, bytes] of plain) await writeFile(join(work, 'in', name), bytes);
    await writeFile(join(work, 'notes.txt'), TEXT);
    const put = await run(
      ['put', join(work, 'notes.txt'), ...plain.flatMap(([name]) => ['--file', join(work, 'in', name)])],
      env,
    );
    assert.equal(put.code, 0, put.err);
    const link = put.out.trim();
    const [, hash, key] = /\/p\/([A-Za-z0-9]{10})#([A-Za-z0-9_-]{43})$/.exec(link) as unknown as [
      string,
      string,
      string,
    ];

    // The server holds envelopes named f1.enc, f2.enc, f3.enc: no name, no plain bytes.
    const paste = (await req(server, 'GET', `/api/v1/paste.php?hash=${hash}`, { token })).json['paste'] as Record<
      string,
      unknown
    >;
    const listed = paste['files'] as Record<string, unknown>[];
    assert.deepEqual(
      listed.map((f) => [f['name'], f['type']]),
      [
        ['f1.enc', 'application/octet-stream'],
        ['f2.enc', 'application/octet-stream'],
        ['f3.enc', 'application/octet-stream'],
      ],
    );
    const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
    const held = await storedFileBytes(server.dataDir);
    for (const [, bytes] of plain) assert.ok(!held.includes(sha(bytes)));
    const stored = (await everythingStored(server.dataDir)) + JSON.stringify(await apiLogLines(server.dataDir));
    assert.ok(!stored.includes('osprey') && !stored.includes(key));

    // Read back into a folder, byte for byte, under the real names; the text still goes to stdout.
    const out = join(work, 'out');
    await mkdir(out);
    const got = await run(['get', link, '--files', out], env);
    assert.deepEqual([got.code, got.out], [0, TEXT], got.err);
    assert.deepEqual((await readdir(out)).sort(), plain.map(([name]) => name).sort());
    for (const [name, bytes] of plain) assert.ok((await readFile(join(out, name))).equals(bytes), name);
    // The browser's code opens what the script sealed; a file already in the folder is never overwritten.
    const first = await req(server, 'GET', `/api/v1/file.php?hash=${hash}&name=f1.enc`, { token });
    const opened = await openFile(first.text, key, 'two locks');
    assert.deepEqual([opened.name, opened.type], ['chart osprey.png', 'image/png']);
    const again = await run(['get', link, '--files', out], env);
    assert.equal(again.code, 1);
    assert.match(again.err, /EEXIST/);

    // What the browser sealed, the script opens; a name that is a path is refused and nothing is written.
    const mine = newKey();
    const sealed = async (name: string, bytes: Buffer) =>
      Buffer.from(await sealFile({ name, type: 'text/plain', size: bytes.length }, bytes, mine));
    for (const [name, ok] of [
      ['from-browser.txt', true],
      ['../escaped.txt', false],
    ] as const) {
      const m = multipart({ content: await encryptText('browser', mine), encrypted: '1' }, [
        { name: 'f1.enc', bytes: await sealed(name, Buffer.from('browser bytes')) },
      ]);
      const made = await req(server, 'POST', '/api/v1/paste_create.php', {
        token,
        body: m.body,
        headers: { 'content-type': m.type },
      });
      const dir = join(work, ok ? 'browser' : 'hostile');
      await mkdir(dir);
      const r = await run(['get', `${server.url}/p/${String(made.json['hash'])}#${mine}`, '--files', dir], {
        PASTE_URL: server.url,
        PASTE_TOKEN: token,
      });
      if (ok) {
        assert.deepEqual([r.code, r.out], [0, 'browser'], r.err);
        assert.equal(await readFile(join(dir, name), 'utf8'), 'browser bytes');
      } else {
        assert.equal(r.code, 1);
        assert.match(r.err, /not a plain file name/);
        assert.deepEqual(await readdir(dir), []);
        assert.deepEqual((await readdir(work)).includes('escaped.txt'), false);
      }
    }

    // A one-time paste's files come with the read that burns it, each once.
    const once = await run(
      ['put', join(work, 'notes.txt'), '--burn', '--file', join(work, 'in', 'run-osprey.log')],
      env,
    );
    const burned = join(work, 'burned');
    await mkdir(burned);
    const read = await run(['get', once.out.trim(), '--files', burned], env);
    assert.deepEqual([read.code, read.out], [0, TEXT], read.err);
    assert.ok((await readFile(join(burned, 'run-osprey.log'))).equals(log));
    assert.match((await run(['get', once.out.trim()], env)).err, /410 .*burned/);
  });

  test("a file of MAX_FILE_BYTES goes through sealed; a larger one's envelope is refused with the limit before encryption", async () => {
    const MAX = 4000;
    const server = await startServer({ env: { MAX_FILE_BYTES: String(MAX) } });
    const token = await makeToken(server.dataDir);
    const env = { PASTE_URL: server.url, PASTE_TOKEN: token, PASTE_PASSWORD: 'heron' };
    const work = join(server.dataDir, '..', `limit-${Date.now()}`);
    await mkdir(join(work, 'out'), { recursive: true });
    const full = Buffer.alloc(MAX, 0x5a);
    await writeFile(join(work, `${'w'.repeat(240)}.bin`), full);
    await writeFile(join(work, 'twice.bin'), Buffer.alloc(2 * MAX, 1));
    await writeFile(join(work, 'notes.txt'), TEXT);
    const put = await run(['put', join(work, 'notes.txt'), '--file', join(work, `${'w'.repeat(240)}.bin`)], env);
    assert.equal(put.code, 0, put.err);
    const got = await run(['get', put.out.trim(), '--files', join(work, 'out')], env);
    assert.deepEqual([got.code, got.out], [0, TEXT], got.err);
    assert.ok((await readFile(join(work, 'out', `${'w'.repeat(240)}.bin`))).equals(full));
    const over = await run(['put', join(work, 'notes.txt'), '--file', join(work, 'twice.bin')], env);
    assert.deepEqual([over.code, over.out], [1, '']);
    assert.match(
      over.err,
      new RegExp(
        `413 A file of an encrypted paste may hold at most ${MAX} bytes \\(MAX_FILE_BYTES\\) before it is encrypted`,
      ),
    );
  });
});
