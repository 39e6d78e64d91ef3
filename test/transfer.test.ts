import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { byteLines, runCli } from '../src/cli.ts';
import { randomBytes } from 'node:crypto';
import { BACKEND, backendEnv } from './helpers/backend.ts';
import { sendFiles, sha256 } from './helpers/multipart.ts';
import { spooledUploads } from './helpers/stored.ts';
import { cleanup, cli, makeToken, req, ROOT, startServer, tempDataDir, type AppServer } from './helpers/server.ts';
import { login, WebClient } from './helpers/web-client.ts';

/** The CLI in-process, with what it printed on each stream and whether it failed. */
async function run(
  dataDir: string,
  args: string[],
  stdin = '',
): Promise<{ out: string[]; err: string[]; error: string | null }> {
  const out: string[] = [];
  const err: string[] = [];
  try {
    await runCli(args, {
      env: { DATA_DIR: dataDir, ...(await backendEnv(dataDir)) },
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      readStdin: async () => stdin,
    });
    return { out, err, error: null };
  } catch (e) {
    return { out, err, error: e instanceof Error ? e.message : String(e) };
  }
}

describe('export and import', () => {
  let a: AppServer;
  const hashes: Record<string, string> = {};
  let exported: string[] = [];

  before(async () => {
    a = await startServer();
    await cli(a.dataDir, ['user', 'add', 'alice', '--password-stdin'], 'password123');
    const alice = await makeToken(a.dataDir, { user: 'alice' });
    const bob = await makeToken(a.dataDir, { user: 'bob' });
    const create = async (name: string, token: string, body: Record<string, unknown>): Promise<void> => {
      const r = await req(a, 'POST', '/api/v1/paste_create.php', { token, body });
      assert.equal(r.status, 200, r.text);
      hashes[name] = r.json?.['hash'] as string;
    };
    await create('plain', alice, { content: 'hello\nworld ✓ \u2028 "quotes"', title: 'Greeting', language: 'text' });
    await create('secret', alice, { content: 'locked', privacy: 'unlisted', password: 'open sesame' });
    await create('burn', bob, { content: 'read me once', burn_after_read: 1 });
    await create('burnt', bob, { content: 'already read', burn_after_read: 1 });
    await create('expiring', bob, { content: 'for a week', expiry: '1w', privacy: 'unlisted' });
    await create('edited', alice, { content: 'first', language: 'python' });
    assert.equal(
      (
        await req(a, 'POST', '/api/v1/paste_edit.php', {
          token: alice,
          body: { hash: hashes['edited'], content: 'second' },
        })
      ).status,
      200,
    );
    for (let i = 0; i < 3; i++)
      assert.equal((await req(a, 'GET', `/api/v1/paste.php?hash=${hashes['plain']}`, { token: alice })).status, 200);
    assert.equal((await req(a, 'GET', `/api/v1/paste.php?hash=${hashes['burnt']}`, { token: alice })).status, 200);
    // Stopping saves the view counts still in memory (README, Export and import).
    await a.stop();
    const r = await run(a.dataDir, ['export']);
    assert.equal(r.error, null);
    exported = r.out;
  });
  after(() => cleanup(a.dataDir));

  test('export writes one JSON line per paste, oldest first, with owner, dates, privacy, expiry, burn flag, password hash and views', () => {
    assert.equal(exported.length, 6);
    const lines = exported.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => l['hash']),
      Object.values(hashes),
    );
    const plain = lines[0] as Record<string, unknown>;
    assert.equal(plain['content'], 'hello\nworld ✓ \u2028 "quotes"');
    assert.equal(plain['owner'], 'alice');
    assert.equal(plain['view_count'], 3);
    assert.match(String(plain['created_at']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const secret = lines[1] as Record<string, unknown>;
    assert.match(String(secret['password']), /^scrypt\$/);
    assert.equal(secret['privacy'], 'unlisted');
    assert.equal((lines[2] as Record<string, unknown>)['burn_after_read'], 1);
    const burnt = lines[3] as Record<string, unknown>;
    assert.deepEqual(
      [burnt['burned'], burnt['content'], (burnt['receipt'] as Record<string, unknown>)['via']],
      [true, '', 'api'],
    );
    assert.match(String((lines[4] as Record<string, unknown>)['expire_at']), /Z$/);
    assert.deepEqual(
      [(lines[5] as Record<string, unknown>)['revision'], (lines[5] as Record<string, unknown>)['content']],
      [2, 'second'],
    );
    assert.ok(!exported.join('\n').includes('open sesame'));
  });

  test('export --user keeps one owner’s pastes; an unknown user is an error', async () => {
    const r = await run(a.dataDir, ['export', '--user', 'BOB']);
    assert.deepEqual(
      r.out.map((l) => (JSON.parse(l) as { owner: string }).owner),
      ['bob', 'bob', 'bob'],
    );
    assert.match((await run(a.dataDir, ['export', '--user', 'zed'])).error ?? '', /no user named "zed"/);
  });

  test('import into an empty instance gives back every paste identically, and logins and passwords work', async () => {
    const dir = await tempDataDir();
    try {
      const r = await run(dir, ['import'], `${exported.join('\n')}\n`);
      assert.equal(r.error, null, r.err.join('\n'));
      assert.deepEqual(r.out.slice(0, 2), [
        'added user alice (no password yet: set one with "user passwd alice")',
        'added user bob (no password yet: set one with "user passwd bob")',
      ]);
      assert.equal(r.out.at(-1), 'imported 6, renamed 0, already here 0, refused 0');
      assert.deepEqual(
        (await run(dir, ['export'])).out,
        exported,
        'the export of the copy is the export of the original',
      );
      // The copy serves them: a token for alice, the password, the burn, the owner's list.
      await cli(dir, ['user', 'passwd', 'alice'], 'password123');
      const b = await startServer({ dataDir: dir });
      try {
        const token = await makeToken(dir, { user: 'alice' });
        const plain = await req(b, 'GET', `/api/v1/paste.php?hash=${hashes['plain']}`, { token });
        assert.equal((plain.json!['paste'] as Record<string, unknown>)['content'], 'hello\nworld ✓ \u2028 "quotes"');
        assert.equal((plain.json!['paste'] as Record<string, unknown>)['view_count'], 4);
        const other = await makeToken(dir, { user: 'bob' });
        assert.equal((await req(b, 'GET', `/api/v1/paste.php?hash=${hashes['secret']}`, { token: other })).status, 401);
        assert.equal(
          (await req(b, 'GET', `/api/v1/paste.php?hash=${hashes['secret']}&password=open%20sesame`, { token: other }))
            .status,
          200,
        );
        assert.equal((await req(b, 'GET', `/api/v1/paste.php?hash=${hashes['burnt']}`, { token })).status, 410);
        assert.equal((await req(b, 'GET', `/api/v1/paste.php?hash=${hashes['burn']}`, { token })).status, 200);
        assert.equal((await req(b, 'GET', `/api/v1/paste.php?hash=${hashes['burn']}`, { token })).status, 410);
        const web = new WebClient(b);
        await login(web, 'alice');
        const my = await web.get('/my');
        for (const name of ['plain', 'secret', 'edited']) assert.ok(my.text.includes(`/p/${hashes[name]}`), name);
      } finally {
        await b.stop();
      }
    } finally {
      await cleanup(dir);
    }
  });

  test('importing again changes nothing; a taken hash gets a new one and is reported; bad lines are refused, the rest imported', async () => {
    const again = await run(a.dataDir, ['import'], exported.join('\n'));
    assert.equal(again.out.at(-1), 'imported 0, renamed 0, already here 6, refused 0');
    const changed = JSON.parse(exported[0] as string) as Record<string, unknown>;
    changed['content'] = 'a different paste with the same hash';
    const lines = [
      JSON.stringify(changed),
      '{"v":1,"hash":"not json',
      JSON.stringify({ ...changed, hash: 'ZZZZZZZZZZ', language: 'klingon' }),
      JSON.stringify({ ...changed, hash: 'ZZZZZZZZZY', created_at: 'yesterday' }),
      JSON.stringify({ ...changed, hash: 'ZZZZZZZZZX', privacy: 'secret' }),
      JSON.stringify({ ...changed, v: 2 }),
      '',
    ];
    const r = await run(a.dataDir, ['import'], lines.join('\n'));
    assert.match(r.error ?? '', /^5 lines refused/);
    const renamed = /^renamed (\w{10}) -> (\w{10}) \(the hash was taken here\)$/.exec(r.out[0] ?? '');
    assert.ok(renamed !== null, r.out.join('\n'));
    assert.equal(renamed[1], hashes['plain']);
    assert.deepEqual(r.err, [
      'line 2 refused: not a JSON object',
      'line 3 refused: "language" is not a language this service knows',
      'line 4 refused: "created_at" must be a UTC time like 2026-01-31T14:30:00.000Z',
      'line 5 refused: a field is missing or wrong: privacy',
      'line 6 refused: "v" must be 1 (a line written by a newer version?)',
    ]);
    const all = (await run(a.dataDir, ['export'])).out.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(all.find((p) => p['hash'] === renamed[2])?.['content'], 'a different paste with the same hash');
    assert.equal(all.find((p) => p['hash'] === hashes['plain'])?.['content'], 'hello\nworld ✓ \u2028 "quotes"');
  });

  test('a line a create would refuse is refused: a password in clear, no text, too much, a long or two-line title, text in a burned paste', async () => {
    const base = JSON.parse(exported[0] as string) as Record<string, unknown>;
    const into = await tempDataDir();
    try {
      const lines = [
        { ...base, hash: 'YYYYYYYYY1', password: 'plaintextpw' },
        { ...base, hash: 'YYYYYYYYY2', content: '' },
        { ...base, hash: 'YYYYYYYYY3', content: 'x'.repeat(1_048_577) },
        { ...base, hash: 'YYYYYYYYY4', title: 'a\nb' },
        { ...base, hash: 'YYYYYYYYY5', title: 't'.repeat(201) },
        { ...base, hash: 'YYYYYYYYY6', burned: true, content: 'still here' },
        { ...base, hash: 'YYYYYYYYY7', content: 'half a pair \ud800' },
      ].map((l) => JSON.stringify(l));
      const r = await run(into, ['import'], lines.join('\n'));
      assert.match(r.error ?? '', /^7 lines refused/, r.err.join('\n'));
      assert.deepEqual(r.err, [
        'line 1 refused: "password" must be the salted hash an export writes (scrypt$...), never a password in clear',
        'line 2 refused: "content" must not be empty',
        'line 3 refused: "content" exceeds 1048576 bytes (MAX_PASTE_BYTES)',
        'line 4 refused: "title": title must be a single line without control characters',
        'line 5 refused: "title": title must be at most 200 characters',
        'line 6 refused: "content" must be empty in a burned paste: its text was wiped when it was read',
        'line 7 refused: "title" and "content" must be valid Unicode text (one holds half of a surrogate pair)',
      ]);
      assert.equal((await run(into, ['export'])).out.length, 0, 'nothing of them was stored');
    } finally {
      await cleanup(into);
    }
  });

  test('a number, time or id a backend cannot hold is refused by its line, on both backends, and the rest imported', async () => {
    const base = JSON.parse(exported[0] as string) as Record<string, unknown>;
    const burnt = { ...base, burned: true, burn_after_read: 1, content: '' };
    const receipt = { at: '2026-01-31T14:30:00.000Z', via: 'api', token_id: 'AbCd1234' };
    const into = await tempDataDir();
    try {
      const lines = [
        { ...base, hash: 'Q1ZZZZZZZZ', view_count: 2 ** 63 },
        { ...base, hash: 'Q2ZZZZZZZZ', view_count: 2 ** 53 },
        { ...base, hash: 'Q3ZZZZZZZZ', revision: 2 ** 40 },
        { ...base, hash: 'Q4ZZZZZZZZ', revision: 2 ** 31 },
        { ...base, hash: 'Q5ZZZZZZZZ', created_at: '0000-01-01T00:00:00.000Z' },
        { ...base, hash: 'Q6ZZZZZZZZ', expire_at: '0000-12-31T00:00:00.000Z' },
        { ...burnt, hash: 'Q7ZZZZZZZZ', receipt: { ...receipt, token_id: 'a\u0000b' } },
        { ...burnt, hash: 'Q8ZZZZZZZZ', receipt: { ...receipt, at: '0000-01-01T00:00:00.000Z' } },
        // The bounds themselves are taken.
        { ...base, hash: 'Q9ZZZZZZZZ', view_count: 2 ** 53 - 1, revision: 2 ** 31 - 1 },
        { ...burnt, hash: 'QAZZZZZZZZ', created_at: '0001-01-01T00:00:00.000Z', receipt },
      ].map((l) => JSON.stringify(l));
      const r = await run(into, ['import'], lines.join('\n'));
      assert.match(r.error ?? '', /^8 lines refused/, r.err.join('\n'));
      assert.deepEqual(r.err, [
        'line 1 refused: "view_count" must be a whole number from 0 to 9007199254740991',
        'line 2 refused: "view_count" must be a whole number from 0 to 9007199254740991',
        'line 3 refused: "revision" must be a whole number from 1 to 2147483647',
        'line 4 refused: "revision" must be a whole number from 1 to 2147483647',
        'line 5 refused: "created_at" must be a time in the years 0001 to 9999',
        'line 6 refused: "expire_at" must be a time in the years 0001 to 9999',
        'line 7 refused: "receipt.token_id" must be a token id (8 letters and digits) or null',
        'line 8 refused: "receipt.at" must be a time in the years 0001 to 9999',
      ]);
      assert.equal(r.out.at(-1), 'imported 2, renamed 0, already here 0, refused 8');
      const back = (await run(into, ['export'])).out.map((l) => JSON.parse(l) as Record<string, unknown>);
      const byHash = new Map(back.map((p) => [p['hash'], p]));
      assert.deepEqual([...byHash.keys()].sort(), ['Q9ZZZZZZZZ', 'QAZZZZZZZZ']);
      assert.equal(byHash.get('Q9ZZZZZZZZ')?.['view_count'], 2 ** 53 - 1);
      assert.equal(byHash.get('Q9ZZZZZZZZ')?.['revision'], 2 ** 31 - 1);
      assert.equal(byHash.get('QAZZZZZZZZ')?.['created_at'], '0001-01-01T00:00:00.000Z');
      assert.deepEqual(byHash.get('QAZZZZZZZZ')?.['receipt'], receipt);
    } finally {
      await cleanup(into);
    }
  });

  test('a password hash with scrypt parameters this server does not accept (p=40000, N=3, N=2^30, r=1) is refused, naming the line', async () => {
    const base = JSON.parse(exported[1] as string) as Record<string, unknown>;
    const [, , , , salt, key] = (base['password'] as string).split('$');
    const into = await tempDataDir();
    try {
      const lines = [
        { ...base, hash: 'ZZZZZZZZZ1', password: `scrypt$16384$8$40000$${salt}$${key}` },
        { ...base, hash: 'ZZZZZZZZZ2', password: `scrypt$3$8$1$${salt}$${key}` },
        { ...base, hash: 'ZZZZZZZZZ3', password: `scrypt$1073741824$8$1$${salt}$${key}` },
        { ...base, hash: 'ZZZZZZZZZ4', password: `scrypt$16384$1$1$${salt}$${key}` },
        { ...base, hash: 'ZZZZZZZZZ5' },
      ].map((l) => JSON.stringify(l));
      const started = Date.now();
      const r = await run(into, ['import'], lines.join('\n'));
      assert.ok(Date.now() - started < 5_000, 'nothing was computed with those parameters');
      assert.match(r.error ?? '', /^4 lines refused/, r.err.join('\n'));
      assert.deepEqual(r.err, [
        'line 1 refused: "password" has scrypt parameters this server does not accept: p is 40000, not 1 or 2',
        'line 2 refused: "password" has scrypt parameters this server does not accept: N is 3, not 16384 or 32768',
        'line 3 refused: "password" has scrypt parameters this server does not accept: N is 1073741824, not 16384 or 32768',
        'line 4 refused: "password" has scrypt parameters this server does not accept: r is 1, not 8',
      ]);
      const kept = (await run(into, ['export'])).out.map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(
        kept.map((p) => p['hash']),
        ['ZZZZZZZZZ5'],
        'only the line with the hash this server wrote was stored',
      );
    } finally {
      await cleanup(into);
    }
  });

  test('an imported burned paste is listed for the sweep, which removes it when a live one would be', async () => {
    const burnt = exported
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((p) => p['hash'] === hashes['burnt']);
    assert.ok(burnt !== undefined && burnt['burned'] === true && burnt['content'] === '');
    const into = await tempDataDir();
    try {
      assert.equal(
        (await run(into, ['import'], JSON.stringify(burnt))).out.at(-1),
        'imported 1, renamed 0, already here 0, refused 0',
      );
      const b = await startServer({ dataDir: into });
      const token = await makeToken(into);
      assert.equal((await req(b, 'GET', `/api/v1/raw.php?hash=${hashes['burnt']}`, { token })).status, 410);
      b.clock.advance(31 * 86_400_000);
      await b.upkeep();
      assert.equal(
        (await req(b, 'GET', `/api/v1/raw.php?hash=${hashes['burnt']}`, { token })).status,
        404,
        'removed by the sweep, as in its own instance',
      );
      await b.stop();
    } finally {
      await cleanup(into);
    }
  });

  test('as a process: a line that is not valid UTF-8 is refused, never stored with U+FFFD in its place', async () => {
    const base = JSON.parse(exported[0] as string) as Record<string, unknown>;
    const into = await tempDataDir();
    try {
      const good = JSON.stringify({ ...base, hash: 'Utf8Utf8G1', content: 'caf\u00e9' });
      const bad = Buffer.from(JSON.stringify({ ...base, hash: 'Utf8Utf8B1', content: 'caf@' }));
      bad[bad.indexOf('@')] = 0xe9; // Latin-1 é: not UTF-8 on its own.
      const imp = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'import'], {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: into, ...(await backendEnv(into)) },
        input: Buffer.concat([Buffer.from(`${good}\r\n`), bad, Buffer.from('\n')]),
        encoding: 'utf8',
      });
      assert.equal(imp.status, 1, imp.stderr);
      assert.match(imp.stdout, /imported 1, renamed 0, already here 0, refused 1\n$/);
      assert.match(imp.stderr, /^line 2 refused: not valid UTF-8 \(as the API refuses such a body\)\n/);
      const kept = (await run(into, ['export'])).out.map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(
        kept.map((p) => [p['hash'], p['content']]),
        [['Utf8Utf8G1', 'café']],
      );
    } finally {
      await cleanup(into);
    }
  });

  test('standard input is split into lines as bytes, a character or a line across chunks kept whole', async () => {
    async function* chunks(): AsyncGenerator<Buffer> {
      const all = Buffer.from('one\ncaf\u00e9\n\nlast');
      for (let i = 0; i < all.length; i += 3) yield all.subarray(i, i + 3);
    }
    const lines: string[] = [];
    for await (const l of byteLines(chunks())) lines.push(l.toString('utf8'));
    assert.deepEqual(lines, ['one', 'café', '', 'last']);
  });

  test('as a process: export to stdout, import from stdin, a summary and an exit status', async () => {
    const env = { ...process.env, DATA_DIR: a.dataDir, ...(await backendEnv(a.dataDir)) };
    const exp = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'export', '--user', 'alice'],
      { cwd: ROOT, env, encoding: 'utf8' },
    );
    assert.equal(exp.status, 0, exp.stderr);
    assert.equal(exp.stdout.split('\n').filter(Boolean).length, 4);
    const imp = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), 'import'], {
      cwd: ROOT,
      env,
      input: `${exp.stdout}garbage\n`,
      encoding: 'utf8',
    });
    assert.equal(imp.status, 1);
    assert.match(imp.stdout, /^imported 0, renamed 0, already here 4, refused 1\n$/);
    assert.match(imp.stderr, /^line 5 refused: not a JSON object\nerror: 1 line refused/);
  });
});

describe('export and import of an encrypted paste', () => {
  test('the envelope, its flag and its language left to readers come across as they were', async () => {
    const a = await startServer();
    const dir = await tempDataDir();
    try {
      const token = await makeToken(a.dataDir, { user: 'alice' });
      const envelope = JSON.stringify({ v: 1, alg: 'AES-256-GCM', iv: 'A'.repeat(16), ct: 'B'.repeat(24) });
      const made = await req(a, 'POST', '/api/v1/paste_create.php', {
        token,
        body: { content: envelope, encrypted: 1 },
      });
      const hash = String(made.json['hash']);
      await a.stop();
      const exported = (await run(a.dataDir, ['export'])).out;
      assert.equal(JSON.parse(exported[0] ?? '{}')['encrypted'], 1);
      const r = await run(dir, ['import'], `${exported.join('\n')}\n`);
      assert.equal(r.error, null, r.err.join('\n'));
      assert.deepEqual((await run(dir, ['export'])).out, exported);
      const b = await startServer({ dataDir: dir });
      const paste = (
        await req(b, 'GET', `/api/v1/paste.php?hash=${hash}`, { token: await makeToken(dir, { user: 'alice' }) })
      ).json['paste'] as Record<string, unknown>;
      assert.deepEqual([paste['content'], paste['encrypted'], paste['language']], [envelope, 1, 'auto']);
      await b.stop();
    } finally {
      await cleanup(a.dataDir);
      await cleanup(dir);
    }
  });
});

describe('export and import of files', () => {
  const shared = randomBytes(50_000);
  const big = randomBytes(400_001);
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(3000)]);
  /** Each paste's files as sent: hash -> name -> bytes. */
  const sent = new Map<string, Map<string, Buffer>>();
  let exported: string[] = [];
  let a: AppServer;

  before(async () => {
    a = await startServer();
    const token = await makeToken(a.dataDir, { user: 'alice' });
    for (const [content, files] of [
      [
        'a log and a picture',
        [
          { name: 'big.log', bytes: big },
          { name: 'shot.png', bytes: png },
          { name: 'shared.bin', bytes: shared },
        ],
      ],
      ['', [{ name: 'also shared.bin', bytes: shared }]],
    ] as const) {
      const r = await sendFiles(a, token, { content }, [...files]);
      assert.equal(r.status, 200, r.text);
      sent.set(r.json['hash'] as string, new Map(files.map((f) => [f.name, f.bytes])));
    }
    await a.stop();
    const r = await run(a.dataDir, ['export']);
    assert.equal(r.error, null, r.err.join('\n'));
    exported = r.out;
  });

  /** Starts a server on `dir` and checks file.php serves every sent file byte for byte. */
  async function servesAll(dir: string, only = [...sent.keys()]): Promise<void> {
    const b = await startServer({ dataDir: dir });
    const token = await makeToken(dir, { user: 'alice' });
    for (const hash of only)
      for (const [name, bytes] of sent.get(hash) ?? []) {
        const r = await req(b, 'GET', `/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(name)}`, { token });
        assert.equal(r.status, 200, `${hash}/${name}: ${r.text}`);
        assert.equal(sha256(r.body), sha256(bytes), `${hash}/${name}`);
      }
    await b.stop();
  }

  test('each file’s bytes go once, as base64 on a line of their own, before the first paste that names them', () => {
    const lines = exported.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => ('file' in l ? 'file' : 'paste')),
      ['file', 'file', 'file', 'paste', 'paste'],
    );
    for (const l of lines.slice(0, 3)) {
      const f = l['file'] as { sha256: string; size: number; data: string };
      const bytes = Buffer.from(f.data, 'base64');
      assert.equal(sha256(bytes), f.sha256);
      assert.equal(bytes.length, f.size);
    }
    assert.deepEqual(
      ((lines[4]?.['files'] ?? []) as { name: string; sha256: string }[]).map((f) => [f.name, f.sha256]),
      [['also shared.bin', sha256(shared)]],
    );
  });

  test('import into an empty instance serves every file byte for byte through file.php; importing again adds nothing', async () => {
    const dir = await tempDataDir();
    try {
      const r = await run(dir, ['import'], `${exported.join('\n')}\n`);
      assert.equal(r.error, null, r.err.join('\n'));
      assert.match(r.out.at(-1) ?? '', /^imported 2, renamed 0, already here 0, refused 0$/);
      assert.deepEqual((await run(dir, ['export'])).out, exported);
      assert.match((await run(dir, ['import'], exported.join('\n'))).out.at(-1) ?? '', /already here 2, refused 0$/);
      assert.deepEqual(await spooledUploads(dir), [], 'no spooled copy is left');
      await servesAll(dir);
    } finally {
      await cleanup(dir);
    }
  });

  test('bytes that do not match their SHA-256 refuse the pastes that name them, saying so; the rest is imported', async () => {
    const dir = await tempDataDir();
    try {
      const lines = exported.map((l) => JSON.parse(l) as Record<string, unknown>);
      const bad = lines.findIndex((l) => (l['file'] as { sha256?: string } | undefined)?.sha256 === sha256(big));
      const f = lines[bad]?.['file'] as { data: string };
      const flipped = Buffer.from(f.data, 'base64');
      flipped[1000] = (flipped[1000] ?? 0) ^ 1;
      f.data = flipped.toString('base64');
      const r = await run(dir, ['import'], lines.map((l) => JSON.stringify(l)).join('\n'));
      assert.match(r.error ?? '', /2 lines refused/);
      assert.match(
        r.err.join('\n'),
        new RegExp(`line ${bad + 1} refused: file ${sha256(big)}: its data does not match its SHA-256`),
      );
      assert.match(
        r.err.join('\n'),
        new RegExp(`line 4 refused: file "big\\.log" \\(${sha256(big)}\\): its bytes on line ${bad + 1} were refused`),
      );
      assert.match(r.out.at(-1) ?? '', /^imported 1, renamed 0, already here 0, refused 2$/);
      // A paste line whose bytes no earlier line carries is refused too.
      const alone = await run(dir, ['import'], `${exported[3]}\n`);
      assert.match(
        alone.err.join('\n'),
        /line 1 refused: file "big\.log" \([0-9a-f]{64}\): no earlier line carries its bytes/,
      );
      await servesAll(dir, [...sent.keys()].slice(1));
    } finally {
      await cleanup(dir);
    }
  });

  // On PostgreSQL only: there the export above came from the database, and goes through a data folder.
  if (BACKEND === 'postgres')
    test('from the data folder into PostgreSQL and back, byte for byte', async () => {
      // The export above came from PostgreSQL: into a data folder, out again, into a new database.
      const folder = await tempDataDir();
      const db = await tempDataDir();
      try {
        const plain = async (args: string[], stdin = ''): Promise<string[]> => {
          const out: string[] = [];
          await runCli(args, { env: { DATA_DIR: folder }, stdout: (l) => out.push(l), readStdin: async () => stdin });
          return out;
        };
        assert.match((await plain(['import'], exported.join('\n'))).at(-1) ?? '', /^imported 2,/);
        const fromFolder = await plain(['export']);
        assert.deepEqual(fromFolder, exported);
        const r = await run(db, ['import'], fromFolder.join('\n'));
        assert.equal(r.error, null, r.err.join('\n'));
        await servesAll(db);
      } finally {
        await cleanup(folder);
        await cleanup(db);
      }
    });
});
