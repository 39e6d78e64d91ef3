import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { contentOf, encodeContent, type Paste } from '../../src/paste/paste.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { PasteStore } from '../../src/store/pastes.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

/** Runs `fn` on a fresh data folder with its DurableFiles ready, and removes the folder after. */
async function inDataDir(fn: (dir: string, files: DurableFiles) => Promise<void>): Promise<void> {
  const dir = await tempDataDir();
  try {
    const files = new DurableFiles(join(dir, 'tmp'));
    await files.init();
    await fn(dir, files);
  } finally {
    await cleanup(dir);
  }
}

const record = (hash: string, content: string): Paste => pasteRecord(hash, { content_json: encodeContent(content) });

test('PasteStore.create never overwrites a taken shortcode, on disk or in cache, and draws again', async () => {
  await inDataDir(async (dir, files) => {
    const first = new PasteStore(dir, files);
    await first.init();
    const taken = await first.create((h) => record(h, 'original'));
    // A fresh store has nothing cached, so only the existence check on disk can refuse.
    for (const store of [first, new PasteStore(dir, files)]) {
      const drawn: string[] = [];
      const made = await store.create((h) => {
        drawn.push(h);
        // The first draw reuses the taken shortcode with a different tail.
        return record(drawn.length === 1 ? `${taken.hash.slice(0, 6)}zzzz` : h, 'newcomer');
      });
      assert.equal(drawn.length, 2);
      assert.notEqual(made.hash.slice(0, 6), taken.hash.slice(0, 6));
      assert.equal(contentOf((await store.get(taken.hash)) ?? { content_json: 'null' }), 'original');
      assert.equal(contentOf((await store.get(made.hash)) ?? { content_json: 'null' }), 'newcomer');
    }
    // Neither the refused draw nor the created paste leaves its temp file behind.
    assert.deepEqual(await readdir(join(dir, 'tmp')), []);
  });
});

test('PasteStore: reads of one paste asked for while its file is being read share that read, and its paste object', async () => {
  await inDataDir(async (dir, files) => {
    const made = await new PasteStore(dir, files).create((h) => record(h, 'x'.repeat(100_000)));
    // A fresh store has nothing cached: ten readers at once, as when a link has just been shared.
    const store = new PasteStore(dir, files);
    const read = await Promise.all(Array.from({ length: 10 }, () => store.get(made.hash)));
    assert.equal(store.cacheStats.misses, 1, 'one read of the file');
    assert.equal(store.cacheStats.hits, 9);
    for (const p of read) assert.equal(p, read[0], 'one paste object for all');
    assert.equal(contentOf(read[0] ?? { content_json: 'null' }), 'x'.repeat(100_000));
    // Done, the read is not joined again: the next one is the cache's.
    assert.equal(await store.get(made.hash), read[0]);
    assert.equal(store.cacheStats.misses, 1);
    // A missing paste's readers share its answer too, and ask the disk again next time.
    const missing = await Promise.all([store.getByShortcode('zzzzzz'), store.getByShortcode('zzzzzz')]);
    assert.deepEqual(missing, [null, null]);
    assert.equal(store.cacheStats.misses, 2);
    assert.equal(await store.getByShortcode('zzzzzz'), null);
    assert.equal(store.cacheStats.misses, 3);
  });
});

test('PasteStore: a read from the disk fills the cache while other pastes are being created', async () => {
  await inDataDir(async (dir, files) => {
    const first = new PasteStore(dir, files);
    await first.init();
    const hashes: string[] = [];
    for (let i = 0; i < 300; i++) hashes.push((await first.create((h) => record(h, `paste ${i}`))).hash);
    // A server just started (nothing cached) under a mixed load: creates all along the reads.
    const store = new PasteStore(dir, files);
    let reading = true;
    let created = 0;
    const writer = (async () => {
      while (reading) {
        await store.create((h) => record(h, 'new'));
        created++;
      }
    })();
    // Four readers, each reading its share one after another. Each fortieth read waits for one
    // more create to land, so the reads span several creates however slow the disk's fsync is.
    await Promise.all(
      [0, 1, 2, 3].map(async (lane) => {
        for (let i = lane; i < hashes.length; i += 4) {
          await until(() => created >= Math.floor(i / 40), { what: `create ${Math.floor(i / 40)}`, everyMs: 1 });
          await store.get(hashes[i] as string);
        }
      }),
    );
    const createdWhileReading = created;
    reading = false;
    await writer;
    assert.ok(createdWhileReading >= 7, 'creates landed while the pastes were read');
    // A commit to another paste says nothing about these: every one read is now in memory.
    assert.deepEqual(
      hashes.filter((h) => store.cached(h) === undefined),
      [],
    );
    assert.equal(store.cacheStats.entries, hashes.length);
  });
});

/** A promise and the function that resolves it. */
function gate(): { passed: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const passed = new Promise<void>((resolve) => (open = resolve));
  return { passed, open };
}

test('PasteStore: a read that begins and ends while a paste is being deleted does not leave it in the cache', async () => {
  await inDataDir(async (dir, files) => {
    const x = await new PasteStore(dir, files).create((h) => record(h, 'secret'));
    const store = new PasteStore(dir, files);
    const reached = gate();
    const removal = gate();
    const remove = files.removeFile.bind(files);
    files.removeFile = async (path: string): Promise<boolean> => {
      reached.open();
      await removal.passed;
      return remove(path);
    };
    const deleting = store.transact(x.hash, () => ({ result: null, next: 'delete' as const }));
    await reached.passed;
    // The file is still there: this reader sees the paste, as it may until the delete lands.
    assert.equal(contentOf((await store.get(x.hash)) ?? { content_json: 'null' }), 'secret');
    removal.open();
    await deleting;
    assert.equal(store.cached(x.hash), undefined);
    assert.equal(await store.get(x.hash), null);
  });
});

test('PasteStore: a read from the disk across a commit to the same paste answers the old copy and caches the new', async () => {
  await inDataDir(async (dir, files) => {
    const seed = new PasteStore(dir, files);
    const x = await seed.create((h) => record(h, 'old'));
    const others: string[] = [];
    for (let i = 0; i < 4; i++) others.push((await seed.create((h) => record(h, 'other'))).hash);
    // Room for about four small pastes; the commit's write lands at once and leaves the file
    // as it was, so the read in flight finds the old copy whatever the timing.
    const store = new PasteStore(dir, files, 4_000);
    files.writeFile = async (): Promise<void> => undefined;
    const deciding = gate();
    const decided = gate();
    const committing = store.transact(x.hash, async (p) => {
      deciding.open();
      await decided.passed;
      return { result: null, next: { ...(p as Paste), content_json: encodeContent('new') } };
    });
    await deciding.passed;
    for (const h of others) await store.get(h);
    assert.equal(store.cached(x.hash), undefined, 'pushed out by the others');
    const reading = store.get(x.hash);
    decided.open();
    await committing;
    assert.equal(contentOf((await reading) ?? { content_json: 'null' }), 'old');
    assert.equal(contentOf(store.cached(x.hash) ?? { content_json: 'null' }), 'new');
  });
});

test('PasteStore.create: when the paste or its listing cannot be written, the other is undone', async () => {
  await inDataDir(async (dir, files) => {
    const store = new PasteStore(dir, files);
    await store.init();
    const fileOf = (hash: string): string => join(dir, 'pastes', hash.slice(0, 2), `${hash.slice(0, 6)}.json`);
    const exists = (path: string): Promise<boolean> =>
      readdir(join(path, '..')).then(
        (names) => names.includes(path.split('/').at(-1) as string),
        () => false,
      );
    const withdrawn: string[] = [];
    const listed: string[] = [];
    const listing = {
      add: async (p: Paste) => void listed.push(p.hash),
      withdraw: async (p: Paste) => void withdrawn.push(p.hash),
    };

    // A listing that cannot be written refuses the create, and the paste's file goes again.
    let refused = '';
    await assert.rejects(
      store.create((h) => record((refused = h), 'refused'), {
        ...listing,
        add: () => Promise.reject(new Error('disk full')),
      }),
      /disk full/,
    );
    assert.equal(await exists(fileOf(refused)), false);
    assert.deepEqual(await readdir(join(dir, 'tmp')), []);

    // A paste that cannot be written: its entry is withdrawn.
    class FullDisk extends DurableFiles {
      override createFile(): Promise<boolean> {
        return Promise.reject(new Error('no space'));
      }
    }
    const full = new PasteStore(dir, new FullDisk(join(dir, 'tmp')));
    let failed = '';
    await assert.rejects(
      full.create((h) => record((failed = h), 'x'), listing),
      /no space/,
    );
    assert.deepEqual(withdrawn, [failed]);

    // A taken name: the entry for the hash that was not made is withdrawn, the next draw listed.
    const taken = await store.create((h) => record(h, 'first'), listing);
    const drawn: string[] = [];
    const made = await store.create((h) => {
      drawn.push(h);
      return record(drawn.length === 1 ? `${taken.hash.slice(0, 6)}zzzz` : h, 'second draw');
    }, listing);
    assert.deepEqual(listed, [failed, taken.hash, `${taken.hash.slice(0, 6)}zzzz`, made.hash]);
    assert.deepEqual(withdrawn, [failed, `${taken.hash.slice(0, 6)}zzzz`]);
  });
});

test('PasteStore: a file holding a paste whose short code differs only in case (a case-insensitive disk) is that other paste, not damage', async () => {
  await inDataDir(async (dir, files) => {
    const damaged: string[] = [];
    const store = new PasteStore(dir, files, undefined, (d) => void damaged.push(d.path));
    await store.init();
    const p = await store.create(() => record('abCDEF1234', 'mine'));
    const code = p.hash.slice(0, 6);
    const swapped = [...code].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
    assert.notEqual(swapped, code, 'a code with letters');
    // What such a disk would open for the swapped code, copied to where this disk looks.
    await mkdir(join(dir, 'pastes', swapped.slice(0, 2)), { recursive: true });
    await copyFile(
      join(dir, 'pastes', code.slice(0, 2), `${code}.json`),
      join(dir, 'pastes', swapped.slice(0, 2), `${swapped}.json`),
    );
    assert.equal(await store.getByShortcode(swapped), null);
    assert.deepEqual(damaged, []);
  });
});
