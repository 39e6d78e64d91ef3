import assert from 'node:assert/strict';
import { access, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import type { Viewer } from '../../src/paste/access.ts';
import { ANONYMOUS_OWNER } from '../../src/paste/anonymous.ts';
import { type ClaimedBytes, FILE_LIMIT_DEFAULTS, type FileBytes, type NewFile } from '../../src/paste/files.ts';
import { PasteError, type PasteFailure } from '../../src/paste/errors.ts';
import { contentOf } from '../../src/paste/paste.ts';
import {
  OWNED_COUNT_LIMIT,
  OWNED_SEARCH_MS,
  type OwnedFilter,
  PasteService,
  type Counted,
} from '../../src/paste/service.ts';
import { RateLimiter } from '../../src/ratelimit/bucket.ts';
import { FailureBudget } from '../../src/ratelimit/failure-budget.ts';
import { DurableFiles } from '../../src/store/files.ts';
import { OwnerIndex } from '../../src/store/owner-index.ts';
import { PasteStore } from '../../src/store/pastes.ts';
import {
  OWNED_QUERY_UNITS,
  OWNED_SEARCHES_AT_ONCE,
  OWNED_SEARCHES_PER_USER,
  searchWords,
} from '../../src/paste/owned-search.ts';
import {
  type FileQuota,
  type Listing,
  type MakePaste,
  type PasteRepository,
  type SearchBound,
  TOMBSTONE_MS,
} from '../../src/paste/repository.ts';
import { RecentPastes } from '../../src/store/recent.ts';
import { ViewCounter } from '../../src/store/views.ts';
import { cleanup, tempDataDir } from '../helpers/server.ts';
import { createInput } from '../helpers/paste-record.ts';

let dir: string;
let now: number;
let store: PasteStore;
let views: ViewCounter;
let service: PasteService;
let owners: OwnerIndex;
let recent: RecentPastes;
const owner: Viewer = { userId: 1, isAdmin: false };
const other: Viewer = { userId: 2, isAdmin: false };

const input = createInput;

/** A service over the store, owner lists and clock of this test, or with `over` in their place. */
const serviceWith = (over: Partial<ConstructorParameters<typeof PasteService>[0]>): PasteService =>
  new PasteService({
    store,
    views,
    owners,
    recent,
    budget: new FailureBudget(new RateLimiter(() => now)),
    now: () => now,
    ...over,
  });

async function open(): Promise<void> {
  const files = new DurableFiles(join(dir, 'tmp'));
  await files.init();
  store = new PasteStore(dir, files, 1024 * 1024);
  await store.init();
  views = new ViewCounter(store, files, join(dir, 'views.json'));
  owners = new OwnerIndex(dir, files);
  await owners.init();
  recent = new RecentPastes(files, join(dir, 'recent.json'), 3);
  service = serviceWith({});
}

/** A counted read by `viewer` (no password), as the API's GET does it. */
const read = (hash: string, viewer: Viewer | null): Promise<Counted> =>
  Promise.resolve(service.read(hash, viewer, { client: '127.0.0.1', consume: true }));
/** The text a read returned. */
const _text = async (hash: string, viewer: Viewer | null): Promise<string> =>
  contentOf((await read(hash, viewer)).paste);

const HTTP_KIND: Record<number, PasteFailure[]> = { 404: ['not_found'], 410: ['expired', 'burned'] };
/** The promise is refused with a paste refusal of the kind the status stands for. */
const status = (p: Promise<unknown> | unknown, code: number) =>
  assert.rejects(
    Promise.resolve(p),
    (e: unknown) => e instanceof PasteError && (HTTP_KIND[code] ?? []).includes(e.kind),
  );

// What the service does on every backend is test/contract/paste-service.ts; here, the data folder's own.
const dirs: string[] = [];
after(() => Promise.all(dirs.map(cleanup)));
beforeEach(async () => {
  dir = await tempDataDir();
  dirs.push(dir);
  now = Date.UTC(2026, 0, 1, 12, 0, 0);
  await open();
});

describe('expiry sweep', () => {
  test('leaves no entry of the expiry index behind once every paste it names is gone', async () => {
    await service.create(input({ content: 'secret-short', expiry: '10m' }), 1);
    await service.create(input({ expiry: '1d' }), 1);
    await service.create(input(), 1);
    for (const step of [11 * 60_000, 2 * 86_400_000, TOMBSTONE_MS]) {
      now += step;
      await store.sweepExpired(now);
    }
    for (const bucket of await readdir(join(dir, 'expiry')))
      assert.deepEqual(await readdir(join(dir, 'expiry', bucket)), []);
  });
});

describe('view counts', () => {
  test('are batched in memory and folded into the file by drain', async () => {
    const p = await service.create(input(), 1);
    for (let i = 1; i <= 3; i++) assert.equal((await read(p.hash, other)).viewCount, i);
    assert.equal(views.pending(p.hash, 0), 3);
    await views.drain();
    assert.equal(views.pending(p.hash, 3), 0);
    await open();
    assert.equal((await store.get(p.hash))?.view_count, 3);
    assert.equal((await read(p.hash, other)).viewCount, 4);
  });

  test('survive a graceful restart through save and load', async () => {
    const p = await service.create(input(), 1);
    await read(p.hash, other);
    await read(p.hash, other);
    await views.save();
    await open();
    await views.load();
    assert.equal((await read(p.hash, other)).viewCount, 3);
  });

  test('saved, then folded, then lost in a crash: the next start finds them in the file and counts them once', async () => {
    const p = await service.create(input(), 1);
    for (let i = 0; i < 3; i++) await read(p.hash, other);
    await views.save();
    await views.drain();
    // A crash now: the state file still says 3 pending, and the paste's file holds them.
    await open();
    await views.load();
    assert.equal((await read(p.hash, other)).viewCount, 4);
    await views.drain();
    assert.equal((await store.get(p.hash))?.view_count, 4);
  });

  test('saved and not yet folded: the next start counts them, and loading keeps the file until the next save', async () => {
    const p = await service.create(input(), 1);
    for (let i = 0; i < 2; i++) await read(p.hash, other);
    await views.save();
    const file = join(dir, 'views.json');
    for (let start = 0; start < 2; start++) {
      // Two starts in a row, the first one killed before it saved anything: nothing lost, nothing doubled.
      await open();
      await views.load();
    }
    assert.equal((await read(p.hash, other)).viewCount, 3);
    await views.drain();
    await views.save();
    assert.equal((await store.get(p.hash))?.view_count, 3);
    await assert.rejects(access(file), /ENOENT/, 'nothing pending: the state file is gone');
  });
});

describe('owner lists and searches', () => {
  test("a search of one's own pastes stops after OWNED_SEARCH_MS, holds only its page, and says how far it read", async () => {
    let clock = 0;
    const timed = serviceWith({
      // Every look at the clock costs a tenth of the budget: the search reads about ten pastes.
      elapsed: () => (clock += OWNED_SEARCH_MS / 10),
    });
    for (let i = 0; i < 30; i++) await timed.create(input({ content: `needle ${i}` }), 1);
    const first = await timed.listOwned(1, 0, 4, { text: 'needle' });
    assert.equal(first.pastes.length, 4);
    assert.ok(first.searched !== undefined, 'the search says it stopped');
    assert.equal(first.searched.of, 30);
    assert.ok(first.searched.read >= 9 && first.searched.read <= 11, `read ${first.searched.read}`);
    assert.equal(first.total, first.searched.read, 'every paste read matched');
    assert.deepEqual(
      first.pastes.map((p) => contentOf(p)),
      ['needle 29', 'needle 28', 'needle 27', 'needle 26'],
    );
    // Without the clock running out, the whole list is searched and counted.
    const whole = await service.listOwned(1, 28, 4, { text: 'needle' });
    assert.equal(whole.searched, undefined);
    assert.equal(whole.total, 30);
    assert.deepEqual(
      whole.pastes.map((p) => contentOf(p)),
      ['needle 1', 'needle 0'],
    );
    assert.equal(await service.countOwned(1), 30);
  });

  test('a store that offers search candidates narrows the reading; the service still decides each match and pages them', async () => {
    for (let i = 0; i < 6; i++)
      await service.create(input({ title: `T${i}`, content: i % 2 === 0 ? 'Needle' : 'hay' }), 1);
    const all = await owners.list(1);
    const asked: unknown[] = [];
    // Candidates as a database would give them: every match and a non-match, in the list's order.
    const narrowing = {
      add: (userId: number, hash: string) => owners.add(userId, hash),
      remove: (userId: number, hash: string) => owners.remove(userId, hash),
      list: (userId: number) => owners.list(userId),
      count: (userId: number) => owners.count(userId),
      slice: async (userId: number, offset: number, limit: number) =>
        (await owners.list(userId)).slice(offset, offset + limit),
      // In batches of two, as a database reads them a window at a time.
      candidates: async function* (userId: number, filter: OwnedFilter) {
        asked.push([userId, filter]);
        const found = (await Promise.all(all.map((h) => store.get(h)))).filter((p) => p !== null);
        for (let at = 0; at < found.length; at += 2) yield found.slice(at, at + 2);
      },
    };
    const narrowed = serviceWith({
      owners: narrowing,
      // A search that read pastes one by one would stop at once.
      elapsed: () => Number.MAX_SAFE_INTEGER,
    });
    const page = await narrowed.listOwned(1, 1, 2, { text: 'NEEDLE' });
    assert.deepEqual(asked, [[1, { text: 'NEEDLE' }]]);
    assert.equal(page.total, 3);
    assert.equal(page.searched, undefined);
    assert.deepEqual(
      page.pastes.map((p) => p.title),
      ['T2', 'T0'],
    );
    const listed = await narrowed.listOwned(1, 2, 3);
    assert.deepEqual(
      listed.pastes.map((p) => p.title),
      ['T3', 'T2', 'T1'],
    );
    assert.equal(listed.total, 6);
    assert.deepEqual(
      [...(await narrowed.countsOwned([1, 2]))],
      [
        [1, 6],
        [2, 0],
      ],
    );
  });

  test('a search counts OWNED_COUNT_LIMIT matches, or to the page asked for, then says there are more and reads no further', async () => {
    const real = [];
    for (let i = 0; i < 3; i++) real.unshift(await service.create(input({ title: `real ${i}`, content: 'match' }), 1));
    // The three real pastes, newest first, then made-up candidates: every other one matches.
    const made = Array.from({ length: 2 * OWNED_COUNT_LIMIT + 100 }, (_, i) => ({
      hash: `made${String(i).padStart(6, '0')}`,
      title: '',
      content_json: JSON.stringify(i % 2 === 0 ? 'a match' : 'no'),
      language: 'text',
      privacy: 'public' as const,
    }));
    const candidates = [...real, ...made];
    let batches = 0;
    const narrowing = {
      add: async () => {},
      remove: async () => {},
      list: async () => [],
      count: async () => 0,
      candidates: async function* () {
        for (let at = 0; at < candidates.length; at += 100) {
          batches++;
          yield candidates.slice(at, at + 100);
        }
      },
    };
    const counting = serviceWith({ owners: narrowing });
    const first = await counting.listOwned(1, 0, 2, { text: 'MATCH' });
    assert.deepEqual(
      first.pastes.map((p) => p.title),
      ['real 2', 'real 1'],
    );
    assert.equal(first.total, OWNED_COUNT_LIMIT);
    assert.equal(first.more, true);
    // 3 real and 997 made-up matches, then one more: the 1,998th candidate, in the 20th batch of 100.
    assert.equal(batches, 20);
    batches = 0;
    // 1,053 matches in all.
    const deep = await counting.listOwned(1, OWNED_COUNT_LIMIT + 20, 20, { text: 'match' });
    assert.equal(deep.total, OWNED_COUNT_LIMIT + 40, 'counted to the end of the page asked for');
    assert.equal(deep.more, true);
    assert.equal(deep.pastes.length, 0, 'made-up candidates are not stored pastes');
    const last = await counting.listOwned(1, OWNED_COUNT_LIMIT + 40, 20, { text: 'match' });
    assert.equal(last.total, 3 + made.length / 2, 'every match counted when the count ends first');
    assert.equal(last.more, undefined);
    // The data folder's own search counts the same way (given all the time it needs).
    for (let i = 0; i < OWNED_COUNT_LIMIT - 2; i++) await service.create(input({ content: `match ${i}` }), 1);
    const untimed = serviceWith({ elapsed: () => 0 });
    const files = await untimed.listOwned(1, 0, 5, { text: 'match' });
    assert.equal(files.total, OWNED_COUNT_LIMIT);
    assert.equal(files.more, true);
    assert.equal(files.searched, undefined);
    assert.equal(files.pastes.length, 5);
    const filesAll = await untimed.listOwned(1, 0, 5, { text: 'match 9' });
    assert.equal(filesAll.total, 109, 'match 9, 90-99 and 900-997');
    assert.equal(filesAll.more, undefined);
  });

  test('a store that stops a search for want of time says how far it got, and the page says so', async () => {
    let clock = 0;
    const lefts: number[] = [];
    const stopping = {
      add: async () => {},
      remove: async () => {},
      list: async () => [],
      count: async () => 0,
      candidates: async function* (_u: number, _f: OwnedFilter, _w?: number, bound?: SearchBound) {
        lefts.push(bound?.left() ?? Number.NaN);
        clock += OWNED_SEARCH_MS;
        lefts.push(bound?.left() ?? Number.NaN);
        bound?.stopped(700, 30_000);
        yield [];
      },
    };
    const page = await serviceWith({ owners: stopping, elapsed: () => clock }).listOwned(1, 0, 20, { text: 'x' });
    assert.deepEqual(lefts, [OWNED_SEARCH_MS, 0]);
    assert.deepEqual(page.searched, { read: 700, of: 30_000 });
    assert.equal(page.total, 0);
  });

  test("a search's words are cut at OWNED_QUERY_UNITS once lowercased, at a whole character", async () => {
    assert.equal(searchWords(`  ${'\u0130'.repeat(200)}`), '\u0130'.repeat(OWNED_QUERY_UNITS / 2));
    assert.equal(searchWords('a'.repeat(300)), 'a'.repeat(OWNED_QUERY_UNITS));
    assert.equal(searchWords(`${'a'.repeat(199)}\u{1F600}`), 'a'.repeat(199));
    assert.equal(searchWords('   '), undefined);
    const asked: OwnedFilter[] = [];
    const recording = {
      add: async () => {},
      remove: async () => {},
      list: async () => [],
      count: async () => 0,
      candidates: async function* (_u: number, f: OwnedFilter) {
        asked.push(f);
        yield [];
      },
    };
    await serviceWith({ owners: recording }).listOwned(1, 0, 20, { text: '\u0130'.repeat(200), language: 'go' });
    assert.deepEqual(asked, [{ text: '\u0130'.repeat(100), language: 'go' }]);
  });

  test('a user runs at most OWNED_SEARCHES_PER_USER searches at once and the server OWNED_SEARCHES_AT_ONCE; one more is refused', async () => {
    let open: () => void = () => {};
    const opened = new Promise<void>((r) => {
      open = r;
    });
    let running = 0;
    let fail = false;
    const slow = {
      add: async () => {},
      remove: async () => {},
      list: async () => [],
      count: async () => 0,
      candidates: async function* () {
        if (fail) throw new Error('the store failed');
        running++;
        await opened;
        yield [];
      },
    };
    const gated = serviceWith({ owners: slow });
    const refusal = async (userId: number): Promise<PasteFailure | undefined> =>
      gated.listOwned(userId, 0, 20, { text: 'x' }).then(
        () => undefined,
        (err: unknown) => (err instanceof PasteError ? err.kind : undefined),
      );
    const first = Array.from({ length: OWNED_SEARCHES_PER_USER }, () => refusal(1));
    assert.equal(await refusal(1), 'too_many_searches');
    // Another user's searches still run, up to the server's share.
    const others = Array.from({ length: OWNED_SEARCHES_AT_ONCE - OWNED_SEARCHES_PER_USER }, (_, i) => refusal(2 + i));
    assert.equal(await refusal(99), 'searches_busy');
    assert.equal(running, OWNED_SEARCHES_AT_ONCE);
    // A list without a search is never refused.
    assert.equal((await gated.listOwned(1, 0, 20)).total, 0);
    open();
    assert.deepEqual(await Promise.all([...first, ...others]), Array(OWNED_SEARCHES_AT_ONCE).fill(undefined));
    // Once they end, their places are free again; a search that fails frees its place too.
    fail = true;
    for (let i = 0; i <= OWNED_SEARCHES_PER_USER; i++)
      await assert.rejects(gated.listOwned(1, 0, 20, { text: 'x' }), /the store failed/);
    fail = false;
    assert.equal(await refusal(1), undefined);
  });
});

describe('read', () => {
  test('answers a cached paste at once, and refuses by rejecting, never by throwing', async () => {
    const open = await service.create(input(), 1);
    const hidden = await service.create(input({ privacy: 'private' }), 1);
    await read(open.hash, other); // both now cached
    await read(hidden.hash, owner);
    const opts = { client: '127.0.0.1', consume: true };
    const counted = service.read(open.hash, other, opts);
    assert.ok(!(counted instanceof Promise), 'a cached, unprotected paste needs no promise');
    assert.equal(contentOf(counted.paste), 'hello');
    assert.equal(counted.viewCount, 2);
    let refusal: unknown;
    assert.doesNotThrow(() => (refusal = service.read(hidden.hash, other, opts)));
    assert.ok(refusal instanceof Promise);
    await status(refusal, 404);
    await status(
      Promise.resolve().then(() => service.read('AAAAAAAAAA', owner, opts)),
      404,
    );
  });
});

describe('relist', () => {
  test("puts a paste back in its owner's list when a crash left it out, and adds nothing when it is there", async () => {
    const p = await service.create(input({ content: 'listed?' }), owner.userId);
    const q = await service.create(input({ content: 'other' }), owner.userId);
    // The crash: the paste's file made it to the disk, its list line did not.
    await writeFile(join(dir, 'owners', `${owner.userId}.log`), `+${q.hash}\n`);
    assert.deepEqual(await owners.list(owner.userId), [q.hash]);
    await service.relist(p.hash);
    assert.deepEqual(new Set(await owners.list(owner.userId)), new Set([p.hash, q.hash]));
    const size = (await readFile(join(dir, 'owners', `${owner.userId}.log`), 'utf8')).length;
    await service.relist(p.hash);
    await service.relist('ZZZZZZZZZZ');
    assert.equal((await readFile(join(dir, 'owners', `${owner.userId}.log`), 'utf8')).length, size);
  });
});

describe('files', () => {
  test("a create whose first hash is taken claims the kept bytes under the one it gets before that paste's record is written", async () => {
    const taken = (await service.create(input({ content: 'first' }), ANONYMOUS_OWNER)).hash;
    const claims = new Map<string, string[]>();
    const claim = async (holder: string, f: ClaimedBytes): Promise<void> => {
      claims.set(holder, [...(claims.get(holder) ?? []), f.sha256]);
    };
    const bytes = { keep: (f: NewFile, holder: string) => claim(holder, f), claim } as unknown as FileBytes;
    // What was claimed under each hash when its record was about to be written.
    const before = new Map<string, string[]>();
    const watched: PasteRepository = Object.create(store, {
      create: {
        value: (make: MakePaste, ...rest: [Listing?, string?, FileQuota?]) =>
          store.create(
            async (hash) => {
              const p = await make(hash);
              before.set(hash, [...(claims.get(hash) ?? [])]);
              return p;
            },
            ...rest,
          ),
      },
    });
    const files = { bytes, limits: FILE_LIMIT_DEFAULTS };
    const sha256 = 'a'.repeat(64);
    const file: NewFile = { name: 'n.txt', size: 1, type: 'text/plain', sha256, path: join(dir, 'spooled') };
    const made = await serviceWith({ store: watched, files }).create(input(), ANONYMOUS_OWNER, taken, undefined, [
      file,
    ]);
    assert.notEqual(made.hash, taken);
    assert.deepEqual(claims.get(taken), [sha256], 'kept under the hash tried first');
    assert.deepEqual(before.get(made.hash), [sha256], 'claimed under its own hash before its record');
    assert.deepEqual(
      made.files?.map((f) => f.sha256),
      [sha256],
    );
  });
});
