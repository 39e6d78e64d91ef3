import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { contentOf, encodeContent, NO_CONTENT, type Paste } from '../../src/paste/paste.ts';
import { PasteError } from '../../src/paste/errors.ts';
import {
  type FileQuota,
  type PasteRepository,
  quotaBytesOf,
  TOMBSTONE_MS,
  type Txn,
} from '../../src/paste/repository.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

/** A store that reads the beginning of a long paste only (PasteRepository.head). */
type HeadReader = PasteRepository & Required<Pick<PasteRepository, 'head'>>;

/** A backend's paste store as the contract suite drives it. */
export interface PasteBackend {
  readonly store: HeadReader;
  /** Another store on the same state, with nothing cached: another process, or a restart. */
  reopen(): Promise<HeadReader>;
  /** Text bytes past which `head` reads a paste's beginning only. */
  readonly wholeBytes: number;
  /** Readies every connection the store may use at once, so transactions started together do run together. */
  openAll?(): Promise<void>;
}

const T0 = 1_700_000_000_123;

/** Lines as the paste page counts them: a final newline ends the last line, it starts none. */
const linesOf = (s: string): number => (s === '' ? 0 : s.split('\n').length - (s.endsWith('\n') ? 1 : 0));

const record = (hash: string, content: string, over: Partial<Paste> = {}): Paste =>
  pasteRecord(hash, { content_json: encodeContent(content), created_at: T0, updated_at: T0, ...over });

/** An edit as the service makes one: the replaced version kept, the oldest beyond `max` dropped. */
const edit =
  (text: string, at: number, max = 3) =>
  (p: Paste | null): Txn<Paste> => {
    assert.ok(p !== null);
    const next = { ...p, content_json: encodeContent(text), updated_at: at, revision: (p.revision ?? 1) + 1 };
    const dropBelow = (p.revision ?? 1) + 1 - max;
    return { result: next, next, keep: p, ...(dropBelow > 1 ? { dropBelow } : {}) };
  };

/**
 * The paste store's contract (PasteRepository, src/paste/repository.ts), declared for the
 * backend `fresh` opens on a new, empty state per test.
 */
export function pasteRepositoryContract(fresh: () => Promise<PasteBackend>): void {
  describe('PasteRepository', () => {
    test('every field of a paste comes back as it was stored, a receipt and U+0000 included, in one shape', async () => {
      const backend = await fresh();
      const { store } = backend;
      const full = record('AbCdEf0123', 'a\u0000b \u{1F600} "quoted" \\ \n\u2028', {
        title: 'A title ✓',
        language: 'python',
        privacy: 'unlisted',
        highlight: 0,
        burn_after_read: 1,
        burned: true,
        password: '$scrypt$n=16384,r=8,p=1$c2FsdA$aGFzaA',
        owner_id: 42,
        created_at: T0,
        updated_at: T0 + 1,
        expire_at: T0 + 86_400_001,
        view_count: 9_007_199_254,
        receipt: { at: T0 + 1, via: 'api', token_id: 'tok_123' },
        revision: 7,
      });
      assert.equal(await store.create(() => full), full);
      // A record without the later fields reads as a paste file without them does: no receipt, revision 1.
      const { receipt: _r, revision: _v, ...old } = record('Old0000001', 'x');
      await store.create(() => old);
      for (const reader of [store, await backend.reopen()]) {
        const read = await reader.get(full.hash);
        assert.deepEqual(read, full);
        assert.deepEqual(Object.keys(read ?? {}), Object.keys(full), 'the fields in the order a paste file is read in');
        assert.equal(contentOf(read as Paste), 'a\u0000b \u{1F600} "quoted" \\ \n\u2028');
        assert.deepEqual(await reader.getByShortcode('AbCdEf'), full);
        assert.equal(await reader.getByShortcode('abcdef'), null, 'short codes are case-sensitive');
        assert.equal(await reader.get('AbCdEf9999'), null, 'the same short code under another hash is not the paste');
        assert.deepEqual(await reader.get('Old0000001'), { ...old, receipt: null, revision: 1 });
        assert.equal(await reader.removeDamaged(full.hash), null);
      }
    });

    test('create: a taken `first` hash or short code means another draw, and the listing follows', async () => {
      const backend = await fresh();
      const { store } = backend;
      const listed: string[] = [];
      const withdrawn: string[] = [];
      const listing = {
        add: async (p: Paste) => void listed.push(p.hash),
        withdraw: async (p: Paste) => void withdrawn.push(p.hash),
      };
      const first = await store.create((h) => record(h, 'first'), listing, 'Taken00001');
      assert.equal(first.hash, 'Taken00001');

      // The same hash asked for again: a random one follows.
      const again = await store.create((h) => record(h, 'again'), listing, 'Taken00001');
      assert.notEqual(again.hash, 'Taken00001');
      assert.match(again.hash, /^[A-Za-z0-9]{10}$/);
      // Another hash with the taken short code: refused too.
      const twin = await store.create((h) => record(h, 'twin'), listing, 'Taken0zzzz');
      assert.notEqual(twin.hash.slice(0, 6), 'Taken0');
      // So by a store that has nothing cached.
      const drawn: string[] = [];
      const late = await (await backend.reopen()).create((h) => {
        drawn.push(h);
        return record(drawn.length === 1 ? 'Taken0yyyy' : h, 'late');
      });
      assert.equal(drawn.length, 2);
      assert.notEqual(late.hash.slice(0, 6), 'Taken0');

      for (const reader of [store, await backend.reopen()]) {
        assert.equal(contentOf((await reader.get('Taken00001')) as Paste), 'first');
        assert.equal(contentOf((await reader.get(again.hash)) as Paste), 'again');
        assert.equal(contentOf((await reader.get(twin.hash)) as Paste), 'twin');
        assert.equal(contentOf((await reader.get(late.hash)) as Paste), 'late');
        assert.equal(await reader.get('Taken0zzzz'), null);
        assert.equal(await reader.get('Taken0yyyy'), null);
      }
      assert.deepEqual(listed, ['Taken00001', 'Taken00001', again.hash, 'Taken0zzzz', twin.hash]);
      assert.deepEqual(withdrawn, ['Taken00001', 'Taken0zzzz']);
    });

    test('create: a listing that cannot be written refuses the create, and the paste goes again', async () => {
      const backend = await fresh();
      let tried = '';
      await assert.rejects(
        backend.store.create((h) => record((tried = h), 'refused'), {
          add: () => Promise.reject(new Error('list full')),
          withdraw: async () => undefined,
        }),
        /list full/,
      );
      assert.equal(await backend.store.get(tried), null);
      assert.equal(await (await backend.reopen()).get(tried), null);
    });

    test('transact keeps the replaced version, drops those below dropBelow, and the rest with dropRevisions', async () => {
      const backend = await fresh();
      const { store } = backend;
      const p = await store.create((h) => record(h, 'one'));
      for (const [i, text] of ['twö', 'three', 'four', 'five'].entries())
        await store.transact(p.hash, edit(text, T0 + i + 1));
      const now = (await store.get(p.hash)) as Paste;
      assert.equal(now.revision, 5);
      assert.equal(contentOf(now), 'five');
      // MAX_REVISIONS 3: the three versions before the current one.
      for (const reader of [store, await backend.reopen()]) {
        assert.deepEqual(await reader.revisions(p.hash), [2, 3, 4]);
        assert.deepEqual(await reader.getRevision(p.hash, 3), {
          ...p,
          content_json: encodeContent('three'),
          updated_at: T0 + 2,
          revision: 3,
        });
        assert.equal(await reader.getRevision(p.hash, 1), null);
        assert.deepEqual(await reader.revisionFacts(p.hash, 4), { savedAt: T0 + 3, bytes: 4 });
        assert.equal(await reader.revisionFacts(p.hash, 1), null);
        assert.deepEqual(await reader.revisionFacts(p.hash, 2), { savedAt: T0 + 1, bytes: 4 });
      }

      // A version kept again under its number replaces the one kept before.
      await store.transact(p.hash, (cur) => ({
        result: null,
        keep: { ...(cur as Paste), revision: 4, content_json: encodeContent('ü') },
      }));
      assert.deepEqual(await store.revisionFacts(p.hash, 4), { savedAt: T0 + 4, bytes: 2 });

      await store.transact(p.hash, (cur) => ({ result: null, next: cur as Paste, dropRevisions: true }));
      assert.deepEqual(await store.revisions(p.hash), []);

      // A delete takes the paste and its kept versions.
      await store.transact(p.hash, edit('six', T0 + 10));
      assert.deepEqual(await store.revisions(p.hash), [5]);
      const gone = await store.transact(p.hash, (cur) => ({ result: cur, next: 'delete' as const }));
      assert.equal(gone?.revision, 6);
      for (const reader of [store, await backend.reopen()]) {
        assert.equal(await reader.get(p.hash), null);
        assert.deepEqual(await reader.revisions(p.hash), []);
        assert.equal(await reader.getRevision(p.hash, 5), null);
      }
    });

    test('transact: onCommit runs once committed, before the answer; a decision that throws changes nothing', async () => {
      const { store } = await fresh();
      const p = await store.create((h) => record(h, 'kept'));
      const order: string[] = [];
      const result = await store.transact(p.hash, (cur) => ({
        result: 'done',
        next: { ...(cur as Paste), title: 'new' },
        onCommit: () => void order.push('commit'),
      }));
      order.push(result);
      assert.deepEqual(order, ['commit', 'done']);
      await assert.rejects(
        store.transact(p.hash, () => {
          throw new Error('no');
        }),
        /no/,
      );
      assert.equal(((await store.get(p.hash)) as Paste).title, 'new');
      assert.deepEqual(await store.revisions(p.hash), []);
    });

    test('20 concurrent reads of a one-time paste: exactly one gets the content, each sees the one before', async () => {
      const backend = await fresh();
      const { store } = backend;
      const p = await store.create((h) => record(h, 'secret', { burn_after_read: 1 }));
      const burn = (i: number) =>
        store.transact(p.hash, (cur): Txn<string | null> => {
          if (cur === null || cur.burned) return { result: null };
          return {
            result: contentOf(cur),
            next: {
              ...cur,
              content_json: NO_CONTENT,
              burned: true,
              view_count: cur.view_count + 1,
              updated_at: T0 + i,
              receipt: { at: T0 + i, via: 'web', token_id: null },
            },
            sweepAt: T0 + i + TOMBSTONE_MS,
            dropRevisions: true,
          };
        });
      const got = await Promise.all(Array.from({ length: 20 }, (_, i) => burn(i)));
      assert.deepEqual(
        got.filter((g) => g !== null),
        ['secret'],
      );
      for (const reader of [store, await backend.reopen()]) {
        const after = (await reader.get(p.hash)) as Paste;
        assert.equal(after.burned, true);
        assert.equal(after.content_json, NO_CONTENT);
        assert.equal(after.view_count, 1);
      }

      // Each transaction sees the outcome of the one before: 20 increments make 20.
      const q = await store.create((h) => record(h, 'counted'));
      await Promise.all(
        Array.from({ length: 20 }, () =>
          store.transact(q.hash, (cur) => ({
            result: null,
            next: { ...(cur as Paste), view_count: (cur as Paste).view_count + 1 },
          })),
        ),
      );
      assert.equal(((await store.get(q.hash)) as Paste).view_count, 20);
      assert.equal(((await (await backend.reopen()).get(q.hash)) as Paste).view_count, 20);
    });

    test('transactions on a paste that does not exist run one after another too', async () => {
      const backend = await fresh();
      const { store } = backend;
      await backend.openAll?.();
      const seen: (string | null)[] = [];
      let deciding = 0;
      let overlapped = false;
      await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          store.transact('Missing001', async (cur) => {
            seen.push(cur === null ? null : contentOf(cur));
            overlapped ||= ++deciding > 1;
            // Each decision takes a while: without the hash's lock, the others would decide meanwhile.
            await new Promise((resolve) => setTimeout(resolve, 30));
            deciding--;
            return cur === null ? { result: null, next: record('Missing001', `made by ${i}`) } : { result: null };
          }),
        ),
      );
      assert.equal(overlapped, false, 'no two decisions at once');
      assert.equal(seen.filter((s) => s === null).length, 1, 'one made it, the others found it');
      assert.equal(seen.length, 5);
      // A delete, then transactions that find nothing.
      await store.transact('Missing001', () => ({ result: null, next: 'delete' as const }));
      assert.deepEqual(await store.transact('Missing001', (cur) => ({ result: cur })), null);
    });
    test('the head of a long paste: its beginning, the size of the whole, one object per version; a short one whole', async () => {
      const backend = await fresh();
      const { store } = backend;
      // Escapes and characters of several bytes on each side of where a read in slices may cut.
      const around = 'h\u00e9\\"\n\u0001\u{1F600}'.repeat(40_000);
      const endings = [
        '',
        '\n',
        '\n\n',
        'say "hi" \\ back\\slash \\n not a newline\\',
        'tab\tcr\r\nctl\u0001\u001f end\n',
        'h\u00e9llo w\u00f6rld \u2013 \u0133 \u01c5 \u{1F600}',
        '\\\\\\"\n\\\n"',
        '\\n"',
        'tab\t\\n"\n',
        '\u{1F600}',
      ];
      const reader = await backend.reopen();
      // Each ending just past the bound, and past a stretch of those characters.
      const texts = endings.flatMap((ending, i) => [
        `${i % 2 === 0 ? '' : 'x\n'}${'a'.repeat(backend.wholeBytes)}${ending}`,
        `${'a'.repeat(backend.wholeBytes - 100_000)}${around}${ending}`,
      ]);
      for (const [i, text] of texts.entries()) {
        const ending = endings[i >> 1];
        const hash = `${String(i).padStart(6, '0')}Head`;
        await store.create(() => pasteRecord(hash, { content_json: encodeContent(text) }));
        const head = await reader.head(hash, 10);
        assert.deepEqual(head?.size, { bytes: Buffer.byteLength(text), lines: linesOf(text) }, JSON.stringify(ending));
        assert.equal(head?.paste.content_json, encodeContent(text.slice(0, 10)));
        assert.equal((await reader.head(hash, 10))?.paste, head?.paste, 'one object per version, for the page caches');
      }
      // A short one is read whole, and the same object comes back for the same version.
      await store.create(() => pasteRecord('000100Shrt', { content_json: encodeContent('short\n') }));
      const short = await reader.head('000100Shrt', 3);
      assert.deepEqual(short, { paste: await reader.get('000100Shrt') });
      assert.equal(short?.paste.content_json, encodeContent('short\n'));
      assert.equal((await reader.head('000100Shrt', 3))?.paste, short?.paste);
      assert.equal(await reader.head('000102None', 3), null);
    });

    test('a FileQuota holds across creates and edits made at once: those that fit are written, the rest refused', async () => {
      const backend = await fresh();
      await backend.openAll?.();
      const { store } = backend;
      const owner = 7;
      const listed = new Set<string>();
      const listing = {
        add: async (p: Paste) => void listed.add(p.hash),
        withdraw: async (p: Paste) => void listed.delete(p.hash),
      };
      // What the service counts on a store that cannot count in its write: the owner's other pastes.
      const quota: FileQuota = {
        ownerId: owner,
        limit: 100,
        others: async (except) => {
          let n = 0;
          for (const h of listed) if (h !== except) n += quotaBytesOf((await store.get(h)) as Paste);
          return n;
        },
      };
      const file = (i: number) => ({
        name: `f${i}`,
        size: 30,
        type: 'text/plain',
        sha256: String(i).padStart(64, '0'),
      });
      await store.create(() => record('QuotaBase0', 'base', { owner_id: owner }), listing);
      const settled = await Promise.allSettled([
        ...[1, 2, 3, 4].map((i) =>
          store.create(
            () => record(`Qu${i}ota0000`, 'x', { owner_id: owner, files: [file(i)] }),
            listing,
            undefined,
            quota,
          ),
        ),
        ...[5, 6].map((i) =>
          store.transact('QuotaBase0', (p): Txn<null> => {
            const next = { ...(p as Paste), files: [...((p as Paste).files ?? []), file(i)] };
            return { result: null, next, quota };
          }),
        ),
      ]);
      const refused = settled.filter((r) => r.status === 'rejected');
      for (const r of refused)
        assert.ok(r.reason instanceof PasteError && r.reason.kind === 'quota_exceeded', r.reason);
      assert.equal(refused.length, 3, 'three of 30 bytes fit in 100');
      let held = 0;
      for (const h of ['QuotaBase0', 'Qu1ota0000', 'Qu2ota0000', 'Qu3ota0000', 'Qu4ota0000']) {
        const p = await (await backend.reopen()).get(h);
        if (p !== null) held += quotaBytesOf(p);
      }
      assert.equal(held, 90);
    });
  });
}
