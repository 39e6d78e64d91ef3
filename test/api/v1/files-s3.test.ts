import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { runCli } from '../../../src/cli.ts';
import { backendEnv } from '../../helpers/backend.ts';
import { sendFiles } from '../../helpers/multipart.ts';
import { type AppServer, cleanup, makeToken, req, startServer, tempDataDir } from '../../helpers/server.ts';
import { directClient, S3_BUCKET, startS3, type TestS3 } from '../../helpers/s3.ts';
import { storedFileBytes } from '../../helpers/stored.ts';

// FILE_STORE=s3://… against an S3-compatible server on loopback (README, Files): the bytes go
// to the bucket under the prefix, the claims stay in the paste's own store (either backend).

const BUCKET = S3_BUCKET;
const PREFIX = 'pastes/files';

let s3: TestS3;
let server: AppServer;
let token: string;
let bucket: S3Client;
/** Every request the paste server made to the bucket, as `METHOD path?query`. */
let asked: string[];

before(async () => {
  s3 = await startS3(PREFIX);
  asked = s3.asked;
  bucket = directClient(s3);
  server = await startServer({
    env: { ...s3.env, MAX_FILE_BYTES: String(6 * 1024 * 1024) },
  });
  token = await makeToken(server.dataDir, { user: 'alice' });
});

after(async () => {
  await server?.stop();
  bucket?.destroy();
  await s3?.stop();
});

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const keyOf = (b: Buffer): string => `${PREFIX}/${sha(b).slice(0, 2)}/${sha(b).slice(2, 4)}/${sha(b)}`;

/** Every key in the bucket (the test lists it; the server never does). */
async function keys(): Promise<string[]> {
  const out = await bucket.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (out.Contents ?? []).map((o) => o.Key as string).sort();
}

/** A multipart create of `files` beside some text, answering the new paste's hash. */
async function createWith(files: { name: string; bytes: Buffer }[], status = 200): Promise<string> {
  const form = new FormData();
  form.append('content', 'see the files');
  for (const f of files) form.append('file', new Blob([f.bytes]), f.name);
  const built = new Request('http://localhost/', { method: 'POST', body: form });
  const r = await req(server, 'POST', '/api/v1/paste_create.php', {
    token,
    body: Buffer.from(await built.arrayBuffer()),
    headers: { 'content-type': built.headers.get('content-type') as string },
  });
  assert.equal(r.status, status, r.text);
  return r.json['hash'] as string;
}

async function fileBytes(hash: string, name: string): Promise<{ status: number; body: Buffer; type: string }> {
  const r = await fetch(`${server.url}/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(name)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()), type: r.headers.get('content-type') ?? '' };
}

async function remove(hash: string): Promise<void> {
  const del = await req(server, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } });
  assert.equal(del.status, 200, del.text);
}

/** Runs the upkeep a minute later on the server's clock, as its timer would (the file sweep with it). */
async function sweep(): Promise<void> {
  server.clock.advance(61_000);
  await server.upkeep();
}

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  Buffer.from('IHDR fake image body'),
]);
// A 5 MB log, every line different, so a byte out of place shows.
const LOG = Buffer.from(Array.from({ length: 100_000 }, (_, i) => `line ${i}: ${'x'.repeat(40)}\n`).join(''));

test('files go to the bucket under the prefix, read back byte for byte, and go after delete and sweep', async () => {
  const hash = await createWith([
    { name: 'shot.png', bytes: PNG },
    { name: 'server.log', bytes: LOG },
  ]);
  assert.deepEqual(await keys(), [keyOf(PNG), keyOf(LOG)].sort());
  // Nothing of them in the paste's own store: only the claims are there.
  assert.deepEqual(await storedFileBytes(server.dataDir), []);
  const png = await fileBytes(hash, 'shot.png');
  assert.equal(png.status, 200);
  assert.equal(png.type, 'image/png', 'the first bytes, read from the bucket, tell the image');
  assert.ok(png.body.equals(PNG));
  const log = await fileBytes(hash, 'server.log');
  assert.equal(log.status, 200);
  assert.equal(log.body.length, LOG.length);
  assert.ok(log.body.equals(LOG));

  await remove(hash);
  assert.equal((await fileBytes(hash, 'shot.png')).status, 404, 'unreadable at once');
  await sweep();
  assert.deepEqual(await keys(), []);
});

test('a second paste with the same bytes keeps them when the first goes, and they are sent once', async () => {
  const bytes = Buffer.from('the same config in two pastes\n');
  const first = await createWith([{ name: 'app.conf', bytes }]);
  const puts = asked.length;
  const second = await createWith([{ name: 'copy.conf', bytes }]);
  assert.ok(
    !asked.slice(puts).some((a) => a.startsWith('PUT ')),
    `bytes already in the bucket are not sent again: ${asked.slice(puts).join(', ')}`,
  );
  await remove(first);
  await sweep();
  assert.deepEqual(await keys(), [keyOf(bytes)]);
  const kept = await fileBytes(second, 'copy.conf');
  assert.equal(kept.status, 200);
  assert.ok(kept.body.equals(bytes));
  await remove(second);
  await sweep();
  assert.deepEqual(await keys(), []);
});

test('a bucket that does not answer fails the create (no paste, no bytes) and the read, and both work once it is back', async () => {
  const kept = Buffer.from('kept while the bucket was up\n');
  const hash = await createWith([{ name: 'kept.txt', bytes: kept }]);
  const lost = Buffer.from('sent while the bucket was down\n');
  s3.down = true;
  try {
    await createWith([{ name: 'lost.txt', bytes: lost }], 500);
    assert.equal((await fileBytes(hash, 'kept.txt')).status, 500);
    // The server log names the bucket, the request and the answer.
    assert.match(
      server.output(),
      /s3:\/\/pastebin-files\/pastes\/files at http:\/\/127\.0\.0\.1:\d+: (HeadObject|PutObject) of pastes\/files\/[0-9a-f/]+ failed \(.*HTTP 503\)/,
    );
    assert.doesNotMatch(server.output(), /S3RVER/);
  } finally {
    s3.down = false;
  }
  const back = await fileBytes(hash, 'kept.txt');
  assert.equal(back.status, 200);
  assert.ok(back.body.equals(kept));
  // The failed create's claim goes with its grace, and nothing of it is in the bucket.
  await sweep();
  assert.deepEqual(await keys(), [keyOf(kept)]);
  await remove(hash);
  await sweep();
  assert.deepEqual(await keys(), []);
});

/** A multipart request of `fields` and `files` to `path`, as a client sends it. */
async function sendForm(
  path: string,
  fields: Record<string, string>,
  files: { name: string; bytes: Buffer }[] = [],
): Promise<Awaited<ReturnType<typeof req>>> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append('file', new Blob([f.bytes]), f.name);
  const built = new Request('http://localhost/', { method: 'POST', body: form });
  return req(server, 'POST', path, {
    token,
    body: Buffer.from(await built.arrayBuffer()),
    headers: { 'content-type': built.headers.get('content-type') as string },
  });
}

test('on the bucket too: the page serves a file; a kept version holds edited-away bytes; a delete, an expiry and a burn take them', async () => {
  const away = Buffer.from(`edited away ${Math.random()}\n`);
  const stays = Buffer.from(`kept by the edit ${Math.random()}\n`);
  const made = await sendForm('/api/v1/paste_create.php', { content: 'two files' }, [
    { name: 'away.txt', bytes: away },
    { name: 'stays.txt', bytes: stays },
  ]);
  assert.equal(made.status, 200, made.text);
  const hash = made.json['hash'] as string;
  const page = await fetch(`${server.url}/p/${hash}/files/stays.txt`);
  assert.equal(page.status, 200);
  assert.ok(Buffer.from(await page.arrayBuffer()).equals(stays), 'the page reads the bytes from the bucket');
  const edited = await sendForm('/api/v1/paste_edit.php', { hash, remove_file: 'away.txt' });
  assert.equal(edited.status, 200, edited.text);
  assert.equal((await fileBytes(hash, 'away.txt')).status, 404, 'unreadable at once');
  await sweep();
  // The version before the edit is kept (MAX_REVISIONS) and still names them: they stay until it goes.
  const afterEdit = await keys();
  assert.ok(afterEdit.includes(keyOf(stays)) && afterEdit.includes(keyOf(away)), 'the kept version holds its bytes');
  await remove(hash);
  await sweep();
  const afterDelete = await keys();
  assert.ok(!afterDelete.includes(keyOf(stays)) && !afterDelete.includes(keyOf(away)), 'both went with the paste');

  const expiring = Buffer.from(`expires ${Math.random()}\n`);
  const soon = await sendForm('/api/v1/paste_create.php', { content: 'soon gone', expiry: '10m' }, [
    { name: 'soon.txt', bytes: expiring },
  ]);
  assert.equal(soon.status, 200, soon.text);
  assert.ok((await keys()).includes(keyOf(expiring)));
  server.clock.advance(11 * 60_000);
  assert.equal((await fileBytes(soon.json['hash'] as string, 'soon.txt')).status, 410, 'expired: unreadable at once');
  await sweep();
  await sweep();
  assert.ok(!(await keys()).includes(keyOf(expiring)), 'the expired paste took its bytes');

  const burnt = Buffer.from(`read once ${Math.random()}\n`);
  const once = await sendForm('/api/v1/paste_create.php', { content: 'once', burn_after_read: '1' }, [
    { name: 'once.txt', bytes: burnt },
  ]);
  assert.equal(once.status, 200, once.text);
  const read = await req(server, 'GET', `/api/v1/paste.php?hash=${once.json['hash']}`, { token });
  assert.equal(read.status, 200, read.text);
  const url = new URL((read.json['paste'] as { files: { url: string }[] }).files[0]?.url as string);
  const fetched = await req(server, 'GET', url.pathname + url.search, { token });
  assert.equal(fetched.status, 200);
  assert.ok(fetched.body.equals(burnt), 'the burning reader gets the bytes from the bucket, once');
  await sweep();
  await sweep();
  assert.ok(!(await keys()).includes(keyOf(burnt)), 'the burned paste took its bytes');
});

test('the server never lists the bucket: what a paste holds is in its own store', () => {
  assert.ok(asked.length > 0);
  const listings = asked.filter((a) => /^GET \/[^/?]+\/?(\?|$)/.test(a));
  assert.deepEqual(listings, []);
  for (const a of asked)
    assert.match(a, new RegExp(`^(HEAD|GET|PUT|DELETE) /${BUCKET}/${PREFIX}/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{64}`));
});

test('an import with FILE_STORE set puts the bytes in the bucket: an export of a store without one moves its files there', async () => {
  const bytes = Buffer.from('moved from a folder to the bucket by an import\n');
  const folder = await startServer();
  const dir = await tempDataDir();
  try {
    const own = await makeToken(folder.dataDir, { user: 'alice' });
    const made = await sendFiles(folder, own, { content: 'one file' }, [{ name: 'moved.txt', bytes }]);
    assert.equal(made.status, 200, made.text);
    const hash = made.json['hash'] as string;
    await folder.stop();
    const cli = async (dataDir: string, args: string[], env: Record<string, string>, stdin = ''): Promise<string[]> => {
      const out: string[] = [];
      await runCli(args, {
        env: { DATA_DIR: dataDir, ...env },
        stdout: (l) => out.push(l),
        readStdin: async () => stdin,
      });
      return out;
    };
    const exported = await cli(folder.dataDir, ['export'], await backendEnv(folder.dataDir));
    const into = {
      ...(await backendEnv(dir)),
      ...s3.env,
    };
    assert.match((await cli(dir, ['import'], into, exported.join('\n'))).at(-1) ?? '', /^imported 1,/);
    assert.ok((await keys()).includes(keyOf(bytes)), 'the bytes are in the bucket');
    assert.deepEqual(await storedFileBytes(dir), [], 'and not in the importing store');
    const b = await startServer({ dataDir: dir, env: into });
    try {
      const reader = await makeToken(dir, { user: 'alice' });
      const r = await req(b, 'GET', `/api/v1/file.php?hash=${hash}&name=moved.txt`, { token: reader });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.body.equals(bytes));
      const del = await req(b, 'POST', '/api/v1/paste_delete.php', { token: reader, body: { hash } });
      assert.equal(del.status, 200, del.text);
      b.clock.advance(61_000);
      await b.upkeep();
      assert.ok(!(await keys()).includes(keyOf(bytes)), 'gone from the bucket with its paste');
    } finally {
      await b.stop();
    }
  } finally {
    await cleanup(folder.dataDir);
    await cleanup(dir);
  }
});
