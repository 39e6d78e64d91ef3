import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../src/cli.ts';
import { ArchiveWriter } from '../src/store/archive.ts';
import { membersOf } from './helpers/archive.ts';
import { sendFiles, sha256 } from './helpers/multipart.ts';
import { type AppServer, cleanup, makeToken, req, startServer, tempDataDir } from './helpers/server.ts';
import { storedFileBytes } from './helpers/stored.ts';

/** Runs the CLI on `dataDir`, answering its stdout; a refusal rejects with its message. */
async function run(dataDir: string, args: string[]): Promise<string> {
  const out: string[] = [];
  await runCli(args, { env: { DATA_DIR: dataDir }, stdout: (l) => out.push(l), readStdin: async () => '' });
  return out.join('\n');
}

describe('a backup of the data folder carries the files of its pastes', () => {
  let work: string;
  let a: AppServer;
  let token: string;
  let archive: string;
  /** Each paste's files as sent: hash -> name -> bytes. */
  const sent = new Map<string, Map<string, Buffer>>();
  const shared = randomBytes(70_000);

  before(async () => {
    work = await tempDataDir();
    a = await startServer();
    token = await makeToken(a.dataDir, { user: 'alice' });
    for (let i = 0; i < 3; i++) {
      const files = [
        { name: `log-${i}.txt`, bytes: randomBytes(200_000 + i) },
        { name: 'shared.bin', bytes: shared },
      ];
      const r = await sendFiles(a, token, { content: i === 0 ? '' : `paste ${i}` }, files);
      assert.equal(r.status, 200, r.text);
      sent.set(r.json['hash'] as string, new Map(files.map((f) => [f.name, f.bytes])));
    }
    // An edit that removes a file: the kept revision still names it, so its bytes stay and are backed up.
    const [first] = sent.keys();
    const e = await sendFiles(
      a,
      token,
      { hash: first as string, remove_file: 'log-0.txt', content: 'now text' },
      [],
      '/api/v1/paste_edit.php',
    );
    assert.equal(e.status, 200, e.text);
    sent.get(first as string)?.delete('log-0.txt');
    archive = join(work, 'backup.tar.gz');
    assert.match(await run(a.dataDir, ['backup', archive]), /backup\.tar\.gz: \d+ files \(3 pastes\)/);
  });
  after(() => cleanup(work));

  test('the archive holds each paste’s bytes, once, under their SHA-256, with their claims', async () => {
    const members = await membersOf(archive);
    const bytes = [...members.keys()].filter((n) => /^files\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(n));
    assert.deepEqual(bytes.map((n) => n.split('/')[2]).sort(), await storedFileBytes(a.dataDir));
    for (const n of bytes) assert.equal(sha256(members.get(n) as Buffer), n.split('/')[2]);
    // Four distinct files (three logs and the shared one), the shared one claimed by each paste.
    assert.equal(bytes.length, 4);
    const claims = [...members.keys()].filter((n) =>
      n.startsWith(`files/${sha256(shared).slice(0, 2)}/${sha256(shared)}@`),
    );
    assert.equal(claims.length, 3);
  });

  test('a restore serves every file byte for byte, and the sweep goes on from the restored claims', async () => {
    const into = join(work, 'restored');
    assert.match(await run(into, ['restore', archive]), /^restored \d+ files \(3 pastes\)/);
    const b = await startServer({ dataDir: into });
    for (const [hash, files] of sent) {
      const p = await req(b, 'GET', `/api/v1/paste.php?hash=${hash}`, { token });
      assert.equal(p.status, 200, p.text);
      assert.deepEqual(
        (p.json['paste'] as { files: { name: string }[] }).files.map((f) => f.name).sort(),
        [...files.keys()].sort(),
      );
      for (const [name, bytes] of files) {
        const r = await req(b, 'GET', `/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(name)}`, { token });
        assert.equal(r.status, 200, r.text);
        assert.equal(sha256(r.body), sha256(bytes), `${hash}/${name}`);
      }
    }
    // Deleting every paste on the restored copy removes every byte once the sweep has run.
    for (const hash of sent.keys()) {
      const d = await req(b, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } });
      assert.equal(d.status, 200, d.text);
    }
    b.clock.advance(61_000);
    await b.upkeep();
    assert.deepEqual(await storedFileBytes(into), []);
  });

  test('bytes that are not what their name says, or missing bytes a paste names, refuse the restore', async () => {
    const members = await membersOf(archive);
    const swapped = async (name: string, change: (m: Map<string, Buffer>) => void): Promise<string> => {
      const copy = new Map(members);
      change(copy);
      const file = join(work, name);
      const w = await ArchiveWriter.create(file);
      for (const [k, v] of copy) await w.add(k, v, 0);
      await w.finish({ data_format: 2 });
      return file;
    };
    const target = `files/${sha256(shared).slice(0, 2)}/${sha256(shared)}`;
    const bad = await swapped('bad-bytes.tar.gz', (m) => m.set(target, Buffer.from('not the bytes')));
    const intoBad = join(work, 'into-bad');
    await assert.rejects(
      run(intoBad, ['restore', bad]),
      new RegExp(`${target} does not hold the bytes its SHA-256 names`),
    );
    assert.deepEqual(await readdir(intoBad).catch(() => []), []);
    const gone = await swapped('no-bytes.tar.gz', (m) => m.delete(target));
    await assert.rejects(
      run(join(work, 'into-gone'), ['restore', gone]),
      /it lacks the bytes of 1 file its pastes name/,
    );
    const stray = await swapped('stray.tar.gz', (m) => m.set('files/zz/nope', Buffer.from('x')));
    await assert.rejects(run(join(work, 'into-stray'), ['restore', stray]), /files\/zz\/nope is not part of a backup/);
  });
});
