import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { OWNED_COUNT_LIMIT } from '../../src/paste/service.ts';
import { makeToken, req, startServer, type TestServer } from '../helpers/server.ts';
import { createViaForm, registerAll, WebClient } from '../helpers/web-client.ts';

let s: TestServer;
let admin: WebClient;
let alice: WebClient;
let bob: WebClient;

before(async () => {
  s = await startServer({ env: { OPEN_REGISTRATION: '1' } });
  [admin, alice, bob] = await registerAll(s, 'admin', 'alice', 'bob');
});

describe('My pastes', () => {
  test('needs a login', async () => {
    const r = await new WebClient(s).get('/my?page=2');
    assert.equal(r.status, 302);
    assert.equal(r.location, '/login?next=%2Fmy%3Fpage%3D2');
  });

  test('lists only the user’s own pastes, newest first, 20 a page', async () => {
    const empty = await bob.get('/my');
    assert.match(empty.text, /You have no pastes yet/);
    const hashes: string[] = [];
    for (let i = 1; i <= 21; i++)
      hashes.push(
        await createViaForm(bob, { title: `bob ${i}`, content: `n${i}`, privacy: i % 2 ? 'private' : 'unlisted' }),
      );
    await createViaForm(alice, { title: 'not bob', content: 'x' });
    const first = await bob.get('/my');
    assert.match(first.text, /21 pastes in all/);
    assert.match(first.text, /Page 1 of 2/);
    assert.equal(first.text.match(/class="title-cell"/g)?.length, 20);
    assert.ok(first.text.indexOf('bob 21') < first.text.indexOf('bob 20'));
    assert.doesNotMatch(first.text, /not bob|>bob 1</);
    assert.match(first.text, /href="\/my\?page=2" rel="next"/);
    const second = await bob.get('/my?page=2');
    assert.equal(second.text.match(/class="title-cell"/g)?.length, 1);
    assert.match(second.text, />bob 1</);
    assert.match(second.text, /href="\/my\?page=1" rel="prev"/);
    assert.match((await bob.get('/my?page=99')).text, /Nothing on this page/);
    assert.match((await bob.get('/my?page=-1')).text, /Page 1 of 2/);
  });
});

describe('searching', () => {
  test('a search that matches more than OWNED_COUNT_LIMIT pastes says so and pages on without a last page', async () => {
    const [carol] = await registerAll(s, 'carol');
    const token = await makeToken(s.dataDir, { user: 'carol' });
    const total = OWNED_COUNT_LIMIT + 5;
    for (let at = 0; at < total; at += 25)
      await Promise.all(
        Array.from({ length: Math.min(25, total - at) }, (_, i) =>
          req(s, 'POST', '/api/v1/paste_create.php', {
            token,
            body: { content: `Needle ${at + i}`, privacy: 'private' },
          }).then((r) => assert.equal(r.status, 200, r.text)),
        ),
      );
    await createViaForm(carol, { title: 'the newest', content: 'hay' });
    const first = await carol.get('/my?q=needle');
    assert.match(first.text, new RegExp(`More than ${OWNED_COUNT_LIMIT} pastes found`));
    assert.equal(first.text.match(/class="title-cell"/g)?.length, 20);
    assert.match(first.text, /Page 1<\/span>/);
    assert.match(first.text, /href="\/my\?q=needle&amp;page=2" rel="next"/);
    // Past the count, the pages still go on to the oldest match.
    const pages = Math.ceil(total / 20);
    const deep = await carol.get(`/my?q=needle&page=${pages - 1}`);
    assert.match(deep.text, new RegExp(`More than ${(pages - 1) * 20} pastes found`));
    assert.match(deep.text, /rel="next"/);
    const last = await carol.get(`/my?q=needle&page=${pages}`);
    assert.match(last.text, new RegExp(`${total} pastes found`));
    assert.doesNotMatch(last.text, /More than|rel="next"/);
    assert.match(last.text, new RegExp(`Page ${pages} of ${pages}`));
    assert.equal(last.text.match(/class="title-cell"/g)?.length, total - (pages - 1) * 20);
    // A narrower search is counted whole.
    // Needle 10, 100-109 and 1000-1004.
    assert.match((await carol.get('/my?q=needle%2010')).text, /16 pastes found/);
  });
});

describe('editing', () => {
  test('the edit form is filled with the paste; a POST applies the API edit rules', async () => {
    const hash = await createViaForm(alice, {
      title: 'Before',
      content: 'old text',
      language: 'text',
      password: 'pw-123456',
    });
    const form = await alice.get(`/p/${hash}/edit`);
    assert.equal(form.status, 200);
    assert.match(form.text, /value="Before"/);
    assert.ok(form.text.includes('>\nold text</textarea>'));
    assert.match(form.text, /<option value="text" selected>/);
    assert.match(form.text, /<option value="keep" selected>Keep: never expires<\/option>/);
    assert.match(form.text, /name="clear_password"/);
    const r = await alice.post(`/p/${hash}/edit`, {
      title: 'After',
      content: 'new text',
      language: 'text',
      privacy: 'unlisted',
      expiry: '1h',
      clear_password: '1',
    });
    assert.equal(r.status, 303);
    assert.equal(r.location, `/p/${hash}`);
    const page = await new WebClient(s).get(`/p/${hash}`);
    assert.equal(page.status, 200, 'no password any more');
    assert.match(page.text, /<h1 class="paste-title"><bdi>After<\/bdi><\/h1>/);
    assert.match(page.text, /new text/);
    assert.match(page.text, /Unlisted/);
    assert.match(page.text, /<dt>Expires<\/dt><dd><time[^>]*>in 59 minutes|in 1 hour/);
  });

  test('a clear_password value other than 1 or 0 is refused, and the password stays', async () => {
    const hash = await createViaForm(alice, { content: 'locked', password: 'pw-123456' });
    await alice.get(`/p/${hash}/edit`);
    const r = await alice.post(`/p/${hash}/edit`, {
      content: 'locked',
      language: 'text',
      privacy: 'public',
      expiry: 'keep',
      clear_password: 'on',
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /clear_password must be 0 or 1/i);
    assert.equal((await new WebClient(s).get(`/p/${hash}`)).status, 401, 'still asks for the password');
  });

  test('a new password can be set, and an empty title clears it', async () => {
    const hash = await createViaForm(alice, { title: 'Named', content: 'x' });
    await alice.get(`/p/${hash}/edit`);
    assert.equal(
      (
        await alice.post(`/p/${hash}/edit`, {
          title: '',
          content: 'x',
          language: 'text',
          privacy: 'public',
          expiry: 'keep',
          password: 'fresh-pass',
        })
      ).status,
      303,
    );
    const anon = new WebClient(s);
    assert.equal((await anon.get(`/p/${hash}`)).status, 401);
    assert.match((await alice.get(`/p/${hash}`)).text, /Untitled paste/);
  });

  test('problems re-render the form with 400 and change nothing', async () => {
    const hash = await createViaForm(alice, { content: 'stay' });
    await alice.get(`/p/${hash}/edit`);
    const r = await alice.post(`/p/${hash}/edit`, {
      title: 'T',
      content: '',
      language: 'text',
      privacy: 'public',
      expiry: 'keep',
    });
    assert.equal(r.status, 400);
    assert.match(r.text, /Content must not be empty/);
    assert.equal((await req(s, 'GET', `/p/${hash}/raw`)).text, 'stay');
  });

  test('only the owner and admins may edit: others get 403, or 404 for a private paste', async () => {
    const pub = await createViaForm(alice, { content: 'alice’s' });
    const priv = await createViaForm(alice, { content: 'hidden', privacy: 'private' });
    assert.equal((await bob.get(`/p/${pub}/edit`)).status, 403);
    await bob.get('/my');
    assert.equal((await bob.post(`/p/${pub}/edit`, { content: 'bob was here' })).status, 403);
    assert.equal((await bob.get(`/p/${priv}/edit`)).status, 404);
    assert.equal((await bob.get('/p/nothere00/edit')).status, 404);
    assert.equal((await bob.get('/p/bad/edit')).status, 404);
    assert.equal((await admin.get(`/p/${priv}/edit`)).status, 200);
    await admin.get('/my');
    assert.equal(
      (
        await admin.post(`/p/${pub}/edit`, {
          content: 'by admin',
          language: 'text',
          privacy: 'public',
          expiry: 'keep',
          title: '',
        })
      ).status,
      303,
    );
    assert.equal((await req(s, 'GET', `/p/${pub}/raw`)).text, 'by admin');
    assert.equal((await new WebClient(s).get(`/p/${pub}/edit`)).status, 302, 'anonymous visitors are sent to log in');
  });
});

describe('deleting', () => {
  test('asks first on GET; the POST deletes the paste and its short link', async () => {
    const hash = await createViaForm(alice, { title: 'Doomed', content: 'bye' });
    const ask = await alice.get(`/p/${hash}/delete`);
    assert.equal(ask.status, 200);
    assert.match(ask.text, /Delete this paste\?/);
    assert.match(ask.text, /Doomed/);
    assert.equal((await alice.get(`/p/${hash}`)).status, 200, 'the GET deleted nothing');
    const r = await alice.post(`/p/${hash}/delete`, {});
    assert.equal(r.status, 303);
    assert.equal(r.location, '/my?deleted=1');
    assert.match((await alice.get('/my?deleted=1')).text, /The paste was deleted/);
    assert.equal((await alice.get(`/p/${hash}`)).status, 404);
    assert.equal((await alice.get(`/s/${hash.slice(0, 6)}`)).status, 404);
  });

  test('a burned paste can still be deleted by its owner, not by others', async () => {
    const hash = await createViaForm(alice, { content: 'once', burn_after_read: '1' });
    const v = new WebClient(s);
    await v.get(`/p/${hash}`);
    await v.post(`/p/${hash}`, {});
    assert.match((await alice.get('/my')).text, /burned/);
    assert.equal((await bob.get(`/p/${hash}/delete`)).status, 403);
    await alice.get(`/p/${hash}/delete`);
    assert.equal((await alice.post(`/p/${hash}/delete`, {})).status, 303);
  });
});
