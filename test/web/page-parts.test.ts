import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { encodeContent, type Paste } from '../../src/paste/paste.ts';
import { PAGE_SLOT, PageParts } from '../../src/web/page-parts.ts';
import { raw, type SafeHtml } from '../../src/web/html.ts';
import { qrSvg } from '../../src/web/qr.ts';
import { SeenOnce, VersionCache } from '../../src/pipeline/version-cache.ts';
import { createViaForm, register, WebClient } from '../helpers/web-client.ts';
import { startServer } from '../helpers/server.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

const paste = (content: string): Paste =>
  pasteRecord('a000000000', { content_json: encodeContent(content), language: 'javascript' });

describe('VersionCache', () => {
  test('answers a key only at the version it was made for, within its byte budget', () => {
    const cache = new VersionCache<string>(30, (v) => v.length);
    let made = 0;
    const make = (v: string) => () => (made++, v);
    const v1 = {};
    assert.equal(cache.get('k', v1, make('0123456789')), '0123456789');
    assert.equal(cache.get('k', v1, make('other')), '0123456789');
    assert.equal(made, 1);
    assert.equal(cache.get('k', {}, make('abcdefghij')), 'abcdefghij', 'another version is made afresh');
    assert.equal(cache.bytes, 10, 'and replaces the old one');
    cache.get('a', v1, make('x'.repeat(10)));
    cache.get('b', v1, make('y'.repeat(10)));
    assert.equal(cache.bytes, 30);
    cache.get('k', {}, make('z'.repeat(10)));
    assert.equal(cache.bytes, 30, 'replaced, not added');
    cache.get('a', v1, make('unused'));
    cache.get('c', v1, make('c'.repeat(10)));
    assert.equal(cache.bytes, 30);
    assert.equal(cache.get('b', v1, make('gone')), 'gone', 'b, the least recently used, went first');
    assert.equal(cache.get('a', v1, make('unused')), 'x'.repeat(10), 'a, used since, stayed');
    assert.equal(cache.get('big', v1, make('w'.repeat(16))), 'w'.repeat(16));
    assert.equal(cache.get('big', v1, make('again')), 'again', 'more than half the budget is never kept');
  });
  test('a value just made stays even when every older one was used since; the oldest goes', () => {
    const cache = new VersionCache<string>(30, (v) => v.length);
    const v = {};
    for (const k of ['a', 'b', 'c']) cache.get(k, v, () => k.repeat(10));
    for (const k of ['a', 'b', 'c']) cache.get(k, v, () => 'remade');
    assert.equal(
      cache.get('d', v, () => 'd'.repeat(10)),
      'd'.repeat(10),
    );
    assert.equal(cache.bytes, 30);
    assert.equal(
      cache.get('d', v, () => 'remade'),
      'd'.repeat(10),
      'd was kept',
    );
    assert.equal(
      cache.get('b', v, () => 'remade'),
      'b'.repeat(10),
      'b stayed',
    );
    assert.equal(
      cache.get('a', v, () => 'remade'),
      'remade',
      'a, the oldest, went',
    );
  });
  test('given keepFirst, keeps a value the first time only for the versions it names; the others once their key is asked for again', () => {
    const cheap = { dear: false };
    const dear = { dear: true };
    const cache = new VersionCache<string>(
      1000,
      (v) => v.length,
      (version) => (version as { dear: boolean }).dear,
    );
    let made = 0;
    const make = (v: string) => () => (made++, v);
    assert.equal(cache.get('c', cheap, make('cheap')), 'cheap');
    assert.equal(cache.bytes, 0, 'asked for once: made, not kept');
    assert.equal(cache.get('c', cheap, make('cheap')), 'cheap');
    assert.equal(cache.bytes, 5, 'asked for again: made and kept');
    assert.equal(cache.get('c', cheap, make('other')), 'cheap');
    assert.equal(made, 2);
    assert.equal(cache.get('d', dear, make('dear')), 'dear');
    assert.equal(cache.bytes, 9, 'a version keepFirst names is kept the first time');
    const newer = { dear: false };
    assert.equal(cache.get('c', newer, make('newer')), 'newer');
    assert.equal(cache.get('c', newer, make('other')), 'newer', 'a key kept at another version is kept again at once');
    assert.deepEqual([cache.made, cache.reused, made], [4, 2, 4]);
  });
  test('keeps a key that has an entry at another version at once, however long ago it was first asked for', () => {
    const cache = new VersionCache<string>(
      1 << 20,
      (v) => v.length,
      () => false,
    );
    const v1 = {};
    cache.get('k', v1, () => 'one');
    assert.equal(
      cache.get('k', v1, () => 'one'),
      'one',
    );
    const kept = cache.bytes;
    // Each asked for once, so none is kept, and SeenOnce forgets k.
    for (let i = 0; i < 2_100; i++) cache.get(`other${i}`, v1, () => 'x');
    assert.equal(cache.bytes, kept);
    const v2 = {};
    assert.equal(
      cache.get('k', v2, () => 'two'),
      'two',
    );
    assert.equal(
      cache.get('k', v2, () => 'again'),
      'two',
      'kept the first time at the new version',
    );
  });
  test('getOr makes a value that would not be kept with `once`, and counts it as made', () => {
    const cache = new VersionCache<string>(
      1000,
      (v) => v.length,
      () => false,
    );
    const v = {};
    assert.equal(
      cache.getOr(
        'k',
        v,
        () => 'kept',
        () => 42,
      ),
      42,
    );
    assert.equal(cache.bytes, 0);
    assert.equal(
      cache.getOr(
        'k',
        v,
        () => 'kept',
        () => 43,
      ),
      'kept',
    );
    assert.equal(
      cache.getOr(
        'k',
        v,
        () => 'again',
        () => 44,
      ),
      'kept',
    );
    assert.deepEqual([cache.made, cache.reused], [2, 1]);
  });
  test('SeenOnce remembers a key while one generation of others passes, and forgets it in two', () => {
    const seen = new SeenOnce(3);
    assert.equal(seen.again('a'), false);
    assert.equal(seen.again('a'), true);
    for (const k of ['b', 'c', 'd']) assert.equal(seen.again(k), false);
    assert.equal(seen.again('a'), true, 'one generation on');
    for (const k of ['e', 'f', 'g']) seen.again(k);
    assert.equal(seen.again('a'), false, 'two generations on');
    assert.equal(seen.again('a'), true, 'and seen anew');
  });
});

/** Whether whatever `use` hands to a registry is collected once nothing else holds it. */
async function collectable(use: (register: (o: object) => void) => void): Promise<boolean> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let collected = false;
  const registry = new FinalizationRegistry<string>(() => (collected = true));
  use((o) => registry.register(o, 'watched'));
  for (let i = 0; i < 50 && !collected; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return collected;
}

describe('VersionCache and memory', () => {
  test('holds an object version weakly: a kept value never keeps a paste alive, and answers only while it lives', async () => {
    const cache = new VersionCache<string>(1 << 20, (v) => v.length);
    const kept = paste('kept');
    cache.get('k', kept, () => 'made');
    assert.equal(
      cache.get('k', kept, () => 'again'),
      'made',
    );
    assert.ok(
      await collectable((register) => {
        const big = paste('x'.repeat(1_000_000));
        register(big);
        cache.get('big', big, () => 'page of big');
      }),
      'a cache entry must not keep its paste alive',
    );
    assert.equal(
      cache.get('k', kept, () => 'again'),
      'made',
      'a live version still answers',
    );
    assert.equal(
      cache.get('big', paste('y'), () => 'new'),
      'new',
    );
    const link = Symbol('a link');
    cache.get('s', link, () => 'by symbol');
    assert.equal(
      cache.get('s', link, () => 'again'),
      'by symbol',
      'a version that is no object is held as it is',
    );
  });
});

describe('PageParts', () => {
  test('makes a QR code once per link, and a code block once per paste version', () => {
    const parts = new PageParts(1 << 20);
    const qr = parts.qr('http://x/s/abcdef', 'label');
    const kept = parts.bytes;
    assert.equal(parts.qr('http://x/s/abcdef', 'label'), qr);
    assert.equal(
      parts.qr('http://x/s/abcdef', 'label'),
      qrSvg('http://x/s/abcdef', 'label'),
      'drawn from the kept modules, the same code',
    );
    assert.equal(parts.bytes, kept, 'nothing more is kept for the same link');
    assert.notEqual(parts.qr('http://x/s/abcdeg', 'label'), qr);
    assert.ok(parts.bytes > kept, 'another link is kept beside it');
    const v1 = paste('let a = 1;\n');
    let decoded = 0;
    const text = (t: string) => () => (decoded++, t);
    const qrBytes = parts.bytes;
    const first = parts.code('paste-code', v1, text('let a = 1;\n'));
    assert.equal(parts.bytes, qrBytes, 'made once: not kept');
    const code = parts.code('paste-code', v1, text('let a = 1;\n'));
    assert.notEqual(code, first, "a short paste's block is kept only when asked for again");
    assert.ok(parts.bytes > qrBytes);
    assert.equal(parts.code('paste-code', v1, text('let a = 1;\n')), code);
    assert.equal(decoded, 2, 'the text is decoded only to make the block');
    assert.deepEqual([code.lines, code.shownLines, code.bytes, code.cut], [1, 1, 11, false]);
    const v2 = { ...v1, content_json: encodeContent('let b = 2;\n') };
    assert.match(parts.code('paste-code', v2, text('let b = 2;\n')).block.value, /b/);
    // Past 32 KB of stored text, a block is kept the first time it is made.
    const long = { ...paste('x'.repeat(40_000)), hash: 'b000000000' };
    const before = parts.bytes;
    const block = parts.code('paste-code', long, text('x'.repeat(40_000)));
    assert.ok(parts.bytes > before + 40_000);
    assert.equal(parts.code('paste-code', long, text('x'.repeat(40_000))), block);
    assert.equal(decoded, 4);
  });

  test("writes a short paste's page whole the first time, then once around its slot, then never again in that minute", () => {
    const parts = new PageParts(1 << 20);
    const p = paste('short');
    const given: string[] = [];
    const render = (part: SafeHtml): string => (given.push(part.value), `<p>views ${part.value}</p>\n<pre>é</pre>`);
    assert.deepEqual(parts.page('paste', p, 7, raw('1'), render), ['<p>views 1</p>\n<pre>é</pre>']);
    assert.deepEqual(given, ['1'], 'written with its count in place, as one string');
    const second = parts.page('paste', p, 7, raw('2'), render);
    assert.deepEqual(given, ['1', PAGE_SLOT.value], 'then written once around the slot');
    assert.deepEqual(
      second.map((x) => x.toString()),
      ['<p>views ', '2', '</p>\n<pre>é</pre>'],
    );
    assert.ok(Buffer.isBuffer(second[0]) && Buffer.isBuffer(second[2]));
    const third = parts.page('paste', p, 7, raw('3'), render);
    assert.equal(given.length, 2, 'and not written again');
    assert.equal(third[0], second[0]);
    assert.equal(third[1], '3');
    parts.page('paste', p, 8, raw('4'), render);
    assert.deepEqual(given.slice(2), [PAGE_SLOT.value], 'a new minute writes it again around the slot, kept at once');
    assert.deepEqual([parts.counts.page.made, parts.counts.page.reused], [3, 1]);
  });

  test('writes an anonymous home page once for the same pastes, names and minute, holding no paste', async () => {
    const parts = new PageParts(1 << 20);
    let written = 0;
    const render = (): string => `page ${++written}`;
    const a = paste('a');
    const b = paste('b');
    assert.equal(parts.home(1, [a, b], ['alice', 'bob'], 7, render).toString(), 'page 1');
    assert.equal(parts.home(1, [a, b], ['alice', 'bob'], 7, render).toString(), 'page 1');
    assert.equal(
      parts.home(1, [a, paste('b')], ['alice', 'bob'], 7, render).toString(),
      'page 2',
      'another version of a paste',
    );
    assert.equal(parts.home(1, [a], ['alice'], 7, render).toString(), 'page 3', 'a paste fewer');
    assert.equal(parts.home(1, [a], ['carol'], 7, render).toString(), 'page 4', 'another name');
    assert.equal(parts.home(1, [a], ['carol'], 8, render).toString(), 'page 5', 'another minute');
    assert.equal(parts.home(2, [a], ['carol'], 8, render).toString(), 'page 6', 'each page number its own');
    assert.equal(parts.home(1, [a], ['carol'], 8, render).toString(), 'page 5');
    assert.equal(parts.home(11, [], [], 8, render).toString(), 'page 7');
    assert.equal(
      parts.home(11, [], [], 8, render).toString(),
      'page 8',
      'beyond the ten pages of the list, nothing is kept',
    );
    // A paste shown on a kept page can still be collected: the page holds it weakly.
    assert.ok(
      await collectable((register) => {
        const big = paste('x'.repeat(1_000_000));
        register(big);
        parts.home(3, [big], ['alice'], 8, render);
      }),
      'a kept page must not keep the pastes it shows alive',
    );
  });
});

describe('the paste page', () => {
  test('shows an edit, a new view count and the same QR code at once, from its cached parts', async () => {
    const s = await startServer();
    const alice = new WebClient(s);
    await register(alice, 'alice');
    const hash = await createViaForm(alice, { title: 'Cached', content: 'const first = 1;\n' });
    const anon = new WebClient(s);
    const one = await anon.get(`/p/${hash}`);
    const two = await anon.get(`/p/${hash}`);
    assert.match(one.text, /<dt>Views<\/dt><dd>1<\/dd>/);
    assert.match(two.text, /<dt>Views<\/dt><dd>2<\/dd>/);
    const img = `<img src="/p/${hash}/qr.svg"`;
    assert.ok(one.text.includes(img) && two.text.includes(img), 'the share card shows the QR image');
    const qr = async (): Promise<string> => (await anon.get(`/p/${hash}/qr.svg`)).text;
    const first = await qr();
    assert.match(first, /^<svg [^>]*data-modules/);
    assert.equal(await qr(), first);
    await alice.get(`/p/${hash}/edit`);
    assert.equal(
      (
        await alice.post(`/p/${hash}/edit`, {
          title: 'Cached',
          content: 'const second = 2;\n',
          language: 'javascript',
          privacy: 'public',
          expiry: 'keep',
        })
      ).status,
      303,
    );
    const three = await anon.get(`/p/${hash}`);
    assert.match(three.text, /second/);
    assert.doesNotMatch(three.text, /first/);
    assert.equal(await qr(), first, 'an edit keeps the short link, so its QR code');
  });
});

describe('an anonymous visitor’s page, written once a minute', () => {
  test('has its own view count every time, and relative times of the minute it is read in', async () => {
    const s = await startServer();
    const alice = new WebClient(s);
    await register(alice, 'alice');
    const hash = await createViaForm(alice, { content: 'counted' });
    const anon = new WebClient(s);
    const views = [];
    for (let i = 0; i < 3; i++)
      views.push(/<dt>Views<\/dt><dd>(\d+)<\/dd>/.exec((await anon.get(`/p/${hash}`)).text)?.[1]);
    assert.deepEqual(views, ['1', '2', '3']);
    assert.match((await anon.get(`/p/${hash}`)).text, /<dt>Created<\/dt><dd><time[^>]*>just now<\/time>/);
    s.clock.advance(5 * 60_000);
    const later = await anon.get(`/p/${hash}`);
    assert.match(later.text, /<dt>Created<\/dt><dd><time[^>]*>5 minutes ago<\/time>/);
    assert.match(later.text, /<dt>Views<\/dt><dd>5<\/dd>/);
    // A logged-in reader's page is their own (their name, their logout form's token).
    const own = await alice.get(`/p/${hash}`);
    assert.match(own.text, /Log out/);
    assert.match(own.text, /href="\/p\/[A-Za-z0-9]{10}\/edit"/);
    assert.doesNotMatch((await anon.get(`/p/${hash}`)).text, /Log out|\/edit"/);
  });
});

describe('an anonymous visitor’s page, as bytes', () => {
  test('a title and text outside ASCII, and NULs in the text, arrive whole around the view count, at the length the head says', async () => {
    const s = await startServer();
    const alice = new WebClient(s);
    await register(alice, 'alice');
    const title = 'Naïve café ✓ 𝄞';
    const hash = await createViaForm(alice, { title, content: 'før\u0000bär ✓ 𝄞\n\u0000end ASCII after\n' });
    const anon = new WebClient(s);
    const pages = [];
    for (let i = 0; i < 3; i++) {
      const r = await anon.get(`/p/${hash}`);
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.text));
      assert.ok(!r.text.includes('\ufffd'), 'no byte was cut or mis-encoded');
      assert.ok(r.text.includes(title));
      assert.match(r.text, /bär ✓ 𝄞/);
      pages.push(r.text);
    }
    assert.deepEqual(
      pages.map((p) => /<dt>Views<\/dt><dd>(\d+)<\/dd>/.exec(p)?.[1]),
      ['1', '2', '3'],
    );
    // Written once: the second and third views are the first with another count.
    assert.equal(pages[1], pages[0]?.replace('<dt>Views</dt><dd>1</dd>', '<dt>Views</dt><dd>2</dd>'));
    assert.equal(pages[2], pages[0]?.replace('<dt>Views</dt><dd>1</dd>', '<dt>Views</dt><dd>3</dd>'));
  });
});

describe('the pages of an ASCII paste', () => {
  test('are ASCII through and through, so they go out written as Latin-1 (http/text-bytes.ts)', async () => {
    const s = await startServer();
    const alice = new WebClient(s);
    await register(alice, 'alice');
    const plain = await createViaForm(alice, { title: 'Plain', content: 'just ASCII\n', language: 'text' });
    const code = await createViaForm(alice, { title: 'Code', content: 'const a = "<b>";\n', language: 'javascript' });
    const flat = await createViaForm(alice, {
      title: 'Flat',
      content: 'let b = 1;\n',
      language: 'javascript',
      highlight: '0',
    });
    const once = await createViaForm(alice, { content: 'once only', burn_after_read: '1' });
    const anon = new WebClient(s);
    const pages = [
      await anon.get(`/p/${plain}`),
      await anon.get(`/p/${code}`),
      await anon.get(`/p/${flat}`),
      await anon.get(`/p/${once}`),
      await alice.get(`/p/${code}`),
    ];
    for (const r of pages) {
      assert.equal(r.status, 200);
      const outside = [...r.text].filter((c) => c.charCodeAt(0) > 0x7f);
      assert.deepEqual(outside, [], `${r.text.slice(0, 200)}...`);
    }
    assert.match(pages[2]?.text ?? '', /not highlighted/);
    assert.match(pages[3]?.text ?? '', /Show it and burn it/);
  });
});

describe('the page of a large paste', () => {
  test('stays proportionate (the beginning, and a link to Raw), and ten views at once all get it', async () => {
    const s = await startServer({ env: { MAX_PASTE_BYTES: '1048576' } });
    const alice = new WebClient(s);
    await register(alice, 'alice');
    const hash = await createViaForm(alice, { title: 'Huge', content: '&a'.repeat(500_000), language: 'css' });
    const anon = new WebClient(s);
    const first = await anon.get(`/p/${hash}`);
    assert.equal(first.status, 200);
    assert.ok(first.text.length < 4_000_000, `${first.text.length} characters for a 1 MB paste`);
    assert.match(
      first.text,
      /the page shows only its first 97\.7 KiB \(1 of 1 line\)\. <a href="\/p\/[A-Za-z0-9]{10}\/raw">Raw<\/a> has all of it/,
    );
    assert.doesNotMatch(first.text, /data-copy="paste-code"/, 'no Copy button for a part');
    // Ten views at once, and a health check among them: the pages come from the one rendering.
    const views = Array.from({ length: 10 }, () => anon.get(`/p/${hash}`));
    assert.equal((await fetch(`${s.url}/healthz`)).status, 200);
    for (const v of await Promise.all(views))
      assert.ok(Math.abs(v.text.length - first.text.length) < 10, 'the same page but its view count');
    assert.equal((await anon.get(`/p/${hash}/raw`)).text.length, 1_000_000, 'Raw has all of it');
  });
});

describe('a one-time paste’s warning page, written once', () => {
  test('gives every anonymous visitor a form token of their own, which only their cookie matches', async () => {
    const s = await startServer();
    const alice = new WebClient(s);
    await register(alice, 'alice');
    const hash = await createViaForm(alice, { content: 'once only', burn_after_read: '1' });
    const [a, b] = [new WebClient(s), new WebClient(s)];
    const pa = await a.get(`/p/${hash}`);
    const pb = await b.get(`/p/${hash}`);
    assert.equal(pa.status, 200);
    assert.match(pa.text, /Burn After Read paste/);
    assert.ok(pa.csrf !== undefined && pb.csrf !== undefined && pa.csrf !== pb.csrf, 'a token each');
    assert.equal(pa.text.replace(pa.csrf ?? '', ''), pb.text.replace(pb.csrf ?? '', ''), 'the same page otherwise');
    // b's token with a's cookie is refused; a's own pair reveals and burns the paste.
    assert.equal((await a.post(`/p/${hash}`, { _csrf: pb.csrf ?? '' })).status, 403);
    const shown = await a.post(`/p/${hash}`, { _csrf: pa.csrf ?? '' });
    assert.equal(shown.status, 200);
    assert.match(shown.text, /once only/);
    assert.equal((await b.post(`/p/${hash}`, {})).status, 410);
  });
});

describe('the home page of a visitor who is not logged in, written once', () => {
  test('is sent as it was written until its list, a title or the minute changes', async () => {
    const s = await startServer();
    const alice = new WebClient(s);
    await register(alice, 'alice');
    const anon = new WebClient(s);
    const first = await createViaForm(alice, { title: 'First one', content: 'a' });
    const one = await anon.get('/');
    assert.match(one.text, /First one/);
    assert.match(one.text, /<time[^>]*>just now<\/time>/);
    assert.equal((await anon.get('/')).text, one.text, 'the same page again');
    const second = await createViaForm(alice, { title: 'Second one', content: 'b' });
    const two = await anon.get('/');
    assert.ok(
      two.text.indexOf('Second one') !== -1 && two.text.indexOf('Second one') < two.text.indexOf('First one'),
      'a new paste shows at once, first',
    );
    await alice.get(`/p/${first}/edit`);
    assert.equal(
      (
        await alice.post(`/p/${first}/edit`, {
          title: 'First, renamed',
          content: 'a',
          language: 'text',
          privacy: 'public',
          expiry: 'keep',
        })
      ).status,
      303,
    );
    assert.match((await anon.get('/')).text, /First, renamed/, 'an edit shows at once');
    await alice.get(`/p/${second}/delete`);
    await alice.post(`/p/${second}/delete`, {});
    assert.doesNotMatch((await anon.get('/')).text, /Second one/, 'a deletion shows at once');
    s.clock.advance(3 * 60_000);
    assert.match((await anon.get('/')).text, /<time[^>]*>3 minutes ago<\/time>/, 'a new minute rewrites the times');
    const logged = await alice.get('/');
    assert.match(logged.text, /name="content"/, 'a logged-in user gets the create form, not the visitors’ page');
    assert.doesNotMatch((await anon.get('/')).text, /name="content"|Log out/);
  });
});
