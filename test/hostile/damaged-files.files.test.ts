import assert from 'node:assert/strict';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { makeToken, req, startServer, type AppServer } from '../helpers/server.ts';
import { registerAll, WebClient } from '../helpers/web-client.ts';

const fileOf = (server: AppServer, hash: string): string =>
  join(server.dataDir, 'pastes', hash.slice(0, 2), `${hash.slice(0, 6)}.json`);

/** Ways a paste file gets damaged, from its good text. */
const DAMAGE: Record<string, { of: (good: string) => string; ownerKnown: boolean }> = {
  truncated: { of: (good) => good.slice(0, Math.floor(good.length / 2)), ownerKnown: false },
  // Torn in its text: the owner is still readable from what is left (the fields come first).
  'torn in its text': { of: (good) => good.slice(0, good.indexOf('"content":') + 15), ownerKnown: true },
  garbage: { of: () => '\u0000\u00ff garbage \u0007', ownerKnown: false },
  'an empty object': { of: () => '{}', ownerKnown: false },
  'a field of the wrong type': {
    of: (good) => good.replace(/"view_count":\d+/, '"view_count":"many"'),
    ownerKnown: true,
  },
  // Another paste's file copied over it: its short link must not lead to that other paste.
  "another paste's record": { of: (good) => good.replace(/"hash":"\w{6}/, '"hash":"Zz9Zz9'), ownerKnown: false },
};

describe('a damaged paste file costs only that paste', () => {
  for (const [kind, { of, ownerKnown }] of Object.entries(DAMAGE)) {
    test(`${kind}: lists skip it, its readers get a specific error, the log names it once, and it can be deleted`, async () => {
      const first = await startServer({ env: { OPEN_REGISTRATION: '1' } });
      const [, aliceThen] = await registerAll(first, 'root', 'alice');
      const aliceToken = await makeToken(first.dataDir, { user: 'alice' });
      const bobToken = await makeToken(first.dataDir, { user: 'bob' });
      const adminToken = await makeToken(first.dataDir, { user: 'root', scopes: 'read,write,admin' });
      const make = async (title: string): Promise<string> =>
        String(
          (
            await req(first, 'POST', '/api/v1/paste_create.php', {
              token: aliceToken,
              body: { title, content: `${title} text` },
            })
          ).json['hash'],
        );
      const kept = await make('Kept paste');
      const broken = await make('Broken paste');
      await first.stop();
      await writeFile(fileOf(first, broken), of(await readFile(fileOf(first, broken), 'utf8')));
      const server = await startServer({ dataDir: first.dataDir, env: { OPEN_REGISTRATION: '1' } });
      // Alice's session outlives the restart.
      const alice = new WebClient(server);
      for (const [k, v] of aliceThen.cookies) alice.cookies.set(k, v);

      // The lists answer, with the other pastes.
      const home = await req(server, 'GET', '/');
      assert.equal(home.status, 200);
      assert.match(home.text, /Kept paste/);
      const mine = await alice.get('/my');
      assert.equal(mine.status, 200);
      assert.match(mine.text, /Kept paste/);
      assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${kept}`, { token: aliceToken })).status, 200);

      // Those who may know it is damaged are told so; to others it is not there.
      const told = ownerKnown ? aliceToken : adminToken;
      for (const path of [`/api/v1/paste.php?hash=${broken}`, `/api/v1/raw.php?hash=${broken}`]) {
        const r = await req(server, 'GET', path, { token: told });
        assert.equal(r.status, 500, path);
        assert.equal(r.json['code'], 'paste_damaged');
        assert.match(String(r.json.error), /damaged/);
        assert.doesNotMatch(r.text, /pastes\//, 'the path is for the log, not the client');
        assert.equal((await req(server, 'GET', path, { token: bobToken })).status, 404);
      }
      const edit = await req(server, 'POST', '/api/v1/paste_edit.php', {
        token: told,
        body: { hash: broken, content: 'x' },
      });
      assert.equal(edit.json['code'], 'paste_damaged');
      assert.equal((await req(server, 'GET', `/p/${broken}`)).status, 404, 'anonymous page');
      assert.equal((await req(server, 'GET', `/s/${broken.slice(0, 6)}`)).status, 404, 'short link');

      // Reported once, naming the file, however often it was asked for.
      const reports = server
        .output()
        .split('\n')
        .filter((l) => l.includes(fileOf(server, broken)));
      assert.equal(reports.length, 1, server.output());
      assert.match(reports[0] ?? '', /is damaged: /);
      if (kind === 'a field of the wrong type')
        assert.match(reports[0] ?? '', new RegExp(`^paste ${broken}: .*view_count`));
      assert.doesNotMatch(server.output(), /\n\s+at /, 'no stack trace');

      // Bob may not delete it; its owner (or, when the file no longer says whose it is, an admin) may.
      assert.equal(
        (await req(server, 'POST', '/api/v1/paste_delete.php', { token: bobToken, body: { hash: broken } })).status,
        404,
      );
      const deleted = await req(server, 'POST', '/api/v1/paste_delete.php', { token: told, body: { hash: broken } });
      assert.equal(deleted.status, 200, deleted.text);
      await assert.rejects(access(fileOf(server, broken)), /ENOENT/);
      assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${broken}`, { token: told })).status, 404);
      if (ownerKnown) assert.doesNotMatch((await alice.get('/my')).text, /Broken paste/);
    });
  }

  test('the background upkeep goes on past a damaged paste (view counts, expiry sweep)', async () => {
    const first = await startServer();
    const token = await makeToken(first.dataDir);
    const make = async (expiry: string): Promise<string> =>
      String(
        (await req(first, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x', expiry } })).json['hash'],
      );
    const [broken, fine, expiring] = [await make('10m'), await make('never'), await make('10m')];
    await first.stop();
    await writeFile(fileOf(first, broken), '{"half":');
    const server = await startServer({ dataDir: first.dataDir });
    await req(server, 'GET', `/api/v1/raw.php?hash=${fine}`, { token });
    server.clock.advance(11 * 60_000);
    await server.upkeep();
    await server.upkeep();
    assert.equal((await req(server, 'GET', `/api/v1/paste.php?hash=${expiring}`, { token })).status, 410);
    const view = await req(server, 'GET', `/api/v1/paste.php?hash=${fine}`, { token });
    assert.equal((view.json['paste'] as Record<string, number>)['view_count'], 2);
    await server.stop();
    const again = await startServer({ dataDir: first.dataDir });
    const after = await req(again, 'GET', `/api/v1/paste.php?hash=${fine}`, { token });
    assert.equal(
      (after.json['paste'] as Record<string, number>)['view_count'],
      3,
      'the count was folded despite the damaged file',
    );
  });
});
