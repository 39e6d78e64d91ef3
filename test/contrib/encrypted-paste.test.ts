import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { decryptEnvelope, encryptText, newKey } from '../../src/paste/envelope-crypto.ts';
import { apiLogLines, everythingStored } from '../helpers/stored.ts';
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
});
