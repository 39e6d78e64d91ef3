import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ArchiveError, ArchiveWriter, readArchive } from '../../src/store/archive.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';

const LONG = `pastes/${'d'.repeat(60)}/${'e'.repeat(60)}/file.json`;

describe('backup archive', () => {
  let dir: string;
  let file: string;
  const members = new Map<string, Buffer>();

  before(async () => {
    dir = await tempDataDir();
    file = join(dir, 'a.tar.gz');
    members.set('empty.txt', Buffer.alloc(0));
    members.set('binary.bin', randomBytes(1000));
    members.set('big/one-mebibyte.bin', randomBytes(1024 * 1024));
    members.set(LONG, Buffer.from('a long path'));
    members.set('ünïcode/ファイル.json', Buffer.from('{"ok":true}'));
    for (let i = 0; i < 45; i++) members.set(`pastes/${String(i).padStart(2, '0')}/p${i}.json`, Buffer.from(`paste ${i}\n`.repeat(i)));
    const w = await ArchiveWriter.create(file);
    for (const [name, data] of members) await w.add(name, data, Date.parse('2026-01-02T03:04:05Z'));
    await w.finish({ pastes: 45 });
  });
  after(() => cleanup(dir));

  test('reads back every member in order, with a manifest of sizes and SHA-256', async () => {
    const got: [string, Buffer][] = [];
    const manifest = await readArchive(file, async (name, data) => void got.push([name, data]));
    assert.deepEqual(got.map(([n]) => n), [...members.keys()]);
    for (const [name, data] of got) assert.ok(data.equals(members.get(name) as Buffer), name);
    assert.equal(manifest['pastes'], 45);
    assert.equal(manifest.files.length, members.size);
    for (const f of manifest.files) {
      const data = members.get(f.path) as Buffer;
      assert.deepEqual([f.size, f.sha256], [data.length, createHash('sha256').update(data).digest('hex')]);
    }
    assert.deepEqual((await readdir(dir)).sort(), ['a.tar.gz'], 'no .part file is left');
  });

  test('GNU tar lists and unpacks it to the same bytes', async () => {
    const listed = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(listed, [...members.keys(), 'MANIFEST.json']);
    const out = join(dir, 'x');
    await mkdir(out);
    execFileSync('tar', ['-xzf', file, '-C', out]);
    for (const [name, data] of members) assert.ok((await readFile(join(out, name))).equals(data), name);
    const verbose = execFileSync('tar', ['-tvzf', file], { encoding: 'utf8' });
    assert.match(verbose, /^-rw------- .* 2026-01-02 \d\d:\d\d empty\.txt$/m);
  });

  /** The archive's tar bytes changed by `edit`, compressed again: a valid gzip around a changed tar. */
  async function altered(name: string, edit: (tar: Buffer) => Buffer): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, gzipSync(edit(gunzipSync(await readFile(file)))));
    return path;
  }

  const refused = async (path: string, message: RegExp): Promise<void> => {
    await assert.rejects(
      readArchive(path, async () => undefined),
      (err: unknown) => err instanceof ArchiveError && message.test(err.message),
    );
  };

  test('a cut, altered, unlisted or unsafe archive is refused with what is wrong', async () => {
    const bytes = await readFile(file);
    await writeFile(join(dir, 'cut.tar.gz'), bytes.subarray(0, Math.floor(bytes.length / 2)));
    await refused(join(dir, 'cut.tar.gz'), /not a whole gzip file|ends before its manifest/);
    // A byte of binary.bin's data (the second member: its data starts after two headers and empty.txt's none).
    await refused(await altered('flip.tar.gz', (t) => (t.writeUInt8((t[1024 + 10] as number) ^ 0xff, 1024 + 10), t)), /binary\.bin does not match the manifest/);
    // The end blocks moved up over the manifest: no manifest at all.
    await refused(await altered('no-manifest.tar.gz', (t) => Buffer.concat([t.subarray(0, t.lastIndexOf(Buffer.from('MANIFEST.json\0'))), Buffer.alloc(1024)])), /has no MANIFEST\.json/);
    const extra = join(dir, 'extra');
    await mkdir(join(extra, 'sub'), { recursive: true });
    await writeFile(join(extra, 'sub', 'stray.txt'), 'not listed');
    const plain = join(dir, 'plain.tar.gz');
    execFileSync('tar', ['-czf', plain, '-C', extra, 'sub/stray.txt']);
    await refused(plain, /no MANIFEST\.json/);
    // Made by GNU tar, a manifest that leaves a member out; then one that names a missing member.
    await writeFile(join(extra, 'MANIFEST.json'), JSON.stringify({ format: 'pastebin-backup', version: 1, created_at: 'x', files: [] }));
    execFileSync('tar', ['-czf', plain, '-C', extra, 'sub/stray.txt', 'MANIFEST.json']);
    await refused(plain, /sub\/stray\.txt is in the archive but not in the manifest/);
    await writeFile(join(extra, 'MANIFEST.json'), JSON.stringify({ format: 'pastebin-backup', version: 1, created_at: 'x', files: [{ path: 'gone.txt', size: 1, sha256: 'ab' }] }));
    execFileSync('tar', ['-czf', plain, '-C', extra, 'MANIFEST.json']);
    await refused(plain, /gone\.txt is in the manifest but not in the archive/);
    // A header renamed to ../evil, its checksum made right again.
    await refused(
      await altered('evil.tar.gz', (t) => {
        t.fill(0, 0, 100);
        t.write('../evil', 0, 'ascii');
        t.fill(0x20, 148, 156);
        let sum = 0;
        for (let i = 0; i < 512; i++) sum += t[i] as number;
        t.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
        return t;
      }),
      /member "\.\.\/evil" is not a plain path/,
    );
    // A damaged header.
    await refused(await altered('header.tar.gz', (t) => (t.write('x', 5, 'ascii'), t)), /checksum mismatch/);
  });

  test('writing refuses unsafe and duplicate names, and abort leaves no file', async () => {
    const w = await ArchiveWriter.create(join(dir, 'b.tar.gz'));
    await assert.rejects(w.add('../x', Buffer.alloc(1), 0), /not a plain path/);
    await assert.rejects(w.add('/abs', Buffer.alloc(1), 0), /not a relative path/);
    await w.add('one', Buffer.alloc(1), 0);
    await assert.rejects(w.add('one', Buffer.alloc(1), 0), /already in the archive/);
    await assert.rejects(w.add(`${'n'.repeat(101)}`, Buffer.alloc(1), 0), /too long/);
    await w.abort();
    assert.ok(!(await readdir(dir)).some((n) => n.startsWith('b.tar.gz')));
  });
});
