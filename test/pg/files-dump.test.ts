import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { test } from 'node:test';
import { backendEnv } from '../helpers/backend.ts';
import { sendFiles, sha256 } from '../helpers/multipart.ts';
import { createTestDatabase, PG_BIN } from '../helpers/postgres.ts';
import { cleanup, makeToken, req, startServer, tempDataDir } from '../helpers/server.ts';

// On PostgreSQL a backup is the database's own (README, Running on PostgreSQL): the files' rows
// are tables of it, so pg_dump takes them with the pastes and pg_restore brings them back.
test('pg_dump and pg_restore carry every paste’s files, byte for byte, and their claims', async () => {
  const a = await startServer();
  const token = await makeToken(a.dataDir, { user: 'alice' });
  const files = [
    { name: 'big.log', bytes: randomBytes(700_000) },
    { name: 'small.bin', bytes: randomBytes(10) },
  ];
  const made = await sendFiles(a, token, { content: '' }, files);
  assert.equal(made.status, 200, made.text);
  const hash = String(made.json['hash']);
  await a.stop();
  const from = (await backendEnv(a.dataDir))['DATABASE_URL'] as string;
  const into = await createTestDatabase();
  const work = await tempDataDir();
  try {
    const dump = join(work, 'paste.dump');
    execFileSync(join(PG_BIN, 'pg_dump'), ['-Fc', '-f', dump, from]);
    execFileSync(join(PG_BIN, 'pg_restore'), ['--no-owner', '-d', into, dump]);
    const b = await startServer({ env: { DATABASE_URL: into } });
    for (const f of files) {
      const r = await req(b, 'GET', `/api/v1/file.php?hash=${hash}&name=${encodeURIComponent(f.name)}`, { token });
      assert.equal(r.status, 200, r.text);
      assert.equal(sha256(r.body), sha256(f.bytes), f.name);
    }
    // The claims came too: deleting the paste lets the sweep remove the bytes from the restored database.
    assert.equal((await req(b, 'POST', '/api/v1/paste_delete.php', { token, body: { hash } })).status, 200);
    b.clock.advance(61_000);
    await b.upkeep();
    const { default: postgres } = await import('postgres');
    const sql = postgres(into, { max: 1, onnotice: () => undefined });
    try {
      const [left] = await sql<{ n: string }[]>`select count(*)::text as n from file_blobs`;
      assert.equal(left?.n, '0');
    } finally {
      await sql.end({ timeout: 1 });
    }
    await b.stop();
  } finally {
    await cleanup(work);
  }
});
