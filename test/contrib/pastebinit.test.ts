import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { storedPaste } from '../helpers/stored.ts';
import { cleanup, makeToken, req, ROOT, startServer, tempDataDir, type AppServer } from '../helpers/server.ts';
import { skipWithout, tool } from '../helpers/tools.ts';

/**
 * Debian's pastebinit (found by test/helpers/tools.ts; .ci/run installs it) with the config file we
 * ship, contrib/pastebinit/paste.conf, pointed at a test server as its README section says.
 */
let home: string;

before(async () => {
  home = await tempDataDir();
});
after(() => cleanup(home));

/** The shipped config for a server on plain http at `host`, with `token` (or none). */
async function configFor(host: string, token: string): Promise<string> {
  const shipped = await readFile(join(ROOT, 'contrib/pastebinit/paste.conf'), 'utf8');
  assert.match(shipped, /^basename = paste\.example\.org$/m);
  return shipped
    .replace(/^basename = .*$/m, `basename = ${host}`)
    .replace(/^https = True\n/m, '')
    .replace(/^token =$/m, `token = ${token}`);
}

/** Runs pastebinit on `text` with only our config in reach; answers its exit code and output. */
async function pastebinit(
  s: AppServer,
  token: string,
  text: string,
  args: string[] = [],
): Promise<{ code: number | null; out: string; err: string }> {
  const host = `127.0.0.1:${s.port}`;
  const dir = join(home, `${s.port}-${token === '' ? 'anon' : 'token'}`);
  await mkdir(join(dir, 'pastebin.d'), { recursive: true });
  await writeFile(join(dir, 'pastebin.d', 'paste.conf'), await configFor(host, token), { mode: 0o600 });
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, XDG_CONFIG_DIRS: dir, XDG_CONFIG_HOME: dir };
  const child = spawn(tool('pastebinit'), ['-b', `http://${host}`, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdin.end(text);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  return { code, out, err };
}

const hashOf = (s: AppServer, out: string): string => {
  const m = new RegExp(`^http://127\\.0\\.0\\.1:${s.port}/p/([A-Za-z0-9]{10})$`).exec(out.trim());
  assert.ok(m !== null, `pastebinit printed ${JSON.stringify(out)}`);
  return m[1] as string;
};

describe("Debian's pastebinit with contrib/pastebinit/paste.conf", () => {
  test('with a token: posts the text, title, language and privacy, and prints the paste page', async (t) => {
    if (skipWithout(t, 'pastebinit')) return;
    const s = await startServer();
    const token = await makeToken(s.dataDir, { user: 'alice' });
    const r = await pastebinit(s, token, '#!/bin/sh\necho "from pastebinit"\n', [
      '-t',
      'build log',
      '-f',
      'bash',
      '-P',
      'unlisted',
    ]);
    assert.equal(r.code, 0, r.err);
    const hash = hashOf(s, r.out);
    const got = await req(s, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
    const paste = got.json['paste'] as Record<string, unknown>;
    // pastebinit strips trailing whitespace before it sends.
    assert.equal(paste['content'], '#!/bin/sh\necho "from pastebinit"');
    assert.equal(paste['title'], 'build log');
    assert.equal(paste['language'], 'bash');
    assert.equal(paste['privacy'], 'unlisted');
    assert.equal((await req(s, 'GET', `/p/${hash}`)).status, 200, 'the printed address is the paste page');
  });

  test('without a token: an anonymous paste where the server allows them, and a failure where it does not', async (t) => {
    if (skipWithout(t, 'pastebinit')) return;
    const on = await startServer({ env: { ANONYMOUS_PASTES: '1' } });
    const r = await pastebinit(on, '', 'anonymous text');
    assert.equal(r.code, 0, r.err);
    const stored = await storedPaste(on.dataDir, hashOf(on, r.out));
    assert.equal(stored?.['owner_id'], 0);

    const off = await startServer();
    const refused = await pastebinit(off, '', 'nobody');
    assert.notEqual(refused.code, 0);
    assert.match(refused.err, /401/);
  });
});
