import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cli, req, startServer, tempDataDir, type AppServer } from '../helpers/server.ts';

/** DATABASE_URL empty: the data folder, whatever TEST_BACKEND says. */
const FILES = { DATABASE_URL: '' };

interface Made {
  plain: string;
  secret: string;
  burnt: string;
  edited: string;
  hidden: string;
}

/** An install with users, a token, a password, a burn with its receipt, an edit and a private paste. */
async function fill(s: AppServer, env: Record<string, string>): Promise<Made> {
  await cli(s.dataDir, ['user', 'add', 'alice', '--password-stdin'], 'alice-password-1', env);
  await cli(s.dataDir, ['user', 'add', 'bob'], '', env);
  const alice = await cli(s.dataDir, ['token', 'create', '--user', 'alice', '--scopes', 'read,write'], '', env);
  const bob = await cli(s.dataDir, ['token', 'create', '--user', 'bob', '--scopes', 'read,write'], '', env);
  const create = async (body: Record<string, unknown>, token = alice): Promise<string> => {
    const r = await req(s, 'POST', '/api/v1/paste_create.php', { token, body });
    assert.equal(r.status, 200, r.text);
    return r.json?.['hash'] as string;
  };
  const made: Made = {
    plain: await create({ content: 'print(42)\n', title: 'plain', language: 'python' }),
    secret: await create({ content: 'behind a password', password: 'open-sesame' }),
    burnt: await create({ content: 'read me once', burn_after_read: 1 }),
    edited: await create({ content: 'first version' }),
    hidden: await create({ content: 'only mine', privacy: 'private' }),
  };
  assert.equal((await req(s, 'GET', `/api/v1/raw.php?hash=${made.burnt}`, { token: bob })).text, 'read me once');
  const edit = await req(s, 'POST', '/api/v1/paste_edit.php', {
    token: alice,
    body: { hash: made.edited, content: 'second version' },
  });
  assert.equal(edit.status, 200, edit.text);
  return made;
}

/** What every install moved must answer, for a new token of alice's and one of a stranger's. */
async function check(s: AppServer, made: Made, env: Record<string, string>): Promise<void> {
  await cli(s.dataDir, ['user', 'passwd', 'alice'], 'alice-password-2', env);
  const alice = await cli(s.dataDir, ['token', 'create', '--user', 'alice', '--scopes', 'read,write'], '', env);
  await cli(s.dataDir, ['user', 'add', 'carol'], '', env);
  const carol = await cli(s.dataDir, ['token', 'create', '--user', 'carol', '--scopes', 'read'], '', env);
  const get = (hash: string, token: string, q = '') => req(s, 'GET', `/api/v1/paste.php?hash=${hash}${q}`, { token });
  const plain = await get(made.plain, carol);
  assert.equal(plain.status, 200);
  assert.deepEqual(
    [
      (plain.json!['paste'] as Record<string, unknown>)['content'],
      (plain.json!['paste'] as Record<string, unknown>)['title'],
      (plain.json!['paste'] as Record<string, unknown>)['language'],
    ],
    ['print(42)\n', 'plain', 'python'],
  );
  assert.equal((await get(made.secret, carol)).status, 401);
  assert.equal((await get(made.secret, carol, '&password=wrong')).status, 403);
  assert.equal(
    (await req(s, 'GET', `/api/v1/raw.php?hash=${made.secret}&password=open-sesame`, { token: carol })).text,
    'behind a password',
  );
  const burnt = await get(made.burnt, alice);
  assert.equal(burnt.status, 410);
  assert.equal(
    (burnt.json!['receipt'] as Record<string, unknown>)['via'],
    'api',
    'the owner still learns how it was read',
  );
  const edited = await get(made.edited, alice);
  assert.equal((edited.json!['paste'] as Record<string, unknown>)['content'], 'second version');
  assert.equal((edited.json!['paste'] as Record<string, unknown>)['revision'], 2);
  assert.equal((await get(made.hidden, carol)).status, 404);
  assert.equal((await get(made.hidden, alice)).status, 200);
}

describe('moving an install (README, Running on PostgreSQL)', () => {
  test('export from the data folder, import into PostgreSQL, and back: every paste, password, burn and receipt serves as before', async () => {
    const source = await startServer({ env: FILES });
    const made = await fill(source, FILES);
    const fromFiles = await cli(source.dataDir, ['export'], '', FILES);
    assert.equal(fromFiles.split('\n').length, 5);

    const onPostgres = await startServer();
    const imported = await cli(onPostgres.dataDir, ['import'], fromFiles);
    assert.match(imported, /imported 5, renamed 0, already here 0, refused 0/);
    await check(onPostgres, made, {});

    const fromPostgres = await cli(onPostgres.dataDir, ['export']);
    const back = await startServer({ dataDir: await tempDataDir(), env: FILES });
    assert.match(await cli(back.dataDir, ['import'], fromPostgres, FILES), /imported 5, renamed 0/);
    await check(back, made, FILES);
  });
});
