import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  ArchiveError,
  ArchiveWriter,
  extractArchive,
  type MemberSink,
  readArchive,
  scanArchive,
} from '../../src/store/archive.ts';

// 130 bytes: over ustar's 100-byte name field, so it needs the prefix field.
const LONG = `pastes/${'d'.repeat(60)}/${'e'.repeat(52)}/file.json`;
const MTIME = Date.parse('2026-01-02T03:04:05Z');
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** A sink that drops what it is given. */
const drop = async (): Promise<MemberSink> => ({ write: async () => undefined, end: async () => undefined });

/** Reads every member whole (these test members are small), in order. */
async function readWhole(
  path: string,
): Promise<{ got: [string, Buffer][]; manifest: Awaited<ReturnType<typeof readArchive>> }> {
  const got: [string, Buffer][] = [];
  const manifest = await readArchive(path, async (name) => {
    const parts: Buffer[] = [];
    return { write: async (c) => void parts.push(c), end: async () => void got.push([name, Buffer.concat(parts)]) };
  });
  return { got, manifest };
}

let dir: string;
let file: string;
const members = new Map<string, Buffer>();

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'archive-test-'));
  file = join(dir, 'a.tar.gz');
  members.set('empty.txt', Buffer.alloc(0));
  members.set('binary.bin', randomBytes(1000));
  members.set('big/one-mebibyte.bin', randomBytes(1024 * 1024));
  members.set(LONG, Buffer.from('a long path'));
  members.set('ünïcode/ファイル.json', Buffer.from('{"ok":true}'));
  for (let i = 0; i < 45; i++)
    members.set(`pastes/${String(i).padStart(2, '0')}/p${i}.json`, Buffer.from(`paste ${i}\n`.repeat(i)));
  const w = await ArchiveWriter.create(file);
  for (const [name, data] of members) await w.add(name, data, MTIME);
  await w.finish({ pastes: 45 });
});
after(() => rm(dir, { recursive: true, force: true }));

test('the fixture covers a name that needs the ustar prefix', () => {
  assert.equal(Buffer.byteLength(LONG), 130);
});

test('reads back every member in order, the same bytes, and the manifest', async () => {
  const { got, manifest } = await readWhole(file);
  assert.deepEqual(
    got.map(([n]) => n),
    [...members.keys()],
  );
  for (const [name, data] of got) assert.ok(data.equals(members.get(name) as Buffer), name);
  assert.equal(manifest.format, 'pastebin-backup');
  assert.equal(manifest.version, 1);
  assert.ok(!Number.isNaN(Date.parse(manifest.created_at)));
  assert.equal(manifest['pastes'], 45);
});

test('the manifest lists each file with the size and SHA-256 of its data', async () => {
  const manifest = await readArchive(file, drop);
  assert.deepEqual(
    manifest.files,
    [...members].map(([path, data]) => ({ path, size: data.length, sha256: sha256(data) })),
  );
  // The manifest inside the archive is the same as the one returned, 1-space indented.
  const tar = gunzipSync(await readFile(file));
  assert.match(tar.toString('latin1'), /\{\n "format": "pastebin-backup",\n "version": 1,/);
});

test('GNU tar lists and unpacks it to the same bytes', async () => {
  const listed = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n');
  assert.deepEqual(listed, [...members.keys(), 'MANIFEST.json']);
  const out = join(dir, 'x');
  await mkdir(out);
  execFileSync('tar', ['-xzf', file, '-C', out]);
  for (const [name, data] of members) assert.ok((await readFile(join(out, name))).equals(data), name);
  const verbose = execFileSync('tar', ['-tvzf', file], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
  assert.match(verbose, /^-rw------- .* 2026-01-02 03:04 empty\.txt$/m);
});

/** A copy of the archive with its tar bytes changed by `edit` and gzipped again: a valid gzip around a changed tar. */
async function altered(name: string, edit: (tar: Buffer) => Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, gzipSync(edit(gunzipSync(await readFile(file)))));
  return path;
}

/** Where the header of member `name` (under 100 bytes, so all in the name field) starts. */
const headerAt = (tar: Buffer, name: string): number => tar.indexOf(Buffer.from(`${name}\0`));

async function refused(path: string, message: RegExp): Promise<void> {
  await assert.rejects(readArchive(path, drop), (err: unknown) => {
    assert.ok(err instanceof ArchiveError, `not an ArchiveError: ${String(err)}`);
    assert.match(err.message, message);
    return true;
  });
}

test('a truncated archive is refused', async () => {
  const bytes = await readFile(file);
  const cut = join(dir, 'cut.tar.gz');
  await writeFile(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
  await refused(cut, /not a whole gzip file \(cut short or damaged\)/);
  // A whole gzip around a tar cut inside a member.
  await refused(
    await altered('cut-tar.tar.gz', (t) => t.subarray(0, headerAt(t, 'binary.bin') + 700)),
    /ends without its end-of-archive blocks \(cut short\)/,
  );
});

test('a changed byte in a file’s data is refused as a SHA-256 mismatch', async () => {
  const path = await altered('flip.tar.gz', (t) => {
    const at = headerAt(t, 'binary.bin') + 512 + 10;
    t[at] = (t[at] as number) ^ 0xff;
    return t;
  });
  await refused(path, /binary\.bin does not match the manifest \(SHA-256 differs\)/);
});

test('an archive without MANIFEST.json is refused', async () => {
  // The end blocks moved up over the manifest.
  const path = await altered('no-manifest.tar.gz', (t) =>
    Buffer.concat([t.subarray(0, headerAt(t, 'MANIFEST.json')), Buffer.alloc(1024)]),
  );
  await refused(path, /has no MANIFEST\.json/);
});

test('a file the manifest does not list, or a listed file missing, is refused', async () => {
  const src = join(dir, 'extra');
  await mkdir(join(src, 'sub'), { recursive: true });
  await writeFile(join(src, 'sub', 'stray.txt'), 'not listed');
  const manifest = (files: unknown[]): string =>
    JSON.stringify({ format: 'pastebin-backup', version: 1, created_at: 'x', files });
  const plain = join(dir, 'plain.tar.gz');
  await writeFile(join(src, 'MANIFEST.json'), manifest([]));
  execFileSync('tar', ['-czf', plain, '-C', src, 'sub/stray.txt', 'MANIFEST.json']);
  await refused(plain, /sub\/stray\.txt is in the archive but not in the manifest/);
  await writeFile(join(src, 'MANIFEST.json'), manifest([{ path: 'gone.txt', size: 1, sha256: 'a'.repeat(64) }]));
  execFileSync('tar', ['-czf', plain, '-C', src, 'MANIFEST.json']);
  await refused(plain, /gone\.txt is in the manifest but not in the archive/);
  await writeFile(join(src, 'MANIFEST.json'), manifest([{ path: 'gone.txt', size: 1 }]));
  execFileSync('tar', ['-czf', plain, '-C', src, 'MANIFEST.json']);
  await refused(plain, /MANIFEST\.json has a malformed entry/);
  const stray = { path: 'sub/stray.txt', size: 10, sha256: createHash('sha256').update('not listed').digest('hex') };
  await writeFile(join(src, 'MANIFEST.json'), manifest([stray, stray]));
  execFileSync('tar', ['-czf', plain, '-C', src, 'sub/stray.txt', 'MANIFEST.json']);
  await refused(plain, /sub\/stray\.txt is in the manifest twice/);
  // MANIFEST.json must be the last member.
  await writeFile(join(src, 'MANIFEST.json'), manifest([]));
  execFileSync('tar', ['-czf', plain, '-C', src, 'MANIFEST.json', 'sub/stray.txt']);
  await refused(plain, /sub\/stray\.txt comes after MANIFEST\.json, which must be last/);
});

test('an unsafe member name is refused, and so is a damaged header', async () => {
  // The first header renamed to ../evil, its checksum made right again.
  const evil = await altered('evil.tar.gz', (t) => {
    t.fill(0, 0, 100);
    t.write('../evil', 0, 'ascii');
    t.fill(0x20, 148, 156);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += t[i] as number;
    t.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
    return t;
  });
  await refused(evil, /member "\.\.\/evil" is not a plain path/);
  await refused(await altered('header.tar.gz', (t) => (t.write('x', 5, 'ascii'), t)), /checksum mismatch/);
  const notGzip = join(dir, 'not-gzip.tar.gz');
  await writeFile(notGzip, 'plain text');
  await refused(notGzip, /not a whole gzip file/);
});

test('an error from onFile stops reading and comes out as it is', async () => {
  const stop = new Error('stop');
  let calls = 0;
  await assert.rejects(
    readArchive(file, async () => {
      calls++;
      throw stop;
    }),
    (err) => err === stop,
  );
  assert.equal(calls, 1);
});

test('the archive is written as FILE.part and renamed by finish; abort removes the .part', async () => {
  const sub = await mkdtemp(join(dir, 'part-'));
  const done = join(sub, 'done.tar.gz');
  const w = await ArchiveWriter.create(done);
  await w.add('x', Buffer.from('x'), MTIME);
  assert.deepEqual(await readdir(sub), ['done.tar.gz.part'], 'only the .part exists while writing');
  await w.finish();
  assert.deepEqual(await readdir(sub), ['done.tar.gz'], 'no .part is left after finish');

  const aborted = join(sub, 'aborted.tar.gz');
  const a = await ArchiveWriter.create(aborted);
  await a.add('y', randomBytes(100_000), MTIME);
  await a.abort();
  assert.deepEqual(await readdir(sub), ['done.tar.gz']);
  await assert.rejects(access(`${aborted}.part`), { code: 'ENOENT' });
});

test('writing refuses unsafe, duplicate and too long names, and manifest fields in extra', async () => {
  const w = await ArchiveWriter.create(join(dir, 'b.tar.gz'));
  await assert.rejects(w.add('../x', Buffer.alloc(1), 0), /not a plain path/);
  await assert.rejects(w.add('/abs', Buffer.alloc(1), 0), /not a relative path/);
  await assert.rejects(w.add('a\\b', Buffer.alloc(1), 0), /not a relative path/);
  await assert.rejects(w.add('MANIFEST.json', Buffer.alloc(1), 0), /already in the archive/);
  await w.add('one', Buffer.alloc(1), 0);
  await assert.rejects(w.add('one', Buffer.alloc(1), 0), /already in the archive/);
  await assert.rejects(w.add('n'.repeat(101), Buffer.alloc(1), 0), /too long/);
  await assert.rejects(w.add(`p/${'n'.repeat(101)}`, Buffer.alloc(1), 0), /too long/);
  await assert.rejects(w.add(`${'p'.repeat(156)}/n`, Buffer.alloc(1), 0), /too long/);
  await assert.rejects(w.finish({ version: 2 }), /manifest field version/);
  await w.abort();
  assert.ok(!(await readdir(dir)).some((n) => n.startsWith('b.tar.gz')));
});

test('reading a missing file fails with its error instead of waiting', async () => {
  await assert.rejects(readArchive(join(dir, 'no-such.tar.gz'), drop), { code: 'ENOENT' });
});

test('creating an archive in a missing folder fails, naming the folder', async () => {
  await assert.rejects(ArchiveWriter.create(join(dir, 'missing', 'c.tar.gz')), {
    message: `${join(dir, 'missing')} does not exist: create the folder first`,
  });
});

test('a member is written from a stream and read back a chunk at a time, never whole', async () => {
  const big = join(dir, 'streamed.tar.gz');
  const w = await ArchiveWriter.create(big);
  const SIZE = 8 * 1024 * 1024;
  const piece = Buffer.alloc(64 * 1024, 0x61);
  async function* source(): AsyncGenerator<Buffer> {
    for (let sent = 0; sent < SIZE; sent += piece.length) yield piece;
  }
  await w.addStream('logs/big.jsonl', SIZE, source(), MTIME);
  await w.finish();
  const chunks: number[] = [];
  const hash = createHash('sha256');
  const manifest = await readArchive(big, async () => ({
    write: async (c) => {
      chunks.push(c.length);
      hash.update(c);
    },
    end: async () => undefined,
  }));
  assert.equal(
    chunks.reduce((a, b) => a + b, 0),
    SIZE,
  );
  assert.ok(chunks.length >= 8 && Math.max(...chunks) <= 1024 * 1024, `chunks of ${Math.max(...chunks)} bytes`);
  assert.equal(manifest.files[0]?.sha256, hash.digest('hex'));
  // A source shorter or longer than the size its header declares is refused.
  const short = await ArchiveWriter.create(join(dir, 'short.tar.gz'));
  await assert.rejects(short.addStream('x', 10, [Buffer.alloc(4)], MTIME), /6 bytes short of the 10/);
  await short.abort();
  const long = await ArchiveWriter.create(join(dir, 'long.tar.gz'));
  await assert.rejects(long.addStream('x', 3, [Buffer.alloc(4)], MTIME), /more than the 3 bytes/);
  await long.abort();
});

test('the check sees each member’s declared size at its header, before any of its bytes is read', async () => {
  const seen: [string, number][] = [];
  const tooBig = new Error('too big');
  await assert.rejects(
    scanArchive(file, (name, size) => {
      seen.push([name, size]);
      if (size > 1000) throw tooBig;
    }),
    (err) => err === tooBig,
  );
  assert.deepEqual(seen, [
    ['empty.txt', 0],
    ['binary.bin', 1000],
    ['big/one-mebibyte.bin', 1024 * 1024],
  ]);
});

test('a member the scanned manifest does not list, or of another size, is refused at its header, before it is opened', async () => {
  const scanned = await scanArchive(file);
  const other = join(dir, 'other.tar.gz');
  const w = await ArchiveWriter.create(other);
  await w.add('stray.txt', Buffer.from('not listed'), MTIME);
  await w.finish();
  let opened = 0;
  const open = async (): Promise<MemberSink> => {
    opened++;
    return drop();
  };
  await assert.rejects(extractArchive(other, scanned, open), /stray\.txt is in the archive but not in the manifest/);
  const resized = join(dir, 'resized.tar.gz');
  const r = await ArchiveWriter.create(resized);
  await r.add('empty.txt', Buffer.from('now 9 bytes'), MTIME);
  await r.finish();
  await assert.rejects(
    extractArchive(resized, scanned, open),
    /empty\.txt does not match the manifest \(size 11, listed 0\)/,
  );
  assert.equal(opened, 0);
});
