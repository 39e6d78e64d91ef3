import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurableFiles, STATE_CHUNK, stateJson } from '../../src/store/files.ts';
import { RateLimiter } from '../../src/ratelimit/bucket.ts';
import { BucketFile, loadBuckets, saveBuckets } from '../../src/store/bucket-file.ts';

const T0 = Date.UTC(2024, 0, 1);

describe('bucket persistence', () => {
  let dir = '';
  let files: DurableFiles;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ratelimit-'));
    files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('saveBuckets then loadBuckets restores the same buckets', async () => {
    const file = join(dir, 'state', 'ratelimit.json');
    const a = new RateLimiter(() => T0);
    a.consume('token:x', 2);
    a.consume('token:x', 2);
    a.consume('ip:10.0.0.1', 10);
    await saveBuckets(files, file, a);
    assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { ...a.snapshot() });

    const b = new RateLimiter(() => T0);
    b.restore(await loadBuckets(file));
    assert.deepEqual(b.snapshot(), a.snapshot());
    assert.equal(b.consume('token:x', 2).allowed, false);
  });

  it('saveBuckets replaces an earlier save', async () => {
    const file = join(dir, 'replace.json');
    const rl = new RateLimiter(() => T0);
    rl.consume('token:a', 1);
    await saveBuckets(files, file, rl);
    rl.restore({});
    await saveBuckets(files, file, rl);
    assert.deepEqual(await loadBuckets(file), {});
  });

  it('loadBuckets answers {} for a missing file', async () => {
    assert.deepEqual(await loadBuckets(join(dir, 'nope.json')), {});
  });

  it('loadBuckets answers {} for a corrupt or truncated file', async () => {
    for (const [i, text] of ['{"token:a": {"tokens": 1, "upd', '', '\u0000\u0001garbage'].entries()) {
      const file = join(dir, `corrupt-${i}.json`);
      await writeFile(file, text);
      assert.deepEqual(await loadBuckets(file), {});
    }
  });

  it('loadBuckets propagates other I/O errors', async () => {
    const folder = join(dir, 'a-folder.json');
    await mkdir(folder);
    await assert.rejects(loadBuckets(folder), { code: 'EISDIR' });
  });

  it('BucketFile writes only when the buckets changed since its last write or read', async () => {
    const file = join(dir, 'only-changes.json');
    const absent = (): Promise<void> => assert.rejects(access(file), { code: 'ENOENT' });
    let now = T0;
    const rl = new RateLimiter(() => now);
    const bf = new BucketFile(files, file);
    await bf.load(rl);
    // An idle server: nothing to write, ever.
    await bf.save(rl);
    await absent();
    rl.consume('ip:10.0.0.1', 2);
    await bf.save(rl);
    assert.equal(JSON.parse(await readFile(file, 'utf8'))['ip:10.0.0.1'].tokens, 1);
    // Nothing changed: not written again (the file removed here stays away).
    await unlink(file);
    now += 10_000;
    await bf.save(rl);
    await absent();
    // A refund, a charge, a prune each count as a change.
    for (const change of [
      () => rl.refund('ip:10.0.0.1', 2),
      () => rl.charge('ip:10.0.0.2', 1),
      () => {
        now += 120_000;
        rl.prune();
      },
    ]) {
      await bf.save(rl);
      await unlink(file).catch(() => undefined);
      change();
      await bf.save(rl);
      await access(file);
    }
    assert.deepEqual(await loadBuckets(file), {}, 'all refilled and pruned');
    // Read back at the next start: the file is current, so it is not rewritten.
    await unlink(file);
    await writeFile(file, JSON.stringify({ 'ip:10.0.0.3': { tokens: 0, updatedAt: now, limit: 5 } }));
    const next = new RateLimiter(() => now);
    const again = new BucketFile(files, file);
    await again.load(next);
    await unlink(file);
    await again.save(next);
    await absent();
    assert.equal(next.peek('ip:10.0.0.3', 5).allowed, false);
  });

  it('BucketFile writes again a bucket spent while it was writing, at the next save', async () => {
    const file = join(dir, 'during.json');
    const rl = new RateLimiter(() => T0);
    for (let i = 0; i < 3 * STATE_CHUNK; i++) rl.consume(`ip:k${i}`, 5);
    const bf = new BucketFile(files, file);
    // The first chunk (k0 among it) is written before anything else runs.
    setImmediate(() => rl.consume('ip:k0', 5));
    await bf.save(rl);
    assert.equal(JSON.parse(await readFile(file, 'utf8'))['ip:k0'].tokens, 4, 'written before the second spend');
    await bf.save(rl);
    assert.equal(JSON.parse(await readFile(file, 'utf8'))['ip:k0'].tokens, 3);
  });

  it('BucketFile saves asked for at once run one after the other, the newest last', async () => {
    // A disk whose writes finish when the test says so.
    const writes: { text: string; done: () => void }[] = [];
    const disk = {
      writeFile: (_file: string, text: string) => new Promise<void>((done) => writes.push({ text, done })),
    } as unknown as DurableFiles;
    const rl = new RateLimiter(() => T0);
    rl.consume('ip:a', 5);
    const bf = new BucketFile(disk, join(dir, 'never-written.json'));
    const turns = async (): Promise<void> => {
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    };
    const first = bf.save(rl);
    await turns();
    assert.equal(writes.length, 1);
    rl.consume('ip:a', 5);
    const second = bf.save(rl);
    await turns();
    assert.equal(writes.length, 1, 'the second waits for the first write to end');
    writes[0]?.done();
    await first;
    await turns();
    assert.equal(writes.length, 2);
    assert.equal(JSON.parse(writes[1]?.text ?? '')['ip:a'].tokens, 3, 'the newest written last');
    writes[1]?.done();
    await second;
  });

  it('BucketFile tries a failed write again at the next save', async () => {
    const folder = join(dir, 'in-the-way');
    const file = join(folder, 'buckets.json');
    const rl = new RateLimiter(() => T0);
    const bf = new BucketFile(files, file);
    rl.consume('token:a', 3);
    await writeFile(folder, 'a file where the folder should be');
    await assert.rejects(bf.save(rl));
    await unlink(folder);
    await mkdir(folder);
    await bf.save(rl);
    assert.equal(JSON.parse(await readFile(file, 'utf8'))['token:a'].tokens, 2);
  });

  it('a limiter counts its changes: spending, giving back, charging, dropping and replacing, not looking', () => {
    let now = T0;
    const rl = new RateLimiter(() => now);
    const seen: number[] = [rl.changes];
    const step = (f: () => unknown): void => {
      f();
      seen.push(rl.changes);
    };
    step(() => rl.consume('a', 2));
    step(() => rl.peek('a', 2));
    step(() => rl.holds('a'));
    step(() => rl.snapshot());
    step(() => rl.refund('a', 2));
    step(() => rl.charge('b', 2));
    step(() => rl.prune());
    step(() => {
      now += 120_000;
      rl.prune();
    });
    step(() => rl.restore({}));
    // An unlimited key stores nothing: spending from it changes nothing.
    step(() => rl.consume('c', 0));
    assert.deepEqual(seen, [0, 1, 1, 1, 1, 2, 3, 3, 4, 5, 5]);
  });

  it('more buckets than one chunk of a save all come back', async () => {
    const file = join(dir, 'many.json');
    const rl = new RateLimiter(() => T0);
    const n = 2 * STATE_CHUNK + 5;
    for (let i = 0; i < n; i++) rl.consume(`ip:10.0.${i >> 8}.${i & 255}`, 3);
    rl.consume('__proto__', 3);
    await saveBuckets(files, file, rl);
    const back = new RateLimiter(() => T0);
    back.restore(await loadBuckets(file));
    assert.equal(back.size, n + 1);
    assert.deepEqual(back.snapshot(), rl.snapshot());
  });
});

describe('stateJson', () => {
  it('writes an object a chunk at a time, letting other work run between chunks', async () => {
    const m = new Map<string, number>();
    for (let i = 0; i < 3 * STATE_CHUNK; i++) m.set(`k${i}`, i);
    const ran: string[] = [];
    // In one go, the text would be made before this could run, and without the last key.
    setImmediate(() => {
      ran.push('other work');
      m.set('late', -1);
      m.set('k0', 0.5);
    });
    const text = await stateJson(m, (v) => v * 2);
    assert.deepEqual(ran, ['other work']);
    const back = JSON.parse(text) as Record<string, number>;
    assert.equal(Object.keys(back).length, 3 * STATE_CHUNK + 1);
    assert.equal(back['k1'], 2);
    assert.equal(back['late'], -2, 'a key added meanwhile, written at its turn');
    assert.equal(back['k0'], 0, 'a value changed after its chunk was written is for the next save');
  });

  it('keeps odd keys as plain keys, and writes {} for nothing', async () => {
    assert.deepEqual(
      JSON.parse(
        await stateJson(
          [
            ['__proto__', 1],
            ['constructor', 2],
            ['a"b\\', 3],
          ],
          (v) => v,
        ),
      ),
      JSON.parse('{"__proto__":1,"constructor":2,"a\\"b\\\\":3}'),
    );
    assert.equal(await stateJson([], (v) => v), '{}');
  });
});
